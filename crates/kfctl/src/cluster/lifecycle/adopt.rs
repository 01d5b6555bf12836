//! `adopt`: take over a platform another tool installed, as if kfctl-rs had installed it.
//!
//! Most Kubeflow platforms were installed by upstream's loop (`kustomize build example | kubectl
//! apply --server-side --force-conflicts -f -`) or by client-side `kubectl apply`. Adopting
//! release V of a profile:
//!
//! 1. [`Adoption::open`] (read-only, one connection) renders V's plan and reads every object: *present* (its rendered
//!    fields equal the live ones), *differing* (the fields that differ are listed; a differing
//!    immutable field is left for the next upgrade to replace), *missing* (or its kind is not
//!    served). It weighs the present objects' image tags and version labels against V's render
//!    (`evidence`).
//! 2. [`judge`] refuses, writing nothing, when nothing of V is present (an empty cluster) or the
//!    cluster plainly holds another release (naming the tag it most likely runs, and an object
//!    that shows it); [`adopt`] also refuses when a kfctl-rs record exists (`upgrade` instead), so
//!    adopting twice in a row is a clear refusal, nothing written.
//! 3. [`adopt`] takes the lease, then for every present object, wave by wave: a server-side apply
//!    of V's rendered body with force as field manager `kfctl-rs` (what upstream's loop does with
//!    `--force-conflicts`, so a differing field takes V's value), then a JSON patch of
//!    `metadata.managedFields` (with the object's `resourceVersion`, as kubectl's own client-side
//!    → server-side migration sends it) that removes the entries of kubectl's managers
//!    (`MIGRATED`). kfctl-rs then owns every field V renders and no field stays owned by
//!    kubectl. Unlike kubectl's migration, the removed entries are not merged into kfctl-rs's:
//!    fields only kubectl set that V's render does not hold (its `last-applied-configuration`
//!    annotation, users' additions) stay as they are, owned by nobody, instead of being deleted
//!    by kfctl-rs's next apply. Missing objects are not created and nothing is deleted.
//! 4. The record is written as if kfctl-rs had installed V: every present object in the
//!    inventory as *adopted* (not created by kfctl-rs), the waves whose objects are all present
//!    as reached (`status` says `partial` when some are missing; the next `upgrade` creates them).
//!
//! Adopted objects are the install's own afterwards: an upgrade whose render drops one prunes it,
//! the guarded kinds (CRDs, PVCs, Namespaces) kept unless `--purge`, and `uninstall` deletes them
//! as it deletes created ones ([`crate::cluster::prune`], `crate::cluster::record::InventoryEntry::owned`).

pub(crate) mod evidence;

use crate::catalog::RenderedObject;
use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath, Target};
use crate::cluster::converge;
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::{Engine, Settings, scoped};
use crate::cluster::immutable::{self, Forced};
use crate::cluster::install::read_record;
use crate::cluster::lease::{Lease, LeaseTiming};
use crate::cluster::object::ObjectRef;
use crate::cluster::plan::{Plan, PlannedObject};
use crate::cluster::progress::{Event, Progress};
use crate::cluster::record::{self, InstallMeta, InstallRecord, LastRun};
use crate::cluster::redact::Redactor;
use crate::cluster::retry::{ApiFailure, Backoff};
use evidence::ReleaseEvidence;
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The field managers whose entries adopt removes: (manager, operation). kubectl's server-side
/// apply, its client-side apply, and the `kubectl` Update entries older kubectl wrote.
pub(crate) const MIGRATED: &[(&str, &str)] =
    &[("kubectl", "Apply"), ("kubectl-client-side-apply", "Update"), ("kubectl", "Update")];

/// Refusals of `adopt`; nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum AdoptError {
    /// The cluster already has an install record.
    #[error(
        "adopt: {server} already has a kfctl-rs install record ({version}, profile {profile}); nothing was written; \
         use `kfctl-rs upgrade` to move it to another version"
    )]
    Recorded {
        /// The API server's address.
        server: String,
        /// The recorded release.
        version: String,
        /// The recorded profile.
        profile: String,
    },
    /// No object of the release exists on the cluster.
    #[error(
        "adopt: none of the {objects} objects of {version} exists on {server}; nothing was written; there is \
         nothing to adopt, use `kfctl-rs install` for a first install"
    )]
    NothingPresent {
        /// The API server's address.
        server: String,
        /// The release to adopt.
        version: String,
        /// How many objects it has.
        objects: usize,
    },
    /// The cluster plainly runs another release: many of the objects compared show other image tags
    /// or version labels.
    #[error(
        "adopt: {server} plainly holds another release than {version}: {mismatched} of {compared} objects compared \
         run other image tags or version labels{}, e.g. {example}; nothing was written; adopt the release that \
         was installed (--version), then upgrade",
        likely.as_ref().map(|t| format!(" (most often {t})")).unwrap_or_default()
    )]
    OtherRelease {
        /// The API server's address.
        server: String,
        /// The release to adopt.
        version: String,
        /// How many objects were compared.
        compared: usize,
        /// How many of them differ.
        mismatched: usize,
        /// The release the differences point to most often, when one does.
        likely: Option<String>,
        /// One differing object, as an example.
        example: String,
    },
}

/// What adopt found of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// The object exists and matches the render.
    Present,
    /// The object exists with fields that differ from the render.
    Differing,
    /// The object does not exist.
    Missing,
}

/// One planned object, as found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// The planned object looked for.
    #[serde(flatten)]
    pub object: ObjectRef,
    pub(crate) component: String,
    /// The wave it is applied in.
    pub wave: usize,
    /// Whether it exists, and how it compares.
    pub presence: Presence,
    /// Fields the render sets whose live value differs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differing: Vec<String>,
    /// An immutable field differs: left as is, the next upgrade replaces it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forced: Option<Forced>,
    /// kubectl's managers on it (`MIGRATED`), as `manager (Operation)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub managers: Vec<String>,
    #[serde(skip)]
    live: Option<Value>,
}

/// What the cluster holds of the release to adopt.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Survey {
    /// The API server's address.
    pub server: String,
    /// The release to adopt.
    pub version: String,
    /// Every planned object, as found.
    pub objects: Vec<Found>,
    /// What tells the installed release from others (image tags, version labels).
    pub evidence: ReleaseEvidence,
}

impl Survey {
    /// How many objects have this presence.
    pub fn count(&self, presence: Presence) -> usize {
        self.objects.iter().filter(|f| f.presence == presence).count()
    }
}

/// How an adopt runs.
#[derive(Debug, Clone)]
pub struct AdoptOptions {
    pub(crate) target: Target,
    pub(crate) meta: InstallMeta,
    /// The deadline of the whole survey and adopt, from its start.
    pub timeout: Duration,
    /// Objects read or written at once.
    pub concurrency: usize,
    pub(crate) backoff: Backoff,
    /// How long to wait for another run's lease.
    pub lock_wait: Duration,
}

impl AdoptOptions {
    /// Options for adopting `meta`'s release on `target`, with the defaults (10 minutes, 16 at
    /// once, 2 minutes for the lease).
    pub fn new(target: Target, meta: InstallMeta) -> Self {
        AdoptOptions {
            target,
            meta,
            timeout: Duration::from_secs(10 * 60),
            concurrency: 16,
            backoff: Backoff::default(),
            lock_wait: Duration::from_secs(120),
        }
    }
}

/// What an adopt did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdoptReport {
    /// The API server's address.
    pub server: String,
    /// How many present objects were taken over.
    pub adopted: usize,
    /// How many planned objects the survey found missing.
    pub missing: usize,
    /// Objects whose kubectl managers were removed.
    pub migrated: usize,
    /// Present objects left as they are (an immutable field differs).
    pub(crate) left: Vec<Forced>,
    pub(crate) complete: bool,
}

fn kubectl_managers(live: &Value) -> Vec<String> {
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array).into_iter().flatten();
    entries
        .filter(|e| migrated(e))
        .map(|e| format!("{} ({})", e["manager"].as_str().unwrap_or(""), e["operation"].as_str().unwrap_or("")))
        .collect()
}

fn migrated(entry: &Value) -> bool {
    let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or("");
    entry.get("subresource").is_none_or(|s| s.as_str().unwrap_or("").is_empty())
        && MIGRATED.iter().any(|(m, op)| text("manager") == *m && text("operation") == *op)
}

async fn find(api: &ApiClient, resolver: &Resolver, plan: &Plan, o: &PlannedObject) -> Result<Found, ClusterError> {
    let r = &o.reference;
    let mut found = Found {
        object: r.clone(),
        component: o.component.clone(),
        wave: plan.wave_of(r).unwrap_or(0),
        presence: Presence::Missing,
        differing: Vec::new(),
        forced: None,
        managers: Vec::new(),
        live: None,
    };
    let refused = |f: ApiFailure| ClusterError::Refused { object: r.clone(), failure: Box::new(f) };
    let path = match resolver.resolve(&r.api_version, &r.kind).await {
        Ok(path) => path,
        Err(f) if f.is_no_kind_match() => return Ok(found),
        Err(f) => return Err(refused(f)),
    };
    let Some(live) = api.get(&path, scoped(&path, r), &r.name).await.map_err(refused)? else { return Ok(found) };
    let mut body = o.body.clone();
    body.as_object_mut().map(|m| (m.remove("apiVersion"), m.remove("kind")));
    immutable::differences(&body, &live, "", &mut found.differing);
    found.presence = if found.differing.is_empty() { Presence::Present } else { Presence::Differing };
    found.forced = immutable::forced(r, &o.body, &live);
    found.managers = kubectl_managers(&live);
    found.live = Some(live);
    Ok(found)
}

async fn survey_with(api: &ApiClient, plan: &Plan, version: &str) -> Result<Survey, ClusterError> {
    let resolver = Resolver::new(api.clone());
    let results: Vec<Result<Found, ClusterError>> =
        futures::stream::iter(plan.objects()).map(|o| find(api, &resolver, plan, o)).buffered(16).collect().await;
    let objects = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut evidence = ReleaseEvidence::default();
    for (found, planned) in objects.iter().zip(plan.objects()) {
        if let Some(live) = &found.live {
            evidence.weigh(&found.object, &planned.body, live);
        }
    }
    Ok(Survey { server: api.server.clone(), version: version.to_string(), objects, evidence })
}

/// Refuse an empty cluster or another release.
pub fn judge(survey: &Survey) -> Result<(), AdoptError> {
    let (server, version) = (survey.server.clone(), survey.version.clone());
    if survey.count(Presence::Missing) == survey.objects.len() {
        return Err(AdoptError::NothingPresent { server, version, objects: survey.objects.len() });
    }
    let e = &survey.evidence;
    if e.other_release() {
        let m = &e.mismatches[0];
        return Err(AdoptError::OtherRelease {
            server,
            version,
            compared: e.compared,
            mismatched: e.mismatches.len(),
            likely: e.likely.clone(),
            example: format!("{} {} is {} where {} renders {}", m.object, m.what, m.live, survey.version, m.rendered),
        });
    }
    Ok(())
}

async fn refuse_if_recorded(api: &ApiClient) -> Result<(), ClusterError> {
    match read_record(api).await? {
        Some(r) => Err(AdoptError::Recorded {
            server: api.server.clone(),
            version: r.meta.upstream_version,
            profile: r.meta.profile,
        }
        .into()),
        None => Ok(()),
    }
}

/// One adopt run, connected once: what [`Adoption::open`] surveyed (nothing written), then
/// [`Adoption::take_over`] under the lease, from the same survey (the objects are read once).
pub struct Adoption {
    api: ApiClient,
    plan: Plan,
    survey: Survey,
    redactor: Redactor,
    started: Instant,
    options: AdoptOptions,
}

impl Adoption {
    /// Connect, refuse when a kfctl-rs record exists (`upgrade` instead), and survey what the
    /// cluster holds of `objects` (the render of `options.meta`'s release); writes nothing. The
    /// whole run, survey and take-over, is within `options.timeout` from here.
    pub async fn open(objects: &[RenderedObject], options: AdoptOptions) -> Result<Adoption, ClusterError> {
        let started = Instant::now();
        let plan = Plan::build(objects)?;
        let redactor = Redactor::from_docs(objects.iter().map(|o| &o.obj));
        let api = ApiClient::connect(&options.target)
            .await?
            .with_backoff(options.backoff)
            .within_since(started, options.timeout)
            .with_redactor(redactor.clone());
        refuse_if_recorded(&api).await?;
        let survey = survey_with(&api, &plan, &options.meta.upstream_version).await?;
        Ok(Adoption { api, plan, survey, redactor, started, options })
    }

    /// What the cluster holds of the render, as surveyed.
    pub fn survey(&self) -> &Survey {
        &self.survey
    }

    /// Start the run's `--timeout` again now (after a confirmation question was answered).
    pub fn restart_clock(&mut self) {
        self.started = Instant::now();
        self.api = self.api.clone().within_since(self.started, self.options.timeout);
    }

    /// Refuse an empty cluster or another release ([`judge`]); then take the lease, check
    /// again that no record appeared, and take over every present object, wave by wave.
    pub async fn take_over(self, progress: &mut dyn Progress) -> Result<AdoptReport, ClusterError> {
        let Adoption { api, plan, survey, redactor, started, options } = self;
        judge(&survey)?;
        let settings = Settings {
            force_conflicts: true,
            dry_run: false,
            concurrency: options.concurrency,
            poll_interval: Duration::from_millis(200),
            backoff: options.backoff,
            crd_grace: Duration::from_secs(60),
            deadline: started + options.timeout,
            timeout: options.timeout,
            wait: true,
        };
        let engine = Engine::new(api.clone(), settings, redactor, Default::default());
        converge::ensure_record_namespace(&engine, progress).await?;
        let lease = Lease::acquire(&api, "adopt", LeaseTiming::default(), options.lock_wait, progress).await?;
        let outcome = match refuse_if_recorded(&api).await {
            Ok(()) => take_over(&engine, &plan, &survey, &options, progress).await,
            Err(e) => Err(e),
        };
        // a lease lost while adopting (deleted or taken over) fails the run, as for install
        let released = lease.release().await;
        let report = outcome?;
        released?;
        Ok(report)
    }
}

/// Adopt the platform `objects` render (release `options.meta`) in one call: see the module
/// documentation.
pub async fn adopt(
    objects: &[RenderedObject],
    options: &AdoptOptions,
    progress: &mut dyn Progress,
) -> Result<AdoptReport, ClusterError> {
    Adoption::open(objects, options.clone()).await?.take_over(progress).await
}

async fn take_over(
    engine: &Engine,
    plan: &Plan,
    survey: &Survey,
    options: &AdoptOptions,
    progress: &mut dyn Progress,
) -> Result<AdoptReport, ClusterError> {
    let api = &engine.api;
    let mut record = InstallRecord::resume(None, options.meta.clone(), &plan.digest, plan.waves.len());
    let mut report = AdoptReport {
        server: api.server.clone(),
        adopted: 0,
        missing: survey.count(Presence::Missing),
        migrated: 0,
        left: Vec::new(),
        complete: survey.count(Presence::Missing) == 0,
    };
    let mut reaching = true;
    for wave in &plan.waves {
        let found: Vec<&Found> = survey.objects.iter().filter(|f| f.wave == wave.index).collect();
        let present: Vec<(&Found, &PlannedObject)> = found
            .iter()
            .filter(|f| f.presence != Presence::Missing)
            .filter_map(|f| wave.objects.iter().find(|o| o.reference == f.object).map(|o| (*f, o)))
            .collect();
        let results: Vec<Result<bool, ClusterError>> = futures::stream::iter(present.iter())
            .map(|(f, o)| take_one(engine, f, o))
            .buffered(options.concurrency.max(1))
            .collect()
            .await;
        for ((f, _), result) in present.iter().zip(results) {
            report.migrated += usize::from(result?);
            report.adopted += 1;
            let uid = f.live.as_ref().and_then(|l| l.pointer("/metadata/uid")).and_then(Value::as_str);
            record.note_adopted(&f.object, &f.component, f.wave, uid);
            if let Some(forced) = &f.forced {
                let line = format!("left as is: {}: {}; the next upgrade replaces it", f.object, forced.describe());
                progress.event(&Event::Notice(&line));
                report.left.push(forced.clone());
            }
        }
        reaching &= found.iter().all(|f| f.presence != Presence::Missing);
        if reaching {
            record.reach(wave.index, &wave.name);
        }
        progress.event(&Event::Notice(&format!("adopted wave {}/{}: {}", wave.index, plan.waves.len(), wave.name)));
    }
    let at = crate::cluster::lease::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let applied = record.inventory.len();
    let stage = "done".into();
    let run = LastRun {
        operation: "adopt".into(),
        succeeded: true,
        stage,
        error: None,
        from: None,
        applied,
        planned: applied,
        at,
    };
    record.finish(run);
    save(api, &record).await?;
    Ok(report)
}

/// Apply V's body with force as kfctl-rs, with kfctl-rs's mark (adopting is taking it over), then
/// remove kubectl's managers; `true` when some were
/// removed. An object whose immutable field differs is left as it is.
async fn take_one(engine: &Engine, found: &Found, object: &PlannedObject) -> Result<bool, ClusterError> {
    if found.forced.is_some() {
        return Ok(false);
    }
    let r = &object.reference;
    let refused = |f: ApiFailure| ClusterError::Refused { object: r.clone(), failure: Box::new(f) };
    let path = engine.resolver.resolve(&r.api_version, &r.kind).await.map_err(refused)?;
    let ns = scoped(&path, r);
    let body = crate::cluster::mark::marked(&object.body);
    let mut live = engine.api.apply(&path, ns, &r.name, &body, true, false).await.map_err(refused)?.live;
    for _ in 0..5 {
        let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array).cloned().unwrap_or_default();
        let kept: Vec<Value> = entries.iter().filter(|e| !migrated(e)).cloned().collect();
        if kept.len() == entries.len() {
            return Ok(false);
        }
        let rv = live.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null);
        let ops = json!([
            {"op": "replace", "path": "/metadata/managedFields", "value": kept},
            {"op": "replace", "path": "/metadata/resourceVersion", "value": rv},
        ]);
        // one attempt: a 409 means the object moved on (a controller wrote its status), so the
        // entries are computed again from a fresh read rather than the same patch resent
        match engine.api.without_retries().patch_json(&path, ns, &r.name, &ops).await {
            Ok(_) => return Ok(true),
            Err(f) if f.status == Some(409) => {
                live = engine.api.get(&path, ns, &r.name).await.map_err(refused)?.unwrap_or(Value::Null);
            }
            Err(f) => return Err(refused(f)),
        }
    }
    Ok(false)
}

async fn save(api: &ApiClient, record: &InstallRecord) -> Result<(), ClusterError> {
    let configmaps =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "configmaps".into(), namespaced: true };
    let cm = record.to_configmap();
    api.apply(&configmaps, Some(record::RECORD_NAMESPACE), record::RECORD_NAME, &cm, true, false)
        .await
        .map_err(|failure| ClusterError::Api { what: "write install record".into(), failure: Box::new(failure) })?;
    Ok(())
}
