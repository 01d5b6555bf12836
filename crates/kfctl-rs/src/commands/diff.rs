//! `kfctl-rs diff`: what install would change (server-side dry run, compared with live objects).
//!
//! Exit 0 when nothing would change, 1 when something would (as `kubectl diff`).

use super::cluster_args::RenderMeta;
use crate::cli::{DiffArgs, Output};
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::catalog::RenderedObject;
use kfctl::cluster::diff::{Action, diff_within, render_text};

/// `kfctl-rs diff`: render the profile (or read `--objects`), then compare with the cluster.
pub(crate) fn run(args: DiffArgs) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let (objects, meta) = args.source.objects_and_meta()?;
    run_with_objects(args, objects, meta)
}

/// Diff rendered objects against the cluster.
pub(crate) fn run_with_objects(
    args: DiffArgs,
    objects: Vec<RenderedObject>,
    _meta: RenderMeta,
) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let entries = runtime.block_on(diff_within(
        &objects,
        &args.cluster.target(),
        kfctl::cluster::DEFAULT_CONCURRENCY,
        args.deadline.timeout,
        args.namespace.as_deref(),
    ))?;
    match args.output.format {
        Output::Json | Output::Yaml => super::output::print_data(args.output.format, &entries)?,
        Output::Text => print!("{}", render_text(&entries)),
    }
    let changed = entries.iter().any(|e| e.action != Action::Unchanged);
    Ok(if changed { Outcome::Differs } else { Outcome::Done })
}
