//! The command line, as clap types. Parsing only: behaviour lives in [`crate::commands`].

use clap::{Args, Parser, Subcommand};
use kfctl::catalog::strvals::{SetFlag, SetKind};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "kfctl-rs",
    version,
    about = "Install Kubeflow the Helm way: render kubeflow/manifests 1:1, export Helm charts, install selectively",
    after_help = kfctl::exit::Code::help_text()
)]
pub(crate) struct Cli {
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
    Source(crate::commands::source::SourceArgs),
    /// Export Helm charts (`chart export`).
    #[command(subcommand)]
    Chart(crate::commands::chart::ChartCommand),
    /// Install a profile onto a cluster: ordered server-side apply, waits, an install record.
    Install(crate::commands::install::InstallArgs),
    /// Converge an installed cluster to a new version, profile, components or values (prunes).
    Upgrade(crate::commands::upgrade::UpgradeArgs),
    /// Return to the release installed before this one (the install record's `previous`), when
    /// its CRDs can still read the stored objects.
    Rollback(crate::commands::rollback::RollbackArgs),
    /// Take over a platform upstream's kustomize loop or kubectl installed: become its field
    /// manager and write the install record, as if kfctl-rs had installed --version.
    Adopt(crate::commands::adopt::AdoptArgs),
    /// Show the install record and live readiness per component.
    Status(crate::commands::status::StatusArgs),
    /// Show what install would change (server-side dry run).
    Diff(crate::commands::diff::DiffArgs),
    /// Delete what install applied, in reverse order.
    Uninstall(crate::commands::uninstall::UninstallArgs),
    /// Free the cluster's kfctl-rs lease now (a crashed run's), naming its holder and age.
    Unlock(crate::commands::unlock::UnlockArgs),
    /// Print the Kind cluster configuration the kind profile expects.
    KindConfig(crate::commands::kind_config::KindConfigArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell), as
    /// `kubectl completion` and `helm completion` do: `source <(kfctl-rs completion bash)`.
    Completion(crate::commands::completion::CompletionArgs),
}

#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// The kustomization folder.
    pub dir: PathBuf,
    /// Resolve remote references through this offline mirror (never touches the network).
    #[arg(long, env = "KFCTL_REMOTE_MIRROR")]
    pub remote_mirror: Option<PathBuf>,
    /// Never touch the network: remote references must be in the mirror or cache.
    #[arg(long)]
    pub offline: bool,
    /// kustomize's load restrictor: `LoadRestrictionsNone` lets kustomizations read files
    /// outside their folder.
    #[arg(long, value_enum, default_value = "LoadRestrictionsRootOnly")]
    pub load_restrictor: LoadRestrictor,
    /// Write the output to this file, or, if it is an existing folder, one file per object
    /// (named as kustomize names them). Files are written atomically. (kustomize's `-o` is
    /// `--output` here: `-o` is the output format in every kfctl-rs verb.)
    #[arg(long)]
    pub output: Option<PathBuf>,
}

/// `--load-restrictor`, spelled as kustomize spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LoadRestrictor {
    #[value(name = "LoadRestrictionsRootOnly")]
    RootOnly,
    #[value(name = "LoadRestrictionsNone")]
    None,
}

/// Where upstream kubeflow/manifests comes from.
#[derive(Debug, Clone, Args)]
pub(crate) struct SourceFlags {
    /// Upstream kubeflow/manifests: a folder, a .tar.gz archive or a kfctl-rs bundle
    /// (default: the release --version from the cache, fetched if missing).
    #[arg(long)]
    pub source: Option<PathBuf>,
    /// Upstream release: exact (26.03.1, v1.11.0), a prefix (1.11) or `latest` (the newest
    /// known); or an upstream tag (26.10) or full commit SHA no release has, fetched by that name
    /// and rendered by content (not pinned: a warning).
    #[arg(long, default_value = "latest")]
    pub version: String,
    /// Resolve remote bases through this offline mirror.
    #[arg(long, env = "KFCTL_REMOTE_MIRROR")]
    pub remote_mirror: Option<PathBuf>,
    /// Never touch the network.
    #[arg(long)]
    pub offline: bool,
    /// Refuse a --source tree whose digest is not the --version named (or no pinned release's),
    /// and a --version not pinned by commit (a release fetched by its tag, an unknown tag or commit).
    #[arg(long)]
    pub verify: bool,
}

/// What to render: profile, components and values.
#[derive(Debug, Clone, Args)]
pub(crate) struct RenderFlags {
    /// A built-in profile (kind, minimal, multi-tenant) or a profile file.
    #[arg(long)]
    pub profile: String,
    /// Only these components of the profile (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub components: Vec<String>,
    /// A values file (repeatable; later files win).
    #[arg(short = 'f', long = "values")]
    pub values: Vec<PathBuf>,
    /// A value, Helm style: key.path=value (repeatable; applied after files; `true`, `false`,
    /// `null` and whole numbers are typed, as Helm types them).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// A value kept as a string (repeatable).
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// A value as JSON (repeatable), e.g. --set-json 'global.tolerations=[{"key":"gpu"}]'.
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    /// A value read from a file (repeatable): the file's text, as one string, as Helm's
    /// --set-file reads it, e.g. --set-file global.commonAnnotations.note=NOTE.txt; a list
    /// value such as dex.connectors takes the YAML list the file holds.
    #[arg(long = "set-file", value_name = "KEY=PATH")]
    pub set_file: Vec<String>,
    /// A value taken literally: everything after the first `=`, commas and backslashes included.
    #[arg(long = "set-literal", value_name = "KEY=VALUE")]
    pub set_literal: Vec<String>,
    #[command(flatten)]
    pub source: SourceFlags,
}

impl RenderFlags {
    /// Every `--set`-family flag, tagged with its kind (the render applies them in Helm's order).
    pub(crate) fn set_flags(&self) -> Vec<SetFlag> {
        let kinds = [
            (SetKind::Set, &self.sets),
            (SetKind::String, &self.set_string),
            (SetKind::Json, &self.set_json),
            (SetKind::File, &self.set_file),
            (SetKind::Literal, &self.set_literal),
        ];
        kinds.into_iter().flat_map(|(kind, list)| list.iter().map(move |e| SetFlag::new(kind, e.clone()))).collect()
    }
}

#[derive(Debug, Args)]
pub(crate) struct TemplateArgs {
    #[command(flatten)]
    pub render: RenderFlags,
    /// Write one file per component into this folder instead of stdout.
    #[arg(long, conflicts_with = "as_kustomization")]
    pub output_dir: Option<PathBuf>,
    /// Write, into this new folder, the profile's kustomization with the values as kustomize
    /// patches (and a file of the objects values add): `kustomize build` of it gives this
    /// render. Put the folder directly under the manifests root, as upstream's `example/`.
    #[arg(long, value_name = "DIR")]
    pub as_kustomization: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ValuesArgs {
    #[command(flatten)]
    pub render: RenderFlags,
    /// Print this subchart's values.yaml instead of the umbrella chart's.
    #[arg(long)]
    pub component: Option<String>,
    /// The umbrella chart's name, as `chart export --name` takes it (its values.yaml names it).
    #[arg(long, default_value = "kubeflow")]
    pub name: String,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ProfileCommand {
    /// The built-in profiles.
    List,
    /// A profile's components and variants.
    Show {
        /// Profile name or file.
        name: String,
        /// The release whose catalog data to use: exact (26.03, v1.11.0), a prefix or `latest`.
        #[arg(long, default_value = "latest")]
        version: String,
    },
    /// The kustomization.yaml whose `kustomize build` gives the profile's default render
    /// (meant for a folder directly under the manifests root, as upstream's example/).
    Kustomization {
        /// Profile name or file.
        name: String,
        /// The release whose folders it names: exact (26.03, v1.11.0), a prefix or `latest`.
        #[arg(long, default_value = "latest")]
        version: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ImagesArgs {
    #[command(flatten)]
    pub render: RenderFlags,
    /// What to print: one reference a line (text), each with where it is used (json), or
    /// the skopeo commands that copy each image to `--mirror` (script).
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: ImagesOutput,
    /// The registry (and optional path) `-o script` copies to, e.g. registry.example.com/kubeflow;
    /// install from it with `--set global.imageRegistry=` the same value.
    #[arg(long, value_name = "REGISTRY")]
    pub mirror: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ImagesOutput {
    Text,
    Json,
    Script,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SecretsCommand {
    /// Write a values file with fresh random credentials (Dex password, OIDC client secret,
    /// oauth2-proxy cookie secret, Pipelines object store keys).
    Generate {
        /// The values file to write (created with mode 0600; refuses to overwrite), or - for stdout.
        #[arg(long)]
        out: PathBuf,
        /// Print the Dex password on stderr even when no terminal is attached (CI, scripts).
        #[arg(long, conflicts_with = "password_file")]
        print_password: bool,
        /// Write the clear Dex password to this file (mode 0600, never overwritten) instead of
        /// showing it on the terminal.
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
        /// The Dex user's email.
        #[arg(long, default_value = kfctl::catalog::credentials::DEFAULT_EMAIL)]
        email: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The expected stream (a file, or - for stdin).
    pub expected: String,
    /// The actual stream (a file, or - for stdin).
    pub actual: String,
    /// Match objects by identity regardless of their order.
    #[arg(long)]
    pub ignore_order: bool,
    /// Ignore the labels and annotations Helm adds (helm.sh/chart, app.kubernetes.io/managed-by, ...).
    #[arg(long)]
    pub ignore_helm_labels: bool,
    /// Treat `name-<10 char hash>` names of ConfigMaps and Secrets (and references to them) as equal.
    #[arg(long)]
    pub ignore_hash_suffix: bool,
    /// Print the values of Secrets' data and stringData (hidden by default).
    #[arg(long)]
    pub show_secrets: bool,
}
