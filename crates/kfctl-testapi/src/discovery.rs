//! Discovery: which resources the test API server serves, and the documents that say so.
//!
//! The [`Catalog`] is the list of [`ResourceType`]s: a fixed table of the built-in kinds a
//! Kubeflow install touches, plus one entry per served version of every CustomResourceDefinition
//! that is established. The server keeps two catalogs per request: the *served* one (REST paths
//! answer) and the *discoverable* one (what `/apis` shows), which additionally waits for the
//! configured discovery lag, so tests can reproduce "CRD is there but its kind is not in
//! discovery yet".
//!
//! Documents are rendered in both shapes upstream serves: the legacy per-group documents
//! (`/api`, `/api/v1`, `/apis`, `/apis/<group>/<version>`) and the aggregated discovery list
//! (`apidiscovery.k8s.io/v2`, chosen by the `Accept` header), which kubectl 1.33 prefers and
//! kube's `Discovery::run_aggregated` uses.

use serde_json::{Value, json};
use std::sync::Arc;

/// Standard verbs of an ordinary resource.
const STANDARD_VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/// Media type of an aggregated discovery response.
pub(crate) const AGGREGATED_CONTENT_TYPE: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// One served resource at one group/version.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ResourceType {
    /// API group, empty for the core group.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Plural resource name used in paths, e.g. `deployments`.
    pub resource: String,
    /// Singular name, e.g. `deployment`.
    pub singular: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Verbs the resource supports.
    pub verbs: Vec<String>,
    /// Short names (`deploy`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Whether `/status` is a subresource (then writes to the main resource ignore `.status`).
    pub status_subresource: bool,
}

impl ResourceType {
    /// `apps/v1` or `v1`.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// Whether the verb is served.
    pub(crate) fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// Flags of one built-in row: namespaced, status subresource, category `all`, verb set.
#[derive(Clone, Copy)]
enum Verbs {
    Standard,
    NoCollection,
    CreateOnly,
}

type Row = (&'static str, &'static str, &'static str, &'static str, bool, bool, &'static str, Verbs);

/// (group, version, plural, kind, namespaced, status subresource, short names (comma list), verbs).
/// Groups appear in the order upstream lists them in `/apis`.
const BUILTINS: &[Row] = &[
    ("", "v1", "configmaps", "ConfigMap", true, false, "cm", Verbs::Standard),
    ("", "v1", "endpoints", "Endpoints", true, false, "ep", Verbs::Standard),
    ("", "v1", "events", "Event", true, false, "ev", Verbs::Standard),
    ("", "v1", "limitranges", "LimitRange", true, false, "limits", Verbs::Standard),
    ("", "v1", "namespaces", "Namespace", false, true, "ns", Verbs::NoCollection),
    ("", "v1", "nodes", "Node", false, true, "no", Verbs::Standard),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, true, "pvc", Verbs::Standard),
    ("", "v1", "persistentvolumes", "PersistentVolume", false, true, "pv", Verbs::Standard),
    ("", "v1", "pods", "Pod", true, true, "po", Verbs::Standard),
    ("", "v1", "resourcequotas", "ResourceQuota", true, true, "quota", Verbs::Standard),
    ("", "v1", "secrets", "Secret", true, false, "", Verbs::Standard),
    ("", "v1", "serviceaccounts", "ServiceAccount", true, false, "sa", Verbs::Standard),
    ("", "v1", "services", "Service", true, true, "svc", Verbs::NoCollection),
    ("apiregistration.k8s.io", "v1", "apiservices", "APIService", false, true, "", Verbs::Standard),
    ("apps", "v1", "controllerrevisions", "ControllerRevision", true, false, "", Verbs::Standard),
    ("apps", "v1", "daemonsets", "DaemonSet", true, true, "ds", Verbs::Standard),
    ("apps", "v1", "deployments", "Deployment", true, true, "deploy", Verbs::Standard),
    ("apps", "v1", "replicasets", "ReplicaSet", true, true, "rs", Verbs::Standard),
    ("apps", "v1", "statefulsets", "StatefulSet", true, true, "sts", Verbs::Standard),
    ("events.k8s.io", "v1", "events", "Event", true, false, "ev", Verbs::Standard),
    ("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", false, false, "", Verbs::CreateOnly),
    ("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", false, false, "", Verbs::CreateOnly),
    (
        "authorization.k8s.io",
        "v1",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        true,
        false,
        "",
        Verbs::CreateOnly,
    ),
    (
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        false,
        false,
        "",
        Verbs::CreateOnly,
    ),
    (
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        false,
        false,
        "",
        Verbs::CreateOnly,
    ),
    ("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", false, false, "", Verbs::CreateOnly),
    ("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, true, "hpa", Verbs::Standard),
    ("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, true, "hpa", Verbs::Standard),
    ("batch", "v1", "cronjobs", "CronJob", true, true, "cj", Verbs::Standard),
    ("batch", "v1", "jobs", "Job", true, true, "", Verbs::Standard),
    (
        "certificates.k8s.io",
        "v1",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        false,
        true,
        "csr",
        Verbs::Standard,
    ),
    ("networking.k8s.io", "v1", "ingressclasses", "IngressClass", false, false, "", Verbs::Standard),
    ("networking.k8s.io", "v1", "ingresses", "Ingress", true, true, "ing", Verbs::Standard),
    ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, false, "netpol", Verbs::Standard),
    ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, true, "pdb", Verbs::Standard),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, false, "", Verbs::Standard),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, false, "", Verbs::Standard),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, false, "", Verbs::Standard),
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", true, false, "", Verbs::Standard),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", false, false, "", Verbs::Standard),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", false, false, "sc", Verbs::Standard),
    (
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        false,
        false,
        "",
        Verbs::Standard,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        false,
        true,
        "",
        Verbs::Standard,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        false,
        false,
        "",
        Verbs::Standard,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        false,
        false,
        "",
        Verbs::Standard,
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        false,
        true,
        "crd,crds",
        Verbs::Standard,
    ),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false, false, "pc", Verbs::Standard),
    ("coordination.k8s.io", "v1", "leases", "Lease", true, false, "", Verbs::Standard),
    ("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false, false, "", Verbs::Standard),
    ("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true, false, "", Verbs::Standard),
];

/// Kinds upstream puts in the `all` category (what `kubectl get all` lists).
const CATEGORY_ALL: &[&str] = &[
    "Pod",
    "Service",
    "DaemonSet",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "Job",
    "CronJob",
    "HorizontalPodAutoscaler",
];

fn builtin_row(row: &Row) -> ResourceType {
    let (group, version, resource, kind, namespaced, status, shorts, verbs) = *row;
    let verbs: Vec<String> = match verbs {
        Verbs::Standard => STANDARD_VERBS.iter().map(|v| v.to_string()).collect(),
        Verbs::NoCollection => {
            STANDARD_VERBS.iter().filter(|v| **v != "deletecollection").map(|v| v.to_string()).collect()
        }
        Verbs::CreateOnly => vec!["create".to_string()],
    };
    let categories = if CATEGORY_ALL.contains(&kind) { vec!["all".to_string()] } else { Vec::new() };
    ResourceType {
        group: group.into(),
        version: version.into(),
        resource: resource.into(),
        singular: kind.to_lowercase(),
        kind: kind.into(),
        namespaced,
        verbs,
        short_names: shorts.split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
        categories,
        status_subresource: status,
    }
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default()
}

/// The resource types a CustomResourceDefinition object defines (one per served version).
pub(crate) fn crd_resource_types(crd: &Value) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let (Some(group), Some(plural), Some(kind)) =
        (spec["group"].as_str(), names["plural"].as_str(), names["kind"].as_str())
    else {
        return Vec::new();
    };
    let singular =
        names["singular"].as_str().filter(|s| !s.is_empty()).map(String::from).unwrap_or_else(|| kind.to_lowercase());
    let Some(versions) = spec["versions"].as_array() else { return Vec::new() };
    versions
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(false))
        .filter_map(|v| {
            Some(ResourceType {
                group: group.into(),
                version: v["name"].as_str()?.into(),
                resource: plural.into(),
                singular: singular.clone(),
                kind: kind.into(),
                namespaced: spec["scope"].as_str() != Some("Cluster"),
                verbs: STANDARD_VERBS.iter().map(|s| s.to_string()).collect(),
                short_names: strings(&names["shortNames"]),
                categories: strings(&names["categories"]),
                status_subresource: v["subresources"].get("status").is_some(),
            })
        })
        .collect()
}

/// Kubernetes version priority: GA before beta before alpha, higher numbers first, others last.
pub(crate) fn version_priority(version: &str) -> (u8, i64, u8, i64, String) {
    let Some(rest) = version.strip_prefix('v') else { return (3, 0, 0, 0, version.to_string()) };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<i64>() else { return (3, 0, 0, 0, version.to_string()) };
    let tail = &rest[digits.len()..];
    let (stability, minor_text) = if tail.is_empty() {
        (0, "")
    } else if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else if let Some(m) = tail.strip_prefix("alpha") {
        (2, m)
    } else {
        return (3, 0, 0, 0, version.to_string());
    };
    let minor = minor_text.parse::<i64>().unwrap_or(0);
    (stability, -major, 0, -minor, String::new())
}

/// The built-in rows as resource types, built once.
fn builtin_types() -> &'static [ResourceType] {
    static TYPES: std::sync::LazyLock<Vec<ResourceType>> =
        std::sync::LazyLock::new(|| BUILTINS.iter().map(builtin_row).collect());
    &TYPES
}

/// The resource types served (or discoverable) at one moment: the built-ins (shared, built
/// once) and the kinds of established CRDs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Catalog {
    custom: Vec<Arc<ResourceType>>,
}

impl Catalog {
    /// Built-in kinds only.
    pub(crate) fn builtin() -> Self {
        Catalog { custom: Vec::new() }
    }

    /// Add the kinds of the given CustomResourceDefinitions (skipping ones shadowing built-ins).
    #[cfg(test)]
    pub(crate) fn with_crds<'a>(self, crds: impl Iterator<Item = &'a Value>) -> Self {
        self.with_types(crds.flat_map(crd_resource_types).map(Arc::new))
    }

    /// Add CRDs' resource types (skipping ones shadowing built-ins or added before).
    pub(crate) fn with_types(mut self, types: impl Iterator<Item = Arc<ResourceType>>) -> Self {
        for rt in types {
            if self.find(&rt.group, &rt.version, &rt.resource).is_none() {
                self.custom.push(rt);
            }
        }
        self
    }

    /// The type served at group/version/resource.
    pub(crate) fn find(&self, group: &str, version: &str, resource: &str) -> Option<&ResourceType> {
        self.types().find(|t| t.group == group && t.version == version && t.resource == resource)
    }

    /// Every type, built-ins first.
    pub(crate) fn types(&self) -> impl Iterator<Item = &ResourceType> + Clone {
        builtin_types().iter().chain(self.custom.iter().map(|t| &**t))
    }

    /// Groups (excluding core) in first-seen order, each with versions by priority.
    pub(crate) fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for t in self.types().filter(|t| !t.group.is_empty()) {
            match groups.iter_mut().find(|(g, _)| *g == t.group) {
                Some((_, versions)) if !versions.contains(&t.version) => versions.push(t.version.clone()),
                Some(_) => {}
                None => groups.push((t.group.clone(), vec![t.version.clone()])),
            }
        }
        for (_, versions) in &mut groups {
            versions.sort_by_key(|v| version_priority(v));
        }
        groups
    }

    /// `GET /api`.
    pub(crate) fn api_versions(&self) -> Value {
        json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]
        })
    }

    fn group_json(group: &str, versions: &[String]) -> Value {
        let gv = |v: &String| json!({"groupVersion": format!("{group}/{v}"), "version": v});
        json!({
            "name": group,
            "versions": versions.iter().map(gv).collect::<Vec<_>>(),
            "preferredVersion": gv(&versions[0]),
        })
    }

    /// `GET /apis`.
    pub(crate) fn api_group_list(&self) -> Value {
        let groups: Vec<Value> = self.groups().iter().map(|(g, vs)| Self::group_json(g, vs)).collect();
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
    }

    /// `GET /apis/<group>`.
    pub(crate) fn api_group(&self, group: &str) -> Option<Value> {
        let groups = self.groups();
        let (name, versions) = groups.iter().find(|(g, _)| g == group)?;
        let mut doc = Self::group_json(name, versions);
        doc["kind"] = json!("APIGroup");
        doc["apiVersion"] = json!("v1");
        Some(doc)
    }

    /// `GET /api/v1` or `GET /apis/<group>/<version>`.
    pub(crate) fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        let types: Vec<&ResourceType> = self.types().filter(|t| t.group == group && t.version == version).collect();
        if types.is_empty() {
            return None;
        }
        let mut resources = Vec::new();
        for t in &types {
            let mut entry = json!({
                "name": t.resource, "singularName": t.singular, "namespaced": t.namespaced,
                "kind": t.kind, "verbs": t.verbs,
            });
            if !t.short_names.is_empty() {
                entry["shortNames"] = json!(t.short_names);
            }
            if !t.categories.is_empty() {
                entry["categories"] = json!(t.categories);
            }
            resources.push(entry);
            if t.status_subresource {
                resources.push(json!({
                    "name": format!("{}/status", t.resource), "singularName": "", "namespaced": t.namespaced,
                    "kind": t.kind, "verbs": ["get", "patch", "update"],
                }));
            }
        }
        let group_version = types[0].api_version();
        Some(
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
        )
    }

    fn aggregated_resource(t: &ResourceType) -> Value {
        let response_kind = json!({"group": t.group, "version": t.version, "kind": t.kind});
        let mut entry = json!({
            "resource": t.resource, "responseKind": response_kind,
            "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
            "singularResource": t.singular, "verbs": t.verbs,
        });
        if !t.short_names.is_empty() {
            entry["shortNames"] = json!(t.short_names);
        }
        if !t.categories.is_empty() {
            entry["categories"] = json!(t.categories);
        }
        if t.status_subresource {
            entry["subresources"] =
                json!([{"subresource": "status", "responseKind": response_kind, "verbs": ["get", "patch", "update"]}]);
        }
        entry
    }

    fn aggregated_group(&self, group: &str, versions: &[String]) -> Value {
        let versions: Vec<Value> = versions
            .iter()
            .map(|v| {
                let resources: Vec<Value> = self
                    .types()
                    .filter(|t| t.group == group && &t.version == v)
                    .map(Self::aggregated_resource)
                    .collect();
                json!({"version": v, "resources": resources, "freshness": "Current"})
            })
            .collect();
        let mut metadata = json!({"creationTimestamp": null});
        if !group.is_empty() {
            metadata["name"] = json!(group);
        }
        json!({"metadata": metadata, "versions": versions})
    }

    /// Aggregated discovery: `GET /api` (core) or `GET /apis` with the v2 `Accept` header.
    pub(crate) fn aggregated(&self, core: bool) -> Value {
        let items: Vec<Value> = if core {
            vec![self.aggregated_group("", &["v1".to_string()])]
        } else {
            self.groups().iter().map(|(g, vs)| self.aggregated_group(g, vs)).collect()
        };
        json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
    }
}

/// Whether an `Accept` header asks for aggregated discovery.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').next().is_some_and(|first| first.contains("as=APIGroupDiscoveryList"))
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
