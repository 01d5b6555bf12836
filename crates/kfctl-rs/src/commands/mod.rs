//! One module per verb. Commands are the only place that prints to stdout or stderr; the
//! layers below return data and typed errors, whose types decide the exit code (`crate::exit`).
//! Commands read the clap types of `crate::cli`; `confirm` is the one question every verb that
//! writes asks.

use crate::cli::{Cli, Command, RenderFlags, SourceFlags};
use crate::exit::Outcome;
use kfctl::catalog::{CatalogError, RenderRequest};
use kfctl::source::RemoteResolver;
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) mod adopt;
pub(crate) mod analyze;
pub(crate) mod build;
pub(crate) mod change_plan;
pub(crate) mod chart;
pub(crate) mod chart_package;
pub(crate) mod check;
pub(crate) mod cluster_args;
pub(crate) mod compare;
pub(crate) mod completion;
pub(crate) mod confirm;
pub(crate) mod diff;
pub(crate) mod images;
pub(crate) mod install;
pub(crate) mod kind_config;
pub(crate) mod output;
pub(crate) mod profile;
pub(crate) mod rollback;
pub(crate) mod secrets;
pub(crate) mod source;
pub(crate) mod status;
pub(crate) mod support_bundle;
pub(crate) mod template;
pub(crate) mod uninstall;
pub(crate) mod unlock;
pub(crate) mod upgrade;
pub(crate) mod values;
pub(crate) mod verify;

/// The async runtime a cluster verb runs its one call on.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context as _;
    tokio::runtime::Runtime::new().context("cannot start the async runtime")
}

/// Print the best-effort notice on stderr: every rendering and installing command does.
pub(crate) fn print_notice() {
    eprintln!("{}", kfctl::notice::BEST_EFFORT);
}

/// Run a parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Template(args) => template::run(args),
        Command::Profile(cmd) => profile::run(cmd),
        Command::Values(args) => values::run(args),
        Command::Images(args) => images::run(args),
        Command::Secrets(cmd) => secrets::run(cmd),
        Command::Compare(args) => compare::run(args),
        Command::Source(cmd) => source::run(cmd),
        Command::Chart(cmd) => chart::run(cmd),
        Command::Install(args) => install::run(args),
        Command::Upgrade(args) => upgrade::run(args),
        Command::Rollback(args) => rollback::run(args),
        Command::Adopt(args) => adopt::run(args),
        Command::Status(args) => status::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Uninstall(args) => uninstall::run(args),
        Command::Unlock(args) => unlock::run(args),
        Command::Check(args) => check::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::SupportBundle(args) => support_bundle::run(args),
        Command::KindConfig(args) => kind_config::run(args),
        Command::Completion(args) => completion::run(args),
    }
}

/// Upstream as a render needs it, and as an install record describes it.
pub(crate) struct Upstream {
    pub manifests_dir: PathBuf,
    pub resolver: Arc<dyn RemoteResolver>,
    /// The release (e.g. `v1.11.0`), or where the tree came from.
    pub version: String,
    /// The release commit, or `sha256:` of the tree.
    pub digest: String,
    pub supported_kubernetes: Option<semver::VersionReq>,
    /// Which catalog data describes the tree.
    pub layout: kfctl::catalog::render::Layout,
}

/// Open upstream: a folder, archive or bundle given with `--source`, else the cached
/// release `--version` (fetched if missing, unless `--offline`).
pub(crate) fn open_upstream(flags: &SourceFlags) -> anyhow::Result<Upstream> {
    let mut spec =
        source::source_spec(flags.source.as_deref(), &flags.version, flags.remote_mirror.as_deref(), flags.offline)?;
    spec.verify = flags.verify;
    let opened = kfctl::source::open_source(&spec).map_err(source::with_hint)?;
    let (version, digest, supported) = match &opened.release {
        Some(r) => {
            let (lo_major, lo_minor) = r.min_kubernetes;
            let range = match r.max_kubernetes {
                None => format!(">={lo_major}.{lo_minor}.0"),
                Some((hi_major, hi_minor)) => format!(">={lo_major}.{lo_minor}.0, <{hi_major}.{}.0", hi_minor + 1),
            };
            let digest = match r.commit {
                Some(commit) => format!("commit:{commit}"),
                None => kfctl::source::releases::release_digest(&opened.manifests_dir)
                    .map(|d| format!("sha256:{d}"))
                    .unwrap_or_default(),
            };
            (r.version.to_string(), digest, semver::VersionReq::parse(&range).ok())
        }
        None => {
            let digest = kfctl::source::releases::release_digest(&opened.manifests_dir)
                .map(|d| format!("sha256:{d}"))
                .unwrap_or_default();
            (opened.origin.clone(), digest, None)
        }
    };
    for warning in &opened.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(Upstream {
        manifests_dir: opened.manifests_dir,
        resolver: opened.resolver,
        version,
        digest,
        supported_kubernetes: supported,
        layout: opened.layout,
    })
}

/// The opened upstream (its warnings printed once, on stderr).
pub(crate) fn open_source(flags: &SourceFlags) -> anyhow::Result<kfctl::source::OpenedSource> {
    let mut spec =
        source::source_spec(flags.source.as_deref(), &flags.version, flags.remote_mirror.as_deref(), flags.offline)?;
    spec.verify = flags.verify;
    let opened = kfctl::source::open_source(&spec).map_err(source::with_hint)?;
    for warning in &opened.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(opened)
}

/// A render request from the command line's flags.
pub(crate) fn render_request(flags: &RenderFlags) -> anyhow::Result<RenderRequest> {
    let opened = open_source(&flags.source)?;
    Ok(request(flags, opened.manifests_dir, opened.resolver, opened.layout))
}

/// A render request for an opened upstream.
pub(crate) fn request_for(flags: &RenderFlags, upstream: &Upstream) -> RenderRequest {
    request(flags, upstream.manifests_dir.clone(), upstream.resolver.clone(), upstream.layout.clone())
}

fn request(
    flags: &RenderFlags,
    manifests_dir: PathBuf,
    remote: Arc<dyn RemoteResolver>,
    layout: kfctl::catalog::render::Layout,
) -> RenderRequest {
    RenderRequest {
        profile: flags.profile.clone(),
        components: flags.components.clone(),
        value_files: flags.values.files.clone(),
        sets: flags.values.set_flags(),
        manifests_dir,
        remote,
        layout,
    }
}

/// A catalog error for the error chain. Its exit code is its type's
/// ([`kfctl::exit::ExitStatus`]), decided once: the user's input 2, a security refusal 4 (an
/// inline secret in a Dex connector, a load restriction), upstream missing 3 (a remote base the
/// mirror lacks), a render failure 1 — whichever verb met it.
pub(crate) fn catalog_error(err: CatalogError) -> anyhow::Error {
    anyhow::Error::new(err)
}
