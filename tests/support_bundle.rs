//! Issue 40: `support-bundle` against the test API server (the in-repo test double of a
//! Kubernetes API server; no real cluster): one `.tar.gz`, mode 0600, holding status, the
//! post-install check, the record, the recorded namespaces' events (the latest 500) and the
//! bounded logs of failing pods only; no Secret is ever read, and a Secret value a log echoes is
//! redacted, in the archive's bytes and in its gunzipped bytes.

use crate::common::cluster::{Cluster, obj};

use kfctl::catalog::RenderedObject;
use kfctl::cluster::bundle::{LOG_LIMIT_BYTES, LOG_TAIL_LINES, MAX_EVENTS, MAX_LOGGED_PODS, support_bundle};
use kfctl::cluster::install;
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::redact::Redactor;
use kfctl_testapi::{LOG_ANNOTATION, StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(20);
const CANARY: &str = "canary-9f3b7c1e-secret-value";
/// `CANARY` base64-encoded, as the Secret's `data` holds it.
const CANARY_BASE64: &str = "Y2FuYXJ5LTlmM2I3YzFlLXNlY3JldC12YWx1ZQ==";

fn platform() -> Vec<RenderedObject> {
    let spec = json!({"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "x:1"}]}}});
    [
        obj("v1", "Namespace", None, "kf", json!({})),
        obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"a": "1"}})),
        obj("apps/v1", "Deployment", Some("kf"), "web", json!({"spec": spec})),
    ]
    .into_iter()
    .map(|obj| RenderedObject::new("platform", obj))
    .collect()
}

fn secret() -> Value {
    obj("v1", "Secret", Some("kf"), "creds", json!({"data": {"password": CANARY_BASE64}}))
}

fn pod(name: &str, log_text: Option<&str>) -> Value {
    let mut pod = obj(
        "v1",
        "Pod",
        Some("kf"),
        name,
        json!({"spec": {"containers": [{"name": "main", "image": "x:1"}, {"name": "proxy", "image": "y:1"}]}}),
    );
    if let Some(text) = log_text {
        pod["metadata"]["annotations"] = json!({LOG_ANNOTATION: text});
    }
    pod
}

/// A platform installed, a Secret holding the canary in its namespace, a failing pod whose log
/// echoes `log_text`, a healthy pod, and `events` events in `kf`.
async fn cluster_with(log_text: &str, events: usize) -> Cluster {
    let failing = StatusRule::never_ready(Rule::object("Pod", Some("kf"), "web-broken"));
    let cluster = Cluster::start(TestApiConfig::default().status_rule(failing));
    install(platform(), cluster.options_for("minimal", "v1"), &mut RecordingProgress::default()).await.unwrap();
    cluster.server.seed(secret()).unwrap();
    cluster.server.seed(pod("web-broken", Some(log_text))).unwrap();
    cluster.server.seed(pod("web-fine", None)).unwrap();
    for i in 0..events {
        let at = format!("2026-01-01T{:02}:{:02}:00Z", i / 60, i % 60);
        let event = obj(
            "v1",
            "Event",
            Some("kf"),
            &format!("web.{i:04}"),
            json!({"involvedObject": {"kind": "Pod", "namespace": "kf", "name": "web-broken"},
                "reason": "BackOff", "message": format!("event {i:04}"), "type": "Warning", "lastTimestamp": at}),
        );
        cluster.server.seed(event).unwrap();
    }
    cluster
}

fn unpack(bytes: &[u8]) -> (Vec<u8>, BTreeMap<String, String>) {
    let mut tarball = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut tarball).unwrap();
    let mut files = BTreeMap::new();
    let mut archive = tar::Archive::new(tarball.as_slice());
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().display().to_string();
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        files.insert(name, text);
    }
    (tarball, files)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn the_bundle_holds_status_check_record_events_and_failing_pods_bounded_logs() {
    let cluster = cluster_with("serving", 3).await;
    let out = cluster.dir.path().join("bundle.tar.gz");
    let report = support_bundle(&cluster.target(), &out, TIMEOUT, &Redactor::default()).await.unwrap();
    assert_eq!(report.path, out);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(report.bytes, bytes.len());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let (_, files) = unpack(&bytes);
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "check.json",
            "check.txt",
            "events/kf.json",
            "logs/kf/web-broken/main.log",
            "logs/kf/web-broken/proxy.log",
            "record.json",
            "status.json",
            "status.txt"
        ],
        "only the failing pod's logs; no problems.txt"
    );
    let listed: Vec<(&str, usize)> = report.files.iter().map(|f| (f.name.as_str(), f.bytes)).collect();
    let archived: Vec<(&str, usize)> = files.iter().map(|(n, t)| (n.as_str(), t.len())).collect();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(sorted, archived, "the report lists every file with its size");
    assert!(files["status.txt"].contains("profile: minimal"), "{}", files["status.txt"]);
    let check: Value = serde_json::from_str(&files["check.json"]).unwrap();
    assert_eq!(check["items"][0]["id"], "api");
    assert!(files["check.txt"].starts_with("checking the install of Kubeflow v1 on "));
    let record: Value = serde_json::from_str(&files["record.json"]).unwrap();
    assert_eq!(record["profile"], "minimal");
    assert_eq!(record["inventory"].as_array().unwrap().len(), 3, "references only");
    let events: Value = serde_json::from_str(&files["events/kf.json"]).unwrap();
    assert_eq!(events.as_array().unwrap().len(), 3);
    let log = &files["logs/kf/web-broken/main.log"];
    assert_eq!(log.lines().count(), LOG_TAIL_LINES, "the last lines only");
    assert!(log.len() <= LOG_LIMIT_BYTES);
    assert!(log.ends_with("web-broken/main line 1000: serving\n"), "{log}");
    let asked = cluster.server.requests().into_iter().find(|r| r.path.contains("/pods/web-broken/log")).unwrap();
    assert!(asked.path.contains("tailLines=200") && asked.path.contains("limitBytes=262144"), "{}", asked.path);
}

#[tokio::test]
async fn no_secret_value_is_in_the_archive_and_no_secret_is_read() {
    // the failing pod's log echoes the Secret's value, as a careless app logs its config
    let cluster = cluster_with(&format!("connecting with password {CANARY}"), 0).await;
    let out = cluster.dir.path().join("bundle.tar.gz");
    // the redactor the CLI learns from the render, which holds the same Secret
    let redactor = Redactor::from_docs([&secret()]);
    support_bundle(&cluster.target(), &out, TIMEOUT, &redactor).await.unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let (tarball, files) = unpack(&bytes);
    for form in [CANARY, CANARY_BASE64] {
        assert!(!contains(&bytes, form), "{form} in the archive");
        assert!(!contains(&tarball, form), "{form} in the gunzipped archive");
    }
    assert!(files["logs/kf/web-broken/main.log"].contains("connecting with password <redacted>"));
    let secret_reads: Vec<String> =
        cluster.server.requests().into_iter().filter(|r| r.path.contains("/secrets")).map(|r| r.path).collect();
    assert!(secret_reads.is_empty(), "the bundle read Secrets: {secret_reads:?}");
}

#[tokio::test]
async fn events_are_bounded_to_the_latest() {
    let cluster = cluster_with("serving", MAX_EVENTS + 5).await;
    let out = cluster.dir.path().join("bundle.tar.gz");
    support_bundle(&cluster.target(), &out, TIMEOUT, &Redactor::default()).await.unwrap();
    let (_, files) = unpack(&std::fs::read(&out).unwrap());
    let events: Vec<Value> = serde_json::from_str(&files["events/kf.json"]).unwrap();
    assert_eq!(events.len(), MAX_EVENTS);
    assert_eq!(events[0]["message"], "event 0005", "the oldest five left out");
    assert_eq!(events[MAX_EVENTS - 1]["message"], format!("event {:04}", MAX_EVENTS + 4));
}

#[tokio::test]
async fn without_a_record_nothing_is_written() {
    let cluster = Cluster::start(TestApiConfig::default());
    let out = cluster.dir.path().join("bundle.tar.gz");
    let err = support_bundle(&cluster.target(), &out, TIMEOUT, &Redactor::default()).await.unwrap_err();
    assert!(err.to_string().contains("no install record"), "{err}");
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(cluster.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".kfctl-tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

/// The test double's pod log, as kube's own client reads it: the last `tailLines`, cut at
/// `limitBytes`, of the container asked for; a missing pod is a 404.
#[tokio::test]
async fn the_test_doubles_pod_log_honours_kubes_log_params() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, LogParams};
    let cluster = Cluster::start(TestApiConfig::default());
    cluster.server.seed(obj("v1", "Namespace", None, "kf", json!({}))).unwrap();
    cluster.server.seed(pod("p", Some("hello"))).unwrap();
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&cluster.server.kubeconfig_yaml()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(kube::Client::try_from(config).unwrap(), "kf");
    let params = LogParams { container: Some("proxy".into()), tail_lines: Some(2), ..Default::default() };
    assert_eq!(pods.logs("p", &params).await.unwrap(), "p/proxy line 999: hello\np/proxy line 1000: hello\n");
    let params = LogParams { tail_lines: Some(1), limit_bytes: Some(6), ..Default::default() };
    assert_eq!(pods.logs("p", &params).await.unwrap(), "p/main");
    assert!(pods.logs("missing", &LogParams::default()).await.is_err());
}

#[tokio::test]
async fn logs_are_read_for_at_most_fifty_failing_pods_and_the_rest_is_said() {
    let cluster = Cluster::start(TestApiConfig::default().status_rule(StatusRule::never_ready(Rule::kind("Pod"))));
    install(platform(), cluster.options_for("minimal", "v1"), &mut RecordingProgress::default()).await.unwrap();
    for i in 0..MAX_LOGGED_PODS + 2 {
        cluster.server.seed(pod(&format!("p{i:02}"), None)).unwrap();
    }
    let out = cluster.dir.path().join("bundle.tar.gz");
    let report = support_bundle(&cluster.target(), &out, TIMEOUT, &Redactor::default()).await.unwrap();
    let (_, files) = unpack(&std::fs::read(&out).unwrap());
    let pods: std::collections::BTreeSet<&str> =
        files.keys().filter_map(|n| n.strip_prefix("logs/kf/")).filter_map(|n| n.split('/').next()).collect();
    assert_eq!(pods.len(), MAX_LOGGED_PODS);
    assert_eq!(report.problems, ["2 more failing pod(s) past the first 50: their logs left out"]);
    assert_eq!(files["problems.txt"], "2 more failing pod(s) past the first 50: their logs left out\n");
}
