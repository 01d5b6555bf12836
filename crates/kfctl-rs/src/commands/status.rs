//! `kfctl-rs status`: the install record and live readiness per component.
//!
//! Exit 0 when the install finished and everything checked is ready, 1 otherwise (so scripts
//! and CI can test it), 5 when there is no record or the cluster cannot be reached, 6 when
//! the `--timeout` ended a request (the message says what it waited for), 2 for a kubeconfig
//! that cannot be used.

use super::cluster_args::{ClusterArgs, Output, cluster_error, parse_timeout};
use crate::exit::Code;
use anyhow::Context as _;
use clap::Args;
use kfctl::cluster::status::{render_text, status_within};
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
    /// Give up after this long, every request included (e.g. 90s, 5m; more than 0).
    #[arg(long, default_value = "5m", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// Only the recorded objects in this namespace (as kubectl's: cluster-scoped objects are not
    /// in any); the exit code then says whether they are ready.
    #[arg(long, short = 'n', value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

pub(crate) fn run(args: StatusArgs) -> anyhow::Result<Code> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let report = runtime
        .block_on(status_within(
            &args.cluster.target(),
            kfctl::cluster::DEFAULT_CONCURRENCY,
            args.timeout,
            args.namespace.as_deref(),
        ))
        .map_err(cluster_error)?;
    match args.output {
        Output::Json | Output::Yaml => super::output::print_data(args.output, &report)?,
        Output::Text => print!("{}", render_text(&report)),
    }
    Ok(if report.healthy { Code::Success } else { Code::Failure })
}
