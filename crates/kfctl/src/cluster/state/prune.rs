//! What converging may delete, and what it must keep: the prune/keep policy as one table.
//!
//! An install onto a cluster that has a record converges it to the new render. Objects the
//! previous record lists and the new render no longer holds are *pruned*, latest wave first,
//! after every new wave has converged. Some kinds hold users' data and are never deleted
//! implicitly; `GUARDED` lists them with what would be lost. They are *kept*: moved from the
//! record's inventory to its `kept` list (so `uninstall --purge` still finds them) and reported
//! as `kept: 3 CRDs — their custom resources would be lost; --purge to delete`. Objects that
//! existed before kfctl-rs applied them are never pruned either: kfctl-rs releases them.
//! Objects `adopt` took over are the install's own (they are the adopted release's objects,
//! which upstream's loop applied): pruned like created ones, guarded kinds kept the same way.
//!
//! Identity ignores the API version: an object the new release serves at `v1` instead of
//! `v1beta1` is the same object, not a prune plus a create.

use crate::cluster::object::ObjectRef;
use crate::cluster::record::InventoryEntry;
use serde::Serialize;

/// The table lives with the catalog's data (it also drives the chart export's resource policy).
pub(crate) use crate::catalog::guarded::{GUARDED, Guarded};

/// The reason given for objects kfctl-rs found already there.
pub(crate) const PREEXISTING: &str =
    "existed before the install (no kfctl-rs mark): not kfctl-rs's, never deleted; `kfctl-rs adopt` takes it over";

/// The reason given for objects of a dependency the cluster now provides.
pub const HANDED_OVER: &str = "its dependency is now the cluster's own (`provided`); released, not deleted";

/// The guard rule of an object's kind, if any.
pub(crate) fn guarded(r: &ObjectRef) -> Option<&'static Guarded> {
    let gk = r.group_kind();
    GUARDED.iter().find(|g| g.group_kind == gk)
}

/// `group/Kind namespace/name`: an object's identity across API versions.
pub(crate) fn identity(r: &ObjectRef) -> (String, Option<String>, String) {
    (r.group_kind(), r.namespace.clone(), r.name.clone())
}

/// One object not deleted, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    /// The object kept.
    pub object: ObjectRef,
    /// Why it was kept.
    pub reason: String,
}

/// The outcome of comparing the previous inventory with the new plan.
#[derive(Debug, Clone, Default)]
pub(crate) struct PruneSet {
    /// To delete, in deletion order (latest wave first, reverse apply order within a wave).
    pub delete: Vec<InventoryEntry>,
    /// Guarded kinds kept (they move to the record's `kept` list).
    pub kept: Vec<InventoryEntry>,
    /// Objects that existed before kfctl-rs: dropped from the inventory, left alone.
    pub released: Vec<InventoryEntry>,
    /// Objects of components the cluster now provides: dropped from the inventory, left alone.
    pub handed_over: Vec<InventoryEntry>,
}

/// Split the entries of `previous` that `holds` says the new render no longer holds; those of
/// `handed_over` components (the cluster provides them now) are released, whatever their kind.
pub(crate) fn prune_set(
    previous: &[InventoryEntry],
    holds: impl Fn(&ObjectRef) -> bool,
    purge: bool,
    handed_over: &[String],
) -> PruneSet {
    let mut set = PruneSet::default();
    let mut gone: Vec<(usize, &InventoryEntry)> =
        previous.iter().enumerate().filter(|(_, e)| !holds(&e.reference)).collect();
    gone.sort_by(|(ia, a), (ib, b)| b.wave.cmp(&a.wave).then(ib.cmp(ia)));
    for (_, entry) in gone {
        let bucket = if handed_over.contains(&entry.component) {
            &mut set.handed_over
        } else if !entry.owned() {
            &mut set.released
        } else if guarded(&entry.reference).is_some() && !purge {
            &mut set.kept
        } else {
            &mut set.delete
        };
        bucket.push(entry.clone());
    }
    set
}

/// `kept: 3 CRDs — their custom resources would be lost; --purge to delete`, one line per kind.
pub(crate) fn kept_summary(kept: &[InventoryEntry]) -> Vec<String> {
    GUARDED
        .iter()
        .filter_map(|g| {
            let n = kept.iter().filter(|e| e.reference.group_kind() == g.group_kind).count();
            (n > 0).then(|| format!("kept: {n} {} — {}; --purge to delete", g.plural, g.loses))
        })
        .collect()
}

/// Kept objects with their reasons, for reports.
pub(crate) fn kept_with_reasons(set: &PruneSet) -> Vec<Kept> {
    let guarded_reason =
        |r: &ObjectRef| guarded(r).map_or(String::new(), |g| format!("{}; --purge to delete", g.loses));
    let kept = set.kept.iter().map(|e| Kept { object: e.reference.clone(), reason: guarded_reason(&e.reference) });
    let released = set.released.iter().map(|e| Kept { object: e.reference.clone(), reason: PREEXISTING.into() });
    let handed = set.handed_over.iter().map(|e| Kept { object: e.reference.clone(), reason: HANDED_OVER.into() });
    kept.chain(released).chain(handed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(api: &str, kind: &str, name: &str, wave: usize, created: bool) -> InventoryEntry {
        let reference = ObjectRef { api_version: api.into(), kind: kind.into(), namespace: None, name: name.into() };
        InventoryEntry { reference, component: "c".into(), wave, created, adopted: false, uid: None }
    }

    #[test]
    fn guarded_kinds_are_kept_preexisting_released_the_rest_deleted_latest_wave_first() {
        let previous = vec![
            entry("v1", "Namespace", "ns", 1, true),
            entry("apiextensions.k8s.io/v1", "CustomResourceDefinition", "crd", 2, true),
            entry("v1", "ConfigMap", "a", 3, true),
            entry("apps/v1", "Deployment", "d", 5, true),
            entry("v1", "ConfigMap", "theirs", 3, false),
            entry("v1", "ConfigMap", "still", 3, true),
        ];
        let set = prune_set(&previous, |r| r.name == "still", false, &[]);
        let names = |v: &[InventoryEntry]| v.iter().map(|e| e.reference.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&set.delete), ["d", "a"]);
        assert_eq!(names(&set.kept), ["crd", "ns"]);
        assert_eq!(names(&set.released), ["theirs"]);
        assert_eq!(
            kept_summary(&set.kept),
            [
                "kept: 1 CRDs — their custom resources would be lost; --purge to delete",
                "kept: 1 Namespaces — everything in them would be lost; --purge to delete"
            ]
        );
        let purged = prune_set(&previous, |r| r.name == "still", true, &[]);
        assert_eq!(names(&purged.delete), ["d", "a", "crd", "ns"]);
        let handed = prune_set(&previous, |r| r.name == "still", true, &["c".to_string()]);
        assert!(handed.delete.is_empty() && handed.released.is_empty(), "{handed:?}");
        assert_eq!(names(&handed.handed_over), ["d", "theirs", "a", "crd", "ns"]);
    }

    #[test]
    fn identity_ignores_the_api_version() {
        let a = entry("kubeflow.org/v1beta1", "Notebook", "n", 1, true).reference;
        let b = entry("kubeflow.org/v1", "Notebook", "n", 1, true).reference;
        assert_eq!(identity(&a), identity(&b));
    }
}
