//! The kubeconfig that points kubectl or kube at a test API server.

/// A kubeconfig for `server` (an `http://` URL) with a context and user named
/// `kfctl-test-apiserver`. The user carries a placeholder token: the test API server does not
/// authenticate, but clients expect some credential.
pub(crate) fn kubeconfig_yaml(server: &str) -> String {
    let name = "kfctl-test-apiserver";
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    server: {server}
contexts:
- name: {name}
  context:
    cluster: {name}
    user: {name}
    namespace: default
current-context: {name}
users:
- name: {name}
  user:
    token: test-api-server-does-not-authenticate
preferences: {{}}
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_names_server_and_current_context() {
        let yaml = kubeconfig_yaml("http://127.0.0.1:4321");
        assert!(yaml.contains("server: http://127.0.0.1:4321\n"));
        assert!(yaml.contains("current-context: kfctl-test-apiserver\n"));
        let parsed: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
        assert_eq!(parsed["clusters"][0]["cluster"]["server"], "http://127.0.0.1:4321");
    }
}
