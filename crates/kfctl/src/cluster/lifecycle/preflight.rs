//! Checks before any write: is this cluster one the release supports, may we do what the plan
//! needs, and what will bite later.
//!
//! Refusals (nothing is written): the API server is unreachable; its version is outside the
//! release's supported range; a dependency the cluster is to provide lacks what Kubeflow needs
//! of it (`crate::cluster::provided`); a kind in the plan is served by nobody and no CRD in the plan
//! defines it; a SelfSubjectAccessReview says we may not create or patch a resource the plan
//! writes; and upstream's default credentials, unless the profile allows them
//! (`allowDefaultCredentials`, as `kind` does) or the caller does (refused as a `security:`
//! error).
//!
//! Warnings: no default StorageClass (the PersistentVolumeClaims of Pipelines and Katib stay
//! Pending); on a Kind node, inotify limits below upstream's recommendation (with the sysctl
//! commands to raise them: Kind nodes share the host's kernel, so the host's limits apply).

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath};
use crate::cluster::discovery::Resolver;
use crate::cluster::plan::Plan;
use crate::cluster::retry::{ApiFailure, TransportKind};
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

/// What the preflight needs to know from the caller.
#[derive(Debug, Clone)]
pub struct PreflightOptions {
    /// Kubernetes versions the release supports (v1.11.0: `>=1.33.0`).
    pub supported: semver::VersionReq,
    /// The renderer's verdict: the objects keep upstream's default credentials.
    pub uses_default_credentials: bool,
    /// The caller accepts them (`--allow-default-credentials`).
    pub allow_default_credentials: bool,
    /// The profile accepts them (its `allowDefaultCredentials`, e.g. `kind`).
    pub profile_allows_default_credentials: bool,
    /// Run SelfSubjectAccessReviews for what the plan writes.
    pub check_access: bool,
    /// Dependencies the cluster provides, with what Kubeflow needs of them (`crate::cluster::provided`).
    pub provided: Vec<crate::catalog::provided::Dependency>,
}

impl Default for PreflightOptions {
    fn default() -> Self {
        PreflightOptions {
            supported: crate::source::releases::default_kubernetes(),
            uses_default_credentials: false,
            allow_default_credentials: false,
            profile_allows_default_credentials: false,
            check_access: true,
            provided: Vec::new(),
        }
    }
}

/// What the preflight found.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreflightReport {
    /// The API server's version.
    pub server_version: String,
    pub(crate) kind_cluster: bool,
    /// Findings that do not stop the install.
    pub warnings: Vec<String>,
}

/// Upstream's recommended inotify limits for Kind (manifests README).
pub(crate) const INOTIFY_MIN_INSTANCES: u64 = 2280;
pub(crate) const INOTIFY_MIN_WATCHES: u64 = 1_255_360;

/// Refuse default credentials unless the profile or the caller allows them.
pub(crate) fn check_credentials(profile: &str, opts: &PreflightOptions) -> Result<(), ClusterError> {
    let allowed = opts.allow_default_credentials || opts.profile_allows_default_credentials;
    if opts.uses_default_credentials && !allowed {
        return Err(ClusterError::DefaultCredentials { profile: profile.to_string() });
    }
    Ok(())
}

/// A profile's exemption from the default-credentials refusal (`kind`'s) holds on a Kind
/// cluster only: on any other cluster (no node with a `kind://` provider id, or nodes that
/// cannot be listed) the credentials are refused like any profile's, unless the caller passes
/// `--allow-default-credentials`.
pub(crate) fn check_kind_exemption(
    server: &str,
    kind_cluster: bool,
    opts: &PreflightOptions,
) -> Result<(), ClusterError> {
    let exempted_only_by_profile = opts.profile_allows_default_credentials && !opts.allow_default_credentials;
    if opts.uses_default_credentials && exempted_only_by_profile && !kind_cluster {
        return Err(ClusterError::DefaultCredentialsOffKind { server: server.to_string() });
    }
    Ok(())
}

/// Whether pre-rendered objects keep upstream's default user (the renderer, which knows the
/// values, gives its own verdict instead).
pub fn uses_default_credentials(objects: &[Value]) -> bool {
    fn mentions(v: &Value) -> bool {
        match v {
            Value::String(s) => s.contains(crate::catalog::credentials::DEFAULT_EMAIL),
            Value::Array(items) => items.iter().any(mentions),
            Value::Object(map) => map.values().any(mentions),
            _ => false,
        }
    }
    objects.iter().any(mentions)
}

/// `v1.33.1+k3s1` or `v1.34.0-gke.100` → 1.33.1 / 1.34.0.
pub(crate) fn parse_server_version(git_version: &str) -> Option<semver::Version> {
    let core = git_version.trim().trim_start_matches('v');
    let core = core.split(['+', '-']).next()?;
    semver::Version::parse(core).ok()
}

/// Whether the server version is supported.
pub(crate) fn check_version(git_version: &str, supported: &semver::VersionReq) -> Result<(), String> {
    let version = parse_server_version(git_version)
        .ok_or_else(|| format!("server version {git_version:?} is not a version kfctl-rs can read"))?;
    if supported.matches(&version) {
        Ok(())
    } else {
        Err(format!(
            "server version {git_version} is outside the release's supported range {supported}; use a supported cluster"
        ))
    }
}

/// The hint for low inotify limits, if they are low.
pub(crate) fn inotify_hint(instances: Option<u64>, watches: Option<u64>) -> Option<String> {
    let low_instances = instances.is_some_and(|v| v < INOTIFY_MIN_INSTANCES);
    let low_watches = watches.is_some_and(|v| v < INOTIFY_MIN_WATCHES);
    (low_instances || low_watches).then(|| {
        format!(
            "hint: Kind cluster with low inotify limits (max_user_instances {}, max_user_watches {}); many pods will fail with \
             \"too many open files\". Raise them:\n  sudo sysctl fs.inotify.max_user_instances={INOTIFY_MIN_INSTANCES}\n  \
             sudo sysctl fs.inotify.max_user_watches={INOTIFY_MIN_WATCHES}",
            instances.map_or("?".into(), |v| v.to_string()),
            watches.map_or("?".into(), |v| v.to_string()),
        )
    })
}

/// A node Kind created (provider id `kind://...`).
pub(crate) fn is_kind_node(node: &Value) -> bool {
    node.pointer("/spec/providerID").and_then(Value::as_str).is_some_and(|p| p.starts_with("kind://"))
}

/// The name of the default StorageClass in a list, if one is marked default.
pub(crate) fn default_storage_class(list: &Value) -> Option<String> {
    let items = list.get("items").and_then(Value::as_array)?;
    items
        .iter()
        .find(|sc| {
            let annotations = sc.pointer("/metadata/annotations");
            ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"]
                .iter()
                .any(|k| annotations.and_then(|a| a.get(*k)).and_then(Value::as_str) == Some("true"))
        })
        .and_then(|sc| sc.pointer("/metadata/name").and_then(Value::as_str).map(str::to_string))
}

pub(crate) fn path(group: &str, version: &str, plural: &str, namespaced: bool) -> ResourcePath {
    ResourcePath { group: group.into(), version: version.into(), plural: plural.into(), namespaced }
}

/// Run every check; `Err` means nothing may be written.
pub(crate) async fn run(
    api: &ApiClient,
    resolver: &Resolver,
    plan: &Plan,
    opts: &PreflightOptions,
) -> Result<PreflightReport, ClusterError> {
    let api = &api.bounded(PREFLIGHT_BOUND);
    let version = server_version(api).await?;
    check_version(&version, &opts.supported).map_err(ClusterError::Preflight)?;
    crate::cluster::provided::check(api, resolver, plan, &opts.provided).await?;
    let resources = resources_of(resolver, plan).await?;
    if opts.check_access {
        check_access(api, &resources).await?;
    }
    let mut report = PreflightReport { server_version: version, ..Default::default() };
    match api.list(&path("storage.k8s.io", "v1", "storageclasses", false), None, None).await {
        Ok(list) if default_storage_class(&list).is_some() => {}
        Ok(_) => report.warnings.push(
            "warning: no default StorageClass; PersistentVolumeClaims (Pipelines' MySQL and SeaweedFS, Katib's MySQL) will stay Pending"
                .into(),
        ),
        Err(f) => report.warnings.push(format!("warning: cannot list StorageClasses: {f}")),
    }
    if let Ok(nodes) = api.list(&path("", "v1", "nodes", false), None, None).await {
        report.kind_cluster = nodes.get("items").and_then(Value::as_array).is_some_and(|n| n.iter().any(is_kind_node));
    }
    check_kind_exemption(&api.server, report.kind_cluster, opts)?;
    if report.kind_cluster
        && let Some(hint) = inotify_hint(read_sysctl("max_user_instances"), read_sysctl("max_user_watches"))
    {
        report.warnings.push(hint);
    }
    Ok(report)
}

fn read_sysctl(name: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/sys/fs/inotify/{name}")).ok()?.trim().parse().ok()
}

/// `GET /version` (retried by the client like every call): a server that refuses connections
/// is "unreachable" (exit 5), one that accepts them and never answers is [`ClusterError::Silent`]
/// (exit 6, as at the run's deadline); a 429 or 5xx that does not settle says what it is.
pub(crate) async fn server_version(api: &ApiClient) -> Result<String, ClusterError> {
    const WHAT: &str = "asking for the server's version";
    match api.with_budget(VERSION_RETRY_BUDGET).get_path("/version").await {
        Ok(info) => Ok(info.get("gitVersion").and_then(Value::as_str).unwrap_or("").to_string()),
        Err(f) if f.status.is_none() => Err(ClusterError::settle(api, WHAT, f, |f| match f.transport() {
            Some(TransportKind::TimedOut) => {
                ClusterError::Silent { server: api.server.clone(), what: WHAT.into(), failure: Box::new(f) }
            }
            _ => ClusterError::Unreachable { server: api.server.clone(), failure: Box::new(f) },
        })),
        Err(f) => Err(ClusterError::Api { what: "server version".into(), failure: Box::new(f) }),
    }
}

/// The (group, plural) of everything the plan writes; a kind nobody serves and no planned CRD
/// defines is refused here, before any write. Discovery is asked concurrently.
pub(crate) async fn resources_of(resolver: &Resolver, plan: &Plan) -> Result<BTreeSet<(String, String)>, ClusterError> {
    let kinds: BTreeSet<(String, String)> =
        plan.objects().map(|o| (o.reference.api_version.clone(), o.reference.kind.clone())).collect();
    let crd_plurals = crd_plurals(plan);
    let resolved: Vec<Result<(String, String), ClusterError>> = futures::stream::iter(kinds)
        .map(|(api_version, kind)| {
            let crd_plurals = &crd_plurals;
            async move {
                let group = api_version.rsplit_once('/').map_or("", |(g, _)| g).to_string();
                let group_kind = crate::cluster::object::group_kind(&group, &kind);
                if let Some((_, plural)) = crd_plurals.iter().find(|(gk, _)| *gk == group_kind) {
                    return Ok((group, plural.clone()));
                }
                match resolver.resolve(&api_version, &kind).await {
                    Ok(path) => Ok((group, path.plural)),
                    Err(f) if f.is_no_kind_match() => Err(ClusterError::Preflight(format!(
                        "{kind} ({api_version}): {}, and no CRD in the plan defines it; install its CRD first or drop the objects",
                        f.message
                    ))),
                    Err(f) => Err(ClusterError::Api { what: "discovery".into(), failure: Box::new(f) }),
                }
            }
        })
        .buffer_unordered(CONCURRENT_CHECKS)
        .collect()
        .await;
    resolved.into_iter().collect()
}

/// The longest the preflight's own calls may take, whatever `--timeout` says.
pub(crate) const PREFLIGHT_BOUND: Duration = Duration::from_secs(60);

/// How long the first call, `GET /version`, retries: a server refusing connections this long is
/// not starting up, it is the wrong address.
pub(crate) const VERSION_RETRY_BUDGET: Duration = Duration::from_secs(10);

/// Preflight requests in flight at once.
const CONCURRENT_CHECKS: usize = 16;

fn crd_plurals(plan: &Plan) -> Vec<(String, String)> {
    plan.objects()
        .filter(|o| o.reference.kind == "CustomResourceDefinition")
        .filter_map(|o| {
            let group = o.body.pointer("/spec/group")?.as_str()?;
            let kind = o.body.pointer("/spec/names/kind")?.as_str()?;
            let plural = o.body.pointer("/spec/names/plural")?.as_str()?;
            Some((crate::cluster::object::group_kind(group, kind), plural.to_string()))
        })
        .collect()
}

/// SelfSubjectAccessReviews: may we create and patch each resource (cluster-wide)?
pub(crate) async fn check_access(api: &ApiClient, resources: &BTreeSet<(String, String)>) -> Result<(), ClusterError> {
    let reviews = path("authorization.k8s.io", "v1", "selfsubjectaccessreviews", false);
    let asks: Vec<(&String, &String, &str)> =
        resources.iter().flat_map(|(g, p)| ["create", "patch"].map(move |verb| (g, p, verb))).collect();
    let answers: Vec<(String, Result<Value, ApiFailure>)> = futures::stream::iter(asks)
        .map(|(group, plural, verb)| {
            let reviews = &reviews;
            async move {
                let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                    "spec": {"resourceAttributes": {"group": group, "resource": plural, "verb": verb}}});
                (format!("{verb} {}", qualified(group, plural)), api.create(reviews, &review).await)
            }
        })
        .buffered(CONCURRENT_CHECKS)
        .collect()
        .await;
    let mut denied = Vec::new();
    for (what, answer) in answers {
        match answer {
            Ok(review) if review.pointer("/status/allowed").and_then(Value::as_bool) == Some(true) => {}
            Ok(_) => denied.push(what),
            Err(f) if f.status == Some(404) => return Ok(()),
            Err(f) => {
                return Err(ClusterError::Api { what: "SelfSubjectAccessReview".into(), failure: Box::new(f) });
            }
        }
    }
    if denied.is_empty() {
        Ok(())
    } else {
        Err(ClusterError::Preflight(format!(
            "the current user may not {}; use a kubeconfig with cluster-admin rights",
            denied.join(", ")
        )))
    }
}

fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() { plural.to_string() } else { format!("{plural}.{group}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_versions_with_vendor_suffixes_parse() {
        assert_eq!(parse_server_version("v1.33.1+k3s1"), Some(semver::Version::new(1, 33, 1)));
        assert_eq!(parse_server_version("v1.34.0-gke.100"), Some(semver::Version::new(1, 34, 0)));
        assert_eq!(parse_server_version("garbage"), None);
    }

    #[test]
    fn version_range_is_an_input() {
        let req = semver::VersionReq::parse(">=1.33.0").unwrap();
        assert!(check_version("v1.33.1", &req).is_ok());
        let err = check_version("v1.31.4", &req).unwrap_err();
        assert!(err.contains("v1.31.4") && err.contains(">=1.33.0"), "{err}");
        assert!(check_version("v1.31.4", &semver::VersionReq::parse(">=1.30").unwrap()).is_ok());
    }

    #[test]
    fn default_credentials_refused_off_kind_unless_allowed() {
        let mut opts = PreflightOptions { uses_default_credentials: true, ..Default::default() };
        let kind = PreflightOptions { profile_allows_default_credentials: true, ..opts.clone() };
        assert!(check_credentials("kind", &kind).is_ok());
        let err = check_credentials("multi-tenant", &opts).unwrap_err();
        assert!(err.to_string().starts_with("security:"));
        opts.allow_default_credentials = true;
        assert!(check_credentials("multi-tenant", &opts).is_ok());
        opts = PreflightOptions::default();
        assert!(check_credentials("multi-tenant", &opts).is_ok());
    }

    #[test]
    fn the_kind_exemption_holds_on_kind_clusters_only() {
        let opts = PreflightOptions {
            uses_default_credentials: true,
            profile_allows_default_credentials: true,
            ..Default::default()
        };
        assert!(check_kind_exemption("https://k", true, &opts).is_ok());
        let err = check_kind_exemption("https://k", false, &opts).unwrap_err();
        assert!(err.to_string().starts_with("security:") && err.to_string().contains("https://k"), "{err}");
        let allowed = PreflightOptions { allow_default_credentials: true, ..opts.clone() };
        assert!(check_kind_exemption("https://k", false, &allowed).is_ok());
        let own = PreflightOptions { uses_default_credentials: false, ..opts };
        assert!(check_kind_exemption("https://k", false, &own).is_ok());
    }

    #[test]
    fn default_user_is_detected_in_pre_rendered_objects() {
        let dex =
            json!({"kind": "ConfigMap", "data": {"config.yaml": "staticPasswords:\n- email: user@example.com\n"}});
        assert!(uses_default_credentials(&[dex]));
        assert!(!uses_default_credentials(&[json!({"kind": "ConfigMap", "data": {"a": "b"}})]));
    }

    #[test]
    fn inotify_hint_names_the_sysctl_commands() {
        let hint = inotify_hint(Some(128), Some(8192)).unwrap();
        assert!(hint.contains("sudo sysctl fs.inotify.max_user_instances=2280"));
        assert!(hint.contains("sudo sysctl fs.inotify.max_user_watches=1255360"));
        assert_eq!(inotify_hint(Some(4096), Some(2_000_000)), None);
    }

    #[test]
    fn kind_nodes_and_default_storage_classes_are_recognised() {
        assert!(is_kind_node(&json!({"spec": {"providerID": "kind://docker/kubeflow/kubeflow-control-plane"}})));
        assert!(!is_kind_node(&json!({"spec": {"providerID": "aws:///eu-west-1a/i-0"}})));
        let list = json!({"items": [{"metadata": {"name": "slow"}},
            {"metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}]});
        assert_eq!(default_storage_class(&list).as_deref(), Some("standard"));
        assert_eq!(default_storage_class(&json!({"items": []})), None);
    }
}
