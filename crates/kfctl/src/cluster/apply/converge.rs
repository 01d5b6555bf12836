//! The parts of an install that make it converge onto what is already there.
//!
//! * the record's namespace, and every planned Namespace, may be `Terminating` (an uninstall
//!   just deleted it): the install waits for it to go (bounded by its deadline, with progress)
//!   and then re-creates it, rather than failing on "namespace is being terminated";
//! * an apply whose response was lost (the connection dropped after the server wrote) is
//!   retried and then answers 200, not 201: the object still counts as created by this run when
//!   this run saw it absent and it now carries kfctl-rs's mark ([`crate::cluster::mark`]);
//! * after every wave converged, what the record lists and the render no longer holds is
//!   pruned by the table of [`crate::cluster::prune`], latest wave first.

use crate::cluster::ClusterError;
use crate::cluster::api::ResourcePath;
use crate::cluster::engine::Engine;
use crate::cluster::object::ObjectRef;
use crate::cluster::ownership::{HAND_EDITED, delete_entries};
use crate::cluster::plan::{Plan, Wave};
use crate::cluster::progress::{Event, Progress};
use crate::cluster::prune::{self, Kept, identity};
use crate::cluster::record::{self, InstallRecord, InventoryEntry};
use crate::cluster::uninstall::{Recorded, foreign_objects};
use serde::Serialize;
use std::collections::HashSet;

fn namespaces() -> ResourcePath {
    ResourcePath { group: String::new(), version: "v1".into(), plural: "namespaces".into(), namespaced: false }
}

/// `None` once the namespace is not terminating (gone, or active).
async fn terminating(engine: &Engine, name: &str) -> Option<String> {
    match engine.api.get(&namespaces(), None, name).await {
        Ok(Some(live)) if live.pointer("/metadata/deletionTimestamp").is_some() => {
            Some("Terminating; waiting for it to go before re-creating it".into())
        }
        Ok(_) => None,
        Err(f) => Some(format!("cannot read: {f}")),
    }
}

/// Wait until none of `names` is terminating.
async fn wait_not_terminating(
    engine: &Engine,
    stage: &str,
    names: Vec<String>,
    progress: &mut dyn Progress,
) -> Result<(), ClusterError> {
    let items = names
        .into_iter()
        .map(|name| {
            let r =
                ObjectRef { api_version: "v1".into(), kind: "Namespace".into(), namespace: None, name: name.clone() };
            (r, name)
        })
        .collect();
    engine.wait_until(stage, items, progress, |_, name| async move { terminating(engine, &name).await }).await
}

/// The planned Namespaces of a namespace wave must not be terminating when it is applied.
pub(crate) async fn wait_for_namespace_wave(
    engine: &Engine,
    wave: &Wave,
    progress: &mut dyn Progress,
) -> Result<(), ClusterError> {
    let names = wave.objects.iter().filter(|o| o.reference.is_kind("", "Namespace")).map(|o| o.reference.name.clone());
    wait_not_terminating(engine, &wave.name, names.collect(), progress).await
}

/// The namespaces a controller makes (a Profile's, by the Profiles controller) exist before a
/// wave puts objects in them: each is waited for, saying who makes it.
pub(crate) async fn wait_for_made_namespaces(
    engine: &Engine,
    wave: &Wave,
    progress: &mut dyn Progress,
) -> Result<(), ClusterError> {
    let items = wave
        .made_namespaces
        .iter()
        .map(|(name, who)| {
            let r =
                ObjectRef { api_version: "v1".into(), kind: "Namespace".into(), namespace: None, name: name.clone() };
            (r, who.clone())
        })
        .collect();
    engine.wait_until(&wave.name, items, progress, |r, who| async move { not_made(engine, &r.name, &who).await }).await
}

/// `None` once the namespace a controller makes (`who` says who) exists and is not terminating.
pub(crate) async fn not_made(engine: &Engine, name: &str, who: &str) -> Option<String> {
    match engine.api.get(&namespaces(), None, name).await {
        Ok(Some(live)) if live.pointer("/metadata/deletionTimestamp").is_none() => None,
        Ok(Some(_)) => Some("Terminating".into()),
        Ok(None) => Some(format!("not made yet ({who})")),
        Err(f) => Some(format!("cannot read: {f}")),
    }
}

/// The record's namespace exists (created when missing, after a terminating one is gone).
pub(crate) async fn ensure_record_namespace(engine: &Engine, progress: &mut dyn Progress) -> Result<(), ClusterError> {
    wait_not_terminating(engine, "preflight", vec![record::RECORD_NAMESPACE.into()], progress).await?;
    let what = || format!("namespace {}", record::RECORD_NAMESPACE);
    let api_error = |failure| ClusterError::Api { what: what(), failure: Box::new(failure) };
    if engine.api.get(&namespaces(), None, record::RECORD_NAMESPACE).await.map_err(api_error)?.is_some() {
        return Ok(());
    }
    let ns = record::record_namespace();
    engine.api.apply(&namespaces(), None, record::RECORD_NAMESPACE, &ns, true, false).await.map_err(api_error)?;
    Ok(())
}

/// What a prune did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    pub pruned: Vec<ObjectRef>,
    pub kept: Vec<Kept>,
    pub kept_summary: Vec<String>,
}

/// Delete what the record lists and the plan no longer holds (guarded kinds only with `purge`).
pub(crate) async fn prune(
    engine: &Engine,
    record: &mut InstallRecord,
    plan: &Plan,
    purge: bool,
    progress: &mut dyn Progress,
) -> Result<PruneReport, ClusterError> {
    let held: HashSet<_> = plan.objects().map(|o| identity(&o.reference)).collect();
    let holds = |r: &ObjectRef| held.contains(&identity(r));
    let handed_over = crate::cluster::provided::handed_over(&record.meta.provided);
    let mut set = prune::prune_set(&record.inventory, holds, purge, &handed_over);
    if purge {
        let earlier: Vec<InventoryEntry> = record.kept.iter().filter(|e| !holds(&e.reference)).cloned().collect();
        record.kept.retain(|e| holds(&e.reference));
        set.delete.extend(earlier);
    }
    // a Namespace (deleted only with --purge) holding objects kfctl-rs did not create stays
    let mut refused: Vec<(InventoryEntry, String)> = Vec::new();
    let inventory: Recorded =
        record.inventory.iter().chain(&record.kept).map(|e| (identity(&e.reference), e.clone())).collect();
    for entry in set.delete.iter().filter(|e| e.reference.is_kind("", "Namespace")) {
        if let Some(n) = foreign_objects(&engine.api, &entry.reference.name, &inventory).await? {
            refused.push((entry.clone(), format!("holds {n} objects kfctl-rs did not create")));
        }
    }
    set.delete.retain(|e| !refused.iter().any(|(r, _)| r.reference == e.reference));
    let (pruned, skipped) =
        delete_entries(&engine.api, &engine.resolver, &set.delete, engine.settings.concurrency).await?;
    refused.extend(skipped);
    // entries that are not kfctl-rs's leave the record: released, never deleted
    set.delete.retain(|e| !refused.iter().any(|(r, _)| r.reference == e.reference));
    set.released.extend(refused.iter().map(|(e, _)| e.clone()));
    set.released.extend(set.handed_over.iter().cloned());
    record.pruned(&set.delete, &set.kept, &set.released);
    if !pruned.is_empty() {
        progress.event(&Event::Notice(&format!("pruned {} objects the new render no longer holds", pruned.len())));
    }
    let kept_summary = prune::kept_summary(&set.kept);
    for line in &kept_summary {
        progress.event(&Event::Notice(line));
    }
    let hand_edited = record.hand_edited.drain(..).map(|e| (e, HAND_EDITED.to_string()));
    refused.extend(hand_edited);
    let mut kept = prune::kept_with_reasons(&set);
    kept.retain(|k| !refused.iter().any(|(e, _)| e.reference == k.object));
    for (entry, reason) in refused {
        progress.event(&Event::Notice(&format!("not pruned: {} ({reason})", entry.reference)));
        kept.push(Kept { object: entry.reference, reason });
    }
    Ok(PruneReport { pruned, kept, kept_summary })
}
