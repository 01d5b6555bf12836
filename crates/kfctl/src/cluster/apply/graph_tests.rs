//! Unit tests of the dependency graph's construction (pure: a plan in, edges out).

use super::*;
use crate::catalog::RenderedObject;
use serde_json::{Value, json};

fn tagged(docs: Vec<Value>) -> Vec<RenderedObject> {
    crate::catalog::attribute::attribute_prerendered(&crate::catalog::Catalog::embedded().unwrap(), docs)
}

fn obj(api: &str, kind: &str, ns: Option<&str>, name: &str, extra: Value) -> Value {
    let mut doc = json!({"apiVersion": api, "kind": kind, "metadata": {"name": name}});
    if let Some(ns) = ns {
        doc["metadata"]["namespace"] = json!(ns);
    }
    if let (Some(map), Value::Object(extra)) = (doc.as_object_mut(), extra) {
        map.extend(extra);
    }
    doc
}

fn deployment(name: &str, pod_spec: Value) -> Value {
    obj(
        "apps/v1",
        "Deployment",
        Some("kf"),
        name,
        json!({"spec": {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}}}),
    )
}

fn platform() -> Vec<Value> {
    vec![
        obj("v1", "Namespace", None, "kf", json!({})),
        obj(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            "widgets.example.org",
            json!({"spec": {"group": "example.org", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"}}}),
        ),
        obj("v1", "ConfigMap", Some("kf"), "settings", json!({})),
        obj("v1", "ConfigMap", Some("kf"), "unrelated", json!({})),
        obj("v1", "ServiceAccount", Some("kf"), "hook", json!({})),
        deployment("hook", json!({"serviceAccountName": "hook", "volumes": [{"configMap": {"name": "settings"}}]})),
        deployment("other", json!({})),
        obj("v1", "Service", Some("kf"), "hook", json!({"spec": {"selector": {"app": "hook"}}})),
        obj(
            "admissionregistration.k8s.io/v1",
            "MutatingWebhookConfiguration",
            None,
            "widgets",
            json!({"webhooks": [{"name": "w.example.org",
                "clientConfig": {"service": {"namespace": "kf", "name": "hook"}},
                "rules": [{"apiGroups": ["example.org"], "apiVersions": ["*"], "resources": ["widgets"],
                    "operations": ["CREATE"]}]}]}),
        ),
        obj(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            None,
            "deployments",
            json!({"webhooks": [{"name": "d.example.org",
                "clientConfig": {"service": {"namespace": "kf", "name": "hook"}},
                "rules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"],
                    "operations": ["CREATE", "UPDATE"]}]}]}),
        ),
        obj("example.org/v1", "Widget", Some("kf"), "w", json!({})),
    ]
}

struct Built {
    plan: Plan,
    graph: Graph,
}

impl Built {
    fn new(docs: Vec<Value>) -> Built {
        let plan = Plan::build(&tagged(docs)).unwrap();
        let graph = Graph::build(&plan);
        Built { plan, graph }
    }

    fn node(&self, text: &str) -> usize {
        let objects: Vec<&PlannedObject> = self.plan.objects().collect();
        (0..self.graph.nodes.len())
            .find(|&n| self.graph.describe(&objects, n) == text)
            .unwrap_or_else(|| panic!("{text}"))
    }

    /// What a step needs, as text with why, sorted.
    fn needs(&self, text: &str) -> Vec<(String, Why)> {
        let objects: Vec<&PlannedObject> = self.plan.objects().collect();
        let mut out: Vec<(String, Why)> = self.graph.nodes[self.node(text)]
            .needs
            .iter()
            .map(|(n, why)| (self.graph.describe(&objects, *n), *why))
            .collect();
        out.sort();
        out
    }
}

fn s(text: &str, why: Why) -> (String, Why) {
    (text.to_string(), why)
}

#[test]
fn an_object_needs_its_namespace_and_a_custom_resource_its_crd_and_its_mutating_webhook() {
    let b = Built::new(platform());
    assert_eq!(b.needs("ConfigMap kf/unrelated"), [s("Namespace kf", Why::Namespace)]);
    assert_eq!(
        b.needs("Widget kf/w"),
        [
            s("CustomResourceDefinition widgets.example.org", Why::Crd),
            s("MutatingWebhookConfiguration widgets", Why::Webhook),
            s("Namespace kf", Why::Namespace)
        ]
    );
    assert!(b.needs("CustomResourceDefinition widgets.example.org").is_empty());
}

#[test]
fn a_workload_needs_what_its_pods_name_and_nothing_else_of_its_namespace() {
    let b = Built::new(platform());
    assert_eq!(
        b.needs("Deployment kf/hook"),
        [
            s("ConfigMap kf/settings", Why::Names),
            s("Namespace kf", Why::Namespace),
            s("ServiceAccount kf/hook", Why::Names)
        ]
    );
    assert_eq!(b.needs("Deployment kf/other"), [s("Namespace kf", Why::Namespace)]);
}

#[test]
fn a_webhook_needs_its_services_endpoint_which_needs_the_service_and_the_workloads_it_selects() {
    let b = Built::new(platform());
    let gate = "Service kf/hook has a ready endpoint";
    assert_eq!(b.needs("MutatingWebhookConfiguration widgets"), [s(gate, Why::Endpoint)]);
    assert_eq!(b.needs(gate), [s("Deployment kf/hook", Why::Backs), s("Service kf/hook", Why::Backs)]);
    // a validating webhook goes after what it admits (both Deployments), as the waves put it last
    assert_eq!(
        b.needs("ValidatingWebhookConfiguration deployments"),
        [s("Deployment kf/hook", Why::Validates), s("Deployment kf/other", Why::Validates), s(gate, Why::Endpoint)]
    );
}

#[test]
fn edges_between_objects_only_go_to_later_waves_so_the_plan_order_is_topological() {
    let b = Built::new(platform());
    for node in &b.graph.nodes {
        for (from, _) in node.needs.iter().filter(|(f, _)| matches!(b.graph.nodes[*f].step, Step::Object(_))) {
            assert!(b.graph.nodes[*from].wave < node.wave || !matches!(node.step, Step::Object(_)));
        }
    }
    assert_eq!(b.graph.topological().len(), b.graph.nodes.len(), "no cycle");
}

#[test]
fn the_critical_path_is_the_chain_with_the_largest_sum() {
    let b = Built::new(platform());
    let mut own = vec![Duration::from_millis(1); b.graph.nodes.len()];
    own[b.node("CustomResourceDefinition widgets.example.org")] = Duration::from_secs(2);
    own[b.node("Deployment kf/hook")] = Duration::from_secs(3);
    own[b.node("Deployment kf/other")] = Duration::from_secs(3);
    let (sum, chain) = b.graph.longest_chain(&own);
    let objects: Vec<&PlannedObject> = b.plan.objects().collect();
    let names: Vec<String> = chain.iter().map(|&n| b.graph.describe(&objects, n)).collect();
    assert_eq!(names.first().map(String::as_str), Some("Namespace kf"));
    let tail = [
        "Deployment kf/hook",
        "Service kf/hook has a ready endpoint",
        "MutatingWebhookConfiguration widgets",
        "Widget kf/w",
    ];
    assert!(names.ends_with(&tail.map(String::from)), "{names:?}");
    // namespace, a ServiceAccount or ConfigMap the Deployment names, the Deployment, the gate,
    // the webhook, the Widget
    assert_eq!(sum, Duration::from_millis(3005), "{names:?}");
}
