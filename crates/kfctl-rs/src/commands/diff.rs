//! `kfctl-rs diff`: what install would change (server-side dry run, compared with live objects).
//!
//! Exit 0 when nothing would change, 1 when something would (as `kubectl diff`).

use super::cluster_args::{ClusterArgs, Output, RenderMeta, SourceArgs, cluster_error, parse_timeout};
use crate::exit::Code;
use anyhow::Context as _;
use clap::Args;
use kfctl::catalog::RenderedObject;
use kfctl::cluster::diff::{Action, diff_within, render_text};
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub(crate) struct DiffArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
    /// Give up after this long, every request and wait included (e.g. 90s, 5m; more than 0).
    #[arg(long, default_value = "5m", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// Only the rendered objects in this namespace (as kubectl's: cluster-scoped objects are not
    /// in any).
    #[arg(long, short = 'n', value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

/// `kfctl-rs diff`: render the profile (or read `--objects`), then compare with the cluster.
pub(crate) fn run(args: DiffArgs) -> anyhow::Result<Code> {
    crate::commands::print_notice();
    let (objects, meta) = args.source.objects_and_meta()?;
    run_with_objects(args, objects, meta)
}

/// Diff rendered objects against the cluster.
pub(crate) fn run_with_objects(
    args: DiffArgs,
    objects: Vec<RenderedObject>,
    _meta: RenderMeta,
) -> anyhow::Result<Code> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let entries = runtime
        .block_on(diff_within(
            &objects,
            &args.cluster.target(),
            kfctl::cluster::DEFAULT_CONCURRENCY,
            args.timeout,
            args.namespace.as_deref(),
        ))
        .map_err(cluster_error)?;
    match args.output {
        Output::Json | Output::Yaml => super::output::print_data(args.output, &entries)?,
        Output::Text => print!("{}", render_text(&entries)),
    }
    let changed = entries.iter().any(|e| e.action != Action::Unchanged);
    Ok(if changed { Code::Failure } else { Code::Success })
}
