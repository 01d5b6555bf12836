//! `kfctl-rs uninstall`: delete what the install record lists, in reverse order, keeping data.
//!
//! CRDs, PVCs and Namespaces holding others' objects are kept and listed with why; `--purge`
//! deletes CRDs and PVCs too. The confirmation (on a terminal; `--yes` skips it) names the
//! context, the server and the counts, with `--purge` how many custom resources go with the CRDs.

use super::cluster_args::progress_sink;
use super::confirm::Prompt;
use crate::cli::{Output, UninstallArgs};
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::cluster::uninstall::{UninstallOptions, preview, uninstall};

pub(crate) fn run(args: UninstallArgs) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let target = args.cluster.target();
    if !args.confirm.yes && !args.dry_run {
        let prompt = Prompt::on_terminal("uninstall", "")?;
        let seen = runtime.block_on(preview(&target, args.deadline.timeout))?;
        let context = args.cluster.context.clone().unwrap_or_else(|| "current context".into());
        let lost = if args.purge {
            format!("delete {} CRDs and the {} custom resources of their kinds", seen.crds, seen.custom_resources)
        } else {
            format!("keep {} CRDs ({} custom resources)", seen.crds, seen.custom_resources)
        };
        let question =
            format!("Delete {} objects kfctl-rs installed on {} ({context}), and {lost}?", seen.objects, seen.server);
        prompt.ask(&question, "deleted")?;
    }
    let options = UninstallOptions {
        purge: args.purge,
        concurrency: kfctl::cluster::DEFAULT_CONCURRENCY,
        timeout: args.deadline.timeout,
        wait: args.wait.wait,
        lock_wait: args.lock_wait,
        dry_run: args.dry_run,
        ..UninstallOptions::default()
    };
    let mut progress = progress_sink();
    let report = runtime.block_on(uninstall(&target, &options, progress.as_mut()))?;
    match args.output.format {
        Output::Json | Output::Yaml => super::output::print_data(args.output.format, &report)?,
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
    Ok(Outcome::Done)
}
