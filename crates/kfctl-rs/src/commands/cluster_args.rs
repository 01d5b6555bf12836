//! What the cluster verbs share: the cluster to reach ([`ClusterArgs`]), the objects to apply
//! ([`SourceArgs`]: a render or `--objects`, with what the record says of them, [`RenderMeta`]),
//! durations and timeouts, the progress sink and the error's exit code. `install`, `upgrade`,
//! `adopt`, `diff`, `status`, `uninstall` and `unlock` take them from here, none from another
//! verb.

use crate::exit::{Code, coded};
use crate::progress::BarProgress;
use clap::Args;
use kfctl::catalog::RenderedObject;
use kfctl::cluster::api::Target;
use kfctl::cluster::progress::{LineProgress, Progress};
use kfctl::cluster::{ClusterError, InstallMeta};
use kfctl::exit::ExitStatus;
use sha2::{Digest, Sha256};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

pub(crate) use super::output::Output;

/// Which cluster: shared by install, status, diff and uninstall.
#[derive(Debug, Clone, Args)]
pub(crate) struct ClusterArgs {
    /// The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl ClusterArgs {
    pub(crate) fn target(&self) -> Target {
        Target { kubeconfig: self.kubeconfig.clone(), context: self.context.clone() }
    }
}

/// `--wait[=BOOL]`, as kubectl's: install, upgrade and uninstall.
#[derive(Debug, Clone, Args)]
pub(crate) struct WaitArgs {
    /// Wait until the run's work is done (the default): install and upgrade wait for every
    /// object to be ready, uninstall for deleted namespaces to go. With --wait=false, install
    /// still waits for what the next wave needs (namespaces, CRDs, webhooks serving) and
    /// `kfctl-rs status` follows the rest; uninstall returns once the deletes are accepted.
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub wait: bool,
}

/// Where the objects come from (the renderer's flags join here when it is wired).
#[derive(Debug, Clone, Args)]
pub(crate) struct SourceArgs {
    /// The profile, values and upstream source to render (as for `template`).
    #[command(flatten)]
    pub render: crate::cli::RenderFlags,
    /// Install this pre-rendered YAML stream instead of rendering the profile.
    #[arg(long, value_name = "FILE")]
    pub objects: Option<PathBuf>,
}

impl SourceArgs {
    /// The objects to install, tagged with their components, and what the install record says
    /// about them: the profile's render (the default), or a pre-rendered stream (`--objects`).
    pub(crate) fn objects_and_meta(&self) -> anyhow::Result<(Vec<RenderedObject>, RenderMeta)> {
        if let Some(path) = &self.objects {
            return load_objects(path, &self.render.profile);
        }
        let upstream = super::open_upstream(&self.render.source)?;
        let request = super::request_for(&self.render, &upstream);
        let rendered = kfctl::catalog::render(&request).map_err(super::catalog_error)?;
        let values_digest = kfctl::cluster::redact::values_digest(&rendered.values);
        let meta = RenderMeta {
            meta: InstallMeta {
                profile: rendered.profile.name.clone(),
                upstream_version: upstream.version.clone(),
                upstream_digest: upstream.digest.clone(),
                values_digest,
                upgrade_notes: kfctl::source::releases::upgrade_notes_of(&upstream.version),
                provided: rendered.provided.iter().map(|d| d.name.clone()).collect(),
            },
            uses_default_credentials: !rendered.default_credentials.is_empty(),
            keeps_demo_login: rendered.keeps_demo_login(),
            profile_allows_default_credentials: rendered.profile.allow_default_credentials,
            supported_kubernetes: upstream.supported_kubernetes.clone(),
            provided: rendered.provided,
        };
        Ok((rendered.objects, meta))
    }
}

/// What the renderer knows about the objects it rendered.
#[derive(Debug, Clone, Default)]
pub(crate) struct RenderMeta {
    pub meta: InstallMeta,
    pub uses_default_credentials: bool,
    /// Upstream's demo login still works (what the install's summary says to log in as).
    pub keeps_demo_login: bool,
    /// The profile allows them (its `allowDefaultCredentials`).
    pub profile_allows_default_credentials: bool,
    /// The release's supported Kubernetes range, when the catalog knows it.
    pub supported_kubernetes: Option<semver::VersionReq>,
    /// Dependencies the cluster provides, with what Kubeflow needs of them.
    pub provided: Vec<kfctl::catalog::provided::Dependency>,
}

/// `90s`, `20m`, `1h`, `500ms` or plain seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("{text:?}: expected a duration like 90s, 20m or 1h"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!("{text:?}: unknown unit {unit:?}; use ms, s, m or h"));
        }
    };
    Ok(Duration::from_secs_f64(seconds))
}

/// A `--timeout`: a duration as [`parse_duration`] reads it, more than zero (a zero
/// deadline would give up before the first request: a usage error, not an unreachable server).
pub(crate) fn parse_timeout(text: &str) -> Result<Duration, String> {
    let timeout = parse_duration(text)?;
    if timeout.is_zero() {
        return Err(format!("{:?}: expected a timeout above zero, like 90s, 5m or 1h", text.trim()));
    }
    Ok(timeout)
}

/// Read a pre-rendered stream (`--objects`), attribute its objects to components and describe it.
pub(crate) fn load_objects(path: &std::path::Path, profile: &str) -> anyhow::Result<(Vec<RenderedObject>, RenderMeta)> {
    let text = kfctl::input::read_stream(&path.display().to_string(), "objects").map_err(|e| coded(Code::Usage, e))?;
    let objects = kfctl_yaml::parse_objects(&text, &path.display().to_string()).map_err(|e| coded(Code::Usage, e))?;
    let meta = InstallMeta {
        profile: profile.to_string(),
        upstream_version: "pre-rendered".into(),
        upstream_digest: format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes()))),
        values_digest: String::new(),
        upgrade_notes: Vec::new(),
        provided: Vec::new(),
    };
    let uses_default_credentials = kfctl::cluster::preflight::uses_default_credentials(&objects);
    let catalog = kfctl::catalog::Catalog::embedded().map_err(super::catalog_error)?;
    let profile_allows_default_credentials = profile_allows_default_credentials(profile, &catalog)?;
    let objects = kfctl::catalog::attribute::attribute_prerendered(&catalog, objects);
    let meta = RenderMeta {
        meta,
        uses_default_credentials,
        // a pre-rendered stream says no more than that the demo email is still in it
        keeps_demo_login: uses_default_credentials,
        profile_allows_default_credentials,
        supported_kubernetes: None,
        provided: Vec::new(),
    };
    Ok((objects, meta))
}

/// The profile's `allowDefaultCredentials`; a name that is no profile (only recorded with
/// `--objects`) allows nothing.
fn profile_allows_default_credentials(profile: &str, catalog: &kfctl::catalog::Catalog) -> anyhow::Result<bool> {
    match kfctl::catalog::profile::resolve(profile, catalog) {
        Ok(resolved) => Ok(resolved.allow_default_credentials),
        Err(kfctl::catalog::CatalogError::UnknownProfile { .. }) => Ok(false),
        Err(e) => Err(super::catalog_error(e)),
    }
}

/// A cluster error with its exit code.
pub(crate) fn cluster_error(e: ClusterError) -> anyhow::Error {
    coded(e.exit_code(), e)
}

/// Indicatif on a terminal, plain lines otherwise.
pub(crate) fn progress_sink() -> Box<dyn Progress> {
    if std::io::stderr().is_terminal() {
        Box::new(BarProgress::new())
    } else {
        Box::new(LineProgress::new(std::io::stderr(), Duration::from_secs(10)))
    }
}
