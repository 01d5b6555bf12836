//! `status`: the install record and the live readiness of what it installed, per component.
//!
//! Components are the ones the record's inventory stores (the catalog components the render
//! tagged; `unknown` for entries of an older record that did not store them), in inventory order.
//!
//! Objects with a readiness rule (workloads, CRDs, cert-manager resources, injected webhooks)
//! are read live and judged by the install's readiness table, failure facts included: a
//! Deployment past its progress deadline, a failed Job or a workload whose pods crash shows as
//! failed, not pending (`status` reads once, so a stalled rollout, which takes watching, shows as
//! pending); objects without a rule count as ready when the record lists them.
//!
//! The record's `lastRun` tells a failed run (its stage and error, and when) and an unfinished
//! one (fewer waves done than planned) from a healthy install (`run_state`).

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Target};
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::scoped;
use crate::cluster::install::read_record;
use crate::cluster::judge::{now_seconds, pods_failure};
use crate::cluster::object::in_namespace;
use crate::cluster::progress::{FailedObject, Pending};
use crate::cluster::readiness::{FailsWhen, Readiness, fails_when, rule_for, verdict};
use crate::cluster::record::{InstallRecord, InventoryEntry};
use futures::StreamExt;
use serde::Serialize;
use std::time::Duration;

/// The status of an install.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    pub(crate) server: String,
    /// The install record.
    pub record: InstallRecord,
    /// Every recorded component's readiness.
    pub components: Vec<ComponentStatus>,
    /// The install finished, its last run succeeded and every checked object is ready.
    pub healthy: bool,
    /// `healthy`, `failed` (the last run stopped with an error, or an object failed: a
    /// Deployment past its progress deadline, a failed Job, crashing pods), `partial` (it
    /// stopped before its last wave without recording an error: interrupted or killed) or
    /// `not ready`.
    pub state: String,
    /// The namespace the components' objects were limited to (`-n/--namespace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// One component's live readiness.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentStatus {
    /// The component's name.
    pub name: String,
    pub(crate) objects: usize,
    pub(crate) ready: usize,
    /// Its objects that are not ready, each with why.
    pub pending: Vec<PendingObject>,
    /// Its objects that failed (waiting will not make them ready), each with reason and message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedEntry>,
}

/// A failed object, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct FailedEntry {
    pub(crate) object: String,
    pub(crate) reason: String,
    pub(crate) message: String,
}

impl From<FailedObject> for FailedEntry {
    fn from(f: FailedObject) -> Self {
        FailedEntry { object: f.object.to_string(), reason: f.reason, message: f.message }
    }
}

/// One object's live verdict.
enum Judged {
    Ready,
    Pending(Pending),
    Failed(FailedObject),
}

/// A pending object, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct PendingObject {
    pub(crate) object: String,
    pub(crate) message: String,
}

impl From<Pending> for PendingObject {
    fn from(p: Pending) -> Self {
        PendingObject { object: p.object.to_string(), message: p.message }
    }
}

/// How long `status` and `diff` may take when no `--timeout` is given.
pub(crate) const VERB_TIMEOUT: Duration = Duration::from_secs(300);

/// [`status_within`] the default `VERB_TIMEOUT`, every namespace.
pub async fn status(target: &Target, concurrency: usize) -> Result<StatusReport, ClusterError> {
    status_within(target, concurrency, VERB_TIMEOUT, None).await
}

/// Read the record and judge every inventory object that has a readiness rule (only those in
/// `namespace` when given: [`ClusterError::NoObjectInNamespace`] when none is); every call
/// over within `timeout` (one deadline for the run), or [`ClusterError::NoAnswer`] saying
/// what it waited for.
pub async fn status_within(
    target: &Target,
    concurrency: usize,
    timeout: Duration,
    namespace: Option<&str>,
) -> Result<StatusReport, ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout);
    status_with(&api, concurrency, namespace).await
}

/// [`status_within`] on a connected client (its deadline is the run's).
pub(crate) async fn status_with(
    api: &ApiClient,
    concurrency: usize,
    namespace: Option<&str>,
) -> Result<StatusReport, ClusterError> {
    let record = read_record(api).await?.ok_or(ClusterError::NoRecord)?;
    let entries =
        in_namespace(record.inventory.iter().map(|e| (&e.reference, e)), namespace, "the install record's objects")?;
    let resolver = Resolver::new(api.clone());
    let verdicts: Vec<Result<Judged, ClusterError>> = futures::stream::iter(entries.iter())
        .map(|entry| judge(api, &resolver, entry))
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let verdicts = verdicts.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut components: Vec<ComponentStatus> = Vec::new();
    for (entry, verdict) in entries.iter().zip(verdicts) {
        let index = match components.iter().position(|c| c.name == entry.component) {
            Some(i) => i,
            None => {
                let name = entry.component.clone();
                components.push(ComponentStatus {
                    name,
                    objects: 0,
                    ready: 0,
                    pending: Vec::new(),
                    failed: Vec::new(),
                });
                components.len() - 1
            }
        };
        let component = &mut components[index];
        component.objects += 1;
        match verdict {
            Judged::Ready => component.ready += 1,
            Judged::Pending(pending) => component.pending.push(pending.into()),
            Judged::Failed(failed) => component.failed.push(failed.into()),
        }
    }
    // by name, as kubectl lists: the same cluster prints the same report
    components.sort_by(|a, b| a.name.cmp(&b.name));
    for c in &mut components {
        c.pending.sort_by_key(|p| p.object.to_string());
        c.failed.sort_by_key(|f| f.object.to_string());
    }
    let ready = components.iter().all(|c| c.pending.is_empty() && c.failed.is_empty());
    let failed = components.iter().any(|c| !c.failed.is_empty());
    let state = run_state(&record, ready, failed).to_string();
    let namespace = namespace.map(str::to_string);
    Ok(StatusReport { server: api.server.clone(), healthy: state == "healthy", record, components, state, namespace })
}

/// What the record and the live readiness say about the last run.
pub(crate) fn run_state(record: &InstallRecord, ready: bool, failed: bool) -> &'static str {
    match &record.last_run {
        Some(run) if !run.succeeded => "failed",
        _ if failed => "failed",
        _ if !record.is_complete() => "partial",
        _ if !ready => "not ready",
        _ => "healthy",
    }
}

/// Ready when ready (or when the kind has no rule); an error only when the run's `--timeout`
/// ended a read.
async fn judge(api: &ApiClient, resolver: &Resolver, entry: &InventoryEntry) -> Result<Judged, ClusterError> {
    let r = &entry.reference;
    let checked = crate::cluster::readiness::row_for(r).is_some() || r.kind.ends_with("WebhookConfiguration");
    if !checked {
        return Ok(Judged::Ready);
    }
    let pending = |message: String| Ok(Judged::Pending(Pending { object: r.clone(), message }));
    let failed = |f: crate::cluster::readiness::Failure| {
        Ok(Judged::Failed(FailedObject { object: r.clone(), reason: f.reason, message: f.message }))
    };
    let what = || format!("reading {r}");
    let path = match resolver.resolve(&r.api_version, &r.kind).await {
        Ok(path) => path,
        Err(f) if ClusterError::ended_by_timeout(api, &f) => return Err(ClusterError::no_answer(api, what(), f)),
        Err(f) => return pending(f.message),
    };
    let live = match api.get(&path, scoped(&path, r), &r.name).await {
        Ok(Some(live)) => live,
        Ok(None) => return pending("missing".into()),
        Err(f) if ClusterError::ended_by_timeout(api, &f) => return Err(ClusterError::no_answer(api, what(), f)),
        Err(f) => return pending(format!("cannot read: {f}")),
    };
    let Some(rule) = rule_for(r, &live) else { return Ok(Judged::Ready) };
    match verdict(r, rule, &live, now_seconds()) {
        Readiness::Ready => Ok(Judged::Ready),
        Readiness::Failed(f) => failed(f),
        Readiness::Pending(message) if fails_when(r).contains(&FailsWhen::PodsWaiting) => {
            match pods_failure(api, r, &live).await {
                Some(f) => failed(f),
                None => pending(message),
            }
        }
        Readiness::Pending(message) => pending(message),
    }
}

/// `upgrade from 26.03 to 26.03.1 failed at wave 9/20: kubeflow: workloads, 310 of 729 objects
/// applied (2026-06-10T12:00:00Z)`; a run that succeeded says `succeeded`.
fn describe_run(run: &crate::cluster::record::LastRun, meta: &crate::cluster::InstallMeta) -> String {
    let to = &meta.upstream_version;
    let what = match &run.from {
        Some(from) => format!("{} from {from} to {to}", run.operation),
        None => format!("{} of {to}", run.operation),
    };
    let applied = match run.planned {
        0 => String::new(),
        planned => format!(", {} of {planned} objects applied", run.applied),
    };
    match run.succeeded {
        true => format!("{what} succeeded{applied} ({})", run.at),
        false => format!("{what} failed at {}{applied} ({})", run.stage, run.at),
    }
}

/// The human summary of a report.
pub fn render_text(report: &StatusReport) -> String {
    let r = &report.record;
    let mut out = format!(
        "server: {}\nprofile: {}\nupstream: {} ({})\nvalues digest: {}\nprogress: {}/{} waves{}\n",
        report.server,
        r.meta.profile,
        r.meta.upstream_version,
        r.meta.upstream_digest,
        r.meta.values_digest,
        r.waves_done,
        r.waves_total,
        if r.last_wave.is_empty() { String::new() } else { format!(" (last: {})", r.last_wave) },
    );
    if let Some(run) = &r.last_run {
        out.push_str(&format!("last run: {}\n", describe_run(run, &r.meta)));
        if let Some(error) = &run.error {
            out.push_str(&format!("last error: {error}\n"));
        }
    }
    if let Some(previous) = &r.previous {
        out.push_str(&format!(
            "previous: {}, rollback with kfctl-rs rollback\n",
            crate::cluster::rollback::describe(previous)
        ));
    }
    if !r.kept.is_empty() {
        out.push_str(&format!("kept (no longer installed, not deleted): {} objects\n", r.kept.len()));
    }
    if let Some(namespace) = &report.namespace {
        out.push_str(&format!("namespace: {namespace} (only the objects in it)\n"));
    }
    for name in &r.meta.provided {
        out.push_str(&format!("{name:<14} provided by the cluster (not installed by kfctl-rs)\n"));
    }
    for c in &report.components {
        out.push_str(&format!("{:<14} {}/{} ready\n", c.name, c.ready, c.objects));
        for f in &c.failed {
            let message = if f.message.is_empty() { String::new() } else { format!(": {}", f.message) };
            out.push_str(&format!("  failed: {} ({}{message})\n", f.object, f.reason));
        }
        for p in &c.pending {
            out.push_str(&format!("  pending: {} ({})\n", p.object, p.message));
        }
    }
    out.push_str(if report.healthy { "healthy\n" } else { "not healthy\n" });
    if !report.healthy {
        out.push_str(&format!("state: {}\n", report.state));
    }
    out
}
