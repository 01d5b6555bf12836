//! One module per verb. Commands are the only place that prints to stdout or stderr; the
//! layers below return data and typed errors, which commands map to exit codes.

use crate::catalog::{CatalogError, RenderRequest};
use crate::cli::{Cli, Command, RenderFlags, SourceFlags};
use crate::exit::{Code, coded};
use crate::source::RemoteResolver;
use std::path::PathBuf;
use std::sync::Arc;

pub mod build;
pub mod chart;
pub mod compare;
pub mod images;
pub mod profile;
pub mod secrets;
pub mod template;
pub mod source;

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Code> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Template(args) => template::run(args),
        Command::Profile(cmd) => profile::run(cmd),
        Command::Images(args) => images::run(args),
        Command::Secrets(cmd) => secrets::run(cmd),
        Command::Compare(args) => compare::run(args),
        Command::Source(args) => source::run(args),
        Command::Chart(cmd) => chart::run(cmd),
    }
}

/// The upstream manifests root and the resolver for its remote bases: a folder, archive
/// or bundle given with `--source`, else the cached release `--version` (fetched if missing,
/// unless `--offline`).
pub fn open_source(flags: &SourceFlags) -> anyhow::Result<(PathBuf, Arc<dyn RemoteResolver>)> {
    let spec = source::source_spec(flags.source.as_deref(), &flags.version, flags.remote_mirror.as_deref(), flags.offline)?;
    let opened = crate::source::open_source(&spec).map_err(source::edge)?;
    Ok((opened.manifests_dir, opened.resolver))
}

/// A render request from the command line's flags.
pub fn render_request(flags: &RenderFlags) -> anyhow::Result<RenderRequest> {
    let (manifests_dir, remote) = open_source(&flags.source)?;
    Ok(RenderRequest {
        profile: flags.profile.clone(),
        components: flags.components.clone(),
        value_files: flags.values.clone(),
        sets: flags.sets.clone(),
        manifests_dir,
        remote,
    })
}

/// Map a catalog error to its exit code: the user's input is a usage error (2).
pub fn catalog_error(err: CatalogError) -> anyhow::Error {
    let code = if err.is_usage() { Code::Usage } else { Code::Failure };
    coded(code, err)
}
