//! The verbs that render or read files, and touch no cluster: `build`, `template`, `values`,
//! `profile`, `images`, `secrets`, `compare`, `chart`, `kind-config`, `completion`.

use super::shared::RenderFlags;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LoadRestrictor {
    #[value(name = "LoadRestrictionsRootOnly")]
    RootOnly,
    #[value(name = "LoadRestrictionsNone")]
    None,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ImagesOutput {
    Text,
    Json,
    Yaml,
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

#[derive(Debug, Subcommand)]
pub(crate) enum ChartCommand {
    /// Write an umbrella Helm chart (one subchart per component) whose `helm template` equals
    /// `kfctl-rs template` with the same profile and values; the values given here become the
    /// charts' defaults.
    Export(ChartExportArgs),
    /// Package that export as one Helm chart archive (`<name>-<version>.tgz`, the subcharts
    /// inside), byte for byte reproducible; with --sign, its provenance as `helm package --sign`.
    Package(ChartPackageArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ChartPackageArgs {
    #[command(flatten)]
    pub render: RenderFlags,
    /// The folder the archive is written to (created if needed; an archive of the same name is
    /// replaced).
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub out: PathBuf,
    /// The umbrella chart's name.
    #[arg(long, default_value = "kubeflow")]
    pub name: String,
    /// The upstream release the charts carry as appVersion (default: as `chart export`).
    #[arg(long)]
    pub app_version: Option<String>,
    /// Also write `<archive>.prov`, clear-signed by GnuPG with --key (as `helm package --sign`).
    #[arg(long, requires = "key")]
    pub sign: bool,
    /// The signing key: a user id or fingerprint in GnuPG's keyring (GNUPGHOME).
    #[arg(long, value_name = "NAME", requires = "sign")]
    pub key: Option<String>,
    /// A file whose first line is the key's passphrase (never prompted for).
    #[arg(long, value_name = "FILE", requires = "sign")]
    pub passphrase_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ChartExportArgs {
    #[command(flatten)]
    pub render: RenderFlags,
    /// The folder to write (must not exist or be empty; see --force).
    #[arg(long, default_value = "kubeflow")]
    pub out: PathBuf,
    /// Replace --out when it holds an earlier kfctl-rs export (left as it is, and said to be up
    /// to date, when it already holds exactly these files).
    #[arg(long)]
    pub force: bool,
    /// The umbrella chart's name.
    #[arg(long, default_value = "kubeflow")]
    pub name: String,
    /// The upstream release the charts carry as appVersion (default: the release --version or
    /// the cache resolved, else a --source folder named like v1.11.0).
    #[arg(long)]
    pub app_version: Option<String>,
    /// Also write Argo CD Applications (argocd/apps/, argocd/root.yaml).
    #[arg(long)]
    pub argocd: bool,
    /// The Git repository the Applications read the charts from.
    #[arg(long, default_value = "https://git.example.com/platform/kubeflow.git")]
    pub argocd_repo_url: String,
    /// The exported folder's path inside that repository (default: --out's folder name).
    #[arg(long)]
    pub argocd_path: Option<String>,
    /// The Git revision the Applications track.
    #[arg(long, default_value = "HEAD")]
    pub argocd_revision: String,
    /// The namespace Argo CD runs in.
    #[arg(long, default_value = "argocd")]
    pub argocd_namespace: String,
    /// The Argo CD project of the Applications.
    #[arg(long, default_value = "default")]
    pub argocd_project: String,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct KindConfigArgs {
    /// The node image (pinned by digest).
    #[arg(long, default_value = kfctl::cluster::kind::KIND_NODE_IMAGE)]
    pub node_image: String,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CompletionArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
