//! `kfctl-rs check --pre`: the checklist before an install (`kfctl::cluster::check`); `kfctl-rs
//! check`: the installed platform's (`kfctl::cluster::postcheck`).
//!
//! Exit 0 when no item failed, 1 when one did (the list says which and what to do), 2 for
//! flags or a kubeconfig that cannot be used.

use crate::cli::CheckArgs;
use crate::error::usage;
use crate::exit::Outcome;
use kfctl::cluster::check::{PreCheckOptions, check_pre};

pub(crate) fn run(args: CheckArgs) -> anyhow::Result<Outcome> {
    if !args.pre {
        return installed(&args);
    }
    if args.source.render.profile.is_empty() && args.source.objects.is_none() {
        return Err(usage("check --pre: --profile (or --objects) names what the install would write"));
    }
    crate::commands::print_notice();
    let source = &args.source;
    let (objects, meta) = source.objects_and_meta()?;
    let options = PreCheckOptions {
        target: args.cluster.target(),
        release: meta.meta.upstream_version.clone(),
        supported: args
            .kubernetes_versions
            .clone()
            .or(meta.supported_kubernetes)
            .unwrap_or_else(kfctl::source::releases::default_kubernetes),
        provided: meta.provided,
        timeout: args.deadline.timeout,
    };
    let runtime = super::runtime()?;
    let report = runtime.block_on(check_pre(&objects, &options))?;
    super::output::print_report(args.output.format, &report, || report.render_text())?;
    Ok(if report.failed() { Outcome::Differs } else { Outcome::Done })
}

/// `check` without `--pre`: the installed platform (`kfctl::cluster::postcheck`).
fn installed(args: &CheckArgs) -> anyhow::Result<Outcome> {
    let report = super::runtime()?
        .block_on(kfctl::cluster::postcheck::check_installed(&args.cluster.target(), args.deadline.timeout))?;
    super::output::print_report(args.output.format, &report, || kfctl::cluster::postcheck::render_text(&report))?;
    Ok(if report.failed() { Outcome::Differs } else { Outcome::Done })
}
