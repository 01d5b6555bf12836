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
    /// Install a profile onto a cluster: ordered server-side apply, waits, an install record.
    Install(crate::commands::install::InstallArgs),
    /// Show the install record and live readiness per component.
    Status(crate::commands::status::StatusArgs),
    /// Show what install would change (server-side dry run).
    Diff(crate::commands::diff::DiffArgs),
    /// Delete what install applied, in reverse order.
    Uninstall(crate::commands::uninstall::UninstallArgs),
    /// Print the Kind cluster configuration the kind profile expects.
    KindConfig(crate::commands::kind_config::KindConfigArgs),
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
