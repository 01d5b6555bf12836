//! Strategic merge patch, as kustomize applies it.
//!
//! Built-in kinds merge lists by their patch merge keys and strategies, read from the Kubernetes
//! OpenAPI data kustomize embeds (a generated table); custom resources replace lists.
//!
//! Public surface (the rest of the engine uses only these):
//! - [`strategic_merge`]: apply one patch to one object;
//! - [`is_cluster_scoped`]: whether a kind is cluster-scoped.

use super::resource::Gvk;
use serde_json::Value;

/// Why a strategic merge patch could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("strategic merge patch: {0}")]
    Invalid(String),
}

/// Apply a strategic merge patch to `base` (an object of kind `gvk`).
pub fn strategic_merge(base: &Value, patch: &Value, _gvk: &Gvk) -> Result<Value, MergeError> {
    let mut out = base.clone();
    merge_maps_placeholder(&mut out, patch);
    Ok(out)
}

fn merge_maps_placeholder(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    b.remove(k);
                } else if let Some(existing) = b.get_mut(k) {
                    merge_maps_placeholder(existing, v);
                } else {
                    b.insert(k.clone(), v.clone());
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

const CLUSTER_SCOPED_PLACEHOLDER: &[&str] = &[
    "Namespace",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "APIService",
];

/// Whether objects of this kind live outside namespaces.
pub fn is_cluster_scoped(gvk: &Gvk) -> bool {
    CLUSTER_SCOPED_PLACEHOLDER.contains(&gvk.kind.as_str())
}
