//! Preparing an object for server-side apply: leave out what controllers own.
//!
//! A server-side apply claims every field in its body for the field manager `kfctl-rs`. Fields a
//! controller writes must therefore never be in the body, or each re-apply fights the
//! controller (and, with `--force-conflicts`, wins, undoing its work):
//!
//! - `status` (written by controllers through the status subresource);
//! - server-set metadata: `creationTimestamp` (kustomize output often carries
//!   `creationTimestamp: null`), `resourceVersion`, `uid`, `generation`, `managedFields`,
//!   `selfLink`;
//! - the `caBundle` of webhook configurations and CRD conversion webhooks that cert-manager's
//!   cainjector fills in (annotation `cert-manager.io/inject-ca-from[-secret]`);
//! - `metadata.namespace` on cluster-scoped kinds (the server rejects a namespace that
//!   disagrees with the URL).

use crate::cluster::readiness::is_ca_injected;
use serde_json::Value;

/// Server-set metadata fields never sent.
pub(crate) const SERVER_METADATA: &[&str] =
    &["creationTimestamp", "resourceVersion", "uid", "generation", "managedFields", "selfLink", "deletionTimestamp"];

/// The body to apply for `doc`.
pub(crate) fn apply_body(doc: &Value, cluster_scoped: bool) -> Value {
    let mut body = doc.clone();
    let Some(map) = body.as_object_mut() else {
        return body;
    };
    map.remove("status");
    if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in SERVER_METADATA {
            meta.remove(*key);
        }
        if cluster_scoped {
            meta.remove("namespace");
        }
    }
    if is_ca_injected(doc) {
        strip_injected_ca_bundles(&mut body);
    }
    body
}

fn strip_injected_ca_bundles(body: &mut Value) {
    if let Some(hooks) = body.get_mut("webhooks").and_then(Value::as_array_mut) {
        for hook in hooks {
            if let Some(config) = hook.get_mut("clientConfig").and_then(Value::as_object_mut) {
                config.remove("caBundle");
            }
        }
    }
    if let Some(config) = body.pointer_mut("/spec/conversion/webhook/clientConfig").and_then(Value::as_object_mut) {
        config.remove("caBundle");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_and_server_metadata_are_left_out() {
        let doc = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "n", "creationTimestamp": null, "resourceVersion": "7", "labels": {"x": "y"}},
            "data": {"k": "v"}, "status": {"phase": "x"}});
        let body = apply_body(&doc, false);
        assert_eq!(
            body,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "n", "labels": {"x": "y"}}, "data": {"k": "v"}})
        );
    }

    #[test]
    fn injected_ca_bundles_are_left_out_and_others_kept() {
        let hooks = json!([{"name": "w", "clientConfig": {"caBundle": "Cg==", "service": {"name": "s"}}}]);
        let injected = json!({"kind": "MutatingWebhookConfiguration", "metadata": {"name": "w",
            "annotations": {"cert-manager.io/inject-ca-from": "kubeflow/cert"}}, "webhooks": hooks.clone()});
        assert!(apply_body(&injected, true).pointer("/webhooks/0/clientConfig/caBundle").is_none());
        let own = json!({"kind": "MutatingWebhookConfiguration", "metadata": {"name": "w"}, "webhooks": hooks});
        assert!(apply_body(&own, true).pointer("/webhooks/0/clientConfig/caBundle").is_some());
        let crd = json!({"kind": "CustomResourceDefinition", "metadata": {"name": "c",
            "annotations": {"cert-manager.io/inject-ca-from": "kubeflow/cert"}},
            "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": "Cg==", "service": {}}}}}});
        assert_eq!(
            apply_body(&crd, true).pointer("/spec/conversion/webhook/clientConfig"),
            Some(&json!({"service": {}}))
        );
    }

    #[test]
    fn cluster_scoped_objects_lose_their_namespace() {
        let doc = json!({"kind": "ClusterTrainingRuntime", "metadata": {"name": "t", "namespace": "kubeflow-system"}});
        assert_eq!(apply_body(&doc, true).pointer("/metadata/namespace"), None);
    }
}
