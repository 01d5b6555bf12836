//! `kfctl-rs check --pre`: the checklist before an install (`kfctl::cluster::check`); `kfctl-rs
//! check`: the installed platform's (`kfctl::cluster::postcheck`).
//!
//! Exit 0 when no item failed, 1 when one did (the list says which and what to do), 2 for
//! flags or a kubeconfig that cannot be used.

use crate::cli::{CheckArgs, ObjectsArgs};
use crate::error::usage;
use crate::exit::Outcome;

use crate::commands::cluster_args::PRE_RENDERED;
use kfctl::cluster::InstallMeta;
use kfctl::cluster::check::{PreCheckOptions, check_pre};
use kfctl::cluster::postcheck::Rendered;

/// `--version`'s default.
const LATEST: &str = "latest";

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

/// `check` without `--pre`: the installed platform (`kfctl::cluster::postcheck`), the drift
/// item's fields against the render of what the record says was installed ([`render_installed`],
/// outside the async runtime: a render may fetch with a blocking client).
fn installed(args: &CheckArgs) -> anyhow::Result<Outcome> {
    use kfctl::cluster::postcheck::{check_installed, installed_meta, render_text};
    let (runtime, target, timeout) = (super::runtime()?, args.cluster.target(), args.deadline.timeout);
    let rendered = match runtime.block_on(installed_meta(&target, timeout))? {
        Some(meta) => render_installed(&args.source, &meta),
        None => Err("no install record to render".into()),
    };
    let report = runtime.block_on(check_installed(&target, timeout, &rendered))?;
    super::output::print_report(args.output.format, &report, || render_text(&report))?;
    Ok(if report.failed() { Outcome::Differs } else { Outcome::Done })
}

/// The objects the install applied, rendered again: `--objects`, or the profile and release the
/// flags name, each defaulting to the record's (`--version latest`, the default, means the
/// recorded release), with the values and source flags given.
fn render_installed(source: &ObjectsArgs, installed: &InstallMeta) -> Rendered {
    let mut source = source.clone();
    if source.render.profile.is_empty() {
        source.render.profile = installed.profile.clone();
    }
    if source.objects.is_none() && installed.upstream_version == PRE_RENDERED {
        return Err("the install was of a pre-rendered stream: give it again with --objects FILE".into());
    }
    if source.render.source.version == LATEST {
        source.render.source.version = installed.upstream_version.clone();
    }
    source.objects_and_meta().map(|(objects, meta)| (objects, meta.meta)).map_err(|e| format!("{e:#}"))
}
