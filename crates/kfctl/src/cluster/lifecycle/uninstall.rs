//! `uninstall`: delete the recorded inventory in reverse order, keeping users' data.
//!
//! Objects go latest wave first (validating webhooks before the Services they call, custom
//! resources before their CRDs, namespaces last). By default it keeps, and says why:
//! * CRDs (deleting one deletes every custom resource of its kind, users' TrainJobs and
//!   Notebooks included) and PVCs (their volumes' data): the table of [`crate::cluster::prune`];
//! * any Namespace holding objects kfctl-rs did not create (counted by listing every
//!   namespaced kind the server serves, minus the inventory, minus what the cluster makes by
//!   itself: `CLUSTER_MADE` and objects with an owner);
//! * every object that existed before the install (pre-existing: found without kfctl-rs's mark
//!   when first applied), `--purge` or not; adopted ones are the install's own;
//! * whatever the cluster does not show as kfctl-rs's (`crate::cluster::ownership`: `default` and
//!   `kube-*` namespaces, objects without kfctl-rs's mark ([`crate::cluster::mark`]) or with another UID
//!   than recorded, record entries edited by hand).
//!
//! `purge` deletes CRDs and PVCs too (also those an upgrade kept); [`preview`] counts the custom
//! resources that would go with them, for the confirmation. Deletions are background
//! deletions; a kind nobody serves any more counts as deleted. It then waits (bounded, with
//! progress) until every deleted Namespace is gone, so an install right after it works, and
//! finally deletes the record and its namespace (`wait: false` skips both waits, as
//! `kubectl delete --wait=false`). The run holds the [`crate::cluster::lease`].

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath, Target};
use crate::cluster::discovery::Resolver;
use crate::cluster::install::read_record;
use crate::cluster::lease::{Lease, LeaseTiming};
use crate::cluster::object::ObjectRef;
use crate::cluster::ownership::{Deletion, HAND_EDITED, delete_batch, refused_by_name};
use crate::cluster::progress::{Event, Progress};
use crate::cluster::prune::{Kept, PREEXISTING, guarded, identity};
use crate::cluster::record::{self, InstallRecord, InventoryEntry};
use serde::Serialize;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Objects the cluster creates in every namespace by itself: (group/resource, name or `*`).
pub(crate) const CLUSTER_MADE: &[(&str, &str)] = &[
    ("/configmaps", "kube-root-ca.crt"),
    ("/serviceaccounts", "default"),
    ("/endpoints", "*"),
    ("discovery.k8s.io/endpointslices", "*"),
    ("/events", "*"),
    ("events.k8s.io/events", "*"),
];

/// What an uninstall did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UninstallReport {
    /// Objects deleted.
    pub deleted: Vec<ObjectRef>,
    /// Objects already gone when their turn came.
    pub already_gone: Vec<ObjectRef>,
    /// Objects kept, each with why.
    pub kept: Vec<Kept>,
    /// CRDs deleted (`purge`), each with how many custom resources of its kind went with it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub purged: Vec<PurgedCrd>,
}

/// A CRD `purge` deleted, and the custom resources of its kind that went with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PurgedCrd {
    /// The CRD's name.
    pub crd: String,
    /// How many custom resources of its kind went with it.
    pub custom_resources: usize,
}

/// How an uninstall behaves.
#[derive(Debug, Clone)]
pub struct UninstallOptions {
    /// Delete CRDs and PVCs too.
    pub purge: bool,
    /// Objects deleted at once.
    pub concurrency: usize,
    /// The deadline of the whole run: every request, and the wait for deleted Namespaces to go.
    pub timeout: Duration,
    /// Wait until every deleted Namespace (and finally the record's) is gone, so an install
    /// right after it works (the default); `false` returns once the deletes are accepted, as
    /// `kubectl delete --wait=false`.
    pub wait: bool,
    /// How long to wait for another run's lease.
    pub lock_wait: Duration,
    /// How long the run's lease lives without renewal, and how often it is renewed.
    pub lease: LeaseTiming,
    /// Decide and check every delete (ownership, then a server-side dry run) and report what
    /// would go; delete nothing, take no lease, keep the record.
    pub dry_run: bool,
}

impl Default for UninstallOptions {
    fn default() -> Self {
        UninstallOptions {
            purge: false,
            concurrency: 16,
            timeout: Duration::from_secs(300),
            wait: true,
            lock_wait: Duration::from_secs(120),
            lease: LeaseTiming::default(),
            dry_run: false,
        }
    }
}

/// Why an entry is kept regardless of its namespace's content, if it is: an object that existed
/// before the install is never kfctl-rs's to delete, `purge` or not; guarded kinds need `purge`.
pub(crate) fn keeps(entry: &InventoryEntry, purge: bool) -> Option<String> {
    if !entry.owned() {
        return Some(PREEXISTING.to_string());
    }
    let guard = guarded(&entry.reference)?;
    if entry.reference.group_kind() == "Namespace" {
        return None;
    }
    (!purge).then(|| format!("{}; --purge to delete", guard.loses))
}

/// What an uninstall would do, for its confirmation.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// The API server's address.
    pub server: String,
    /// How many objects the record holds (the inventory and the kept ones).
    pub objects: usize,
    /// How many of them are CRDs.
    pub crds: usize,
    /// Custom resources of the recorded CRDs, cluster-wide: lost with `purge`.
    pub custom_resources: usize,
}

/// Count what the record lists and the custom resources its CRDs serve; writes nothing.
pub async fn preview(target: &Target, timeout: Duration) -> Result<Preview, ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout);
    let record = read_record(&api).await?.ok_or(ClusterError::NoRecord)?;
    let crds: Vec<&InventoryEntry> = all_entries(&record).filter(|e| is_crd_ref(&e.reference)).collect();
    let mut custom_resources = 0;
    for crd in &crds {
        custom_resources += count_custom_resources(&api, &crd.reference.name).await;
    }
    Ok(Preview {
        server: api.server.clone(),
        objects: all_entries(&record).count(),
        crds: crds.len(),
        custom_resources,
    })
}

fn is_crd_ref(r: &ObjectRef) -> bool {
    r.group_kind() == "apiextensions.k8s.io/CustomResourceDefinition"
}

fn all_entries(record: &InstallRecord) -> impl Iterator<Item = &InventoryEntry> {
    record.inventory.iter().chain(record.kept.iter())
}

async fn count_custom_resources(api: &ApiClient, crd: &str) -> usize {
    let path = ResourcePath {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        plural: "customresourcedefinitions".into(),
        namespaced: false,
    };
    let Ok(Some(live)) = api.get(&path, None, crd).await else { return 0 };
    let text = |p: &str| live.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
    let version = live
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| v.get("served").and_then(Value::as_bool) != Some(false)))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("v1")
        .to_string();
    let served =
        ResourcePath { group: text("/spec/group"), version, plural: text("/spec/names/plural"), namespaced: false };
    api.list(&served, None, None).await.ok().and_then(|l| l["items"].as_array().map(Vec::len)).unwrap_or(0)
}

/// Delete everything the record lists, but what it keeps.
pub async fn uninstall(
    target: &Target,
    options: &UninstallOptions,
    progress: &mut dyn Progress,
) -> Result<UninstallReport, ClusterError> {
    let api = ApiClient::connect(target).await?.within(options.timeout);
    let recorded = read_record(&api).await?.ok_or(ClusterError::NoRecord)?;
    if options.dry_run {
        return remove(&api.with_dry_run_deletes(), &recorded, options, progress).await;
    }
    let lease = Lease::acquire(&api, "uninstall", options.lease, options.lock_wait, progress).await?;
    // the record as it is now, after waiting for the lease: another run may have changed it
    let record = match read_record(&api).await {
        Ok(Some(record)) => record,
        other => {
            let _ = lease.release().await;
            return Err(other.err().unwrap_or(ClusterError::NoRecord));
        }
    };
    let outcome = remove(&api, &record, options, progress).await;
    let released = lease.release().await;
    let report = outcome?;
    released?;
    delete_record(&api).await?;
    if options.wait {
        wait_gone(&api, &[record::RECORD_NAMESPACE.to_string()], progress).await?;
    }
    Ok(report)
}

async fn remove(
    api: &ApiClient,
    record: &InstallRecord,
    options: &UninstallOptions,
    progress: &mut dyn Progress,
) -> Result<UninstallReport, ClusterError> {
    let resolver = Resolver::new(api.clone());
    let mut report = UninstallReport::default();
    let hand_edited =
        record.hand_edited.iter().map(|e| Kept { object: e.reference.clone(), reason: HAND_EDITED.into() });
    report.kept.extend(hand_edited);
    let mut entries: Vec<InventoryEntry> = record.deletion_order().into_iter().cloned().collect();
    entries.extend(record.kept.iter().cloned());
    entries.sort_by_key(|e| std::cmp::Reverse(e.wave));
    let inventory: Recorded = entries.iter().map(|e| (identity(&e.reference), e.clone())).collect();
    let mut waves: Vec<usize> = entries.iter().map(|e| e.wave).collect();
    waves.dedup();
    let mut deleted_namespaces = Vec::new();
    for wave in waves {
        let mut doomed = Vec::new();
        for entry in entries.iter().filter(|e| e.wave == wave) {
            let reason = match keeps(entry, options.purge) {
                Some(reason) => Some(reason),
                None if entry.reference.is_kind("", "Namespace") && refused_by_name(&entry.reference).is_none() => {
                    foreign_objects(api, &entry.reference.name, &inventory)
                        .await?
                        .map(|n| format!("holds {n} objects kfctl-rs did not create"))
                }
                None => None,
            };
            match reason {
                Some(reason) => report.kept.push(Kept { object: entry.reference.clone(), reason }),
                None => doomed.push(entry.clone()),
            }
        }
        let mut custom_resources = std::collections::HashMap::new();
        for crd in doomed.iter().filter(|e| is_crd_ref(&e.reference)) {
            custom_resources.insert(crd.reference.name.clone(), count_custom_resources(api, &crd.reference.name).await);
        }
        for (entry, result) in delete_batch(api, &resolver, &doomed, options.concurrency).await {
            let object = entry.reference;
            match result {
                Ok(Deletion::Deleted) => {
                    if object.is_kind("", "Namespace") {
                        deleted_namespaces.push(object.name.clone());
                    }
                    if let Some(&n) = custom_resources.get(&object.name).filter(|_| is_crd_ref(&object)) {
                        report.purged.push(PurgedCrd { crd: object.name.clone(), custom_resources: n });
                    }
                    report.deleted.push(object);
                }
                Ok(Deletion::Gone) => report.already_gone.push(object),
                Ok(Deletion::Skipped(reason)) => report.kept.push(Kept { object, reason }),
                Err(failure) => return Err(ClusterError::Refused { object, failure: Box::new(failure) }),
            }
        }
        let done = if api.dry_run_deletes { "checked (dry run)" } else { "deleted" };
        progress.event(&Event::Notice(&format!("{done} wave {wave}")));
    }
    if !api.dry_run_deletes && options.wait {
        wait_gone(api, &deleted_namespaces, progress).await?;
    }
    Ok(report)
}

/// The record's entries by identity.
pub(crate) type Recorded = std::collections::HashMap<(String, Option<String>, String), InventoryEntry>;

/// Objects in `namespace` that are not in the inventory (or not kfctl-rs's, whatever the
/// inventory says) and not made by the cluster itself;
/// `None` when there are none.
pub(crate) async fn foreign_objects(
    api: &ApiClient,
    namespace: &str,
    inventory: &Recorded,
) -> Result<Option<usize>, ClusterError> {
    let mut count = 0;
    for (group, kind, path) in namespaced_kinds(api).await? {
        let Ok(list) = api.list(&path, Some(namespace), None).await else { continue };
        let key = format!("{group}/{}", path.plural);
        for item in list["items"].as_array().into_iter().flatten() {
            let name = item.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
            let made = CLUSTER_MADE.iter().any(|(k, n)| *k == key && (*n == "*" || *n == name))
                || item.pointer("/metadata/ownerReferences").and_then(Value::as_array).is_some_and(|o| !o.is_empty());
            let gk = crate::cluster::object::group_kind(&group, &kind);
            // listed in the record is not enough: the cluster must show it as kfctl-rs's too
            let recorded = inventory.get(&(gk, Some(namespace.to_string()), name.to_string()));
            if !made && recorded.is_none_or(|entry| crate::cluster::ownership::not_ours(entry, item).is_some()) {
                count += 1;
            }
        }
    }
    Ok((count > 0).then_some(count))
}

/// Every namespaced, listable kind the server serves (preferred versions): (group, kind, path).
async fn namespaced_kinds(api: &ApiClient) -> Result<Vec<(String, String, ResourcePath)>, ClusterError> {
    let fail = |failure| ClusterError::Api { what: "discovery".into(), failure: Box::new(failure) };
    let mut versions = vec![(String::new(), "v1".to_string(), "/api/v1".to_string())];
    let groups = api.get_path("/apis").await.map_err(fail)?;
    for group in groups["groups"].as_array().into_iter().flatten() {
        let name = group["name"].as_str().unwrap_or("").to_string();
        if let Some(v) = group.pointer("/preferredVersion/version").and_then(Value::as_str) {
            versions.push((name.clone(), v.to_string(), format!("/apis/{name}/{v}")));
        }
    }
    let mut kinds = Vec::new();
    for (group, version, url) in versions {
        let Ok(doc) = api.get_path(&url).await else { continue };
        for r in doc["resources"].as_array().into_iter().flatten() {
            let plural = r["name"].as_str().unwrap_or("");
            let listable = r["verbs"].as_array().is_some_and(|v| v.iter().any(|v| v == "list"));
            if r["namespaced"] == true && listable && !plural.contains('/') {
                let path = ResourcePath {
                    group: group.clone(),
                    version: version.clone(),
                    plural: plural.into(),
                    namespaced: true,
                };
                kinds.push((group.clone(), r["kind"].as_str().unwrap_or("").to_string(), path));
            }
        }
    }
    Ok(kinds)
}

/// Wait (with progress) until the named Namespaces are gone, at most until the run's deadline
/// (`--timeout`, set on `api` by [`ApiClient::within`]).
async fn wait_gone(api: &ApiClient, names: &[String], progress: &mut dyn Progress) -> Result<(), ClusterError> {
    let path =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "namespaces".into(), namespaced: false };
    let timeout = api.timeout.unwrap_or(crate::cluster::status::VERB_TIMEOUT);
    let deadline = api.policy.deadline.unwrap_or_else(|| Instant::now() + timeout);
    let mut pending: Vec<String> = names.to_vec();
    let mut last_line = String::new();
    while !pending.is_empty() {
        let mut still = Vec::new();
        for name in pending {
            if !matches!(api.get(&path, None, &name).await, Ok(None)) {
                still.push(name);
            }
        }
        pending = still;
        if pending.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            let pending = pending
                .iter()
                .map(|n| crate::cluster::progress::Pending {
                    object: ObjectRef {
                        api_version: "v1".into(),
                        kind: "Namespace".into(),
                        namespace: None,
                        name: n.clone(),
                    },
                    message: "still terminating".into(),
                })
                .collect();
            return Err(ClusterError::Timeout {
                wave: "namespace deletion".into(),
                seconds: timeout.as_secs_f64(),
                pending,
            });
        }
        let line = format!("waiting for {} namespaces to terminate: {}", pending.len(), pending.join(", "));
        if line != last_line {
            progress.event(&Event::Notice(&line));
            last_line = line;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

async fn delete_record(api: &ApiClient) -> Result<(), ClusterError> {
    let configmaps =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "configmaps".into(), namespaced: true };
    let namespaces =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "namespaces".into(), namespaced: false };
    let wrap = |failure| ClusterError::Api { what: "delete install record".into(), failure: Box::new(failure) };
    api.delete(&configmaps, Some(record::RECORD_NAMESPACE), record::RECORD_NAME).await.map_err(wrap)?;
    api.delete(&namespaces, None, record::RECORD_NAMESPACE).await.map_err(wrap)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(api: &str, kind: &str, created: bool) -> InventoryEntry {
        let reference = ObjectRef { api_version: api.into(), kind: kind.into(), namespace: None, name: "x".into() };
        InventoryEntry { reference, component: "platform".into(), wave: 1, created, adopted: false, uid: None }
    }

    #[test]
    fn crds_and_pvcs_are_kept_unless_purged_and_pre_existing_objects_always() {
        let crd = entry("apiextensions.k8s.io/v1", "CustomResourceDefinition", true);
        let pvc = entry("v1", "PersistentVolumeClaim", true);
        assert!(keeps(&crd, false).unwrap().contains("custom resources would be lost"));
        assert!(keeps(&pvc, false).is_some());
        assert!(keeps(&crd, true).is_none() && keeps(&pvc, true).is_none());
        assert!(keeps(&entry("v1", "Namespace", true), false).is_none());
        assert!(keeps(&entry("v1", "ConfigMap", true), false).is_none());
        for kind in ["Namespace", "ConfigMap", "Deployment"] {
            for purge in [false, true] {
                assert_eq!(keeps(&entry("v1", kind, false), purge).as_deref(), Some(PREEXISTING), "{kind} {purge}");
            }
        }
        let crd = entry("apiextensions.k8s.io/v1", "CustomResourceDefinition", false);
        assert_eq!(keeps(&crd, true).as_deref(), Some(PREEXISTING));
    }
}
