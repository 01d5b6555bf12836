//! `IAMPolicyGenerator` (a `generators:` config): kustomize's builtin that writes a GKE
//! Workload Identity ServiceAccount.
//!
//! The config names the cloud (only `gke` exists), the Kubernetes service account
//! (`kubernetesService: {name, namespace}`) and the Google service account
//! (`serviceAccount: {name, projectId}`). The result is one ServiceAccount annotated
//! `iam.gke.io/gcp-service-account: NAME@PROJECT.iam.gserviceaccount.com`. kustomize writes it
//! as YAML text and parses that, so the engine does the same: each value gets the type YAML
//! gives it (`name: 123` becomes a number), and text YAML cannot hold is refused.
//! The object is created as any generated object without a behavior (no hash suffix).

use crate::error::{KustomizeError, Result};
use crate::objects::push_objects;
use crate::resmap::ResMap;
use serde::Deserialize;
use serde_json::Value;

/// The config fields kustomize reads (besides apiVersion, kind and metadata).
pub(crate) const FIELDS: [&str; 3] = ["cloud", "kubernetesService", "serviceAccount"];

/// The Kubernetes side: the ServiceAccount's name and namespace.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct KubernetesService {
    name: String,
    namespace: String,
}

/// The Google side: the service account's name and project.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ServiceAccount {
    name: String,
    project_id: String,
}

/// An `IAMPolicyGenerator` config's fields.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Args {
    cloud: String,
    kubernetes_service: KubernetesService,
    service_account: ServiceAccount,
}

/// The objects the config `fields` generates (config fields only; unknown ones ignored).
pub(crate) fn generate(fields: &serde_json::Map<String, Value>, origin: &str) -> Result<Vec<Value>> {
    let known = fields.iter().filter(|(k, _)| FIELDS.contains(&k.as_str()));
    let known: serde_json::Map<String, Value> = known.map(|(k, v)| (k.clone(), v.clone())).collect();
    let args: Args = serde_json::from_value(Value::Object(known)).map_err(|e| {
        KustomizeError::transform(origin, format!("invalid IAMPolicyGenerator config: {e}; expected strings in `cloud`, `kubernetesService: {{name, namespace}}` and `serviceAccount: {{name, projectId}}`"))
    })?;
    if args.cloud != "gke" {
        return Err(KustomizeError::transform(
            origin,
            format!(
                "IAMPolicyGenerator: cloud provider {} not supported yet; the one cloud kustomize knows is `gke`",
                args.cloud
            ),
        ));
    }
    let text = service_account_yaml(&args);
    let docs = kfctl_yaml::parse_stream(&text, origin)?;
    Ok(docs)
}

/// kustomize's text for the GKE ServiceAccount, as it formats it.
fn service_account_yaml(args: &Args) -> String {
    let mut text = format!(
        "\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  annotations:\n    iam.gke.io/gcp-service-account: {}@{}.iam.gserviceaccount.com\n  name: {}\n",
        args.service_account.name, args.service_account.project_id, args.kubernetes_service.name
    );
    if !args.kubernetes_service.namespace.is_empty() {
        text.push_str(&format!("\n  namespace: {}", args.kubernetes_service.namespace));
    }
    text
}

/// Add what the config generates to `resources` (created, as generated objects without a
/// behavior are).
pub(crate) fn run(resources: &mut ResMap, fields: &serde_json::Map<String, Value>, origin: &str) -> Result<()> {
    let mut generated = Vec::new();
    for doc in generate(fields, origin)? {
        push_objects(doc, origin, &mut generated)?;
    }
    for resource in generated {
        super::generators::absorb(resources, resource, origin)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(value: Value) -> serde_json::Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn gke_writes_an_annotated_service_account() {
        let config = fields(json!({
            "cloud": "gke",
            "kubernetesService": {"name": "ksa", "namespace": "ns"},
            "serviceAccount": {"name": "gsa", "projectId": "proj"}
        }));
        let docs = generate(&config, "g.yaml").unwrap();
        assert_eq!(
            docs,
            [json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
                "annotations": {"iam.gke.io/gcp-service-account": "gsa@proj.iam.gserviceaccount.com"},
                "name": "ksa", "namespace": "ns"}})]
        );
    }

    #[test]
    fn without_a_namespace_none_is_written() {
        let config = fields(json!({"cloud": "gke", "kubernetesService": {"name": "ksa"},
            "serviceAccount": {"name": "gsa", "projectId": "proj"}}));
        let docs = generate(&config, "g.yaml").unwrap();
        assert!(docs[0].pointer("/metadata/namespace").is_none());
    }

    #[test]
    fn other_clouds_are_refused_as_kustomize_refuses_them() {
        let e = generate(&fields(json!({"cloud": "aws"})), "g.yaml").unwrap_err().to_string();
        assert!(e.contains("cloud provider aws not supported yet"), "{e}");
    }

    #[test]
    fn a_generated_account_that_exists_already_is_an_error() {
        let config = fields(json!({"cloud": "gke", "kubernetesService": {"name": "ksa"},
            "serviceAccount": {"name": "gsa", "projectId": "proj"}}));
        let mut resources = ResMap::new();
        run(&mut resources, &config, "g.yaml").unwrap();
        assert_eq!(resources.len(), 1);
        assert!(run(&mut resources, &config, "g.yaml").is_err());
    }
}
