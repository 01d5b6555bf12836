//! Issue 40's verbs on the command line: `analyze -f -` of a render (KF001 for the default
//! credentials, exit 1; gone with `secrets generate`'s values), `check --pre` against the test
//! API server (the in-repo test double; no real cluster) with `-o json`, and `verify` there.

use crate::common;
use crate::common::cluster::Cluster;

use kfctl_testapi::TestApiConfig;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn analyze_stdin(stream: &[u8], extra: &[&str]) -> std::process::Output {
    let mut child = Command::new(common::binary())
        .args(["analyze", "-f", "-"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stream).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn template_piped_into_analyze_finds_the_default_credentials_until_secrets_generate() {
    let render = common::kfctl_offline(&["template", "--profile", "kind"]);
    assert!(render.status.success(), "{}", String::from_utf8_lossy(&render.stderr));
    let out = analyze_stdin(&render.stdout, &["-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "errors exit 1: {}", String::from_utf8_lossy(&out.stderr));
    let findings: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(findings.iter().any(|f| f["code"] == "KF001" && f["severity"] == "error"), "{findings:#?}");

    let file = common::scratch("cli-checks", "secrets").join("secrets.yaml");
    let password = file.with_file_name("password");
    let secrets = Command::new(common::binary())
        .args(["secrets", "generate", "--email", "me@example.org", "--out"])
        .arg(&file)
        .arg("--password-file")
        .arg(&password)
        .output()
        .unwrap();
    assert!(secrets.status.success(), "{}", String::from_utf8_lossy(&secrets.stderr));
    let fresh = common::kfctl_offline(&["template", "--profile", "kind", "-f", file.to_str().unwrap()]);
    assert!(fresh.status.success(), "{}", String::from_utf8_lossy(&fresh.stderr));
    let out = analyze_stdin(&fresh.stdout, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("KF001"), "{text}");
}

#[test]
fn analyze_of_a_file_that_is_no_yaml_is_a_usage_error() {
    let out = analyze_stdin(b"{{{ not yaml", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn analyze_of_a_stream_with_arch_finds_an_image_with_no_build_for_it() {
    let stream = b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: metadata-grpc, namespace: kubeflow}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: c, image: 'gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0'}\n";
    let out = analyze_stdin(stream, &["--arch", "amd64,arm64", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "a warning: {}", String::from_utf8_lossy(&out.stderr));
    let findings: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(
        (&findings[0]["code"], &findings[0]["object"]),
        (&"KF006".into(), &"Deployment kubeflow/metadata-grpc".into())
    );
    assert!(findings[0]["message"].as_str().unwrap().contains("has no build for arm64"), "{findings:#?}");
    let amd = analyze_stdin(stream, &["--arch", "amd64"]);
    assert!(String::from_utf8_lossy(&amd.stdout).starts_with("0 findings"), "{}", String::from_utf8_lossy(&amd.stdout));
    let without_file = Command::new(common::binary()).args(["analyze", "--arch", "arm64"]).output().unwrap();
    assert_eq!(without_file.status.code(), Some(2), "--arch needs -f");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn check_pre_on_a_cluster_outside_the_range_fails_its_item_in_json() {
    let cluster = Cluster::start(TestApiConfig::default().git_version("v1.30.0"));
    let kubeconfig = cluster.kubeconfig.to_str().unwrap().to_string();
    let out =
        common::kfctl_offline(&["check", "--pre", "--profile", "kind", "--kubeconfig", &kubeconfig, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let item = report["items"].as_array().unwrap().iter().find(|i| i["id"] == "kubernetes").unwrap().clone();
    assert_eq!(item["mark"], "fail", "{item}");
    assert!(item["hint"].as_str().unwrap().contains("range"), "{item}");
    let writes = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET" && !r.path.contains("accessreviews"))
        .count();
    assert_eq!(writes, 0, "check --pre wrote");
}

#[tokio::test]
async fn check_after_an_install_and_a_support_bundle_on_the_command_line() {
    use kfctl::catalog::RenderedObject;
    use kfctl::cluster::progress::RecordingProgress;
    let cluster = Cluster::start(TestApiConfig::default());
    let kubeconfig = cluster.kubeconfig.to_str().unwrap().to_string();
    // no install yet: the record item fails and ends the list
    let out =
        Command::new(common::binary()).args(["check", "--kubeconfig", &kubeconfig, "-o", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["items"].as_array().unwrap().last().unwrap()["mark"], "fail", "{report}");

    let objects = vec![RenderedObject::new(
        "platform",
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}}),
    )];
    kfctl::cluster::install(objects, cluster.options_for("minimal", "v1"), &mut RecordingProgress::default())
        .await
        .unwrap();
    let out = Command::new(common::binary()).args(["check", "--kubeconfig", &kubeconfig]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("✔"), "{text}");

    let archive = cluster.dir.path().join("bundle.tar.gz");
    let out = Command::new(common::binary())
        .args(["support-bundle", "--kubeconfig", &kubeconfig, "--out"])
        .arg(&archive)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(std::fs::metadata(&archive).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&format!("wrote {}", archive.display())));
}
