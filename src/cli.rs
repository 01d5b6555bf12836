//! The command line, as clap types. Parsing only: behaviour lives in [`crate::commands`].

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "kfctl-rs", version, about = "Install Kubeflow the Helm way: render, export charts, install selectively")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a kustomization folder, like `kustomize build DIR`.
    Build(BuildArgs),
    /// Fetch upstream into the verified cache, write offline bundles, list releases.
    Source(crate::commands::source::SourceArgs),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The kustomization folder.
    pub dir: PathBuf,
    /// Resolve remote references through this offline mirror (never touches the network).
    #[arg(long, env = "KFCTL_REMOTE_MIRROR")]
    pub remote_mirror: Option<PathBuf>,
    /// Never touch the network: remote references must be in the mirror or cache.
    #[arg(long)]
    pub offline: bool,
}
