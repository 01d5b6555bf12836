//! One module per verb. Commands are the only place that prints to stdout or stderr; the
//! layers below return data and typed errors, which commands map to exit codes.

use crate::catalog::{CatalogError, RenderRequest};
use crate::cli::{Cli, Command, RenderFlags, SourceFlags};
use crate::exit::{Code, coded};
use crate::source::{MirrorResolver, RemoteResolver};
use std::path::PathBuf;
use std::sync::Arc;

pub mod build;
pub mod compare;
pub mod images;
pub mod profile;
pub mod secrets;
pub mod template;

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Code> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Template(args) => template::run(args),
        Command::Profile(cmd) => profile::run(cmd),
        Command::Images(args) => images::run(args),
        Command::Secrets(cmd) => secrets::run(cmd),
        Command::Compare(args) => compare::run(args),
    }
}

/// The upstream manifests root and the resolver for its remote bases.
pub fn open_source(flags: &SourceFlags) -> anyhow::Result<(PathBuf, Arc<dyn RemoteResolver>)> {
    let resolver: Arc<dyn RemoteResolver> = match &flags.remote_mirror {
        Some(root) => Arc::new(MirrorResolver { root: root.clone() }),
        None => crate::source::default_resolver(flags.offline)?,
    };
    match &flags.source {
        Some(dir) if dir.is_dir() => Ok((dir.clone(), resolver)),
        Some(other) => Err(coded(Code::Source, anyhow::anyhow!("--source {}: not a folder; archives and bundles need `kfctl-rs source pull --from {}` first", other.display(), other.display()))),
        None => Err(coded(Code::Source, anyhow::anyhow!("no upstream source: pass --source DIR (a kubeflow/manifests checkout) with --remote-mirror DIR, or run `kfctl-rs source pull --version {}`", flags.version))),
    }
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
