use super::*;
use serde_json::json;

fn objects(docs: &[Value]) -> Vec<Value> {
    docs.to_vec()
}

fn codes(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.code).collect()
}

#[test]
fn every_code_used_is_in_the_table_in_order() {
    let mut sorted: Vec<&str> = RULES.iter().map(|r| r.code).collect();
    sorted.sort();
    assert_eq!(sorted, RULES.iter().map(|r| r.code).collect::<Vec<_>>());
}

#[test]
fn upstream_object_store_keys_are_kf001_and_fresh_ones_are_not() {
    let store = |key: &str| {
        json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "mlpipeline-minio-artifact", "namespace": "kubeflow"},
        "stringData": {"accesskey": key, "secretkey": "minio123"}})
    };
    let found = analyze(&objects(&[store("minio")]), &ClusterFacts::default());
    assert_eq!(codes(&found), ["KF001", "KF001"]);
    assert!(has_errors(&found));
    let fresh = analyze(&objects(&[store("k3y")]), &ClusterFacts::default());
    assert_eq!(codes(&fresh), ["KF001"], "the secret key is still upstream's");
}

#[test]
fn a_plain_http_gateway_is_kf002_and_one_with_tls_is_not() {
    let gateway = |servers: Value| {
        json!({"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
        "metadata": {"name": "kubeflow-gateway", "namespace": "kubeflow"}, "spec": {"servers": servers}})
    };
    let http = json!([{"port": {"number": 80, "protocol": "HTTP"}, "hosts": ["*"]}]);
    assert_eq!(codes(&analyze(&[gateway(http.clone())], &ClusterFacts::default())), ["KF002"]);
    let mut both = http.as_array().unwrap().clone();
    both.push(json!({"port": {"number": 443, "protocol": "HTTPS"}, "tls": {"mode": "SIMPLE"}, "hosts": ["*"]}));
    assert!(analyze(&[gateway(Value::Array(both))], &ClusterFacts::default()).is_empty());
}

#[test]
fn a_budget_that_allows_no_eviction_is_kf003() {
    let pdb = |spec: Value| {
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "kf"}, "spec": spec})
    };
    let web = |replicas: u64| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "kf"},
        "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": "web"}}}}})
    };
    let min = json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}});
    let found = analyze(&[pdb(min.clone()), web(1)], &ClusterFacts::default());
    assert_eq!(codes(&found), ["KF003"]);
    assert!(found[0].message.contains("minAvailable 1 with 1 replica(s) of Deployment kf/web"), "{found:?}");
    assert!(analyze(&[pdb(min), web(2)], &ClusterFacts::default()).is_empty());
    assert_eq!(codes(&analyze(&[pdb(json!({"maxUnavailable": 0}))], &ClusterFacts::default())), ["KF003"]);
}

#[test]
fn a_namespaced_object_without_a_namespace_is_kf004() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}});
    let found = analyze(&[cm, role], &ClusterFacts::default());
    assert_eq!(codes(&found), ["KF004"]);
    assert_eq!(found[0].object, "ConfigMap c");
}

#[test]
fn kubernetes_outside_the_range_is_kf005() {
    let facts = |v: (u64, u64)| ClusterFacts {
        kubernetes: Some(v),
        supported: Some(Supported { oldest: (1, 35), newest: None }),
        release: "26.03.1".into(),
        architectures: Vec::new(),
    };
    let found = analyze(&[], &facts((1, 33)));
    assert_eq!(codes(&found), ["KF005"]);
    assert!(found[0].message.contains("Kubernetes 1.33 is outside release 26.03.1's range (1.35 and newer)"));
    assert!(analyze(&[], &facts((1, 36))).is_empty());
}

#[test]
fn the_text_names_code_severity_object_and_fix_and_counts() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let text = render_text(&analyze(&[cm], &ClusterFacts::default()));
    assert!(text.starts_with("KF004 [warning] ConfigMap c: names no namespace"), "{text}");
    assert!(text.ends_with("1 findings (0 errors, 1 warnings)\n"), "{text}");
}

#[test]
fn an_image_with_no_build_for_a_node_architecture_is_kf006_on_its_object() {
    let facts = |archs: &[&str]| ClusterFacts {
        architectures: archs.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    };
    let deployment = |name: &str, image: &str| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "kubeflow"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
    };
    let mlmd = deployment("metadata-grpc-deployment", "gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0");
    let katib = deployment("katib-controller", "ghcr.io/kubeflow/katib/katib-controller:v0.19.0");
    let known = [mlmd.clone(), katib.clone()];
    assert!(analyze(&known, &facts(&["amd64"])).is_empty(), "every image known and built for amd64");
    assert!(analyze(&known, &ClusterFacts::default()).is_empty(), "no architecture given: not judged");
    let found = analyze(&known, &facts(&["amd64", "arm64", "arm64"]));
    assert_eq!(codes(&found), ["KF006"]);
    assert_eq!(found[0].object, "Deployment kubeflow/metadata-grpc-deployment");
    assert!(found[0].message.contains("ml_metadata_store_server:1.14.0 has no build for arm64 (published for linux/amd64; source: https://github.com/kubeflow/pipelines/issues/13957)"), "{}", found[0].message);
    let unknown = analyze(&[katib, deployment("web", "web:1")], &facts(&["arm64"]));
    assert_eq!(codes(&unknown), ["KF006"]);
    assert_eq!(unknown[0].object, "the cluster");
    assert!(unknown[0].message.contains("nodes run arm64; the catalog's platform data does not know 1 of 2 image(s)"));
}
