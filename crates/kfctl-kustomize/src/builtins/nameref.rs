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
//! - among them, the *referral* is chosen by `eligible_referrals` and `choose_referral`: a previous id (never the
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
use std::collections::{HashMap, HashSet};

/// Fix every name reference to renamed objects, at the `nameReference` field specs.
pub(crate) fn fix_back_references(resources: &mut ResMap, config: &TransformConfig) -> Result<()> {
    let table = Referrals::of(resources);
    let mut found = Vec::new();
    let mut influences: Vec<(usize, std::sync::Arc<str>)> = Vec::new();
    for index in 0..resources.len() {
        let fixes = fixes_for(resources.get(index), config);
        if fixes.is_empty() {
            continue;
        }
        let referrer = Referrer::of(resources.get(index))?;
        let obj = &mut resources.get_mut(index).obj;
        for (spec, target) in fixes {
            let fix = Fix { referrer: &referrer, target, path: &spec.path, table: &table };
            let mut seen = Seen { found: &mut found, origins: Vec::new() };
            let visited = fieldpath::visit_mut(obj, &fieldpath::parse(&spec.path), false, &mut |value| {
                fix.update(value, &mut seen)
            });
            influences.extend(seen.origins.into_iter().map(|origin| (index, origin)));
            visited.map_err(|source| KustomizeError::NameReference {
                object: referrer.id.to_string(),
                field: spec.path.clone(),
                source,
            })?;
        }
    }
    for (index, referrer) in found {
        resources.get_mut(index).referenced_by.push(referrer);
    }
    for (index, origin) in influences {
        resources.get_mut(index).influenced_from(Some(&origin));
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
        .filter(|(spec, _)| spec.selects(&original))
        .collect()
}

/// What the fix-up needs to know about a possible referral (names do not change meanwhile).
#[derive(Debug)]
struct Referral {
    index: usize,
    previous: Vec<ResId>,
    current: ResId,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    origin: Option<std::sync::Arc<str>>,
}

impl Referral {
    fn of(index: usize, r: &Resource) -> Self {
        Referral {
            index,
            previous: r.previous_ids.clone(),
            current: r.current_id(),
            prefixes: r.name_prefixes.clone(),
            suffixes: r.name_suffixes.clone(),
            origin: r.origin.clone(),
        }
    }

    fn original_namespace(&self) -> Option<&str> {
        namespace_of(self.previous.first().unwrap_or(&self.current))
    }

    fn current_namespace(&self) -> Option<&str> {
        namespace_of(&self.current)
    }
}

/// Every possible referral, indexed so that one reference costs what its candidates cost, not
/// what the whole build costs: by previous name, and the namespace pairs that decide whether
/// any visible referral was originally in a namespace (see [`Fix::in_namespace`]).
struct Referrals {
    all: Vec<Referral>,
    /// Positions in `all` by each name among the previous ids, ascending.
    by_previous_name: HashMap<String, Vec<usize>>,
    /// Original namespaces of every namespaced referral.
    originally: HashSet<String>,
    /// Original namespaces of referrals that are cluster-scoped now.
    originally_cluster_scoped_now: HashSet<String>,
    /// (current effective namespace, original namespace) pairs.
    by_effective: HashSet<(String, String)>,
    /// (current `metadata.namespace`, original namespace) pairs.
    by_field: HashSet<(String, String)>,
}

impl Referrals {
    fn of(resources: &ResMap) -> Self {
        let all: Vec<Referral> = resources.iter().enumerate().map(|(index, r)| Referral::of(index, r)).collect();
        let mut table = Referrals {
            by_previous_name: HashMap::new(),
            originally: HashSet::new(),
            originally_cluster_scoped_now: HashSet::new(),
            by_effective: HashSet::new(),
            by_field: HashSet::new(),
            all: Vec::new(),
        };
        for (position, r) in all.iter().enumerate() {
            for id in &r.previous {
                let positions = table.by_previous_name.entry(id.name.clone()).or_default();
                if positions.last() != Some(&position) {
                    positions.push(position);
                }
            }
            let Some(original) = r.original_namespace() else { continue };
            table.originally.insert(original.to_string());
            if is_cluster_scoped(&r.current.gvk) {
                table.originally_cluster_scoped_now.insert(original.to_string());
            }
            table.by_effective.insert((r.current.effective_namespace().to_string(), original.to_string()));
            table.by_field.insert((r.current.namespace.clone(), original.to_string()));
        }
        table.all = all;
        table
    }

    /// The referrals that had `old` as a previous name and that `referrer` can see, in order.
    fn named<'a>(&'a self, old: &str, referrer: &'a Referrer) -> impl Iterator<Item = &'a Referral> + 'a {
        let positions = self.by_previous_name.get(old).map_or(&[][..], Vec::as_slice);
        positions.iter().map(|&p| &self.all[p]).filter(|r| referrer.sees(r))
    }

    /// Whether a referral `referrer` can see was originally in `namespace`.
    fn any_visible_originally_in(&self, referrer: &Referrer, namespace: &str) -> bool {
        let key = |ns: &str| (ns.to_string(), namespace.to_string());
        match &referrer.visibility {
            Visibility::All => self.originally.contains(namespace),
            Visibility::Namespaced { subject_namespaces } => {
                self.originally_cluster_scoped_now.contains(namespace)
                    || self.by_effective.contains(&key(referrer.id.effective_namespace()))
                    || subject_namespaces.iter().any(|ns| self.by_field.contains(&key(ns)))
            }
        }
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
    visibility: Visibility,
    origin: Option<std::sync::Arc<str>>,
}

/// kustomize's `SubsetThatCouldBeReferencedByResource`: what a referrer can see.
enum Visibility {
    /// A cluster-scoped referrer sees every object.
    All,
    /// Others see cluster-scoped objects, those in their namespace, and for a RoleBinding those
    /// in the namespaces of its ServiceAccount subjects.
    Namespaced { subject_namespaces: Vec<String> },
}

impl Referrer {
    fn of(r: &Resource) -> Result<Self> {
        let role_ref = r.obj.get("roleRef").and_then(|rr| {
            let group = rr.get("apiGroup").filter(|v| !v.is_null())?;
            let kind = rr.get("kind").filter(|v| !v.is_null())?;
            Some(Gvk::new(
                &fieldpath::scalar_text(Some(group)).unwrap_or_default(),
                "",
                &fieldpath::scalar_text(Some(kind)).unwrap_or_default(),
            ))
        });
        let id = r.current_id();
        let visibility = match is_cluster_scoped(&id.gvk) {
            true => Visibility::All,
            false => Visibility::Namespaced { subject_namespaces: role_binding_subject_namespaces(r)? },
        };
        let (prefixes, suffixes) = (r.name_prefixes.clone(), r.name_suffixes.clone());
        Ok(Referrer { id, prefixes, suffixes, role_ref, visibility, origin: r.origin.clone() })
    }

    fn cluster_scoped(&self) -> bool {
        is_cluster_scoped(&self.id.gvk)
    }

    fn sees(&self, r: &Referral) -> bool {
        match &self.visibility {
            Visibility::All => true,
            Visibility::Namespaced { subject_namespaces } => {
                is_cluster_scoped(&r.current.gvk)
                    || r.current.effective_namespace() == self.id.effective_namespace()
                    || subject_namespaces.contains(&r.current.namespace)
            }
        }
    }
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
    table: &'a Referrals,
}

/// What fixing one field spec of a referrer saw: each referral chosen (with the referrer's
/// id), and the entries of every eligible candidate, chosen or not (without them the choice
/// could differ).
struct Seen<'f> {
    found: &'f mut Vec<(usize, ResId)>,
    origins: Vec<std::sync::Arc<str>>,
}

impl Fix<'_> {
    /// Called on each value at the field spec's path.
    fn update(&self, value: &mut Value, found: &mut Seen<'_>) -> std::result::Result<(), FieldError> {
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

    fn update_scalar(&self, value: &mut Value, found: &mut Seen<'_>) -> std::result::Result<(), FieldError> {
        let old = fieldpath::scalar_text(Some(value)).unwrap_or_default();
        let candidates = self.table.named(&old, self.referrer).collect();
        let Some(referral) = self.select(&old, candidates, Agreement::Name, found)? else {
            return Ok(());
        };
        found.found.push((referral.index, self.referrer.id.clone()));
        if referral.current.name != old {
            *value = Value::String(referral.current.name.clone());
        }
        Ok(())
    }

    fn update_map(&self, map: &mut Map<String, Value>, found: &mut Seen<'_>) -> std::result::Result<(), FieldError> {
        let Some(name) = map.get("name") else {
            return Err(FieldError::NoName);
        };
        let old = fieldpath::scalar_text(Some(name)).unwrap_or_default();
        let named = self.table.named(&old, self.referrer);
        let candidates = match map.get("namespace") {
            None => named.collect(),
            Some(ns) => self.in_namespace(named, &fieldpath::scalar_text(Some(ns)).unwrap_or_default()),
        };
        let Some(referral) = self.select(&old, candidates, Agreement::NameAndNamespace, found)? else {
            return Ok(());
        };
        found.found.push((referral.index, self.referrer.id.clone()));
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

    /// Of the candidates, those originally in `namespace` if any visible referral was
    /// originally there, else those in it now (kustomize narrows every visible referral this
    /// way before it looks at names; narrowing the named ones alike gives the same choice).
    fn in_namespace<'r>(&self, named: impl Iterator<Item = &'r Referral>, namespace: &str) -> Vec<&'r Referral> {
        if self.table.any_visible_originally_in(self.referrer, namespace) {
            named.filter(|r| r.original_namespace() == Some(namespace)).collect()
        } else {
            named.filter(|r| r.current_namespace() == Some(namespace)).collect()
        }
    }

    /// The other entries whose eligible candidates could change the choice if their objects
    /// were not in the build: a candidate with the referrer's affixes (it can be chosen, or
    /// make the choice ambiguous), or any candidate when none comes from the referrer's own
    /// entry (left alone, it is chosen whatever its affixes). The others are filtered out by
    /// their affixes whenever the referrer's own candidate remains.
    fn deciding_entries(&self, eligible: &[&Referral]) -> Vec<std::sync::Arc<str>> {
        let own = |r: &Referral| r.origin.is_none() || r.origin == self.referrer.origin;
        let fixed = eligible.iter().any(|r| own(r));
        eligible
            .iter()
            .filter(|r| !own(r) && (!fixed || same_affixes(self.referrer, r)))
            .filter_map(|r| r.origin.clone())
            .collect()
    }

    fn select<'r>(
        &self,
        old: &str,
        candidates: Vec<&'r Referral>,
        agreement: Agreement,
        seen: &mut Seen<'_>,
    ) -> std::result::Result<Option<&'r Referral>, FieldError> {
        let eligible = eligible_referrals(self.referrer, self.target, self.path, old, candidates);
        seen.origins.extend(self.deciding_entries(&eligible));
        choose_referral(self.referrer, old, eligible, agreement)
    }
}

/// What several remaining candidates must share for the choice not to matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agreement {
    Name,
    NameAndNamespace,
}

/// kustomize's `selectReferral`, first half: the candidates that had the old name, are
/// selected by the target gvk (and the roleRef's), and are in reach of the referrer.
fn eligible_referrals<'r>(
    referrer: &Referrer,
    target: &Gvk,
    path: &str,
    old: &str,
    candidates: Vec<&'r Referral>,
) -> Vec<&'r Referral> {
    let role_ref = if path.ends_with("roleRef/name") { referrer.role_ref.as_ref() } else { None };
    candidates
        .into_iter()
        .filter(|r| r.previous.iter().any(|id| id.name == old))
        .filter(|r| r.previous.iter().any(|id| id.gvk.is_selected_by(target)))
        .filter(|r| role_ref.is_none_or(|gvk| r.previous.iter().any(|id| id.gvk.is_selected_by(gvk))))
        .filter(|r| same_namespace_or_exempt(referrer, r))
        .collect()
}

/// kustomize's `selectReferral`, second half: one eligible candidate is the referral; of
/// several, those renamed with the referrer's affixes, which must agree (see the module doc).
fn choose_referral<'r>(
    referrer: &Referrer,
    old: &str,
    candidates: Vec<&'r Referral>,
    agreement: Agreement,
) -> std::result::Result<Option<&'r Referral>, FieldError> {
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
