//! Webhook simulation: rule matching, selectors, and the two failure modes.

use std::time::Instant;

use serde_json::json;

use super::*;
use crate::config::TestApiConfig;
use crate::discovery::Catalog;

fn state() -> State {
    State::new(TestApiConfig::default().simulate_webhooks(true))
}

fn put(state: &mut State, key: ObjectKey, object: Value) {
    state.controller_write(&key, object, "test", None, Instant::now());
}

fn hook(ca_bundle: &str, failure_policy: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "cm-hook"},
        "webhooks": [{"name": "validate.example.com", "failurePolicy": failure_policy,
            "clientConfig": {"service": {"name": "hook", "namespace": "default", "path": "/validate"}, "caBundle": ca_bundle},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "operations": ["CREATE", "UPDATE"]}],
            "namespaceSelector": {"matchExpressions": [{"key": "skip-webhook", "operator": "DoesNotExist"}]}}]})
}

fn configmaps() -> ResourceType {
    Catalog::builtin().find("", "v1", "configmaps").unwrap().clone()
}

fn create_in(namespace: &str) -> Admission<'_> {
    Admission { operation: "CREATE", subresource: None, namespace: Some(namespace), object: None }
}

fn hook_key() -> ObjectKey {
    ObjectKey::new(GROUP, "validatingwebhookconfigurations", None, "cm-hook")
}

#[test]
fn unreachable_service_refuses_the_write_like_upstream() {
    let mut s = state();
    put(&mut s, hook_key(), hook("Q0E=", "Fail"));
    let error = admit(&s, &configmaps(), &create_in("default")).unwrap_err();
    assert_eq!(error.code, 500);
    assert_eq!(
        error.message,
        "Internal error occurred: failed calling webhook \"validate.example.com\": failed to call webhook: Post \"https://hook.default.svc:443/validate?timeout=10s\": dial tcp 10.96.0.10:443: connect: connection refused"
    );
}

#[test]
fn ready_endpoints_without_ca_bundle_fail_with_x509_then_pass_once_injected() {
    let mut s = state();
    put(&mut s, hook_key(), hook("", "Fail"));
    let endpoints =
        json!({"apiVersion": "v1", "kind": "Endpoints", "subsets": [{"addresses": [{"ip": "10.244.0.10"}]}]});
    put(&mut s, ObjectKey::new("", "endpoints", Some("default"), "hook"), endpoints);
    let error = admit(&s, &configmaps(), &create_in("default")).unwrap_err();
    assert!(error.message.ends_with("x509: certificate signed by unknown authority"), "{}", error.message);
    put(&mut s, hook_key(), hook("Q0E=", "Fail"));
    assert!(admit(&s, &configmaps(), &create_in("default")).is_ok());
}

#[test]
fn ignore_policy_other_operations_and_excluded_namespaces_are_not_called() {
    let mut s = state();
    put(&mut s, hook_key(), hook("", "Ignore"));
    assert!(admit(&s, &configmaps(), &create_in("default")).is_ok());
    put(&mut s, hook_key(), hook("", "Fail"));
    let delete = Admission { operation: "DELETE", ..create_in("default") };
    assert!(admit(&s, &configmaps(), &delete).is_ok());
    let labels = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {"skip-webhook": "yes"}}});
    put(&mut s, ObjectKey::new("", "namespaces", None, "quiet"), labels);
    assert!(admit(&s, &configmaps(), &create_in("quiet")).is_ok());
    let status = Admission { subresource: Some("status"), ..create_in("default") };
    assert!(admit(&s, &configmaps(), &status).is_ok(), "rules without resource/subresource skip subresource writes");
}

#[test]
fn simulation_is_off_by_default() {
    let mut s = State::new(TestApiConfig::default());
    put(&mut s, hook_key(), hook("", "Fail"));
    assert!(admit(&s, &configmaps(), &create_in("default")).is_ok());
}

#[test]
fn label_selector_expressions() {
    let labels = json!({"app": "web", "tier": "front"});
    assert!(selector_matches(&json!({}), &labels));
    assert!(selector_matches(&json!({"matchLabels": {"app": "web"}}), &labels));
    assert!(!selector_matches(
        &json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]}),
        &labels
    ));
    assert!(selector_matches(
        &json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["back", "front"]}]}),
        &labels
    ));
    assert!(selector_matches(&json!({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}), &labels));
}
