//! `kfctl-rs status`: the install record and live readiness per component.
//!
//! Exit 0 when the install finished and everything checked is ready, 1 otherwise (so scripts
//! and CI can test it), 5 when there is no record or the cluster cannot be reached, 6 when
//! the `--timeout` ended a request (the message says what it waited for), 2 for a kubeconfig
//! that cannot be used.

use crate::cli::StatusArgs;
use crate::exit::Outcome;
use kfctl::cluster::status::{render_text, status_within};

pub(crate) fn run(args: StatusArgs) -> anyhow::Result<Outcome> {
    let runtime = super::runtime()?;
    let report = runtime.block_on(status_within(
        &args.cluster.target(),
        kfctl::cluster::DEFAULT_CONCURRENCY,
        args.deadline.timeout,
        args.namespace.as_deref(),
    ))?;
    super::output::print_report(args.output.format, &report, || render_text(&report))?;
    Ok(if report.healthy { Outcome::Done } else { Outcome::Differs })
}
