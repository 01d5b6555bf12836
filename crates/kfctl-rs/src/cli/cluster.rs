//! The cluster verbs: `install`, `upgrade`, `rollback`, `adopt`, `status`, `diff`,
//! `uninstall`, `unlock`. Each flattens the groups of [`super::shared`] it takes and sets its own
//! `--timeout` default.

use super::shared::{ClusterArgs, OutputFlag, RenderFlags, TimeoutFlag, WaitArgs, YesFlag, parse_duration};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// The objects a cluster verb applies or compares: the profile's render, or `--objects`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ObjectsArgs {
    /// The profile, values and upstream source to render (as for `template`).
    #[command(flatten)]
    pub render: RenderFlags,
    /// Install this pre-rendered YAML stream instead of rendering the profile.
    #[arg(long, value_name = "FILE")]
    pub objects: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DryRunMode {
    /// Print the plan; touch no cluster.
    Client,
    /// Apply every object with dryRun=All; persist nothing.
    Server,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("20m")))]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    pub source: ObjectsArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub confirm: YesFlag,
    /// Print the plan (waves, objects, what each waits for) and stop; touches no cluster.
    #[arg(long)]
    pub plan: bool,
    /// client: print the plan; server: a server-side dry run of every wave.
    #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "client")]
    pub dry_run: Option<DryRunMode>,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Take over fields another field manager owns.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Accept upstream's default credentials on a profile other than kind.
    #[arg(long)]
    pub allow_default_credentials: bool,
    /// Kubernetes versions to accept (semver range, e.g. ">=1.32.0"). Given, it replaces the
    /// supported range for every release, pinned ones included; without it, a release's own
    /// range applies (>=1.33.0 for a tree no release describes, and for --objects).
    #[arg(long, value_name = "RANGE")]
    pub kubernetes_versions: Option<semver::VersionReq>,
    /// Objects applied at once within a wave.
    #[arg(long, default_value_t = kfctl::cluster::DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    #[command(flatten)]
    pub output: OutputFlag,
    /// Also prune CRDs and PVCs the new render no longer holds (their data is lost).
    #[arg(long)]
    pub purge: bool,
    /// How long to wait for another kfctl-rs run's lease on the cluster.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub lock_wait: Duration,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct UpgradeArgs {
    #[command(flatten)]
    pub install: InstallArgs,
}

/// `upgrade`'s flags, with `--profile` and `--version` optional (the previous release's).
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("profile", |a| a.required(false).default_value("").hide_default_value(true)
        .help("The profile (default: the previous release's)")),
    mut_arg("version", |a| a.default_value("").hide_default_value(true)
        .help("The release to return to (default: the previous release; another one is refused)"))
)]
pub(crate) struct RollbackArgs {
    #[command(flatten)]
    pub install: InstallArgs,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("10m")))]
pub(crate) struct AdoptArgs {
    #[command(flatten)]
    pub source: ObjectsArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub confirm: YesFlag,
    /// Print what was found (present, differing, missing) and stop; writes nothing.
    #[arg(long, alias = "dry-run")]
    pub plan: bool,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
    /// Objects taken over at once within a wave.
    #[arg(long, default_value_t = kfctl::cluster::DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    #[command(flatten)]
    pub output: OutputFlag,
    /// How long to wait for another kfctl-rs run's lease on the cluster.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub lock_wait: Duration,
    /// Accepted as `install` and `upgrade` take it, so scripts pass one set of flags to every
    /// verb; adopt takes over what the cluster already runs and refuses no credentials.
    #[arg(long)]
    pub allow_default_credentials: bool,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("5m")))]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub output: OutputFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
    /// Only the recorded objects in this namespace (as kubectl's: cluster-scoped objects are not
    /// in any); the exit code then says whether they are ready.
    #[arg(long, short = 'n', value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("5m")))]
pub(crate) struct DiffArgs {
    #[command(flatten)]
    pub source: ObjectsArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub output: OutputFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
    /// Only the rendered objects in this namespace (as kubectl's: cluster-scoped objects are not
    /// in any).
    #[arg(long, short = 'n', value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("5m")))]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Also delete CRDs (with every custom resource of their kinds) and PVCs.
    #[arg(long)]
    pub purge: bool,
    #[command(flatten)]
    pub confirm: YesFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Check every delete (ownership, then a server-side dry run, `dryRun=All`) and print what
    /// would be deleted and kept; delete nothing (no confirmation asked).
    #[arg(long)]
    pub dry_run: bool,
    /// How long to wait for another kfctl-rs run's lease on the cluster.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub lock_wait: Duration,
    #[command(flatten)]
    pub output: OutputFlag,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("1m")))]
pub(crate) struct UnlockArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub output: OutputFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
    /// Delete the lease even while its run still renews it (that run then goes on without the
    /// lock); without it, such a lease is refused, naming its holder.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("5m")))]
#[command(mut_arg("profile", |a| a.required(false).default_value("")))]
pub(crate) struct CheckArgs {
    /// Check a cluster before an install: the preflight as a checklist, for the objects --profile
    /// (or --objects) would install. Without it, check the installed platform. Nothing is
    /// written either way.
    #[arg(long)]
    pub pre: bool,
    /// What the install would write (with --pre), as for `install`.
    #[command(flatten)]
    pub source: ObjectsArgs,
    /// The Kubernetes versions to accept instead of the release's (as install's).
    #[arg(long, value_name = "RANGE")]
    pub kubernetes_versions: Option<semver::VersionReq>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub output: OutputFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("30m")))]
pub(crate) struct VerifyArgs {
    /// The test Profile, and the namespace its controller makes for the test's objects.
    #[arg(long, short = 'n', value_name = "NAME", default_value = "kfctl-verify")]
    pub namespace: String,
    /// The test Profile's owner.
    #[arg(long, value_name = "EMAIL", default_value = kfctl::catalog::credentials::DEFAULT_EMAIL)]
    pub owner: String,
    /// Leave what verify created, for inspection (delete the test Profile to remove it all).
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub output: OutputFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("5m")))]
pub(crate) struct AnalyzeArgs {
    /// Analyze this YAML stream (`-` for stdin: `kfctl-rs template … | kfctl-rs analyze -f -`)
    /// instead of the live cluster's installed objects.
    #[arg(long = "filename", short = 'f', value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// With `-f`: the nodes' architectures to judge the images against (KF006), e.g.
    /// `--arch amd64,arm64` (a live cluster's are its nodes').
    #[arg(long = "arch", value_name = "ARCH", value_delimiter = ',', requires = "file")]
    pub arch: Vec<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub output: OutputFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("timeout", |a| a.required(false).default_value("5m")))]
#[command(mut_arg("profile", |a| a.required(false).default_value("")))]
pub(crate) struct SupportBundleArgs {
    /// The archive to write (mode 0600; replaced if it exists).
    #[arg(long, value_name = "FILE", default_value = "kfctl-rs-support-bundle.tar.gz")]
    pub out: PathBuf,
    /// The install's profile and values (optional): their credentials are scrubbed from the
    /// logs and messages the bundle holds, as install scrubs them. No Secret is ever read.
    #[command(flatten)]
    pub source: ObjectsArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub output: OutputFlag,
    #[command(flatten)]
    pub deadline: TimeoutFlag,
}
