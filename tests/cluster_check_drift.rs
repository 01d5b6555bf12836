//! Issue 40: `check`'s drift item at field level, against the test API server (the in-repo test
//! double of a Kubernetes API server, with server-side apply's field ownership; no real
//! cluster), changed by real kubectl 1.33 as an operator would: `kubectl patch` of a
//! Deployment's replicas and an apply of a ConfigMap's data by another field manager with
//! `--force-conflicts` are reported as exactly those fields, with the applied and live values
//! and the manager that owns each now; `install --force-conflicts` puts them back; a fresh
//! install of kind's 26.03.1 reports no drift on any of its objects; and the command renders
//! what the record names (`--objects` given again for a pre-rendered install).

use crate::cluster_check_installed::{check, installed, platform};
use crate::common;
use crate::common::cluster::{Cluster, kind_render};

use kfctl::catalog::RenderedObject;
use kfctl::cluster::check::{CheckReport, Checked, Mark};
use kfctl::cluster::postcheck::{DriftedField, check_installed, render_text};
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::{InstallMeta, install};
use kfctl_testapi::{StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::process::{Command, Output};
use std::time::Duration;

/// Real kubectl against the test API server.
fn kubectl(cluster: &Cluster, args: &[&str]) {
    let out = Command::new(common::kubectl())
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .arg("--cache-dir")
        .arg(cluster.dir.path().join("cache"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "kubectl {args:?}: {}", text_of(&out));
}

/// Real kubectl applies `doc` server-side as `manager`, taking the fields it sets.
fn kubectl_applies_as(cluster: &Cluster, manager: &str, doc: &Value) {
    let file = cluster.dir.path().join(format!("{manager}.yaml"));
    std::fs::write(&file, kfctl_yaml::to_yaml(doc)).unwrap();
    let manager = format!("--field-manager={manager}");
    kubectl(cluster, &["apply", "--server-side", "--force-conflicts", &manager, "-f", file.to_str().unwrap()]);
}

fn text_of(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn drift_item(report: &CheckReport) -> &Checked {
    report.items.iter().find(|i| i.id == "drift").unwrap_or_else(|| panic!("no drift item: {}", render_text(report)))
}

/// Each drifted object as `Kind namespace/name` with its fields.
fn drifted(report: &CheckReport) -> Vec<(String, Vec<DriftedField>)> {
    let drift =
        drift_item(report).drift.as_ref().unwrap_or_else(|| panic!("fields not compared: {}", render_text(report)));
    drift.objects.iter().map(|o| (o.object.to_string(), o.fields.clone())).collect()
}

fn field(path: &str, applied: Value, live: Value, manager: &str) -> DriftedField {
    DriftedField { path: path.into(), applied: Some(applied), live: Some(live), managers: vec![manager.into()] }
}

#[tokio::test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
async fn kubectl_patch_and_another_managers_apply_drift_exactly_their_fields_naming_the_manager() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = platform(true, Vec::new());
    installed(&cluster, objects.clone(), true).await;
    kubectl(&cluster, &["patch", "deployment", "hook", "-n", "kf", "--type=merge", "-p", r#"{"spec":{"replicas":3}}"#]);
    let settings = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "kf"},
        "data": {"a": "2"}});
    kubectl_applies_as(&cluster, "platform-team", &settings);

    let report = check(&cluster, &objects).await;
    let item = drift_item(&report);
    assert_eq!(item.mark, Mark::Warn, "{}", render_text(&report));
    assert!(!report.failed(), "drift is a warning: {}", render_text(&report));
    let mut found = drifted(&report);
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [
            ("ConfigMap kf/settings".to_string(), vec![field("/data/a", json!("1"), json!("2"), "platform-team")]),
            ("Deployment kf/hook".to_string(), vec![field("/spec/replicas", json!(1), json!(3), "kubectl-patch")]),
        ],
        "{}",
        render_text(&report)
    );
    assert!(item.detail.starts_with("2 of 9 with fields changed since the install: "), "{}", item.detail);
    let text = render_text(&report);
    assert!(
        text.contains("    Deployment kf/hook: /spec/replicas applied 1, live 3 (now owned by kubectl-patch)\n"),
        "{text}"
    );
    assert!(
        text.contains("    ConfigMap kf/settings: /data/a applied \"1\", live \"2\" (now owned by platform-team)\n"),
        "{text}"
    );
    assert!(text.contains("`kfctl-rs upgrade --profile minimal --version "), "{text}");
    assert!(text.contains(" --force-conflicts` (with the install's -f and --set)"), "{text}");
    let json = |r: &CheckReport| serde_json::to_value(r).unwrap();
    let drift = json(&report)["items"].as_array().unwrap().iter().find(|i| i["id"] == "drift").unwrap().clone();
    assert_eq!(drift["drift"]["drifted"], 2);
    let deployment = drift["drift"]["objects"].as_array().unwrap().iter().find(|o| o["kind"] == "Deployment").cloned();
    assert_eq!(
        deployment,
        Some(json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "kf", "name": "hook",
            "fields": [{"path": "/spec/replicas", "applied": 1, "live": 3, "managers": ["kubectl-patch"]}]}))
    );
    assert_eq!(json(&report), json(&check(&cluster, &objects).await), "-o json is stable");

    // what the hint says puts the applied values back, and the drift is gone
    let mut options = cluster.options_for("minimal", "v1");
    options.force_conflicts = true;
    install(objects.clone(), options, &mut RecordingProgress::default()).await.unwrap();
    let report = check(&cluster, &objects).await;
    assert_eq!(drift_item(&report).mark, Mark::Pass, "{}", render_text(&report));
    assert_eq!(drift_item(&report).drift.as_ref().map(|d| d.drifted), Some(0));
}

#[tokio::test]
async fn without_a_render_of_what_was_installed_fields_are_not_compared_and_the_item_says_why() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = platform(true, Vec::new());
    installed(&cluster, objects.clone(), true).await;
    let report = check_installed(&cluster.target(), Duration::from_secs(20), &Err("no network".into())).await.unwrap();
    let item = drift_item(&report);
    assert_eq!(
        (item.mark, item.detail.as_str()),
        (Mark::Warn, "fields not compared: cannot render what was installed: no network")
    );
    assert!(item.hint.as_deref().unwrap().contains("--profile, --version, -f and --set"));
    let meta = InstallMeta { values_digest: "sha256:other".into(), ..cluster.options_for("minimal", "v1").meta };
    let report = check_installed(&cluster.target(), Duration::from_secs(20), &Ok((objects, meta))).await.unwrap();
    let item = drift_item(&report);
    assert!(
        item.detail.contains("values sha256:other") && item.detail.contains("values sha256:values"),
        "{}",
        item.detail
    );
    assert!(item.drift.is_none());
}

fn drift_json(out: &Output) -> Value {
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text_of(out)));
    report["items"].as_array().unwrap().iter().find(|i| i["id"] == "drift").cloned().unwrap()
}

#[test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
fn the_command_renders_what_the_record_names_and_reports_drift_as_json() {
    let cluster = Cluster::start(TestApiConfig::default());
    let docs: Vec<Value> = platform(true, Vec::new()).into_iter().map(|o| o.obj).collect();
    let file = cluster.dir.path().join("objects.yaml");
    std::fs::write(&file, kfctl_yaml::to_yaml_stream(&docs)).unwrap();
    let stream = file.to_str().unwrap();
    let out = common::cluster::kfctl(&cluster, &["install", "--profile", "minimal", "--objects", stream, "--yes"]);
    assert!(out.status.success(), "{}", text_of(&out));
    let fresh = drift_json(&common::cluster::kfctl(&cluster, &["check", "--objects", stream, "-o", "json"]));
    assert_eq!((fresh["mark"].as_str(), fresh["drift"]["drifted"].as_u64()), (Some("pass"), Some(0)), "{fresh}");
    kubectl(&cluster, &["patch", "configmap", "settings", "-n", "kf", "--type=merge", "-p", r#"{"data":{"a":"9"}}"#]);
    let drift = drift_json(&common::cluster::kfctl(&cluster, &["check", "--objects", stream, "-o", "json"]));
    assert_eq!(drift["mark"], "warn", "{drift}");
    assert_eq!(
        drift["drift"]["objects"],
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "kf", "name": "settings",
            "fields": [{"path": "/data/a", "applied": "1", "live": "9", "managers": ["kubectl-patch"]}]}])
    );
    // without the stream, the record says what it needs
    let unnamed = drift_json(&common::cluster::kfctl(&cluster, &["check", "-o", "json"]));
    assert!(
        unnamed["detail"].as_str().unwrap().contains("pre-rendered stream: give it again with --objects FILE"),
        "{unnamed}"
    );
}

/// The objects the test double's cert-manager stand-in makes ready.
fn cert_manager_config() -> TestApiConfig {
    let mut config = TestApiConfig::default();
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    config
}

async fn install_kind(cluster: &Cluster, objects: &[RenderedObject]) -> InstallMeta {
    let mut options = cluster.options_for("kind", "26.03.1");
    options.timeout = Duration::from_secs(300);
    options.preflight.allow_default_credentials = true;
    let meta = options.meta.clone();
    install(objects.to_vec(), options, &mut RecordingProgress::default()).await.unwrap();
    meta
}

#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
async fn kind_26_03_1_fresh_has_no_drift_and_a_scaled_deployment_and_edited_configmap_are_exactly_the_drift() {
    let cluster = Cluster::start(cert_manager_config());
    let objects = kind_render("26.03.1");
    let meta = install_kind(&cluster, &objects).await;
    let render = Ok((objects, meta));
    let recorded = cluster.record().unwrap().inventory.len();

    let fresh = check_installed(&cluster.target(), Duration::from_secs(120), &render).await.unwrap();
    let item = drift_item(&fresh);
    assert_eq!(item.mark, Mark::Pass, "a fresh install drifted: {}", render_text(&fresh));
    assert_eq!(
        item.drift.as_ref().map(|d| (d.compared, d.drifted)),
        Some((recorded, 0)),
        "every recorded object compared"
    );

    kubectl(
        &cluster,
        &[
            "patch",
            "deployment",
            "jupyter-web-app-deployment",
            "-n",
            "kubeflow",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#,
        ],
    );
    kubectl(
        &cluster,
        &[
            "patch",
            "configmap",
            "kubeflow-pipelines-public",
            "-n",
            "kubeflow",
            "--type=merge",
            "-p",
            r#"{"data":{"kubeflow_pipelines_version":"edited"}}"#,
        ],
    );
    let report = check_installed(&cluster.target(), Duration::from_secs(120), &render).await.unwrap();
    let mut found = drifted(&report);
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [
            (
                "ConfigMap kubeflow/kubeflow-pipelines-public".to_string(),
                vec![field("/data/kubeflow_pipelines_version", json!("v2.16.1"), json!("edited"), "kubectl-patch")]
            ),
            (
                "Deployment kubeflow/jupyter-web-app-deployment".to_string(),
                vec![field("/spec/replicas", json!(1), json!(3), "kubectl-patch")]
            ),
        ],
        "{}",
        render_text(&report)
    );
    assert_eq!(drift_item(&report).mark, Mark::Warn);
    assert_eq!(drift_item(&report).drift.as_ref().map(|d| d.drifted), Some(2));
}
