//! The command line, as clap types: parsing only. Behaviour lives in `crate::commands`, which
//! reads these types; nothing here names a command module, so the two do not import each other
//! in a loop.
//!
//! | module | what |
//! |---|---|
//! | `shared` | the argument groups several verbs flatten in: source, values, render, cluster, `-o`, `--timeout`, `--yes`, `--wait` |
//! | `render` | the verbs that render or read files (`build`, `template`, `values`, `images`, `chart`, …) |
//! | `source` | the `source` verb's subcommands |
//! | `cluster` | the cluster verbs (`install` … `unlock`) |

use clap::{Parser, Subcommand};

mod cluster;
mod render;
mod shared;
mod source;

pub(crate) use cluster::*;
pub(crate) use render::*;
pub(crate) use shared::*;
pub(crate) use source::*;

#[derive(Debug, Parser)]
#[command(
    name = "kfctl-rs",
    version,
    about = "Install Kubeflow the Helm way: render kubeflow/manifests 1:1, export Helm charts, install selectively",
    after_help = crate::exit::help_text()
)]
pub(crate) struct Cli {
    /// Print no progress while cluster verbs work (the notice, errors and each verb's summary
    /// still print).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Build a kustomization folder, like `kustomize build DIR`.
    Build(BuildArgs),
    /// Render a profile with values: the Kubernetes objects on stdout.
    Template(TemplateArgs),
    /// List, show or print the kustomization of profiles.
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// The default values with their comments: the `values.yaml` `chart export` writes.
    Values(ValuesArgs),
    /// Every image a profile's render would pull, one per line.
    Images(ImagesArgs),
    /// Generate fresh credentials as a values file.
    #[command(subcommand)]
    Secrets(SecretsCommand),
    /// Compare two YAML streams as data, grouped by object and field path.
    Compare(CompareArgs),
    /// Fetch upstream into the verified cache, write offline bundles, list releases.
    #[command(subcommand)]
    Source(SourceCommand),
    /// Export Helm charts (`chart export`).
    #[command(subcommand)]
    Chart(ChartCommand),
    /// Install a profile onto a cluster: ordered server-side apply, waits, an install record.
    Install(InstallArgs),
    /// Converge an installed cluster to a new version, profile, components or values (prunes).
    Upgrade(UpgradeArgs),
    /// Return to the release installed before this one (the install record's `previous`), when
    /// its CRDs can still read the stored objects.
    Rollback(RollbackArgs),
    /// Take over a platform upstream's kustomize loop or kubectl installed: become its field
    /// manager and write the install record, as if kfctl-rs had installed --version.
    Adopt(AdoptArgs),
    /// Show the install record and live readiness per component.
    Status(StatusArgs),
    /// Show what install would change (server-side dry run).
    Diff(DiffArgs),
    /// Delete what install applied, in reverse order.
    Uninstall(UninstallArgs),
    /// Free the cluster's kfctl-rs lease (a crashed run's), naming its holder and age; one its
    /// run still renews only with --force.
    Unlock(UnlockArgs),
    /// Check a cluster: before an install (--pre, a checklist of what the install needs), or
    /// after one (every recorded object present, ready, its webhooks, certificates, gateway and
    /// login path working).
    Check(CheckArgs),
    /// Prove an installed platform works end to end: a test Profile, a Notebook, a TrainJob and
    /// an InferenceService, each waited for, then removed.
    Verify(VerifyArgs),
    /// Coded findings (KF001 default credentials, ...) about a render (-f) or the installed
    /// platform.
    Analyze(AnalyzeArgs),
    /// Write one archive a maintainer needs to help: status, the check, the record, events and
    /// the failing pods' latest logs; no Secret, ever.
    SupportBundle(SupportBundleArgs),
    /// Print the Kind cluster configuration the kind profile expects.
    KindConfig(KindConfigArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell), as
    /// `kubectl completion` and `helm completion` do: `source <(kfctl-rs completion bash)`.
    Completion(CompletionArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_cluster_verb_has_its_timeout_default_and_shares_the_flags() {
        let parse = |args: &[&str]| Cli::try_parse_from([&["kfctl-rs"], args].concat()).unwrap().command;
        let timeout = |args: &[&str]| match parse(args) {
            Command::Install(a) | Command::Upgrade(UpgradeArgs { install: a }) => a.deadline.timeout,
            Command::Adopt(a) => a.deadline.timeout,
            Command::Status(a) => a.deadline.timeout,
            Command::Diff(a) => a.deadline.timeout,
            Command::Uninstall(a) => a.deadline.timeout,
            Command::Unlock(a) => a.deadline.timeout,
            other => panic!("{other:?}"),
        };
        let minutes = |m: u64| std::time::Duration::from_secs(60 * m);
        assert_eq!(timeout(&["install", "--profile", "kind"]), minutes(20));
        assert_eq!(timeout(&["upgrade", "--profile", "kind"]), minutes(20));
        assert_eq!(timeout(&["adopt", "--profile", "kind"]), minutes(10));
        assert_eq!(timeout(&["status"]), minutes(5));
        assert_eq!(timeout(&["diff", "--profile", "kind"]), minutes(5));
        assert_eq!(timeout(&["uninstall"]), minutes(5));
        assert_eq!(timeout(&["unlock"]), minutes(1));
        assert_eq!(timeout(&["status", "--timeout", "90s"]), std::time::Duration::from_secs(90));
        assert!(Cli::try_parse_from(["kfctl-rs", "adopt", "--profile", "kind", "--timeout", "0s"]).is_err());
        let Command::Install(install) = parse(&["install", "--profile", "kind", "-y", "-o", "json", "-f", "a.yaml"])
        else {
            unreachable!()
        };
        assert!(install.confirm.yes && install.output.format == Output::Json);
        assert_eq!(install.source.render.values.files, [std::path::PathBuf::from("a.yaml")]);
    }
}
