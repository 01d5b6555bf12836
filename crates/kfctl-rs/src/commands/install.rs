//! `kfctl-rs install`: notice, preflight, confirmation, then the ordered apply.
//!
//! `--plan` (and `--dry-run=client`) print the plan without touching a cluster; `-o json` makes
//! it data. With `--kubeconfig` or `--context` named (and always for `upgrade`), the plan is
//! judged against that cluster: each object marked create / update / unchanged / prune. Without `--yes` a terminal is asked for confirmation (after the preflight, so the
//! question names the server and its version); without a terminal the command says so and
//! stops. Ctrl-C stops after the requests in flight, records progress and exits 130.
//!
//! [`run_with_objects`] takes the objects tagged with their catalog components and their
//! [`RenderMeta`]: from the render, or from `--objects FILE` (a pre-rendered YAML stream whose
//! components `catalog::attribute::attribute_prerendered` infers).

use super::cluster_args::{RenderMeta, progress_sink};
use super::confirm::Prompt;
use super::output::print_data;
use crate::cli::{DryRunMode, InstallArgs, Output};
use crate::exit::{Outcome, exit_interrupted};
use kfctl::catalog::RenderedObject;
use kfctl::cluster::install::Operation;
use kfctl::cluster::plan::Plan;
use kfctl::cluster::preflight::PreflightOptions;
use kfctl::cluster::session::Session;
use kfctl::cluster::{ClusterError, DryRun, InstallOptions};

/// `kfctl-rs install`: render the profile (or read `--objects`), then install.
pub(crate) fn run(args: InstallArgs) -> anyhow::Result<Outcome> {
    let (objects, meta) = args.source.objects_and_meta()?;
    run_with_objects(args, objects, meta)
}

/// Install rendered objects.
pub(crate) fn run_with_objects(
    args: InstallArgs,
    objects: Vec<RenderedObject>,
    meta: RenderMeta,
) -> anyhow::Result<Outcome> {
    run_operation(args, objects, meta, Operation::Install)
}

/// Whether the cluster was named on the command line (then `--plan` marks each object).
fn names_a_cluster(args: &InstallArgs) -> bool {
    args.cluster.kubeconfig.is_some() || args.cluster.context.is_some()
}

/// Install or upgrade rendered objects.
pub(crate) fn run_operation(
    args: InstallArgs,
    objects: Vec<RenderedObject>,
    meta: RenderMeta,
    operation: Operation,
) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let planning = args.plan || args.dry_run == Some(DryRunMode::Client);
    if planning && (operation != Operation::Install || names_a_cluster(&args)) {
        return super::change_plan::print_change_plan(&args, &objects, &meta.meta, operation);
    }
    if planning {
        let plan = Plan::build(&objects).map_err(ClusterError::from)?;
        print_plan(&plan, args.output.format)?;
        return Ok(Outcome::Done);
    }
    let in_objects: Vec<&serde_json::Value> = objects.iter().map(|o| &o.obj).collect();
    let access = kfctl::catalog::access::describe(&in_objects, meta.keeps_demo_login);
    let mut options = install_options(&args, meta);
    options.operation = operation;
    let ask = !args.confirm.yes && options.dry_run == DryRun::None;
    let prompt = if ask { Some(Prompt::on_terminal(operation.name(), "")?) } else { None };
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        // one session: one connection, plan, preflight and record read for the announcement,
        // the question and the install
        let (tx, rx) = tokio::sync::watch::channel(false);
        options.interrupt = Some(rx);
        let to = options.meta.clone();
        let mut session = Session::open(&objects, options).await?;
        if let (Operation::Upgrade | Operation::Rollback, Some(installed)) = (operation, session.installed()) {
            super::change_plan::announce(operation, &installed.meta, &to);
        }
        if let Some(prompt) = &prompt {
            confirm(prompt, &session, &to.profile, operation)?;
            session.restart_clock();
        }
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("interrupted: finishing requests in flight and recording progress (Ctrl-C again to abort)");
                let _ = tx.send(true);
                if tokio::signal::ctrl_c().await.is_ok() {
                    exit_interrupted();
                }
            }
        });
        let mut progress = progress_sink();
        let report = session.install(progress.as_mut()).await?;
        match args.output.format {
            Output::Json | Output::Yaml => {
                let mut shown = serde_json::to_value(&report)?;
                shown["access"] = serde_json::to_value(&access)?;
                print_data(args.output.format, &shown)?;
            }
            Output::Text if report.dry_run => {
                println!(
                    "dry run: the server accepted {} objects in {}/{} waves ({} would be created) on {} ({}); \
                     objects it could not check yet are listed above as \"not checked\"",
                    report.applied,
                    report.waves_done,
                    report.waves_total,
                    report.created,
                    report.server,
                    report.server_version
                );
                print_preexisting(&report.preexisting);
            }
            Output::Text => {
                println!(
                    "{}{}: {} objects in {}/{} waves ({} created, {} pruned) on {} ({}) in {:.1}s",
                    if report.dry_run { "dry run: " } else { "" },
                    done_verb(operation),
                    report.applied,
                    report.waves_done,
                    report.waves_total,
                    report.created,
                    report.prune.pruned.len(),
                    report.server,
                    report.server_version,
                    report.elapsed_seconds
                );
                for object in &report.prune.pruned {
                    println!("  pruned: {object}");
                }
                for line in &report.prune.kept_summary {
                    println!("{line}");
                }
                print_preexisting(&report.preexisting);
                print_critical_path(&report);
                if !report.waited {
                    println!(
                        "not waited for workloads to become ready (--wait=false): `kfctl-rs status` lists what is \
                         still pending"
                    );
                }
                print_access(access.as_ref());
            }
        }
        Ok(Outcome::Done)
    })
}

/// The longest chain of steps the run waited through, beside its wall time: the steps that took
/// a tenth of a second or more, the others counted.
fn print_critical_path(report: &kfctl::cluster::InstallReport) {
    let Some(path) = &report.critical_path else { return };
    println!(
        "critical path: {:.1}s of the {:.1}s (the longest chain of steps, each waiting for the one before; no order \
         finishes sooner):",
        path.seconds, report.elapsed_seconds
    );
    let (long, short): (Vec<_>, Vec<_>) = path.steps.iter().partition(|(_, seconds)| *seconds >= 0.1);
    for (step, seconds) in long {
        println!("  {seconds:>6.1}s  {step}");
    }
    if !short.is_empty() {
        println!("  and {} quicker steps", short.len());
    }
}

/// `installed`, `upgraded`, `rolled back`: what the summary line says was done.
fn done_verb(operation: Operation) -> &'static str {
    match operation {
        Operation::Install => "installed",
        Operation::Upgrade => "upgraded",
        Operation::Rollback => "rolled back",
    }
}

/// How to reach the UI and log in, then where to look next.
fn print_access(access: Option<&kfctl::catalog::access::Access>) {
    if let Some(access) = access {
        println!("to reach Kubeflow's dashboard:");
        for (step, text) in access.reach.iter().enumerate() {
            println!("  {}. {text}", step + 1);
        }
        println!("  {}. {}", access.reach.len() + 1, access.login);
    }
    println!("readiness per component: kfctl-rs status");
}

fn install_options(args: &InstallArgs, meta: RenderMeta) -> InstallOptions {
    let mut options = InstallOptions::new(args.cluster.target(), meta.meta);
    options.preflight = PreflightOptions {
        supported: supported_kubernetes(args.kubernetes_versions.clone(), meta.supported_kubernetes),
        uses_default_credentials: meta.uses_default_credentials,
        allow_default_credentials: args.allow_default_credentials,
        profile_allows_default_credentials: meta.profile_allows_default_credentials,
        check_access: true,
        provided: meta.provided,
    };
    options.dry_run = if args.dry_run == Some(DryRunMode::Server) { DryRun::Server } else { DryRun::None };
    options.force_conflicts = args.force_conflicts;
    options.timeout = args.deadline.timeout;
    options.wait = args.wait.wait;
    options.concurrency = args.concurrency.max(1);
    options.purge = args.purge;
    options.lock_wait = args.lock_wait;
    options
}

/// The Kubernetes range the preflight accepts: `--kubernetes-versions` when given (for every
/// release), else the release's own, else `kfctl::source::releases::DEFAULT_KUBERNETES`.
fn supported_kubernetes(flag: Option<semver::VersionReq>, release: Option<semver::VersionReq>) -> semver::VersionReq {
    flag.or(release).unwrap_or_else(kfctl::source::releases::default_kubernetes)
}

/// Ask on the terminal, after the preflight, naming what the session found (server, version,
/// objects, waves).
fn confirm(prompt: &Prompt, session: &Session, profile: &str, operation: Operation) -> anyhow::Result<()> {
    let checked = session.checked();
    for warning in &checked.preflight.warnings {
        eprintln!("{warning}");
    }
    let verb = match operation {
        Operation::Install => "Install",
        Operation::Upgrade => "Upgrade to",
        Operation::Rollback => "Roll back to",
    };
    let question = format!(
        "{verb} {} objects in {} waves (profile {profile}) onto {} (Kubernetes {})?",
        checked.objects, checked.waves, checked.server, checked.preflight.server_version
    );
    prompt.ask(&question, "written")
}

fn print_plan(plan: &Plan, output: Output) -> anyhow::Result<()> {
    match output {
        Output::Json | Output::Yaml => print_data(output, plan)?,
        Output::Text => {
            for wave in &plan.waves {
                println!("wave {}: {} ({} objects)", wave.index, wave.name, wave.objects.len());
                for before in &wave.before {
                    println!("  before: {before}");
                }
                for wait in &wave.waits_for {
                    println!("  waits for: {wait}");
                }
                for object in &wave.objects {
                    println!("  {}", object.reference);
                }
            }
        }
    }
    Ok(())
}

/// Objects that existed before the install without kfctl-rs's mark, each named: applied, never
/// deleted.
fn print_preexisting(objects: &[kfctl::cluster::ObjectRef]) {
    if objects.is_empty() {
        return;
    }
    println!(
        "{} objects existed before the install and are not kfctl-rs's (no kfctl-rs mark): applied, never deleted by \
         prune, uninstall or --purge; `kfctl-rs adopt` takes a platform over explicitly:",
        objects.len()
    );
    for object in objects {
        println!("  not kfctl-rs's: {object}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_versions_override_every_release() {
        let req = |text: &str| semver::VersionReq::parse(text).unwrap();
        let release = Some(req(">=1.31.0, <1.34.0"));
        assert_eq!(supported_kubernetes(Some(req(">=1.29.0")), release.clone()), req(">=1.29.0"));
        assert_eq!(supported_kubernetes(None, release), req(">=1.31.0, <1.34.0"));
        assert_eq!(supported_kubernetes(None, None), req(kfctl::source::releases::DEFAULT_KUBERNETES));
    }
}
