//! `kfctl-rs check --pre`: the checklist before an install (`kfctl::cluster::check`).
//!
//! Exit 0 when no item failed, 1 when one did (the list says which and what to do), 2 for
//! flags or a kubeconfig that cannot be used.

use crate::cli::CheckArgs;
use crate::error::usage;
use crate::exit::Outcome;
use kfctl::cluster::check::{PreCheckOptions, check_pre};

pub(crate) fn run(args: CheckArgs) -> anyhow::Result<Outcome> {
    if !args.pre {
        return Err(usage(
            "check: pass --pre to check a cluster before an install (with --profile); the checks after an \
             install are `kfctl-rs status` and `kfctl-rs verify`",
        ));
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
