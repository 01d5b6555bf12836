//! The Kind cluster configuration the `kind` profile expects.
//!
//! As upstream's Kind instructions: one control-plane node on a node image pinned by digest,
//! and the API-server flags Kubeflow's service-account token flow needs
//! (`service-account-issuer: https://kubernetes.default.svc`,
//! `service-account-signing-key-file: /etc/kubernetes/pki/sa.key`). The output is plain YAML
//! for `kind create cluster --config`.

/// The pinned Kind node image: Kubernetes v1.36.1 as kind v0.32.0 publishes it (the digest of
/// kind v0.32.0's release notes), the pair upstream 26.03.1, the default release, tests with
/// (its release notes: Kubernetes 1.35+); also within 26.03's and v1.11.0's ranges (1.34 and
/// 1.33 and newer), so one Kind cluster serves an upgrade from either.
pub const KIND_NODE_IMAGE: &str =
    "kindest/node:v1.36.1@sha256:3489c7674813ba5d8b1a9977baea8a6e553784dab7b84759d1014dbd78f7ebd5";
pub(crate) const SERVICE_ACCOUNT_ISSUER: &str = "https://kubernetes.default.svc";
pub(crate) const SERVICE_ACCOUNT_SIGNING_KEY_FILE: &str = "/etc/kubernetes/pki/sa.key";

/// The configuration text, for a node image (default [`KIND_NODE_IMAGE`]).
pub fn kind_config(node_image: &str) -> String {
    format!(
        "kind: Cluster\n\
         apiVersion: kind.x-k8s.io/v1alpha4\n\
         nodes:\n\
         - role: control-plane\n\
         \x20 image: {node_image}\n\
         \x20 kubeadmConfigPatches:\n\
         \x20 - |\n\
         \x20   kind: ClusterConfiguration\n\
         \x20   apiServer:\n\
         \x20     extraArgs:\n\
         \x20       \"service-account-issuer\": \"{SERVICE_ACCOUNT_ISSUER}\"\n\
         \x20       \"service-account-signing-key-file\": \"{SERVICE_ACCOUNT_SIGNING_KEY_FILE}\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn kind_config_parses_and_carries_the_token_flow_flags() {
        let text = kind_config(KIND_NODE_IMAGE);
        let doc: Value = kfctl_yaml::parse_stream(&text, "kind-config").unwrap().remove(0);
        assert_eq!(doc["kind"], "Cluster");
        assert_eq!(doc["nodes"][0]["image"], KIND_NODE_IMAGE);
        let patch: Value =
            kfctl_yaml::parse_stream(doc["nodes"][0]["kubeadmConfigPatches"][0].as_str().unwrap(), "patch")
                .unwrap()
                .remove(0);
        let args = &patch["apiServer"]["extraArgs"];
        assert_eq!(args["service-account-issuer"], SERVICE_ACCOUNT_ISSUER);
        assert_eq!(args["service-account-signing-key-file"], SERVICE_ACCOUNT_SIGNING_KEY_FILE);
        assert!(KIND_NODE_IMAGE.contains("@sha256:"));
    }
}
