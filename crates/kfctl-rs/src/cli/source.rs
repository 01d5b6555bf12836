//! The `source` verb's subcommands: pull, bundle, list, inspect, clean.

use super::shared::SourceFlags;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub(crate) enum SourceCommand {
    /// Put an upstream release (or tag, or commit) and every remote base it references into the cache.
    Pull(PullArgs),
    /// Write an offline bundle (manifests, remote mirror and digests in one .tar.gz).
    Bundle(BundleArgs),
    /// List the known releases, newest first, their Kubernetes support and whether they are cached.
    List,
    /// Show how the catalog sees a manifests tree: each example/ entry's component (by path,
    /// content or pattern), what nothing claims, and where each component's folder is.
    Inspect(InspectArgs),
    /// Remove the render cache (kept renders of upstream; pulled releases stay).
    Clean,
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    #[command(flatten)]
    pub source: SourceFlags,
}

#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// Release: an exact version (26.03.1, v1.11.0), a prefix (1.11, newest match) or `latest`;
    /// or an upstream tag (26.10) or full commit SHA no release has, fetched by that name (not
    /// pinned: a warning). With --from, the release the import is checked against.
    #[arg(long)]
    pub version: Option<String>,
    /// Import from a local checkout, a .tar.gz (GitHub archive or bundle) or an https:// URL.
    #[arg(long, value_name = "DIR|ARCHIVE|URL")]
    pub from: Option<String>,
    #[command(flatten)]
    pub network: NetworkFlags,
}

#[derive(Debug, Args)]
pub(crate) struct BundleArgs {
    /// Release to bundle (pulled into the cache first if needed).
    #[arg(long)]
    pub version: Option<String>,
    /// Bundle this manifests folder or archive instead of a cached release.
    #[arg(long, value_name = "DIR|ARCHIVE")]
    pub from: Option<PathBuf>,
    /// Take remote references from this mirror instead of the cache.
    #[arg(long, value_name = "DIR")]
    pub remote_mirror: Option<PathBuf>,
    /// The bundle file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub network: NetworkFlags,
}

/// Network behaviour shared by every command that may fetch.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct NetworkFlags {
    /// Never touch the network: use only the cache, local files and mirrors.
    #[arg(long)]
    pub offline: bool,
    /// Also trust the CA certificates in this PEM file (a TLS-inspecting proxy, a test server).
    #[arg(long, env = "KFCTL_CA_FILE", value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
}
