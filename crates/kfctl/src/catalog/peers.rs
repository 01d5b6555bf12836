//! Objects whose fields depend on which *other* components are in the build.
//!
//! kustomize builds a profile as one kustomization, so a component's object can take a value
//! from another component's: the name-reference fix-up renames a reference to whichever
//! renamed object of the right kind and old name it finds anywhere in the build (KServe's
//! Certificates name the Issuer `selfsigned-issuer`; the admission webhook and the PVC viewer
//! each bring one, prefixed), and a var declared by one component is expanded in another's
//! objects (the JobSet CRD's `cert-manager.io/inject-ca-from` is `$(CERTIFICATE_NAMESPACE)/…`,
//! which the PVC viewer's vars fill in). Leave such a *peer* out and kustomize prints the
//! object differently: `kfctl-rs template` rebuilds, so it does too.
//!
//! A chart cannot rebuild, so the export needs every variant up front. The engine records,
//! for each object, the other top-level entries whose objects it consulted
//! (`Resource::influenced_by`); `peers_of` turns those into component names
//! ([`PeerDependent`], kept in `Prepared::peers`). [`variants`] then builds the profile again
//! with each non-empty subset of an object's peers disabled (each subset once, through the
//! render cache) and keeps the objects as those builds print them ([`Variant`]). The chart
//! export writes each such object with one branch per variant, chosen by which of its peers
//! the install's values leave out (`chart::peers`).

use super::CatalogError;
use super::render::{Prepared, RenderRequest, RenderedObject};
use super::strvals::{SetFlag, SetKind};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// More peers than this for one object would need too many builds (2^n − 1); none of
/// upstream's releases comes near (the most is two).
pub const MAX_PEERS: usize = 4;

/// An object of the default render whose fields other components' presence decides.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerDependent {
    /// Its position in `Prepared::objects`.
    pub index: usize,
    /// The other components, sorted.
    pub peers: Vec<String>,
}

/// The object as built with `off` (a non-empty subset of its peers, sorted) disabled.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The peers left out.
    pub off: Vec<String>,
    /// The object as that build prints it.
    pub obj: Value,
}

/// Every variant of each peer-dependent object, by its position in `Prepared::objects`; an
/// object whose every variant equals the default has none.
pub type Variants = BTreeMap<usize, Vec<Variant>>;

/// The components (other than `own`) of the entries an object was influenced by.
pub(crate) fn peers_of(
    influenced_by: &[Arc<str>],
    component_of_entry: &dyn Fn(&str) -> Option<String>,
    own: &str,
) -> Vec<String> {
    let peers: BTreeSet<String> = influenced_by
        .iter()
        .filter_map(|entry| component_of_entry(entry))
        .filter(|c| c != own && c != super::attribute::UNKNOWN)
        .collect();
    peers.into_iter().collect()
}

/// [`super::render::prepare`] (its CRDs maybe stubs: `render::prepare_deferred`), and
/// the variants of its peer-dependent objects: what the chart export starts from.
pub fn prepare_with_variants(req: &RenderRequest) -> Result<Prepared, CatalogError> {
    let mut prepared = super::render::prepare_deferred(req)?;
    prepared.peer_variants = Some(variants(req, &prepared)?);
    Ok(prepared)
}

/// Build the variants of every peer-dependent object of `prepared` (which `req` made).
pub fn variants(req: &RenderRequest, prepared: &Prepared) -> Result<Variants, CatalogError> {
    // each build keeps only the peer-dependent objects
    let wanted: BTreeSet<_> = prepared
        .peers
        .iter()
        .filter_map(|d| prepared.objects.get(d.index))
        .map(|o| kfctl_yaml::compare::identity(&o.obj))
        .collect();
    let builds = builds(req, prepared, &wanted)?;
    let mut out = Variants::new();
    for dependent in &prepared.peers {
        let Some(default) = prepared.objects.get(dependent.index) else { continue };
        let mut found = Vec::new();
        for (off, left_out) in left_outs(prepared, dependent, default)? {
            let identity = kfctl_yaml::compare::identity(&default.obj);
            let variant = builds[&left_out].iter().find(|o| kfctl_yaml::compare::identity(o) == identity);
            let Some(obj) = variant else {
                return Err(CatalogError::PeerVariantMissing {
                    object: kfctl_yaml::compare::object_label(&default.obj),
                    off: off.join(", "),
                });
            };
            found.push(Variant { off, obj: obj.clone() });
        }
        if found.iter().any(|v| v.obj != default.obj) {
            out.insert(dependent.index, found);
        }
    }
    Ok(out)
}

/// A subset of a dependent's peers, and the components a build leaves out for it.
type LeftOut = (Vec<String>, Vec<String>);

/// Each subset of `dependent`'s peers left out, with the components a build leaves out for
/// it ([`with_dependents`]), but for those that would leave out its own component (Helm
/// refuses that too).
fn left_outs(
    prepared: &Prepared,
    dependent: &PeerDependent,
    default: &RenderedObject,
) -> Result<Vec<LeftOut>, CatalogError> {
    if dependent.peers.len() > MAX_PEERS {
        return Err(CatalogError::TooManyPeers {
            object: kfctl_yaml::compare::object_label(&default.obj),
            peers: dependent.peers.join(", "),
            max: MAX_PEERS,
        });
    }
    Ok(subsets(&dependent.peers)
        .into_iter()
        .map(|off| {
            let left_out = with_dependents(prepared, &off);
            (off, left_out)
        })
        .filter(|(_, left_out)| !left_out.contains(&default.component))
        .collect())
}

/// The builds every dependent's variants need, each once. The first is made alone: when the
/// render cache served it, the others are made on all cores; when it was built, they are made
/// one at a time too (a build holds a whole platform: two at once doubled an export's peak
/// memory). The first error in the order the dependents need them is the one returned.
fn builds(
    req: &RenderRequest,
    prepared: &Prepared,
    wanted: &BTreeSet<(String, String, String, String)>,
) -> Result<BTreeMap<Vec<String>, Vec<Value>>, CatalogError> {
    use rayon::prelude::*;
    let mut needed: Vec<Vec<String>> = Vec::new();
    for dependent in &prepared.peers {
        let Some(default) = prepared.objects.get(dependent.index) else { continue };
        for (_, left_out) in left_outs(prepared, dependent, default)? {
            if !needed.contains(&left_out) {
                needed.push(left_out);
            }
        }
    }
    let Some(first) = needed.first() else { return Ok(BTreeMap::new()) };
    let (objects, outcome) = build_without(req, first, wanted)?;
    let rest = &needed[1..];
    let build = |left_out: &Vec<String>| build_without(req, left_out, wanted).map(|(objects, _)| objects);
    let built: Vec<_> = match outcome {
        crate::render_cache::Outcome::Hit => rest.par_iter().map(build).collect(),
        _ => rest.iter().map(build).collect(),
    };
    let mut out = BTreeMap::from([(first.clone(), objects)]);
    for (left_out, objects) in rest.iter().zip(built) {
        out.insert(left_out.clone(), objects?);
    }
    Ok(out)
}

/// `off` and every component of the profile that needs one of them, transitively: a build
/// cannot leave out a dependency alone (nor can Helm), and leaving out the dependents too does
/// not change an object they are no peers of. Sorted.
fn with_dependents(prepared: &Prepared, off: &[String]) -> Vec<String> {
    let mut all: BTreeSet<String> = off.iter().cloned().collect();
    loop {
        let needs_one = |name: &str| {
            let deps = prepared.catalog.components.get(name).map(|d| d.dependencies.as_slice()).unwrap_or_default();
            deps.iter().any(|d| all.contains(d) && !super::provided::is_provided(&prepared.user, d))
        };
        let more: Vec<String> = prepared
            .profile
            .components
            .iter()
            .map(|(name, _)| name)
            .filter(|name| !all.contains(*name) && needs_one(name))
            .cloned()
            .collect();
        if more.is_empty() {
            return all.into_iter().collect();
        }
        all.extend(more);
    }
}

/// Every non-empty subset of `peers` (sorted as `peers` is), smallest first.
fn subsets(peers: &[String]) -> Vec<Vec<String>> {
    let mut all: Vec<Vec<String>> = (1u32..(1 << peers.len()))
        .map(|mask| peers.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, p)| p.clone()).collect())
        .collect();
    all.sort_by_key(Vec::len);
    all
}

/// The objects of the default render (values not applied) of `req` with `off` disabled whose
/// identities are `wanted`, and whether the render cache served the build.
fn build_without(
    req: &RenderRequest,
    off: &[String],
    wanted: &BTreeSet<(String, String, String, String)>,
) -> Result<(Vec<Value>, crate::render_cache::Outcome), CatalogError> {
    let mut req = req.clone();
    for component in off {
        req.sets.push(SetFlag { kind: SetKind::Set, expression: format!("{component}.enabled=false") });
    }
    let names: BTreeSet<&str> = wanted.iter().map(|(_, _, _, name)| name.as_str()).collect();
    let names: Vec<String> = names.into_iter().map(str::to_string).collect();
    let read = kfctl_kustomize::build_cache::Read { names: Some(&names), defer_schemas: false };
    let built = super::render::built(&req, read)?;
    let objects =
        built.objects.into_iter().map(|o| o.obj).filter(|o| wanted.contains(&kfctl_yaml::compare::identity(o)));
    Ok((objects.collect(), built.outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_are_every_non_empty_choice_smallest_first() {
        let peers = vec!["a".to_string(), "b".to_string()];
        let got = subsets(&peers);
        assert_eq!(got, vec![vec!["a".to_string()], vec!["b".to_string()], vec!["a".to_string(), "b".to_string()]]);
        assert_eq!(subsets(&["x".to_string(), "y".to_string(), "z".to_string()]).len(), 7);
    }

    #[test]
    fn peers_are_other_known_components_once() {
        let tags = |entry: &str| match entry {
            "../a" | "../a2" => Some("a".to_string()),
            "../b" => Some("b".to_string()),
            "../x" => Some(super::super::attribute::UNKNOWN.to_string()),
            _ => None,
        };
        let by: Vec<Arc<str>> = ["../a", "../a2", "../b", "../x", "../gone"].into_iter().map(Arc::from).collect();
        assert_eq!(peers_of(&by, &tags, "b"), vec!["a".to_string()]);
        assert_eq!(peers_of(&by, &tags, "c"), vec!["a".to_string(), "b".to_string()]);
    }
}
