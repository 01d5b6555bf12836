//! `kfctl-rs check --pre`: the checklist before an install (`kfctl::cluster::check`).
//!
//! Exit 0 when no item failed, 1 when one did (the list says which and what to do), 2 for
//! flags or a kubeconfig that cannot be used.

use crate::cli::{CheckArgs, ObjectsArgs, Output, RenderFlags};
use crate::error::usage;
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::cluster::check::{PreCheckOptions, check_pre};

pub(crate) fn run(args: CheckArgs) -> anyhow::Result<Outcome> {
    if !args.pre {
        return Err(usage(
            "check: pass --pre to check a cluster before an install (with --profile); the checks after an \
             install are `kfctl-rs status` and `kfctl-rs verify`",
        ));
    }
    let Some(profile) = args.profile.clone().or_else(|| args.objects.as_ref().map(|_| "kind".to_string())) else {
        return Err(usage("check --pre: --profile (or --objects) names what the install would write"));
    };
    crate::commands::print_notice();
    let source = ObjectsArgs {
        render: RenderFlags {
            profile,
            components: args.components.clone(),
            values: args.values.clone(),
            source: args.source.clone(),
        },
        objects: args.objects.clone(),
    };
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
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let report = runtime.block_on(check_pre(&objects, &options))?;
    match args.output.format {
        Output::Json | Output::Yaml => super::output::print_data(args.output.format, &report)?,
        Output::Text => print!("{}", report.render_text()),
    }
    Ok(if report.failed() { Outcome::Differs } else { Outcome::Done })
}
