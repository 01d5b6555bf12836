//! The kinds that hold users' data: one table, read by the installer and the chart export.
//!
//! Deleting a CustomResourceDefinition deletes every custom resource of its kind, a
//! PersistentVolumeClaim its volume's data, a Namespace everything in it. So these kinds are
//! never deleted implicitly: `cluster::prune` keeps them when a converge or an uninstall would
//! remove them (unless `--purge`), and `global.resourcePolicy: keep` gives them Helm's
//! `helm.sh/resource-policy: keep` annotation, so `helm uninstall` and `helm upgrade` keep them
//! too.

use serde_json::Value;

/// A kind that is never deleted implicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Guarded {
    /// `group/Kind` (bare `Kind` for the core group).
    pub group_kind: &'static str,
    /// Plural for reports.
    pub plural: &'static str,
    /// What deleting one would lose.
    pub loses: &'static str,
}

/// The kinds whose deletion loses users' data.
pub(crate) const GUARDED: &[Guarded] = &[
    Guarded {
        group_kind: "apiextensions.k8s.io/CustomResourceDefinition",
        plural: "CRDs",
        loses: "their custom resources would be lost",
    },
    Guarded { group_kind: "PersistentVolumeClaim", plural: "PVCs", loses: "their volumes' data would be lost" },
    Guarded { group_kind: "Namespace", plural: "Namespaces", loses: "everything in them would be lost" },
];

/// `group/Kind` of a rendered object (bare `Kind` for the core group).
pub(crate) fn group_kind_of(obj: &Value) -> String {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    match obj.get("apiVersion").and_then(Value::as_str).and_then(|v| v.split_once('/')) {
        Some((group, _)) => format!("{group}/{kind}"),
        None => kind.to_string(),
    }
}

/// The guard rule of a rendered object's kind, if any.
pub(crate) fn guarded_object(obj: &Value) -> Option<&'static Guarded> {
    let gk = group_kind_of(obj);
    GUARDED.iter().find(|g| g.group_kind == gk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crds_claims_and_namespaces_are_guarded_and_nothing_else() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"});
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim"});
        let ns = json!({"apiVersion": "v1", "kind": "Namespace"});
        assert_eq!(guarded_object(&crd).map(|g| g.plural), Some("CRDs"));
        assert_eq!(guarded_object(&pvc).map(|g| g.plural), Some("PVCs"));
        assert_eq!(guarded_object(&ns).map(|g| g.plural), Some("Namespaces"));
        for other in [
            json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
            json!({"apiVersion": "example.com/v1", "kind": "Namespace"}),
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
        ] {
            assert_eq!(guarded_object(&other), None, "{other}");
        }
    }
}
