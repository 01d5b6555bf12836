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

use super::cluster_args::{
    ClusterArgs, RenderMeta, SourceArgs, WaitArgs, cluster_error, parse_duration, parse_timeout, progress_sink,
};
use crate::exit::{Code, coded};
use anyhow::Context as _;
use clap::{Args, ValueEnum};
use kfctl::catalog::RenderedObject;
use kfctl::cluster::install::Operation;
use kfctl::cluster::plan::Plan;
use kfctl::cluster::preflight::PreflightOptions;
use kfctl::cluster::session::Session;
use kfctl::cluster::{DryRun, InstallOptions};
use std::io::IsTerminal;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DryRunMode {
    /// Print the plan; touch no cluster.
    Client,
    /// Apply every object with dryRun=All; persist nothing.
    Server,
}

use super::output::{Output, print_data};

#[derive(Debug, Clone, Args)]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Print the plan (waves, objects, what each waits for) and stop; touches no cluster.
    #[arg(long)]
    pub plan: bool,
    /// client: print the plan; server: a server-side dry run of every wave.
    #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "client")]
    pub dry_run: Option<DryRunMode>,
    /// Give up when objects are not ready after this long (e.g. 90s, 20m, 1h; more than 0).
    #[arg(long, default_value = "20m", value_parser = parse_timeout)]
    pub timeout: Duration,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Take over fields another field manager owns.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Accept upstream's default credentials on a profile other than kind.
    #[arg(long)]
    pub allow_default_credentials: bool,
    /// Kubernetes versions to accept (semver range, e.g. ">=1.32.0"). Given, it replaces the
    /// supported range for every release, pinned ones included; without it, a release's own
    /// range applies (>=1.33.0 for a tree no release describes, and for --objects).
    #[arg(long, value_name = "RANGE")]
    pub kubernetes_versions: Option<semver::VersionReq>,
    /// Objects applied at once within a wave.
    #[arg(long, default_value_t = kfctl::cluster::DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
    /// Also prune CRDs and PVCs the new render no longer holds (their data is lost).
    #[arg(long)]
    pub purge: bool,
    /// How long to wait for another kfctl-rs run's lease on the cluster.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub lock_wait: Duration,
}

/// `kfctl-rs install`: render the profile (or read `--objects`), then install.
pub(crate) fn run(args: InstallArgs) -> anyhow::Result<Code> {
    let (objects, meta) = args.source.objects_and_meta()?;
    run_with_objects(args, objects, meta)
}

/// Install rendered objects.
pub(crate) fn run_with_objects(
    args: InstallArgs,
    objects: Vec<RenderedObject>,
    meta: RenderMeta,
) -> anyhow::Result<Code> {
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
) -> anyhow::Result<Code> {
    crate::commands::print_notice();
    let planning = args.plan || args.dry_run == Some(DryRunMode::Client);
    if planning && (operation != Operation::Install || names_a_cluster(&args)) {
        return super::upgrade::print_change_plan(&args, &objects, &meta.meta, operation);
    }
    if planning {
        let plan = Plan::build(&objects).map_err(|e| coded(Code::Usage, e))?;
        print_plan(&plan, args.output)?;
        return Ok(Code::Success);
    }
    let in_objects: Vec<&serde_json::Value> = objects.iter().map(|o| &o.obj).collect();
    let access = kfctl::catalog::access::describe(&in_objects, meta.keeps_demo_login);
    let mut options = install_options(&args, meta);
    options.operation = operation;
    let ask = !args.yes && options.dry_run == DryRun::None;
    if ask && !std::io::stdin().is_terminal() {
        return Err(coded(
            Code::Usage,
            anyhow::anyhow!(
                "{}: no terminal to confirm on; pass --yes to {} without asking",
                operation.name(),
                operation.name()
            ),
        ));
    }
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        // one session: one connection, plan, preflight and record read for the announcement,
        // the question and the install
        let (tx, rx) = tokio::sync::watch::channel(false);
        options.interrupt = Some(rx);
        let to = options.meta.clone();
        let mut session = Session::open(&objects, options).await.map_err(cluster_error)?;
        if let (Operation::Upgrade | Operation::Rollback, Some(installed)) = (operation, session.installed()) {
            super::upgrade::announce(operation, &installed.meta, &to);
        }
        if ask {
            confirm(&session, &to.profile, operation)?;
            session.restart_clock();
        }
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("interrupted: finishing requests in flight and recording progress (Ctrl-C again to abort)");
                let _ = tx.send(true);
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(Code::Interrupted as i32);
                }
            }
        });
        let mut progress = progress_sink();
        let report = session.install(progress.as_mut()).await.map_err(cluster_error)?;
        match args.output {
            Output::Json | Output::Yaml => {
                let mut shown = serde_json::to_value(&report)?;
                shown["access"] = serde_json::to_value(&access)?;
                print_data(args.output, &shown)?;
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
                if !report.waited {
                    println!(
                        "not waited for workloads to become ready (--wait=false): `kfctl-rs status` lists what is \
                         still pending"
                    );
                }
                print_access(access.as_ref());
            }
        }
        Ok(Code::Success)
    })
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
    options.timeout = args.timeout;
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

/// Ask on a terminal, after the preflight; refuse without one.
/// Ask on the terminal, naming what the session found (server, version, objects, waves).
fn confirm(session: &Session, profile: &str, operation: Operation) -> anyhow::Result<()> {
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
    let yes = dialoguer::Confirm::new().with_prompt(question).default(false).interact().context("confirmation")?;
    match yes {
        true => Ok(()),
        false => Err(coded(Code::Failure, anyhow::anyhow!("{}: cancelled; nothing was written", operation.name()))),
    }
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

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("20m"), Ok(Duration::from_secs(1200)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("3 weeks").is_err());
        assert_eq!(parse_timeout("3s"), Ok(Duration::from_secs(3)));
        assert!(parse_timeout("0s").unwrap_err().contains("above zero"));
        assert!(parse_timeout("0").is_err() && parse_timeout("0ms").is_err());
    }
}
