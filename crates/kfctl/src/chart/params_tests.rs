//! The Helm side's marking rules, one named test each: which fields become points, with
//! which steps, and what the export refuses.

use super::*;
use serde_json::json;

fn scope_defaults() -> Value {
    json!({"katib": {"images": {"w": "ghcr.io/k/w:v1"}, "replicas": {"w": 1}, "resources": {"w": {"c": {}}}}})
}

fn marked(mut obj: Value, component: &str) -> (Value, Vec<Point>) {
    let defaults = scope_defaults();
    let points = mark_all(&mut obj, &Scope { component, defaults: &defaults }).unwrap();
    (obj, points)
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "kubeflow", "labels": {"app": "w"}},
           "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "ghcr.io/k/w:v1"}]}}}})
}

#[test]
fn table_names_and_order_equal_the_native_table() {
    let native: Vec<&str> = params::PARAMS.iter().map(|p| p.name).collect();
    let helm: Vec<&str> = points().map(|(n, _)| n).collect();
    assert_eq!(native, helm);
}

#[test]
fn images_are_marked_with_their_default_key() {
    let (copy, points) = marked(deployment(), "katib");
    assert_eq!(copy.pointer("/spec/template/spec/containers/0/image").unwrap(), &json!(token(0)));
    assert_eq!(
        points[0],
        Point { key: "image".into(), raw: Some(json!("ghcr.io/k/w:v1")), steps: vec![Step::Image { key: "w".into() }] }
    );
}

#[test]
fn absent_pod_spec_fields_become_marker_keys() {
    let (copy, points) = marked(deployment(), "katib");
    let spec = copy.pointer("/spec/template/spec").unwrap().as_object().unwrap();
    let inserted: Vec<&str> = spec.keys().filter_map(|k| token_index(k)).map(|i| points[i].key.as_str()).collect();
    assert_eq!(inserted, ["imagePullSecrets", "nodeSelector", "tolerations", "affinity"]);
    assert!(spec.keys().filter_map(|k| token_index(k)).all(|i| points[i].raw.is_none()));
}

#[test]
fn replicas_and_resources_only_where_the_defaults_know_the_workload() {
    let (_, points) = marked(deployment(), "katib");
    assert!(points.iter().any(|p| p.steps == [Step::Replicas { workload: "w".into() }] && p.raw == Some(json!(1))));
    assert!(points.iter().any(|p| p.key == "resources" && p.raw.is_none()));
    let (_, other) = marked(deployment(), "trainer");
    assert!(!other.iter().any(|p| p.key == "replicas" || p.key == "resources"));
}

#[test]
fn namespace_labels_chain_common_labels_then_pod_security() {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow", "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
    let (_, points) = marked(ns, "kubeflow-namespace");
    let labels = points.iter().find(|p| p.key == "labels").unwrap();
    assert_eq!(labels.steps, [Step::CommonMetadata { value: "commonLabels" }, Step::PssNamespace]);
}

#[test]
fn credentials_use_chart_relative_paths_and_refuse_foreign_ones() {
    assert_eq!(chart_value_path("dex.staticUser.email", "dex").as_deref(), Some("staticUser.email"));
    assert_eq!(chart_value_path("global.oidcClientSecret", "dex").as_deref(), Some("global.oidcClientSecret"));
    assert_eq!(chart_value_path("dex.staticUser.email", "dex-extra"), None);
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "dex-passwords", "namespace": "auth"}, "stringData": {"DEX_USER_PASSWORD": "x"}});
    let (_, points) = marked(secret.clone(), "dex");
    assert!(points.iter().any(|p| p.key == "DEX_USER_PASSWORD"
        && p.steps[0] == Step::DexDemoHash
        && matches!(&p.steps[1], Step::Credential { path, .. } if path == "staticUser.passwordHash")));
    let mut copy = secret;
    let err = mark_all(&mut copy, &Scope { component: "istio", defaults: &json!({}) }).unwrap_err();
    assert!(matches!(err, PointError::ForeignCredential { .. }), "{err}");
}

#[test]
fn a_parameter_inside_another_parameters_field_is_an_overlap() {
    let mut obj = json!({"kind": "X", "metadata": {"name": "x", "labels": {"image": "a/b:c"}}});
    let err = mark_all(&mut obj, &Scope { component: "katib", defaults: &json!({}) }).unwrap_err();
    assert_eq!(err, PointError::Overlap { key: "labels".into() });
}

#[test]
fn marker_text_in_upstream_data_is_refused() {
    let mut obj = json!({"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "KFCTLPOINT00001Z"}});
    assert_eq!(
        mark_all(&mut obj, &Scope { component: "katib", defaults: &json!({}) }).unwrap_err(),
        PointError::MarkerInData
    );
}

#[test]
fn steps_nest_as_helper_calls() {
    let inner = Step::CommonMetadata { value: "commonLabels" }.wrap("\"{}\"");
    assert_eq!(
        Step::PssNamespace.wrap(&format!("({inner})")),
        "include \"kfctl.pssNamespace\" (list $ (include \"kfctl.commonMetadata\" (list $ \"commonLabels\" \"{}\")))"
    );
}
