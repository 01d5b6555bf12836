//! One run of `install` or `upgrade`, opened once: connect, plan, preflight and read the record
//! a single time, whatever asks for them — the confirmation question, `upgrade`'s
//! announcement, the install itself.
//!
//! [`Session::open`] does everything that writes nothing: the plan, the credentials check, one
//! connection, the preflight (version, provided dependencies, permissions, StorageClass), the
//! install record (an upgrade with none stops here; a rollback without a previous release, or
//! with other values, too: [`crate::cluster::rollback`]), the stored-version and immutable-field
//! checks. The caller may then show [`Session::checked`] and [`Session::installed`], ask, and
//! [`Session::restart_clock`] so the time a person took to answer is not taken from the run's
//! `--timeout`. [`Session::install`] takes the lease and converges.

use crate::catalog::RenderedObject;
use crate::cluster::ClusterError;
use crate::cluster::api::ApiClient;
use crate::cluster::engine::{Engine, Settings};
use crate::cluster::immutable;
use crate::cluster::install::{Checked, InstallOptions, InstallReport, Operation, Run, read_record};
use crate::cluster::plan::Plan;
use crate::cluster::preflight::{self, PreflightReport};
use crate::cluster::progress::{Event, Progress};
use crate::cluster::record::InstallRecord;
use crate::cluster::redact::Redactor;
use crate::cluster::rollback;
use crate::cluster::upgrade::{self, LifecycleError};
use crate::source::releases;
use std::time::Instant;

/// A run opened and checked, nothing written yet.
pub struct Session {
    options: InstallOptions,
    plan: Plan,
    engine: Engine,
    checks: PreflightReport,
    previous: Option<InstallRecord>,
    /// What the checks found that the run should say as it starts (replacements).
    notices: Vec<String>,
    started: Instant,
    objects: usize,
}

impl Session {
    /// Plan, connect once, preflight, read the record and check what cannot be applied.
    pub async fn open(objects: &[RenderedObject], options: InstallOptions) -> Result<Session, ClusterError> {
        let started = Instant::now();
        let plan = Plan::build(objects)?;
        preflight::check_credentials(&options.meta.profile, &options.preflight)?;
        let redactor = Redactor::from_docs(objects.iter().map(|o| &o.obj));
        let api =
            ApiClient::connect(&options.target).await?.with_backoff(options.backoff).with_redactor(redactor.clone());
        let mut engine = engine_for(api.within_since(started, options.timeout), &options, &plan, redactor, started);
        let checks = preflight::run(&engine.api, &engine.resolver, &plan, &options.preflight).await?;
        let previous = read_record(&engine.api).await?;
        if options.operation == Operation::Upgrade && previous.is_none() {
            return Err(LifecycleError::NothingInstalled { server: engine.api.server.clone() }.into());
        }
        if options.operation == Operation::Rollback {
            let server = &engine.api.server;
            rollback::check(server, previous.as_ref(), &options.meta, releases::no_rollback_from)?;
        }
        rollback::check_downgrade(previous.as_ref(), &options.meta, releases::no_rollback_from)?;
        let back = rollback::goes_back(options.operation, previous.as_ref(), &options.meta);
        upgrade::check_stored_versions(&engine.api, &plan)
            .await
            .map_err(|e| rollback::explain_stored_versions(e, back, &options.meta))?;
        let replacements = immutable::plan_replacements(&engine.api, &engine.resolver, &plan).await?;
        let notices = replacements.iter().map(|f| format!("{}: {}", f.object, f.describe())).collect();
        engine.replacements = replacements.into_iter().map(|f| (f.object.clone(), f)).collect();
        Ok(Session { options, plan, engine, checks, previous, notices, started, objects: objects.len() })
    }

    /// What the checks found, for a confirmation question.
    pub fn checked(&self) -> Checked {
        Checked {
            objects: self.objects,
            waves: self.plan.waves.len(),
            server: self.engine.api.server.clone(),
            preflight: self.checks.clone(),
        }
    }

    /// The install record found on the cluster, if any (what an upgrade goes from).
    pub fn installed(&self) -> Option<&InstallRecord> {
        self.previous.as_ref()
    }

    /// Start the run's `--timeout` now (after a confirmation question was answered).
    pub fn restart_clock(&mut self) {
        self.started = Instant::now();
        let api = self.engine.api.clone().within_since(self.started, self.options.timeout);
        let replacements = std::mem::take(&mut self.engine.replacements);
        let redactor = self.engine.redactor.clone();
        self.engine = engine_for(api, &self.options, &self.plan, redactor, self.started);
        self.engine.replacements = replacements;
    }

    /// Take the lease, converge to the plan, prune, and record the run.
    pub async fn install(self, progress: &mut dyn Progress) -> Result<InstallReport, ClusterError> {
        let Session { options, plan, engine, checks, previous, notices, started, .. } = self;
        for line in checks.warnings.iter().chain(&notices) {
            progress.event(&Event::Notice(line));
        }
        let from = previous.as_ref().map(|r| r.meta.clone());
        let lease = match engine.settings.dry_run {
            true => None,
            false => {
                crate::cluster::converge::ensure_record_namespace(&engine, progress).await?;
                let lease = crate::cluster::lease::Lease::acquire(
                    &engine.api,
                    options.operation.name(),
                    options.lease,
                    options.lock_wait,
                    progress,
                )
                .await?;
                Some(lease)
            }
        };
        // the record as it is now, after waiting for the lease: another run may have changed it
        let previous = if lease.is_some() { read_record(&engine.api).await? } else { previous };
        let mut run = Run::start(&engine, &plan, options.meta.clone(), previous);
        let outcome = run.converge(&engine, &plan, &options, progress).await;
        run.finish(options.operation, outcome.as_ref().err(), from.as_ref(), &plan);
        run.save(&engine).await;
        let released = match lease {
            Some(lease) => lease.release().await,
            None => Ok(()),
        };
        let prune = outcome?;
        released?;
        Ok(run.report(&engine, &plan, checks, started, from, prune))
    }
}

/// The engine of a run whose clock started at `started`.
fn engine_for(api: ApiClient, options: &InstallOptions, plan: &Plan, redactor: Redactor, started: Instant) -> Engine {
    let settings = Settings {
        force_conflicts: options.force_conflicts,
        dry_run: options.dry_run == crate::cluster::install::DryRun::Server,
        concurrency: options.concurrency,
        poll_interval: options.poll_interval,
        backoff: options.backoff,
        crd_grace: options.crd_grace,
        deadline: started + options.timeout,
        timeout: options.timeout,
        wait: options.wait,
    };
    let mut engine = Engine::new(api, settings, redactor, plan.crd_kinds.keys().cloned().collect());
    engine.interrupt = options.interrupt.clone();
    engine
}
