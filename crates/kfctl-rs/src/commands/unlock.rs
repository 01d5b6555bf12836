//! `kfctl-rs unlock`: delete the cluster's kfctl-rs lease at once (a crashed or killed run's).
//!
//! Prints whose lease it was: holder, host, how long held, when last renewed, and whether it
//! had expired (a lease still being renewed belongs to a run that may be alive). Exit 0 also
//! when no lease was held.

use super::cluster_args::{ClusterArgs, Output, cluster_error};
use crate::exit::Code;
use anyhow::Context as _;
use clap::Args;
use kfctl::cluster::lease::unlock;

#[derive(Debug, Clone, Args)]
pub(crate) struct UnlockArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
    /// How long to wait for the API server, in all.
    #[arg(long, default_value = "1m", value_parser = super::cluster_args::parse_timeout)]
    pub timeout: std::time::Duration,
}

pub(crate) fn run(args: UnlockArgs) -> anyhow::Result<Code> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let unlocked = runtime.block_on(unlock(&args.cluster.target(), args.timeout)).map_err(cluster_error)?;
    match (args.output, unlocked) {
        (Output::Json | Output::Yaml, unlocked) => super::output::print_data(args.output, &unlocked)?,
        (Output::Text, Some(unlocked)) => println!("{}", unlocked.describe()),
        (Output::Text, None) => println!("no lease kfctl-system/kfctl-rs-lock is held: nothing to unlock"),
    }
    Ok(Code::Success)
}
