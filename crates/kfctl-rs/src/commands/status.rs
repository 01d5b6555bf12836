//! `kfctl-rs status`: the install record and live readiness per component.
//!
//! Exit 0 when the install finished and everything checked is ready, 1 otherwise (so scripts
//! and CI can test it), 5 when there is no record or the cluster cannot be reached, 6 when
//! the `--timeout` ended a request (the message says what it waited for), 2 for a kubeconfig
//! that cannot be used.

use crate::cli::{Output, StatusArgs};
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::cluster::status::{render_text, status_within};

pub(crate) fn run(args: StatusArgs) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let report = runtime.block_on(status_within(
        &args.cluster.target(),
        kfctl::cluster::DEFAULT_CONCURRENCY,
        args.deadline.timeout,
        args.namespace.as_deref(),
    ))?;
    match args.output.format {
        Output::Json | Output::Yaml => super::output::print_data(args.output.format, &report)?,
        Output::Text => print!("{}", render_text(&report)),
    }
    Ok(if report.healthy { Outcome::Done } else { Outcome::Differs })
}
