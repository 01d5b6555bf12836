//! Naming the objects the cluster code handles.
//!
//! Every other module talks about objects through [`ObjectRef`]: apiVersion, kind, namespace and
//! name, the four things a person needs to find an object with `kubectl get`. References are
//! taken from rendered `serde_json::Value` documents; a document without a kind or a name cannot
//! be applied, and says so by file-free position (`object #12`).
//!
//! Scope is a property of the kind, not of the document: kustomize happily leaves a
//! `metadata.namespace` on cluster-scoped kinds (example.yaml puts its ClusterTrainingRuntimes
//! in `kubeflow-system`), and the API server rejects a body whose namespace differs from the URL.
//! `Scopes` knows the built-in cluster-scoped kinds and learns custom ones from the CRDs in the
//! plan, so the plan, the apply and the inventory all name the object the way the server does.

use crate::cluster::order::BUILTIN_GROUPS;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// Where an object lives: enough to find it, nothing more.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    pub(crate) api_version: String,
    /// The object's kind.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) namespace: Option<String>,
    /// The object's name.
    pub name: String,
}

impl ObjectRef {
    /// Read the reference of a rendered document; `index` names it in the error.
    pub(crate) fn from_value(doc: &Value, index: usize) -> Result<Self, String> {
        let field =
            |path: &[&str]| path.iter().try_fold(doc, |v, key| v.get(*key)).and_then(Value::as_str).map(str::to_string);
        let api_version = field(&["apiVersion"]).ok_or_else(|| format!("object #{index}: no apiVersion"))?;
        let kind = field(&["kind"]).ok_or_else(|| format!("object #{index}: no kind"))?;
        let name = field(&["metadata", "name"])
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("object #{index} ({kind}): no metadata.name"))?;
        let namespace = field(&["metadata", "namespace"]).filter(|n| !n.is_empty());
        Ok(ObjectRef { api_version, kind, namespace, name })
    }

    /// The API group: empty for the core group.
    pub fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("")
    }

    /// The API version without its group.
    #[cfg(test)]
    pub(crate) fn version(&self) -> &str {
        self.api_version.rsplit_once('/').map(|(_, v)| v).unwrap_or(&self.api_version)
    }

    /// `group/Kind` (or `Kind` for the core group): what a CRD serves, independent of version.
    pub fn group_kind(&self) -> String {
        group_kind(self.group(), &self.kind)
    }

    pub(crate) fn is_kind(&self, group: &str, kind: &str) -> bool {
        self.group() == group && self.kind == kind
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// `group/Kind`, or bare `Kind` for the core group.
pub(crate) fn group_kind(group: &str, kind: &str) -> String {
    if group.is_empty() { kind.to_string() } else { format!("{group}/{kind}") }
}

/// Built-in kinds that are cluster-scoped (group/Kind). Everything else built in is namespaced.
pub(crate) const BUILTIN_CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "ComponentStatus",
    "apiextensions.k8s.io/CustomResourceDefinition",
    "apiregistration.k8s.io/APIService",
    "rbac.authorization.k8s.io/ClusterRole",
    "rbac.authorization.k8s.io/ClusterRoleBinding",
    "admissionregistration.k8s.io/MutatingWebhookConfiguration",
    "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
    "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
    "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
    "scheduling.k8s.io/PriorityClass",
    "storage.k8s.io/StorageClass",
    "storage.k8s.io/CSIDriver",
    "storage.k8s.io/VolumeAttachment",
    "networking.k8s.io/IngressClass",
    "node.k8s.io/RuntimeClass",
    "certificates.k8s.io/CertificateSigningRequest",
    "flowcontrol.apiserver.k8s.io/FlowSchema",
    "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
];

/// Where namespaced objects without a namespace go.
pub(crate) const DEFAULT_NAMESPACE: &str = "default";

/// Which kinds are cluster-scoped: the built-in table plus the CRDs of a plan.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scopes {
    cluster_custom: BTreeSet<String>,
    namespaced_custom: BTreeSet<String>,
}

impl Scopes {
    /// Learn custom kinds' scopes from the CRDs among `docs`.
    pub(crate) fn from_docs<'a>(docs: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut scopes = Scopes::default();
        for crd in docs.into_iter().filter(|d| is_crd(d)) {
            if let Some((group, kind)) = crd_group_kind(crd) {
                let cluster = crd.pointer("/spec/scope").and_then(Value::as_str) == Some("Cluster");
                let set = if cluster { &mut scopes.cluster_custom } else { &mut scopes.namespaced_custom };
                set.insert(group_kind(&group, &kind));
            }
        }
        scopes
    }

    pub(crate) fn is_cluster_scoped(&self, group_kind: &str) -> bool {
        BUILTIN_CLUSTER_SCOPED.contains(&group_kind) || self.cluster_custom.contains(group_kind)
    }

    /// Whether a kind is known to be namespaced: built in and not cluster-scoped, or a
    /// namespaced CRD of the plan. Kinds of unknown groups are neither known nor assumed.
    pub(crate) fn is_known_namespaced(&self, group_kind: &str) -> bool {
        let builtin =
            !group_kind.contains('/') || BUILTIN_GROUPS.iter().any(|g| group_kind.starts_with(&format!("{g}/")));
        (builtin && !BUILTIN_CLUSTER_SCOPED.contains(&group_kind)) || self.namespaced_custom.contains(group_kind)
    }

    /// The reference the server will use: no namespace on cluster-scoped kinds, `default` on
    /// namespaced kinds that name none (as kubectl does).
    pub(crate) fn normalize(&self, mut r: ObjectRef) -> ObjectRef {
        let gk = r.group_kind();
        if self.is_cluster_scoped(&gk) {
            r.namespace = None;
        } else if r.namespace.is_none() && self.is_known_namespaced(&gk) {
            r.namespace = Some(DEFAULT_NAMESPACE.to_string());
        }
        r
    }
}

pub(crate) use crate::catalog::object_id::is_crd;

/// The (group, kind) a CRD document defines.
pub(crate) fn crd_group_kind(crd: &Value) -> Option<(String, String)> {
    let group = crd.pointer("/spec/group")?.as_str()?;
    let kind = crd.pointer("/spec/names/kind")?.as_str()?;
    Some((group.to_string(), kind.to_string()))
}

/// Which `group/Kind`s the CRDs among `docs` define, mapped to the CRD's name.
pub fn crd_kinds<'a>(docs: impl IntoIterator<Item = &'a Value>) -> HashMap<String, String> {
    docs.into_iter()
        .filter(|d| is_crd(d))
        .filter_map(|crd| {
            let (group, kind) = crd_group_kind(crd)?;
            let name = crd.pointer("/metadata/name")?.as_str()?;
            Some((group_kind(&group, &kind), name.to_string()))
        })
        .collect()
}

/// A string annotation of a document.
pub(crate) fn annotation<'a>(doc: &'a Value, key: &str) -> Option<&'a str> {
    doc.pointer("/metadata/annotations").and_then(|a| a.get(key)).and_then(Value::as_str)
}

/// The references in `namespace` (every one when it is `None`), or
/// [`crate::cluster::ClusterError::NoObjectInNamespace`] naming the namespaces `what` are in: the scope
/// of `-n/--namespace`, as kubectl's (namespaced objects in it; cluster-scoped ones are not).
pub(crate) fn in_namespace<'a, T>(
    items: impl IntoIterator<Item = (&'a ObjectRef, T)>,
    namespace: Option<&str>,
    what: &'static str,
) -> Result<Vec<T>, crate::cluster::ClusterError> {
    let items: Vec<(&ObjectRef, T)> = items.into_iter().collect();
    let Some(namespace) = namespace else { return Ok(items.into_iter().map(|(_, t)| t).collect()) };
    let mut held: Vec<String> = items.iter().filter_map(|(r, _)| r.namespace.clone()).collect();
    let kept: Vec<T> =
        items.into_iter().filter(|(r, _)| r.namespace.as_deref() == Some(namespace)).map(|(_, t)| t).collect();
    if kept.is_empty() {
        held.sort();
        held.dedup();
        return Err(crate::cluster::ClusterError::NoObjectInNamespace { namespace: namespace.to_string(), what, held });
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reference_reads_group_version_and_display() {
        let doc = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "namespace": "kf"}});
        let r = ObjectRef::from_value(&doc, 0).unwrap();
        assert_eq!((r.group(), r.version()), ("apps", "v1"));
        assert_eq!(r.to_string(), "Deployment kf/a");
        let core = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}});
        assert_eq!(ObjectRef::from_value(&core, 1).unwrap().group_kind(), "Namespace");
    }

    #[test]
    fn reference_without_name_is_an_error_naming_the_object() {
        let doc = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        assert_eq!(ObjectRef::from_value(&doc, 7).unwrap_err(), "object #7 (ConfigMap): no metadata.name");
    }

    #[test]
    fn scopes_drop_namespace_of_cluster_scoped_custom_kinds() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "rts.example.org"},
            "spec": {"group": "example.org", "scope": "Cluster", "names": {"kind": "Rt", "plural": "rts"}}});
        let scopes = Scopes::from_docs(&[crd]);
        let r = ObjectRef {
            api_version: "example.org/v1".into(),
            kind: "Rt".into(),
            namespace: Some("x".into()),
            name: "a".into(),
        };
        assert_eq!(scopes.normalize(r).namespace, None);
        let cm = ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("x".into()),
            name: "a".into(),
        };
        assert_eq!(scopes.normalize(cm).namespace.as_deref(), Some("x"));
        let bare = ObjectRef { api_version: "v1".into(), kind: "ConfigMap".into(), namespace: None, name: "a".into() };
        assert_eq!(scopes.normalize(bare).namespace.as_deref(), Some("default"));
        let unknown =
            ObjectRef { api_version: "other.io/v1".into(), kind: "Thing".into(), namespace: None, name: "a".into() };
        assert_eq!(scopes.normalize(unknown).namespace, None);
    }
}
