//! `kfctl-rs uninstall`: delete what the install record lists, in reverse order.

use super::install::{ClusterArgs, Output, cluster_error, progress_sink};
use crate::exit::{Code, coded};
use anyhow::Context as _;
use clap::Args;
use kfctl::cluster::uninstall::uninstall;
use std::io::IsTerminal;

#[derive(Debug, Clone, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Also delete CRDs and namespaces that existed before the install.
    #[arg(long)]
    pub purge: bool,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
}

pub fn run(args: UninstallArgs) -> anyhow::Result<Code> {
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(coded(
                Code::Usage,
                anyhow::anyhow!("uninstall: no terminal to confirm on; pass --yes to uninstall without asking"),
            ));
        }
        let question = "Delete every object kfctl-rs installed on this cluster?";
        if !dialoguer::Confirm::new().with_prompt(question).default(false).interact().context("confirmation")? {
            return Err(coded(Code::Failure, anyhow::anyhow!("uninstall: cancelled; nothing was deleted")));
        }
    }
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let mut progress = progress_sink();
    let report = runtime
        .block_on(uninstall(&args.cluster.target(), args.purge, 16, progress.as_mut()))
        .map_err(cluster_error)?;
    match args.output {
        Output::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Output::Text => {
            println!(
                "uninstalled: {} deleted, {} already gone, {} kept",
                report.deleted.len(),
                report.already_gone.len(),
                report.kept.len()
            );
            for kept in &report.kept {
                println!("  kept (existed before install): {kept}");
            }
        }
    }
    Ok(Code::Success)
}
