//! `uninstall`: delete the recorded inventory in reverse order.
//!
//! Objects go latest wave first (validating webhooks before the Services they call, custom
//! resources before their CRDs, namespaces last). CRDs and Namespaces that existed before the
//! install (the record says kfctl-rs did not create them) are kept unless `purge` is set:
//! deleting a CRD deletes every object of its kind, deleting a namespace everything in it.
//! Finally the record and its namespace go. Deletions are background deletions; a kind nobody
//! serves any more (its CRD already gone) counts as deleted.

use super::ClusterError;
use super::api::{ApiClient, ResourcePath, Target};
use super::discovery::Resolver;
use super::engine::scoped;
use super::install::read_record;
use super::object::ObjectRef;
use super::progress::{Event, Progress};
use super::record::{self, InventoryEntry};
use super::retry::{ApiFailure, Backoff, Context, Decision, classify};
use futures::StreamExt;
use serde::Serialize;

/// What an uninstall did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UninstallReport {
    pub deleted: Vec<ObjectRef>,
    pub already_gone: Vec<ObjectRef>,
    /// CRDs and Namespaces that existed before the install, kept.
    pub kept: Vec<ObjectRef>,
}

/// Whether an entry is kept: a pre-existing CRD or Namespace without `purge`.
pub fn keeps(entry: &InventoryEntry, purge: bool) -> bool {
    let kind = entry.reference.group_kind();
    let guarded = kind == "Namespace" || kind == "apiextensions.k8s.io/CustomResourceDefinition";
    guarded && !entry.created && !purge
}

/// Delete everything the record lists.
pub async fn uninstall(
    target: &Target,
    purge: bool,
    concurrency: usize,
    progress: &mut dyn Progress,
) -> Result<UninstallReport, ClusterError> {
    let api = ApiClient::connect(target).await?;
    let record = read_record(&api).await?.ok_or(ClusterError::NoRecord)?;
    let resolver = Resolver::new(api.clone());
    let mut report = UninstallReport::default();
    let order = record.deletion_order();
    let mut waves: Vec<usize> = order.iter().map(|e| e.wave).collect();
    waves.dedup();
    for wave in waves {
        let batch: Vec<&InventoryEntry> = order.iter().copied().filter(|e| e.wave == wave).collect();
        let (kept, doomed): (Vec<&InventoryEntry>, Vec<&InventoryEntry>) =
            batch.into_iter().partition(|e| keeps(e, purge));
        report.kept.extend(kept.iter().map(|e| e.reference.clone()));
        let results: Vec<(ObjectRef, Result<bool, ApiFailure>)> = futures::stream::iter(doomed)
            .map(|e| async { (e.reference.clone(), delete_one(&api, &resolver, &e.reference).await) })
            .buffer_unordered(concurrency.max(1))
            .collect()
            .await;
        for (object, result) in results {
            match result {
                Ok(true) => report.deleted.push(object),
                Ok(false) => report.already_gone.push(object),
                Err(failure) => {
                    return Err(ClusterError::Refused { object, failure: Box::new(failure) });
                }
            }
        }
        let line = format!("deleted wave {wave}");
        progress.event(&Event::Notice(&line));
    }
    delete_record(&api).await?;
    Ok(report)
}

/// Delete one object, retrying transient failures a few times; `false` when already gone.
async fn delete_one(api: &ApiClient, resolver: &Resolver, r: &ObjectRef) -> Result<bool, ApiFailure> {
    let backoff = Backoff { initial: std::time::Duration::from_millis(200), max: std::time::Duration::from_secs(2) };
    let mut attempt = 0;
    loop {
        let result = match resolver.resolve(&r.api_version, &r.kind).await {
            Ok(path) => api.delete(&path, scoped(&path, r), &r.name).await,
            Err(f) if f.is_no_kind_match() => Ok(false),
            Err(f) => Err(f),
        };
        match result {
            Err(f) if attempt < 5 && classify(&f, Context::default()).1 != Decision::FailFast => {
                tokio::time::sleep(backoff.delay_for(Decision::Retry, &f, attempt)).await;
                attempt += 1;
            }
            other => return other,
        }
    }
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
        InventoryEntry { reference, component: "platform".into(), wave: 1, created }
    }

    #[test]
    fn preexisting_crds_and_namespaces_are_kept_unless_purged() {
        let crd = entry("apiextensions.k8s.io/v1", "CustomResourceDefinition", false);
        let ns = entry("v1", "Namespace", false);
        let cm = entry("v1", "ConfigMap", false);
        assert!(keeps(&crd, false) && keeps(&ns, false));
        assert!(!keeps(&cm, false));
        assert!(!keeps(&crd, true));
        assert!(!keeps(&entry("v1", "Namespace", true), false));
    }
}
