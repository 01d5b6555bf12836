//! The install entry point: plan, preflight, then every object by the dependency graph,
//! recording as it goes.
//!
//! Each object is applied (server-side apply, field manager `kfctl-rs`) as soon as what it needs
//! is done, and then waited for by its readiness rule (`graph_run`, over
//! `crate::cluster::graph` and `crate::cluster::schedule`): webhook configurations once the
//! Services they call have a ready endpoint, custom resources once their CRD is served, and so
//! on; an object that failed stops the run at once ([`ClusterError::Failed`]). The record is
//! written each time waves are complete, in plan order. A server-side dry run (`DryRun::Server`)
//! goes wave by wave instead (`Run::waves`: each wave applied, then waited for): it applies every
//! wave with `dryRun=All`, waits for nothing and writes no record; custom resources whose CRD is
//! not installed yet are skipped with a notice.
//!
//! Onto a cluster with a record it converges (see `crate::cluster::converge`, [`crate::cluster::upgrade`]):
//! CRD stored versions and immutable fields are checked before anything is applied (a change the
//! server refuses to patch is replaced in its wave, or, for a PVC or CRD, stops the run:
//! [`crate::cluster::immutable`]), the run holds the
//! [`crate::cluster::lease`], Terminating namespaces are waited for, and after the last wave what the
//! previous record lists and the render no longer holds is pruned; `lastRun` in the record
//! says how the run ended.
//!
//! Re-running converges: every wave is applied again (server-side apply of an unchanged body
//! changes nothing and the patch bytes are identical), the record resumes from the previous
//! one and is only written when its content changes.

mod graph_run;

use crate::catalog::RenderedObject;
use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Applied, ResourcePath, Target};
use crate::cluster::converge::{self, PruneReport};
use crate::cluster::engine::Engine;
use crate::cluster::judge::{Verdict, Watch};
use crate::cluster::lease::LeaseTiming;
use crate::cluster::mark::carries_mark;
use crate::cluster::object::ObjectRef;
use crate::cluster::order::Class;
use crate::cluster::plan::{Plan, PlannedObject, Wave};
use crate::cluster::preflight::{self, PreflightOptions};
use crate::cluster::progress::{Event, Progress};
use crate::cluster::record::{self, InstallMeta, InstallRecord, LastRun};
use crate::cluster::retry::Backoff;
pub use crate::cluster::schedule::CriticalPath;
use serde::Serialize;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Server-side dry run, or a real install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DryRun {
    /// Apply for real.
    #[default]
    None,
    /// Apply as a server-side dry run: the server checks every object and stores nothing.
    Server,
}

/// Everything an install needs besides the objects.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// The cluster to install to.
    pub target: Target,
    /// What is installed (release, profile, digests), for the record.
    pub meta: InstallMeta,
    /// The preflight checks to run.
    pub preflight: PreflightOptions,
    /// Whether to apply for real or as a server-side dry run.
    pub dry_run: DryRun,
    /// Take over fields another field manager owns instead of failing with
    /// [`crate::cluster::ClusterError::Conflict`].
    pub force_conflicts: bool,
    /// The deadline of the whole install, from its start.
    pub timeout: Duration,
    /// Wait until every object is ready (the default), or only for what a later wave needs:
    /// namespaces Active, CRDs Established and served, APIServices Available, webhooks' Services
    /// serving and their caBundles injected. Workloads, Jobs and cert-manager resources are then
    /// left to become ready after the run (`status` follows them).
    pub wait: bool,
    /// Objects applied at once within a wave.
    pub concurrency: usize,
    /// Apply wave after wave, each waiting for the whole previous one, instead of by the
    /// dependency graph (each object waiting only for what it needs): the order of before the
    /// graph, kept to measure against (`tests/bench/README.md`).
    pub by_waves: bool,
    /// How often readiness is polled.
    pub poll_interval: Duration,
    /// The backoff of retried API calls.
    pub backoff: Backoff,
    /// How long a kind may be missing from discovery after its CRD wave.
    pub crd_grace: Duration,
    /// Ctrl-C: set to `true` to stop after the requests in flight, recording progress.
    pub interrupt: Option<watch::Receiver<bool>>,
    /// `install`, `upgrade` (which refuses when nothing is installed) or `rollback` (which
    /// also refuses without a previous release to return to: [`crate::cluster::rollback`]).
    pub operation: Operation,
    /// Prune CRDs and PVCs the new render dropped too (they are kept otherwise).
    pub purge: bool,
    /// How long to wait for another run's lease.
    pub lock_wait: Duration,
    /// How long the run's lease lives without renewal, and how often it is renewed.
    pub lease: LeaseTiming,
}

/// Which verb runs the install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// A first install (or its resumption).
    #[default]
    Install,
    /// An upgrade of an existing install.
    Upgrade,
    /// A return to the release the record holds as `previous` (`kfctl-rs rollback`).
    Rollback,
}

impl Operation {
    /// The operation's name, lowercase, as messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Install => "install",
            Operation::Upgrade => "upgrade",
            Operation::Rollback => "rollback",
        }
    }
}

impl InstallOptions {
    /// Options for installing `meta`'s release on `target`, with the defaults (20 minutes, 2 second
    /// polls, 60 seconds of CRD grace, 2 minutes for the lease).
    pub fn new(target: Target, meta: InstallMeta) -> Self {
        InstallOptions {
            target,
            meta,
            preflight: PreflightOptions::default(),
            dry_run: DryRun::None,
            force_conflicts: false,
            timeout: Duration::from_secs(20 * 60),
            wait: true,
            concurrency: crate::cluster::DEFAULT_CONCURRENCY,
            by_waves: false,
            poll_interval: Duration::from_secs(2),
            backoff: Backoff::default(),
            crd_grace: Duration::from_secs(60),
            interrupt: None,
            operation: Operation::Install,
            purge: false,
            lock_wait: Duration::from_secs(120),
            lease: LeaseTiming::default(),
        }
    }
}

/// What an install did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallReport {
    /// The API server's address.
    pub server: String,
    /// The API server's version.
    pub server_version: String,
    /// Whether it was a server-side dry run.
    pub dry_run: bool,
    /// How many waves the plan has.
    pub waves_total: usize,
    /// How many waves were applied (and became ready, when the run waited).
    pub waves_done: usize,
    /// Whether the run waited for every object's readiness (`false`: only for what later waves
    /// needed; see [`InstallOptions::wait`]).
    pub waited: bool,
    /// How many objects were applied.
    pub applied: usize,
    /// How many of them were created.
    pub created: usize,
    /// Objects that existed before the install without kfctl-rs's mark: applied, not
    /// kfctl-rs's, never deleted by prune, uninstall or `--purge` ([`crate::cluster::mark`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preexisting: Vec<ObjectRef>,
    pub(crate) warnings: Vec<String>,
    /// How long the run took, in seconds.
    pub elapsed_seconds: f64,
    pub(crate) plan_digest: String,
    /// What the record said was installed before this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) from: Option<InstallMeta>,
    /// Objects the previous record listed and the render no longer holds: deleted, or kept.
    #[serde(flatten)]
    pub prune: PruneReport,
    /// The longest chain of steps the run waited through (none for a dry run): no schedule
    /// finishes sooner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_path: Option<CriticalPath>,
}

/// Install `objects` (each tagged with its catalog component) onto the cluster of `options.target`:
/// one [`Session`](crate::cluster::session::Session), opened and run.
pub async fn install(
    objects: Vec<RenderedObject>,
    options: InstallOptions,
    progress: &mut dyn Progress,
) -> Result<InstallReport, ClusterError> {
    crate::cluster::session::Session::open(&objects, options).await?.install(progress).await
}

/// What the preflight found, for a confirmation question.
#[derive(Debug, Clone)]
pub struct Checked {
    /// How many objects would be applied.
    pub objects: usize,
    /// How many waves they make.
    pub waves: usize,
    /// The API server's address.
    pub server: String,
    /// What the preflight checks found.
    pub preflight: preflight::PreflightReport,
}

fn configmaps() -> ResourcePath {
    ResourcePath { group: String::new(), version: "v1".into(), plural: "configmaps".into(), namespaced: true }
}

/// Read the install record, if there is one.
pub(crate) async fn read_record(api: &ApiClient) -> Result<Option<InstallRecord>, ClusterError> {
    let found =
        api.get(&configmaps(), Some(record::RECORD_NAMESPACE), record::RECORD_NAME).await.map_err(|failure| {
            ClusterError::settle(api, "reading the install record", failure, |failure| ClusterError::Api {
                what: "read install record".into(),
                failure: Box::new(failure),
            })
        })?;
    found.map(|cm| InstallRecord::from_configmap(&cm)).transpose().map_err(Into::into)
}

/// One install's running state.
pub(crate) struct Run {
    pub(super) record: Option<InstallRecord>,
    written: Option<Value>,
    pub(super) waves_done: usize,
    applied: usize,
    created: usize,
    preexisting: Vec<ObjectRef>,
    /// The wave (or `prune`) in progress, for the record's `lastRun`.
    pub(super) stage: String,
    /// The longest chain of steps of a run by the dependency graph.
    pub(super) critical_path: Option<CriticalPath>,
}

/// How long past the install's deadline the record of a timed-out run may still be written.
const RECORD_GRACE: Duration = Duration::from_secs(10);

impl Run {
    /// The report of a finished run.
    pub(crate) fn report(
        &self,
        engine: &Engine,
        plan: &Plan,
        checks: preflight::PreflightReport,
        started: Instant,
        from: Option<InstallMeta>,
        prune: PruneReport,
    ) -> InstallReport {
        InstallReport {
            server: engine.api.server.clone(),
            server_version: checks.server_version,
            dry_run: engine.settings.dry_run,
            waves_total: plan.waves.len(),
            waves_done: self.waves_done,
            waited: engine.settings.wait,
            applied: self.applied,
            created: self.created,
            preexisting: self.preexisting.clone(),
            warnings: checks.warnings,
            elapsed_seconds: started.elapsed().as_secs_f64(),
            plan_digest: plan.digest.clone(),
            from,
            prune,
            critical_path: self.critical_path.clone(),
        }
    }

    pub(crate) fn start(engine: &Engine, plan: &Plan, meta: InstallMeta, previous: Option<InstallRecord>) -> Run {
        let mut run = Run {
            record: None,
            written: None,
            waves_done: 0,
            applied: 0,
            created: 0,
            preexisting: Vec::new(),
            stage: String::new(),
            critical_path: None,
        };
        if engine.settings.dry_run {
            return run;
        }
        // a record with entries edited by hand is written again without them
        run.written = previous.as_ref().filter(|p| p.hand_edited.is_empty()).map(InstallRecord::to_configmap);
        run.record = Some(InstallRecord::resume(previous, meta, &plan.digest, plan.waves.len()));
        run
    }

    /// Every wave, then the prune.
    pub(crate) async fn converge(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        options: &InstallOptions,
        progress: &mut dyn Progress,
    ) -> Result<PruneReport, ClusterError> {
        match engine.settings.dry_run || options.by_waves {
            true => self.waves(engine, plan, progress).await?,
            false => self.by_graph(engine, plan, progress).await?,
        }
        let Some(record) = self.record.as_mut() else { return Ok(PruneReport::default()) };
        self.stage = "prune".into();
        converge::prune(engine, record, plan, options.purge, progress).await
    }

    /// Note how the run ended in the record: the operation, the release it started from (when
    /// another), the stage reached, how many of the plan's objects it applied.
    pub(crate) fn finish(
        &mut self,
        operation: Operation,
        error: Option<&ClusterError>,
        from: Option<&InstallMeta>,
        plan: &Plan,
    ) {
        let Some(record) = self.record.as_mut() else { return };
        let stage = if error.is_none() { "done".to_string() } else { self.stage.clone() };
        let error = error.map(|e| e.to_string().chars().take(2000).collect());
        let at = crate::cluster::lease::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let from =
            from.filter(|f| f.upstream_version != record.meta.upstream_version).map(|f| f.upstream_version.clone());
        record.finish(LastRun {
            operation: operation.name().into(),
            succeeded: error.is_none(),
            stage,
            error,
            from,
            applied: self.applied,
            planned: plan.objects().count(),
            at,
        });
    }

    async fn waves(&mut self, engine: &Engine, plan: &Plan, progress: &mut dyn Progress) -> Result<(), ClusterError> {
        let total = plan.waves.len();
        for wave in &plan.waves {
            let wave_started = Instant::now();
            progress.event(&Event::WaveStarted {
                index: wave.index,
                total,
                name: &wave.name,
                objects: wave.objects.len(),
            });
            self.stage = format!("wave {}/{total}: {}", wave.index, wave.name);
            if !engine.settings.dry_run && wave.class == Class::Namespace {
                converge::wait_for_namespace_wave(engine, wave, progress).await?;
            }
            if !engine.settings.dry_run && matches!(wave.class, Class::MutatingWebhook | Class::ValidatingWebhook) {
                wait_for_endpoints(engine, wave, progress).await?;
            }
            if !engine.settings.dry_run && !wave.made_namespaces.is_empty() {
                converge::wait_for_made_namespaces(engine, wave, progress).await?;
            }
            let mut note = |object: &PlannedObject, applied: &Applied| self.note(object, wave.index, applied);
            let applied = engine.apply_wave(wave, progress, &mut note).await;
            applied?;
            if !engine.settings.dry_run {
                wait_for_wave(engine, wave, progress).await.map_err(|e| e.numbered(wave.index, total))?;
                if wave.class == Class::Crd {
                    engine.crds_done();
                }
            }
            self.waves_done = wave.index;
            if let Some(record) = &mut self.record {
                record.reach(wave.index, &wave.name);
            }
            self.save(engine).await;
            progress.event(&Event::WaveDone { index: wave.index, name: &wave.name, elapsed: wave_started.elapsed() });
        }
        Ok(())
    }

    pub(super) fn note(&mut self, object: &PlannedObject, wave: usize, applied: &Applied) {
        self.applied += 1;
        self.created += usize::from(applied.created);
        let marked = carries_mark(&applied.live);
        if !marked {
            self.preexisting.push(object.reference.clone());
        }
        if let Some(record) = &mut self.record {
            let uid = applied.live.pointer("/metadata/uid").and_then(Value::as_str);
            let noted = record::Noted { created: applied.created, marked, uid };
            record.note_applied(&object.reference, &object.component, wave, noted);
        }
    }

    /// Write the record if it changed (best effort: a failed write must not hide the real error).
    /// A run that timed out still records how far it got, within [`RECORD_GRACE`].
    pub(crate) async fn save(&mut self, engine: &Engine) {
        let Some(record) = &self.record else { return };
        let configmap = record.to_configmap();
        if self.written.as_ref() == Some(&configmap) {
            return;
        }
        let saved = engine
            .api
            .with_grace(RECORD_GRACE)
            .apply(&configmaps(), Some(record::RECORD_NAMESPACE), record::RECORD_NAME, &configmap, true, false)
            .await;
        if saved.is_ok() {
            self.written = Some(configmap);
        }
    }
}

async fn wait_for_endpoints(engine: &Engine, wave: &Wave, progress: &mut dyn Progress) -> Result<(), ClusterError> {
    let mut services: Vec<(ObjectRef, ())> = Vec::new();
    for (namespace, name) in wave.objects.iter().flat_map(|o| o.calls.iter()) {
        let service = ObjectRef {
            api_version: "v1".into(),
            kind: "Service".into(),
            namespace: Some(namespace.clone()),
            name: name.clone(),
        };
        if !services.iter().any(|(s, _)| *s == service) {
            services.push((service, ()));
        }
    }
    engine
        .wait_until(&wave.name, services, progress, |service, _| async move {
            engine.endpoint_ready(service.namespace.as_deref().unwrap_or("default"), &service.name).await
        })
        .await
}

async fn wait_for_wave(engine: &Engine, wave: &Wave, progress: &mut dyn Progress) -> Result<(), ClusterError> {
    let waited = |o: &&PlannedObject| o.rule.is_some_and(|rule| engine.settings.wait || rule.gates_later_waves());
    let items: Vec<(ObjectRef, &PlannedObject)> =
        wave.objects.iter().filter(waited).map(|o| (o.reference.clone(), o)).collect();
    if items.is_empty() {
        return Ok(());
    }
    let watch = Watch::default();
    let watch = &watch;
    engine
        .wait_until(&wave.name, items, progress, |r, object| async move {
            match object.rule {
                Some(rule) => engine.judge(&r, rule, &object.body, watch).await,
                None => Verdict::Ready,
            }
        })
        .await
}
