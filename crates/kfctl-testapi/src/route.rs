//! Request routing: turning a URL path into what it addresses, as upstream's
//! `RequestInfoFactory` does (including its special case for `namespaces/<name>/status`).

use std::collections::HashMap;

/// A path addressing objects of one resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    /// API group, empty for core.
    pub group: String,
    /// Version.
    pub version: String,
    /// Namespace from the path (`None` for cluster-scoped paths and all-namespace lists).
    pub namespace: Option<String>,
    /// Plural resource.
    pub resource: String,
    /// Object name, absent for collections.
    pub name: Option<String>,
    /// Subresource (`status`).
    pub subresource: Option<String>,
}

/// What a request path addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/version`.
    Version,
    /// `/healthz`, `/livez`, `/readyz`.
    Health,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    GroupList,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`.
    ResourceList { group: String, version: String },
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiRoot,
    /// `/openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>`.
    OpenApiGroupVersion { group: String, version: String },
    /// Objects of a resource.
    Resource(ResourcePath),
    /// Anything else.
    Unknown,
}

/// Subresources of a namespace reachable as `namespaces/<name>/<sub>`.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Route {
    let (namespace, parts) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() && !NAMESPACE_SUBRESOURCES.contains(&tail[0]) => {
            (Some(*ns), tail)
        }
        parts => (None, parts),
    };
    let path = |resource: &str, name: Option<&&str>, sub: Option<&&str>| {
        Route::Resource(ResourcePath {
            group: group.into(),
            version: version.into(),
            namespace: namespace.map(String::from),
            resource: resource.into(),
            name: name.map(|n| n.to_string()),
            subresource: sub.map(|s| s.to_string()),
        })
    };
    match parts {
        [resource] => path(resource, None, None),
        [resource, name] => path(resource, Some(name), None),
        [resource, name, sub] => path(resource, Some(name), Some(sub)),
        _ => Route::Unknown,
    }
}

/// Route a path (without query).
pub(crate) fn route(path: &str) -> Route {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["api"] => Route::CoreVersions,
        ["api", version] => Route::ResourceList { group: String::new(), version: version.to_string() },
        ["api", version, rest @ ..] => resource_route("", version, rest),
        ["apis"] => Route::GroupList,
        ["apis", group] => Route::Group(group.to_string()),
        ["apis", group, version] => Route::ResourceList { group: group.to_string(), version: version.to_string() },
        ["apis", group, version, rest @ ..] => resource_route(group, version, rest),
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", "api", version] => {
            Route::OpenApiGroupVersion { group: String::new(), version: version.to_string() }
        }
        ["openapi", "v3", "apis", group, version] => {
            Route::OpenApiGroupVersion { group: group.to_string(), version: version.to_string() }
        }
        _ => Route::Unknown,
    }
}

/// Parsed query parameters (last value wins).
#[derive(Clone, Debug, Default)]
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    /// Parse a raw query string.
    pub(crate) fn parse(raw: Option<&str>) -> Self {
        Query(form_urlencoded::parse(raw.unwrap_or("").as_bytes()).into_owned().collect())
    }
    /// One parameter.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
    /// A boolean flag (`true`/`1`).
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
    /// `dryRun=All`.
    pub(crate) fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(group: &str, ns: Option<&str>, resource: &str, name: Option<&str>, sub: Option<&str>) -> Route {
        Route::Resource(ResourcePath {
            group: group.into(),
            version: "v1".into(),
            namespace: ns.map(String::from),
            resource: resource.into(),
            name: name.map(String::from),
            subresource: sub.map(String::from),
        })
    }

    #[test]
    fn discovery_paths() {
        assert_eq!(route("/version"), Route::Version);
        assert_eq!(route("/api"), Route::CoreVersions);
        assert_eq!(route("/apis/apps/v1"), Route::ResourceList { group: "apps".into(), version: "v1".into() });
        assert_eq!(route("/apis/apps"), Route::Group("apps".into()));
        assert_eq!(
            route("/openapi/v3/apis/apps/v1"),
            Route::OpenApiGroupVersion { group: "apps".into(), version: "v1".into() }
        );
    }

    #[test]
    fn namespaced_and_cluster_paths() {
        assert_eq!(route("/api/v1/namespaces/kf/configmaps/c"), res("", Some("kf"), "configmaps", Some("c"), None));
        assert_eq!(
            route("/apis/apps/v1/namespaces/kf/deployments/w/status"),
            res("apps", Some("kf"), "deployments", Some("w"), Some("status"))
        );
        assert_eq!(route("/apis/apps/v1/deployments"), res("apps", None, "deployments", None, None));
    }

    #[test]
    fn namespace_objects_and_their_status_follow_upstream_special_case() {
        assert_eq!(route("/api/v1/namespaces/kf"), res("", None, "namespaces", Some("kf"), None));
        assert_eq!(route("/api/v1/namespaces/kf/status"), res("", None, "namespaces", Some("kf"), Some("status")));
        assert_eq!(route("/api/v1/namespaces"), res("", None, "namespaces", None, None));
        assert_eq!(route("/api/v1/namespaces/kf/pods"), res("", Some("kf"), "pods", None, None));
    }

    #[test]
    fn query_parses_encoded_selectors_and_flags() {
        let q = Query::parse(Some("labelSelector=app%3Dweb%2Ctier%20in%20(a)&dryRun=All&force=true&watch=1"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert!(q.dry_run() && q.flag("force") && q.flag("watch") && !q.flag("missing"));
    }
}
