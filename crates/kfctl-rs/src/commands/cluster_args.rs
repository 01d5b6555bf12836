//! What the cluster verbs share beyond their flags (`crate::cli::cluster`): the cluster to
//! reach ([`ClusterArgs::target`]), the objects to apply ([`ObjectsArgs::objects_and_meta`]: a
//! render or `--objects`, with what the record says of them, [`RenderMeta`]) and the progress
//! sink. `install`, `upgrade`, `adopt`, `diff`, `status`, `uninstall` and `unlock` take them from
//! here, none from another verb.

use crate::cli::{ClusterArgs, ObjectsArgs};
use crate::error::CliError;
use crate::progress::BarProgress;
use kfctl::catalog::RenderedObject;
use kfctl::cluster::InstallMeta;
use kfctl::cluster::api::Target;
use kfctl::cluster::progress::{LineProgress, Progress};
use sha2::{Digest, Sha256};
use std::io::IsTerminal;
use std::time::Duration;

impl ClusterArgs {
    pub(crate) fn target(&self) -> Target {
        Target { kubeconfig: self.kubeconfig.clone(), context: self.context.clone() }
    }
}

impl ObjectsArgs {
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

/// The release a pre-rendered stream (`--objects`) is recorded as.
pub(crate) const PRE_RENDERED: &str = "pre-rendered";

/// Read a pre-rendered stream (`--objects`), attribute its objects to components and describe it.
pub(crate) fn load_objects(path: &std::path::Path, profile: &str) -> anyhow::Result<(Vec<RenderedObject>, RenderMeta)> {
    let text = kfctl::input::read_stream(&path.display().to_string(), "objects")?;
    let objects = kfctl_yaml::parse_objects(&text, &path.display().to_string()).map_err(CliError::Input)?;
    let meta = InstallMeta {
        profile: profile.to_string(),
        upstream_version: PRE_RENDERED.into(),
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

/// Indicatif on a terminal, plain lines otherwise.
pub(crate) fn progress_sink() -> Box<dyn Progress> {
    if crate::progress::quiet() {
        return Box::new(Silent);
    }
    if std::io::stderr().is_terminal() {
        Box::new(BarProgress::new())
    } else {
        Box::new(LineProgress::new(std::io::stderr(), Duration::from_secs(10)))
    }
}

/// `--quiet`: progress events are dropped; the notice, errors and the summary still print.
struct Silent;

impl Progress for Silent {
    fn event(&mut self, _event: &kfctl::cluster::progress::Event<'_>) {}
}
