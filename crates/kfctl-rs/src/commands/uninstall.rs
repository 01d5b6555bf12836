//! `kfctl-rs uninstall`: delete what the install record lists, in reverse order, keeping data.
//!
//! CRDs, PVCs and Namespaces holding others' objects are kept and listed with why; `--purge`
//! deletes CRDs and PVCs too. The confirmation (on a terminal; `--yes` skips it) names the
//! context, the server and the counts, with `--purge` how many custom resources go with the CRDs.

use super::cluster_args::{ClusterArgs, Output, WaitArgs, cluster_error, parse_duration, parse_timeout, progress_sink};
use crate::exit::{Code, coded};
use anyhow::Context as _;
use clap::Args;
use kfctl::cluster::uninstall::{UninstallOptions, preview, uninstall};
use std::io::IsTerminal;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Also delete CRDs (with every custom resource of their kinds) and PVCs.
    #[arg(long)]
    pub purge: bool,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// The whole run's deadline: every request and the wait for deleted namespaces to go.
    #[arg(long, default_value = "5m", value_parser = parse_timeout)]
    pub timeout: Duration,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Check every delete (ownership, then a server-side dry run, `dryRun=All`) and print what
    /// would be deleted and kept; delete nothing (no confirmation asked).
    #[arg(long)]
    pub dry_run: bool,
    /// How long to wait for another kfctl-rs run's lease on the cluster.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub lock_wait: Duration,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
}

pub(crate) fn run(args: UninstallArgs) -> anyhow::Result<Code> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let target = args.cluster.target();
    if !args.yes && !args.dry_run {
        if !std::io::stdin().is_terminal() {
            return Err(coded(
                Code::Usage,
                anyhow::anyhow!("uninstall: no terminal to confirm on; pass --yes to uninstall without asking"),
            ));
        }
        let seen = runtime.block_on(preview(&target, args.timeout)).map_err(cluster_error)?;
        let context = args.cluster.context.clone().unwrap_or_else(|| "current context".into());
        let lost = if args.purge {
            format!("delete {} CRDs and the {} custom resources of their kinds", seen.crds, seen.custom_resources)
        } else {
            format!("keep {} CRDs ({} custom resources)", seen.crds, seen.custom_resources)
        };
        let question =
            format!("Delete {} objects kfctl-rs installed on {} ({context}), and {lost}?", seen.objects, seen.server);
        if !dialoguer::Confirm::new().with_prompt(question).default(false).interact().context("confirmation")? {
            return Err(coded(Code::Failure, anyhow::anyhow!("uninstall: cancelled; nothing was deleted")));
        }
    }
    let options = UninstallOptions {
        purge: args.purge,
        concurrency: kfctl::cluster::DEFAULT_CONCURRENCY,
        timeout: args.timeout,
        wait: args.wait.wait,
        lock_wait: args.lock_wait,
        dry_run: args.dry_run,
        ..UninstallOptions::default()
    };
    let mut progress = progress_sink();
    let report = runtime.block_on(uninstall(&target, &options, progress.as_mut())).map_err(cluster_error)?;
    match args.output {
        Output::Json | Output::Yaml => super::output::print_data(args.output, &report)?,
        Output::Text => {
            let (verb, deleted) =
                if args.dry_run { ("dry run: would uninstall", "to delete") } else { ("uninstalled", "deleted") };
            println!(
                "{verb}: {} {deleted}, {} already gone, {} kept",
                report.deleted.len(),
                report.already_gone.len(),
                report.kept.len()
            );
            if !args.wait.wait && !args.dry_run {
                println!(
                    "  not waited for deleted namespaces to go (--wait=false): `kubectl get namespaces` shows them \
                     Terminating until their objects are gone"
                );
            }
            if args.dry_run {
                for object in &report.deleted {
                    println!("  would delete: {object}");
                }
            }
            for kept in &report.kept {
                println!("  kept: {} ({})", kept.object, kept.reason);
            }
            if !report.purged.is_empty() {
                let resources: usize = report.purged.iter().map(|p| p.custom_resources).sum();
                let purged_word = if args.dry_run { "would purge" } else { "purged" };
                println!(
                    "{purged_word}: {} CRDs and the {resources} custom resources of their kinds",
                    report.purged.len()
                );
                for purged in &report.purged {
                    println!(
                        "  {purged_word}: CRD {} and its {} custom resources",
                        purged.crd, purged.custom_resources
                    );
                }
            }
        }
    }
    Ok(Code::Success)
}
