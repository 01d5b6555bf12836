//! The name-reference fix-up: kustomize's nameReferenceTransformer and `nameref` filter (v5.6).
//!
//! Once per build, after hash suffixes: prefixes, suffixes, namespaces and hashes have renamed
//! objects, and every field that names one of them must follow. The `nameReference` config
//! lists, for each referred kind (the *target* gvk), the referrer field specs that may name it.
//!
//! For each object (the *referrer*) and each referrer field spec selecting its *original* gvk,
//! the values at the spec's path are fixed. Who can be referred to:
//! - the *subset* the referrer can see: everything for a cluster-scoped referrer; otherwise
//!   cluster-scoped objects, objects in the referrer's namespace, and for a RoleBinding also
//!   objects in the namespaces of its ServiceAccount subjects;
//! - among them, the *referral* is chosen by `select_referral`: a previous id (never the
//!   current one — an object no transformer touched is never a referral) must carry the old
//!   name and be selected by the target gvk; `roleRef/name` fields also need the roleRef's
//!   group and kind; the referral must be cluster-scoped, a ServiceAccount, or in the
//!   referrer's namespace. Several left: keep those renamed with the same prefixes and suffixes
//!   as the referrer; still several: they must agree on the new name (and namespace, for
//!   maps), else the build fails with "found multiple possible referrals".
//!
//! The value found at the path decides what is written:
//! - a scalar is the old name; it becomes the referral's name;
//! - a map (`subjects[]`, webhook `clientConfig/service`) has `name` and maybe `namespace`;
//!   with a namespace, candidates are those originally in it (else currently in it); the map
//!   gets the referral's name and, when the referral has one, its namespace (created if absent);
//! - a list is handled element by element (names, or maps as above).
//!
//! Each referral found records the referrer's id in [`Resource::referenced_by`].

use super::config::TransformConfig;
use crate::error::{FieldError, KustomizeError, Result};
use crate::fieldpath;
use crate::gvk::Gvk;
use crate::kustomization::FieldSpec;
use crate::merge::is_cluster_scoped;
use crate::resmap::ResMap;
use crate::resource::{ResId, Resource};
use serde_json::{Map, Value};

/// Fix every name reference to renamed objects, at the `nameReference` field specs.
pub(crate) fn fix_back_references(resources: &mut ResMap, config: &TransformConfig) -> Result<()> {
    let referrals: Vec<Referral> = resources.iter().enumerate().map(|(index, r)| Referral::of(index, r)).collect();
    let mut found = Vec::new();
    for index in 0..resources.len() {
        let fixes = fixes_for(resources.get(index), config);
        if fixes.is_empty() {
            continue;
        }
        let referrer = Referrer::of(resources.get(index));
        let visible = visible_to(&referrals, resources.get(index))?;
        let obj = &mut resources.get_mut(index).obj;
        for (spec, target) in fixes {
            let fix = Fix { referrer: &referrer, target, path: &spec.path, visible: &visible };
            fieldpath::visit_mut(obj, &fieldpath::parse(&spec.path), false, &mut |value| fix.update(value, &mut found))
                .map_err(|source| KustomizeError::NameReference {
                    object: referrer.id.to_string(),
                    field: spec.path.clone(),
                    source,
                })?;
        }
    }
    for (index, referrer) in found {
        resources.get_mut(index).referenced_by.push(referrer);
    }
    Ok(())
}

/// The referrer field specs that apply to an object, each with the gvk it refers to.
fn fixes_for<'c>(resource: &Resource, config: &'c TransformConfig) -> Vec<(&'c FieldSpec, &'c Gvk)> {
    let original = resource.original_id().gvk;
    config
        .name_reference
        .iter()
        .flat_map(|back| back.referrers.iter().map(move |spec| (spec, &back.gvk)))
        .filter(|(spec, _)| original.is_selected_by(&spec_gvk(spec)))
        .collect()
}

fn spec_gvk(spec: &FieldSpec) -> Gvk {
    Gvk::new(&spec.group, &spec.version, &spec.kind)
}

/// What the fix-up needs to know about a possible referral (names do not change meanwhile).
#[derive(Debug)]
struct Referral {
    index: usize,
    previous: Vec<ResId>,
    current: ResId,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
}

impl Referral {
    fn of(index: usize, r: &Resource) -> Self {
        Referral {
            index,
            previous: r.previous_ids.clone(),
            current: r.current_id(),
            prefixes: r.name_prefixes.clone(),
            suffixes: r.name_suffixes.clone(),
        }
    }

    fn original_namespace(&self) -> Option<&str> {
        namespace_of(self.previous.first().unwrap_or(&self.current))
    }

    fn current_namespace(&self) -> Option<&str> {
        namespace_of(&self.current)
    }
}

/// The effective namespace, `None` for cluster-scoped ids.
fn namespace_of(id: &ResId) -> Option<&str> {
    if is_cluster_scoped(&id.gvk) { None } else { Some(id.effective_namespace()) }
}

/// What the fix-up needs to know about the referrer.
struct Referrer {
    id: ResId,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    /// `roleRef`'s apiGroup and kind, when both are present.
    role_ref: Option<Gvk>,
}

impl Referrer {
    fn of(r: &Resource) -> Self {
        let role_ref = r.obj.get("roleRef").and_then(|rr| {
            let group = rr.get("apiGroup").filter(|v| !v.is_null())?;
            let kind = rr.get("kind").filter(|v| !v.is_null())?;
            Some(Gvk::new(
                &fieldpath::scalar_text(Some(group)).unwrap_or_default(),
                "",
                &fieldpath::scalar_text(Some(kind)).unwrap_or_default(),
            ))
        });
        Referrer { id: r.current_id(), prefixes: r.name_prefixes.clone(), suffixes: r.name_suffixes.clone(), role_ref }
    }

    fn cluster_scoped(&self) -> bool {
        is_cluster_scoped(&self.id.gvk)
    }
}

/// kustomize's `SubsetThatCouldBeReferencedByResource`.
fn visible_to<'a>(referrals: &'a [Referral], referrer: &Resource) -> Result<Vec<&'a Referral>> {
    let id = referrer.current_id();
    if is_cluster_scoped(&id.gvk) {
        return Ok(referrals.iter().collect());
    }
    let subject_namespaces = role_binding_subject_namespaces(referrer)?;
    Ok(referrals
        .iter()
        .filter(|r| {
            is_cluster_scoped(&r.current.gvk)
                || r.current.effective_namespace() == id.effective_namespace()
                || subject_namespaces.contains(&r.current.namespace)
        })
        .collect())
}

/// The namespaces of a RoleBinding's ServiceAccount subjects that name one.
fn role_binding_subject_namespaces(referrer: &Resource) -> Result<Vec<String>> {
    if referrer.kind() != "RoleBinding" {
        return Ok(Vec::new());
    }
    let subjects = referrer.obj.get("subjects").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut out = Vec::new();
    for subject in subjects {
        let (Some(namespace), Some(kind)) = (subject.get("namespace"), subject.get("kind")) else {
            continue;
        };
        if kind.as_str() != Some("ServiceAccount") {
            continue;
        }
        match namespace.as_str() {
            Some(ns) => out.push(ns.to_string()),
            None => {
                return Err(KustomizeError::transform(
                    referrer.current_id().to_string(),
                    "a ServiceAccount subject's namespace is not a string; write the namespace name",
                ));
            }
        }
    }
    Ok(out)
}

/// One referrer field spec being fixed in one referrer.
struct Fix<'a> {
    referrer: &'a Referrer,
    target: &'a Gvk,
    path: &'a str,
    visible: &'a [&'a Referral],
}

type Found = Vec<(usize, ResId)>;

impl Fix<'_> {
    /// Called on each value at the field spec's path.
    fn update(&self, value: &mut Value, found: &mut Found) -> std::result::Result<(), FieldError> {
        match value {
            Value::Null => Ok(()),
            Value::Object(map) => self.update_map(map, found),
            Value::Array(items) => {
                for item in items {
                    match item {
                        Value::Object(map) => self.update_map(map, found)?,
                        Value::Array(_) | Value::Null => {}
                        scalar => self.update_scalar(scalar, found)?,
                    }
                }
                Ok(())
            }
            scalar => self.update_scalar(scalar, found),
        }
    }

    fn update_scalar(&self, value: &mut Value, found: &mut Found) -> std::result::Result<(), FieldError> {
        let old = fieldpath::scalar_text(Some(value)).unwrap_or_default();
        let Some(referral) = self.select(&old, self.visible.to_vec(), Agreement::Name)? else {
            return Ok(());
        };
        found.push((referral.index, self.referrer.id.clone()));
        if referral.current.name != old {
            *value = Value::String(referral.current.name.clone());
        }
        Ok(())
    }

    fn update_map(&self, map: &mut Map<String, Value>, found: &mut Found) -> std::result::Result<(), FieldError> {
        let Some(name) = map.get("name") else {
            return Err(FieldError::NoName);
        };
        let old = fieldpath::scalar_text(Some(name)).unwrap_or_default();
        let candidates = match map.get("namespace") {
            None => self.visible.to_vec(),
            Some(ns) => self.in_namespace(&fieldpath::scalar_text(Some(ns)).unwrap_or_default()),
        };
        let Some(referral) = self.select(&old, candidates, Agreement::NameAndNamespace)? else {
            return Ok(());
        };
        found.push((referral.index, self.referrer.id.clone()));
        let (new_name, new_namespace) = (&referral.current.name, &referral.current.namespace);
        if *new_name == old && new_namespace.is_empty() {
            return Ok(());
        }
        map.insert("name".into(), Value::String(new_name.clone()));
        if !new_namespace.is_empty() {
            map.insert("namespace".into(), Value::String(new_namespace.clone()));
        }
        Ok(())
    }

    /// Candidates originally in `namespace`; if none were, those in it now.
    fn in_namespace(&self, namespace: &str) -> Vec<&Referral> {
        let originally: Vec<_> =
            self.visible.iter().copied().filter(|r| r.original_namespace() == Some(namespace)).collect();
        if !originally.is_empty() {
            return originally;
        }
        self.visible.iter().copied().filter(|r| r.current_namespace() == Some(namespace)).collect()
    }

    fn select<'r>(
        &self,
        old: &str,
        candidates: Vec<&'r Referral>,
        agreement: Agreement,
    ) -> std::result::Result<Option<&'r Referral>, FieldError> {
        select_referral(self.referrer, self.target, self.path, old, candidates, agreement)
    }
}

/// What several remaining candidates must share for the choice not to matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agreement {
    Name,
    NameAndNamespace,
}

/// kustomize's `selectReferral`: narrow the candidates step by step (see the module doc).
fn select_referral<'r>(
    referrer: &Referrer,
    target: &Gvk,
    path: &str,
    old: &str,
    candidates: Vec<&'r Referral>,
    agreement: Agreement,
) -> std::result::Result<Option<&'r Referral>, FieldError> {
    let role_ref = if path.ends_with("roleRef/name") { referrer.role_ref.as_ref() } else { None };
    let candidates: Vec<&Referral> = candidates
        .into_iter()
        .filter(|r| r.previous.iter().any(|id| id.name == old))
        .filter(|r| r.previous.iter().any(|id| id.gvk.is_selected_by(target)))
        .filter(|r| role_ref.is_none_or(|gvk| r.previous.iter().any(|id| id.gvk.is_selected_by(gvk))))
        .filter(|r| same_namespace_or_exempt(referrer, r))
        .collect();
    if candidates.len() == 1 {
        return Ok(Some(candidates[0]));
    }
    let candidates: Vec<&Referral> = candidates.into_iter().filter(|r| same_affixes(referrer, r)).collect();
    match candidates.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some(only)),
        [first, rest @ ..] if rest.iter().all(|r| agree(first, r, agreement)) => Ok(Some(first)),
        _ => {
            let ids: Vec<String> = candidates.iter().map(|r| r.current.to_string()).collect();
            Err(FieldError::AmbiguousReferral(old.to_string(), ids.join(", ")))
        }
    }
}

fn same_namespace_or_exempt(referrer: &Referrer, r: &Referral) -> bool {
    referrer.cluster_scoped()
        || is_cluster_scoped(&r.current.gvk)
        || r.current.gvk.kind == "ServiceAccount"
        || r.current.effective_namespace() == referrer.id.effective_namespace()
}

fn same_affixes(referrer: &Referrer, r: &Referral) -> bool {
    same_ending(&referrer.prefixes, &r.prefixes) && same_ending(&referrer.suffixes, &r.suffixes)
}

/// kustomize's `SameEndingSubSlice`: the shorter list is the tail of the longer one, and an
/// empty list only matches an empty list.
fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.is_empty();
    }
    long.ends_with(short)
}

fn agree(a: &Referral, b: &Referral, agreement: Agreement) -> bool {
    a.current.name == b.current.name && (agreement == Agreement::Name || a.current.namespace == b.current.namespace)
}

#[cfg(test)]
#[path = "nameref_tests.rs"]
mod tests;
