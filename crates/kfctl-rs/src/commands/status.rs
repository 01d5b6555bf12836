//! `kfctl-rs status`: the install record and live readiness per component.
//!
//! Exit 0 when the install finished and everything checked is ready, 1 otherwise (so scripts
//! and CI can test it), 5 when there is no record or the cluster cannot be reached.

use super::install::{ClusterArgs, Output, cluster_error};
use crate::exit::Code;
use anyhow::Context as _;
use clap::Args;
use kfctl::cluster::status::{render_text, status};

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
}

pub fn run(args: StatusArgs) -> anyhow::Result<Code> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let report = runtime.block_on(status(&args.cluster.target(), 16)).map_err(cluster_error)?;
    match args.output {
        Output::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Output::Text => print!("{}", render_text(&report)),
    }
    Ok(if report.healthy { Code::Success } else { Code::Failure })
}
