//! kubectl's and Helm's flags on the cluster verbs, against the test API server (a test double):
//! `--wait=false` (install waits only for what the next wave needs; uninstall returns once the
//! deletes are accepted) and `-n/--namespace` (status and diff limited to one namespace, an
//! unused namespace refused naming the ones in use).

use crate::common::cluster::{Cluster, obj};
use kfctl::catalog::RenderedObject;
use kfctl::cluster::install::install;
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl_testapi::{ObjectKey, StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn widget_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {"group": "example.org", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

fn deployment(ns: &str, name: &str) -> Value {
    let spec = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
    obj("apps/v1", "Deployment", Some(ns), name, spec)
}

/// Two namespaces, a CRD and its custom resource, a Deployment that never becomes ready.
fn docs() -> Vec<Value> {
    vec![
        obj("v1", "Namespace", None, "kf", json!({})),
        obj("v1", "Namespace", None, "other", json!({})),
        widget_crd(),
        obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"k": "v"}})),
        obj("v1", "ConfigMap", Some("other"), "elsewhere", json!({"data": {"k": "v"}})),
        deployment("kf", "web"),
        obj("example.org/v1", "Widget", Some("kf"), "w1", json!({})),
    ]
}

fn objects() -> Vec<RenderedObject> {
    docs().into_iter().map(|obj| RenderedObject::new("platform", obj)).collect()
}

/// CRDs established late, discovery lagging, and `kf/web` never ready.
fn slow_cluster() -> Cluster {
    Cluster::start(
        TestApiConfig::default()
            .crd_established_after(Duration::from_millis(400))
            .discovery_lag(Duration::from_millis(400))
            .status_rule(StatusRule::never_ready(Rule::object("Deployment", Some("kf"), "web"))),
    )
}

fn kfctl(args: &[&str], cluster: &Cluster) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kfctl-rs"))
        .args(args)
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn objects_file(dir: &Path) -> String {
    let path = dir.join("objects.yaml");
    let docs: Vec<String> = docs().iter().map(|d| serde_json::to_string(d).unwrap()).collect();
    std::fs::write(&path, docs.join("\n---\n")).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn install_without_wait_still_waits_for_crds_but_not_for_workloads() {
    let cluster = slow_cluster();
    let mut options = cluster.options_for("kind", "v1.11.0");
    options.timeout = Duration::from_secs(30);
    options.wait = false;
    let mut progress = RecordingProgress::default();
    let report = install(objects(), options, &mut progress).await.unwrap();
    assert!(!report.waited);
    assert_eq!(report.waves_done, report.waves_total);
    assert!(cluster.record().unwrap().is_complete());
    assert!(cluster.has("example.org", "widgets", Some("kf"), "w1"));
    let early = cluster.refused_custom_resource_requests("widgets");
    assert!(early.is_empty(), "custom resources were sent before their CRD was served: {early:?}");
    assert!(progress.lines.iter().any(|l| l.contains("not Established") || l.contains("not yet served")));
    assert!(!progress.lines.iter().any(|l| l.contains("Deployment kf/web")), "{:#?}", progress.lines);
}

#[tokio::test]
async fn install_that_waits_times_out_on_the_same_workload() {
    let cluster = slow_cluster();
    let mut options = cluster.options_for("kind", "v1.11.0");
    options.timeout = Duration::from_secs(3);
    let err = install(objects(), options, &mut RecordingProgress::default()).await.unwrap_err();
    assert!(err.to_string().contains("Deployment kf/web (0/1 ready)"), "{err}");
}

#[test]
fn the_cli_installs_without_waiting_then_status_and_diff_take_a_namespace() {
    let cluster = slow_cluster();
    let dir = tempfile::tempdir().unwrap();
    let file = objects_file(dir.path());
    let install = ["install", "--profile", "kind", "--yes", "--timeout", "30s", "--wait=false", "--objects", &file];
    let out = kfctl(&install, &cluster);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("not waited for workloads to become ready (--wait=false)"), "{}", text(&out));

    let out = kfctl(&["status", "-n", "kf"], &cluster);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("namespace: kf (only the objects in it)"), "{shown}");
    assert!(shown.contains("pending: Deployment kf/web (0/1 ready)"), "{shown}");
    assert!(shown.contains(" 2/3 ready\n"), "kf holds settings, web and w1 (--objects: component unknown): {shown}");

    let out = kfctl(&["status", "--namespace", "other", "-o", "json"], &cluster);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(report["namespace"], "other");
    assert_eq!(report["components"][0]["objects"], 1, "{report}");
    assert!(report["components"][0]["pending"].as_array().unwrap().is_empty());

    let out = kfctl(&["status", "-n", "nosuch"], &cluster);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(
            "namespace \"nosuch\": the install record's objects hold no object in it; their namespaces: kf, other"
        ),
        "{}",
        text(&out)
    );

    let out = kfctl(&["diff", "-n", "other", "--profile", "kind", "--objects", &file, "-o", "json"], &cluster);
    let entries: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let names: Vec<&str> = entries.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["elsewhere"]);
    assert_eq!(out.status.code(), Some(0), "nothing changed: {}", text(&out));

    let out = kfctl(&["diff", "-n", "nosuch", "--profile", "kind", "--objects", &file], &cluster);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("the rendered objects hold no object in it; their namespaces: kf, other"));
}

#[tokio::test]
async fn uninstall_without_wait_leaves_deleted_namespaces_terminating() {
    let cluster = Cluster::start(TestApiConfig::default().namespace_finalize_after(Duration::from_secs(30)));
    let objects: Vec<RenderedObject> =
        objects().into_iter().filter(|o| o.obj["kind"] != "Deployment" && o.obj["kind"] != "Widget").collect();
    install(objects, cluster.options_for("kind", "v1.11.0"), &mut RecordingProgress::default()).await.unwrap();
    let options = UninstallOptions { wait: false, timeout: Duration::from_secs(10), ..UninstallOptions::default() };
    let report = uninstall(&cluster.target(), &options, &mut RecordingProgress::default()).await.unwrap();
    assert!(report.deleted.iter().any(|o| o.kind == "Namespace" && o.name == "kf"), "{:?}", report.deleted);
    let kf = cluster.server.object(&ObjectKey::new("", "namespaces", None, "kf")).expect("kf is still there");
    assert!(kf["metadata"].get("deletionTimestamp").is_some(), "{kf}");
    assert!(cluster.record().is_none(), "the record is deleted all the same");
}
