//! `kfctl-rs verify`: the end-to-end smoke test of an installed platform
//! (`kfctl::cluster::verify`).
//!
//! Exit 0 when every step worked (or was skipped: its component is not installed), 1 when one
//! did not (the output names it), 5 when the cluster refused, 2 for flags or a kubeconfig that
//! cannot be used.

use crate::cli::{Output, VerifyArgs};
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::cluster::verify::{Outcome as Step, VerifyOptions, VerifyReport, verify};
use std::time::Duration;

pub(crate) fn run(args: VerifyArgs) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let options = VerifyOptions {
        target: args.cluster.target(),
        namespace: args.namespace.clone(),
        owner: args.owner.clone(),
        timeout: args.deadline.timeout,
        poll: Duration::from_secs(2),
        keep: args.keep,
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let report = runtime.block_on(verify(&options))?;
    match args.output.format {
        Output::Json | Output::Yaml => super::output::print_data(args.output.format, &report)?,
        Output::Text => print!("{}", text(&report)),
    }
    Ok(if report.failed() { Outcome::Differs } else { Outcome::Done })
}

fn text(report: &VerifyReport) -> String {
    let mut out = String::new();
    for step in &report.steps {
        let mark = match step.outcome {
            Step::Passed => "✔",
            Step::Skipped => "-",
            Step::Failed => "✘",
        };
        out.push_str(&format!("{mark} {} ({}): {} [{:.0}s]\n", step.name, step.object, step.detail, step.seconds));
    }
    match (report.kept, report.cleaned_up.is_empty()) {
        (_, true) => {}
        (true, false) => out.push_str(&format!("kept for inspection (--keep): {}\n", report.cleaned_up.join(", "))),
        (false, false) => out.push_str(&format!("removed: {}\n", report.cleaned_up.join(", "))),
    }
    out.push_str(if report.failed() { "verify failed\n" } else { "verify passed\n" });
    out
}
