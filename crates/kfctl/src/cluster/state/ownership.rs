//! Ownership checked before any delete: prune, uninstall and purge delete only what the cluster
//! itself shows as kfctl-rs's.
//!
//! The record is a ConfigMap anyone with write access to `kfctl-system` can edit, and its seal
//! is a digest anyone can recompute, so the record alone never decides a delete. An entry is
//! deleted only when:
//! * it is not a namespace the cluster owns (`default`, `kube-*`) or the record's own
//!   ([`protected_namespace`]);
//! * the record says kfctl-rs created or adopted it (an object that existed before the install
//!   is released, never deleted);
//! * the live object carries kfctl-rs's mark ([`crate::cluster::mark`]), which only kfctl-rs's own
//!   create (or an explicit `adopt`) puts there, and `--force-conflicts` never does;
//! * its UID is the one recorded when kfctl-rs applied it (an object deleted and re-created by
//!   someone else is someone else's; an entry without a UID deletes nothing);
//! * its sealed digest matches ([`crate::cluster::record`]): an entry added or changed by hand is
//!   reported as such and skipped.
//!
//! An entry that fails is reported with the reason and skipped, never deleted; the DELETE
//! itself carries the UID as a precondition.

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath};
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::scoped;
use crate::cluster::mark::{MARK_LABEL, carries_mark};
use crate::cluster::object::ObjectRef;
use crate::cluster::prune::PREEXISTING;
use crate::cluster::record::{InventoryEntry, RECORD_NAMESPACE};
use crate::cluster::retry::{ApiFailure, Backoff, Context, Decision, classify};
use futures::StreamExt;
use serde_json::Value;
use std::time::Duration;

/// The reason for a hand-edited entry.
pub(crate) const HAND_EDITED: &str = "its install-record entry was added or changed by hand (its digest does not match); \
     not deleted";

/// Whether `name` is a namespace kfctl-rs never deletes from a record entry.
pub(crate) fn protected_namespace(name: &str) -> bool {
    name == "default" || name.starts_with("kube-") || name == RECORD_NAMESPACE
}

/// Why an entry must not be deleted whatever the live object says, if it must not.
pub(crate) fn refused_by_name(r: &ObjectRef) -> Option<String> {
    (r.is_kind("", "Namespace") && protected_namespace(&r.name))
        .then(|| format!("namespace {} belongs to the cluster; kfctl-rs never deletes it", r.name))
}

/// Why the live object is not kfctl-rs's to delete, if it is not: the record must say kfctl-rs
/// created or adopted it, the object must carry kfctl-rs's mark, and its UID must be the one
/// recorded.
pub(crate) fn not_ours(entry: &InventoryEntry, live: &Value) -> Option<String> {
    let live_uid = live.pointer("/metadata/uid").and_then(Value::as_str);
    if !entry.owned() {
        return Some(PREEXISTING.to_string());
    }
    match (entry.uid.as_deref(), live_uid) {
        (Some(recorded), live) if live != Some(recorded) => Some(format!(
            "its UID {} is not the one kfctl-rs recorded ({recorded}): re-created by someone else, not deleted",
            live.unwrap_or("(none)")
        )),
        _ if !carries_mark(live) => Some(format!(
            "it carries no kfctl-rs mark (label {MARK_LABEL}): not created by kfctl-rs, not deleted; \
             `kfctl-rs adopt` takes over what kfctl-rs should own"
        )),
        (Some(_), _) => None,
        (None, _) => Some("its install-record entry holds no UID to check it against; not deleted".into()),
    }
}

/// What deleting one entry came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Deletion {
    Deleted,
    /// Already gone (or its kind is not served any more).
    Gone,
    /// Not kfctl-rs's to delete, and why.
    Skipped(String),
}

/// Delete entries in the order given, a wave at a time: the objects deleted (or already gone),
/// and the entries skipped with why. Stops at the first failure.
pub(crate) async fn delete_entries(
    api: &ApiClient,
    resolver: &Resolver,
    entries: &[InventoryEntry],
    concurrency: usize,
) -> Result<(Vec<ObjectRef>, Vec<(InventoryEntry, String)>), ClusterError> {
    let (mut done, mut skipped) = (Vec::new(), Vec::new());
    let mut waves: Vec<usize> = entries.iter().map(|e| e.wave).collect();
    waves.dedup();
    for wave in waves {
        let batch: Vec<InventoryEntry> = entries.iter().filter(|e| e.wave == wave).cloned().collect();
        for (entry, result) in delete_batch(api, resolver, &batch, concurrency).await {
            let object = entry.reference.clone();
            match result
                .map_err(|failure| ClusterError::Refused { object: object.clone(), failure: Box::new(failure) })?
            {
                Deletion::Skipped(reason) => skipped.push((entry, reason)),
                Deletion::Deleted | Deletion::Gone => done.push(object),
            }
        }
    }
    Ok((done, skipped))
}

/// Delete a batch concurrently, each after its ownership check.
pub(crate) async fn delete_batch(
    api: &ApiClient,
    resolver: &Resolver,
    batch: &[InventoryEntry],
    concurrency: usize,
) -> Vec<(InventoryEntry, Result<Deletion, ApiFailure>)> {
    futures::stream::iter(batch)
        .map(|e| async { (e.clone(), delete_checked(api, resolver, e).await) })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}

/// Delete one entry's object if the cluster shows it as kfctl-rs's.
async fn delete_checked(api: &ApiClient, resolver: &Resolver, entry: &InventoryEntry) -> Result<Deletion, ApiFailure> {
    let r = &entry.reference;
    if let Some(reason) = refused_by_name(r) {
        return Ok(Deletion::Skipped(reason));
    }
    let path = match resolver.resolve(&r.api_version, &r.kind).await {
        Ok(path) => path,
        Err(f) if f.is_no_kind_match() => return Ok(Deletion::Gone),
        Err(f) => return Err(f),
    };
    let Some(live) = api.get(&path, scoped(&path, r), &r.name).await? else { return Ok(Deletion::Gone) };
    if let Some(reason) = not_ours(entry, &live) {
        return Ok(Deletion::Skipped(reason));
    }
    let uid = live.pointer("/metadata/uid").and_then(Value::as_str);
    delete_settled(api, &path, r, uid).await
}

/// DELETE (only the object with this UID), retrying transient failures a few times. When an
/// attempt went unanswered and a later one finds the object gone, the unanswered one deleted
/// it: the truth is "deleted", not "already gone".
async fn delete_settled(
    api: &ApiClient,
    path: &ResourcePath,
    r: &ObjectRef,
    uid: Option<&str>,
) -> Result<Deletion, ApiFailure> {
    let backoff = Backoff { initial: Duration::from_millis(200), max: Duration::from_secs(2) };
    let (mut attempt, mut unanswered) = (0, false);
    loop {
        match api.without_retries().delete_uid(path, scoped(path, r), &r.name, uid).await {
            Ok(true) => return Ok(Deletion::Deleted),
            Ok(false) => return Ok(if unanswered { Deletion::Deleted } else { Deletion::Gone }),
            Err(f) if f.status == Some(409) => {
                let why =
                    "it changed between the ownership check and the delete (UID precondition failed); not deleted";
                return Ok(Deletion::Skipped(why.into()));
            }
            Err(f) if attempt < 5 && classify(&f, Context::default()).1 != Decision::FailFast => {
                unanswered |= f.status.is_none();
                tokio::time::sleep(backoff.delay_for(Decision::Retry, &f, attempt)).await;
                attempt += 1;
            }
            Err(f) => return Err(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::mark::marked;
    use serde_json::json;

    fn entry(kind: &str, name: &str, uid: Option<&str>) -> InventoryEntry {
        let reference = ObjectRef { api_version: "v1".into(), kind: kind.into(), namespace: None, name: name.into() };
        InventoryEntry {
            reference,
            component: "c".into(),
            wave: 1,
            created: true,
            adopted: false,
            uid: uid.map(String::from),
        }
    }

    #[test]
    fn cluster_namespaces_are_never_deleted_from_an_entry() {
        for name in ["default", "kube-public", "kube-system", "kfctl-system"] {
            assert!(refused_by_name(&entry("Namespace", name, None).reference).is_some(), "{name}");
        }
        assert!(refused_by_name(&entry("Namespace", "kubeflow", None).reference).is_none());
        assert!(refused_by_name(&entry("ConfigMap", "default", None).reference).is_none());
    }

    #[test]
    fn only_the_mark_the_recorded_uid_and_a_created_entry_make_an_object_ours() {
        let live = |uid: &str| marked(&json!({"metadata": {"uid": uid}}));
        assert!(not_ours(&entry("ConfigMap", "a", Some("u1")), &live("u1")).is_none());
        let recreated = not_ours(&entry("ConfigMap", "a", Some("u1")), &live("u2")).unwrap();
        assert!(recreated.contains("UID u2 is not the one kfctl-rs recorded (u1)"), "{recreated}");
        let no_uid = not_ours(&entry("ConfigMap", "a", None), &live("u1")).unwrap();
        assert!(no_uid.contains("holds no UID"), "{no_uid}");
        // a forged entry with the live UID of an unmarked object, whoever manages its fields
        let foreign =
            json!({"metadata": {"uid": "u1", "managedFields": [{"manager": "kfctl-rs", "operation": "Apply"}]}});
        let forged = not_ours(&entry("ServiceAccount", "a", Some("u1")), &foreign).unwrap();
        assert!(forged.contains("carries no kfctl-rs mark"), "{forged}");
        assert!(not_ours(&entry("Namespace", "a", Some("u1")), &json!({"metadata": {"uid": "u1"}})).is_some());
        let mut preexisting = entry("ConfigMap", "a", Some("u1"));
        preexisting.created = false;
        assert_eq!(not_ours(&preexisting, &live("u1")).as_deref(), Some(PREEXISTING));
    }
}
