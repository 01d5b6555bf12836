//! Issue 40: `check` after an install, against the test API server (the in-repo test double of
//! a Kubernetes API server; no real cluster): a healthy install passes every item and nothing
//! is written; a deleted recorded object, a webhook without a caBundle, a Deployment that never
//! becomes ready, a Certificate not Ready, a Gateway whose ingress has no ready endpoint, a
//! re-created object and a Profile namespace without sidecar injection each fail (or warn)
//! their item, naming the object.

use crate::common::cluster::{Cluster, crd, obj};

use kfctl::catalog::RenderedObject;
use kfctl::cluster::api::{ApiClient, ResourcePath};
use kfctl::cluster::check::{CheckReport, Mark};
use kfctl::cluster::install;
use kfctl::cluster::postcheck::{ITEMS, check_installed, render_text};
use kfctl::cluster::progress::RecordingProgress;
use kfctl_testapi::{StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(20);

fn deployment(ns: &str, name: &str) -> Value {
    let spec = json!({"replicas": 1, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": name, "image": "x:1"}]}}});
    obj("apps/v1", "Deployment", Some(ns), name, json!({"spec": spec}))
}

fn service(ns: &str, name: &str, app: &str) -> Value {
    obj("v1", "Service", Some(ns), name, json!({"spec": {"selector": {"app": app}, "ports": [{"port": 443}]}}))
}

/// A small platform: a namespace, a CRD, a ConfigMap, a webhook served by a Deployment (its
/// caBundle given, or left out), Dex's Service and Deployment, and `extra` objects.
pub(crate) fn platform(ca_bundle: bool, extra: Vec<Value>) -> Vec<RenderedObject> {
    let mut client_config = json!({"service": {"namespace": "kf", "name": "hook", "path": "/validate"}});
    if ca_bundle {
        client_config["caBundle"] = json!("Y2E=");
    }
    let webhook = obj(
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        None,
        "kf-hook",
        json!({"webhooks": [{"name": "validate.kf.example.org", "clientConfig": client_config,
            "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "rules": [{"apiGroups": ["example.org"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["widgets"]}]}]}),
    );
    let mut docs = vec![
        obj("v1", "Namespace", None, "kf", json!({})),
        obj("v1", "Namespace", None, "auth", json!({})),
        crd("widgets", "Widget", &[("v1", true)]),
        obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"a": "1"}})),
        deployment("kf", "hook"),
        service("kf", "hook", "hook"),
        deployment("auth", "dex"),
        service("auth", "dex", "dex"),
        webhook,
    ];
    docs.extend(extra);
    docs.into_iter().map(|obj| RenderedObject::new("platform", obj)).collect()
}

pub(crate) async fn installed(cluster: &Cluster, objects: Vec<RenderedObject>, wait: bool) {
    let mut options = cluster.options_for("minimal", "v1");
    options.wait = wait;
    install(objects, options, &mut RecordingProgress::default()).await.unwrap();
}

/// `check` of the install `installed` made, the drift item's fields against `objects` (what
/// `kfctl-rs check` renders again from the record).
pub(crate) async fn check(cluster: &Cluster, objects: &[RenderedObject]) -> CheckReport {
    let meta = cluster.options_for("minimal", "v1").meta;
    check_installed(&cluster.target(), TIMEOUT, &Ok((objects.to_vec(), meta))).await.unwrap()
}

fn item<'a>(report: &'a CheckReport, id: &str) -> &'a kfctl::cluster::check::Checked {
    report.items.iter().find(|i| i.id == id).unwrap_or_else(|| panic!("{id} not run: {}", render_text(report)))
}

fn failed_ids(report: &CheckReport) -> Vec<&str> {
    report.items.iter().filter(|i| i.mark == Mark::Fail).map(|i| i.id).collect()
}

#[tokio::test]
async fn a_healthy_install_passes_every_item_and_nothing_is_written() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = platform(true, Vec::new());
    installed(&cluster, objects.clone(), true).await;
    cluster.server.clear_requests();
    let before = cluster.server.objects();
    let report = check(&cluster, &objects).await;
    assert!(!report.failed(), "{}", render_text(&report));
    assert!(report.items.iter().all(|i| i.mark == Mark::Pass), "{}", render_text(&report));
    let ids: Vec<&str> = report.items.iter().map(|i| i.id).collect();
    assert_eq!(ids, ITEMS.iter().map(|i| i.id).collect::<Vec<_>>(), "every item, in order");
    assert_eq!(report.release, "v1");
    assert!(item(&report, "present").detail.starts_with("9 objects"), "{}", item(&report, "present").detail);
    assert_eq!(item(&report, "crds").detail, "1 Established");
    assert_eq!(item(&report, "webhooks").detail, "1 webhooks, 1 services ready");
    assert_eq!(item(&report, "login").detail, "auth/dex ready");
    assert_eq!(item(&report, "drift").detail, "9 objects with their recorded UID and applied fields");
    assert!(render_text(&report).ends_with("the install passes every check\n"));
    // the drift item's dry runs are its only requests that are not reads, and persist nothing
    let writes: Vec<String> = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(writes.len(), 9, "one dry run per recorded object: {writes:?}");
    assert!(writes.iter().all(|w| w.starts_with("PATCH ") && w.contains("dryRun=All")), "check wrote: {writes:?}");
    let object_json = |objects: Vec<kfctl_testapi::StoredObject>| {
        objects.into_iter().map(|o| o.object.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(object_json(cluster.server.objects()), object_json(before), "nothing changed on the server");
    let again = check(&cluster, &objects).await;
    let json = |r: &CheckReport| serde_json::to_string_pretty(r).unwrap();
    assert_eq!(json(&report), json(&again), "-o json is stable");
    assert!(json(&report).contains("\"mark\": \"pass\""));
}

#[tokio::test]
async fn a_deleted_recorded_object_fails_present_naming_it() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = platform(true, Vec::new());
    installed(&cluster, objects.clone(), true).await;
    let api = ApiClient::connect(&cluster.target()).await.unwrap();
    let configmaps =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "configmaps".into(), namespaced: true };
    assert!(api.delete(&configmaps, Some("kf"), "settings").await.unwrap());
    let report = check(&cluster, &objects).await;
    assert_eq!(failed_ids(&report), ["present"], "{}", render_text(&report));
    let present = item(&report, "present");
    assert_eq!(present.detail, "1 of 9 missing: ConfigMap kf/settings");
    assert!(present.hint.as_deref().unwrap().contains("run install again"));
    // re-created by someone else: present again, but not the object the install made
    cluster.server.seed(obj("v1", "ConfigMap", Some("kf"), "settings", json!({}))).unwrap();
    let report = check(&cluster, &objects).await;
    assert!(failed_ids(&report).is_empty(), "{}", render_text(&report));
    let drift = item(&report, "drift");
    assert_eq!(drift.mark, Mark::Warn);
    assert!(drift.detail.contains("ConfigMap kf/settings") && drift.hint.as_deref().unwrap().contains("kfctl-rs diff"));
}

#[tokio::test]
async fn a_webhook_without_ca_bundle_fails_webhooks() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = platform(false, Vec::new());
    installed(&cluster, objects.clone(), true).await;
    let report = check(&cluster, &objects).await;
    assert_eq!(failed_ids(&report), ["webhooks"], "{}", render_text(&report));
    let webhooks = item(&report, "webhooks");
    assert_eq!(webhooks.detail, "1 problem(s): kf-hook/validate.kf.example.org (no caBundle)");
    assert!(webhooks.hint.as_deref().unwrap().contains("cainjector"));
    assert!(render_text(&report).contains("1 item(s) failed; see GUIDE.md#after-the-install\n"));
}

#[tokio::test]
async fn a_deployment_that_never_becomes_ready_fails_ready_and_its_services() {
    let never = StatusRule::never_ready(Rule::object("Deployment", Some("auth"), "dex").in_group("apps"));
    let cluster = Cluster::start(TestApiConfig::default().status_rule(never));
    let objects = platform(true, Vec::new());
    installed(&cluster, objects.clone(), false).await;
    let report = check(&cluster, &objects).await;
    assert_eq!(failed_ids(&report), ["ready", "login"], "{}", render_text(&report));
    assert!(
        item(&report, "ready").detail.contains("Deployment auth/dex (0/1 ready)"),
        "{}",
        item(&report, "ready").detail
    );
    assert_eq!(item(&report, "login").detail, "service auth/dex: no ready endpoint");
}

#[tokio::test]
async fn a_profile_namespace_without_sidecar_injection_fails_injection() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = platform(true, Vec::new());
    installed(&cluster, objects.clone(), true).await;
    let profile_ns = |name: &str, injected: bool| {
        let mut labels = json!({"app.kubernetes.io/part-of": "kubeflow-profile"});
        if injected {
            labels["istio-injection"] = json!("enabled");
        }
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
    };
    cluster.server.seed(profile_ns("alice", true)).unwrap();
    let report = check(&cluster, &objects).await;
    assert_eq!(item(&report, "injection").mark, Mark::Pass, "{}", render_text(&report));
    cluster.server.seed(profile_ns("bob", false)).unwrap();
    let report = check(&cluster, &objects).await;
    assert_eq!(failed_ids(&report), ["injection"], "{}", render_text(&report));
    assert_eq!(item(&report, "injection").detail, "1 of 2 Profile namespace(s) without istio-injection=enabled: bob");
}

#[tokio::test]
async fn without_a_record_the_record_item_fails_and_ends_the_list() {
    let cluster = Cluster::start(TestApiConfig::default());
    let report = check(&cluster, &[]).await;
    let ids: Vec<&str> = report.items.iter().map(|i| i.id).collect();
    assert_eq!(ids, ["api", "record"]);
    assert_eq!(failed_ids(&report), ["record"]);
    assert!(item(&report, "record").detail.contains("no install record"));
}

/// A CustomResourceDefinition of `<plural>.<group>` (kind `kind`, `v1`, namespaced).
fn crd_of(group: &str, plural: &str, kind: &str) -> Value {
    obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        &format!("{plural}.{group}"),
        json!({"spec": {"group": group, "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
    )
}

#[tokio::test]
async fn a_certificate_not_ready_and_a_gateway_without_ready_ingress_fail_their_items() {
    let never = StatusRule::never_ready(Rule::kind("Certificate").in_group("cert-manager.io"));
    let cluster = Cluster::start(TestApiConfig::default().status_rule(never));
    let extra = vec![
        obj("v1", "Namespace", None, "istio-system", json!({})),
        crd_of("cert-manager.io", "certificates", "Certificate"),
        crd_of("networking.istio.io", "gateways", "Gateway"),
        obj("cert-manager.io/v1", "Certificate", Some("kf"), "hook-cert", json!({"spec": {"secretName": "hook-tls"}})),
        obj(
            "networking.istio.io/v1",
            "Gateway",
            Some("kubeflow"),
            "kubeflow-gateway",
            json!({"spec": {"selector": {"istio": "ingressgateway"}}}),
        ),
        obj("v1", "Namespace", None, "kubeflow", json!({})),
        // the ingress gateway's Service, with no pods behind it
        service("istio-system", "istio-ingressgateway", "istio-ingressgateway"),
    ];
    let objects = platform(true, extra);
    installed(&cluster, objects.clone(), false).await;
    let report = check(&cluster, &objects).await;
    assert_eq!(failed_ids(&report), ["ready", "certificates", "gateway"], "{}", render_text(&report));
    assert_eq!(item(&report, "certificates").detail, "1 of 1 not Ready: hook-cert (not Ready)");
    assert_eq!(item(&report, "gateway").detail, "service istio-system/istio-ingressgateway: no ready endpoint");
    assert_eq!(item(&report, "crds").detail, "3 Established");
}
