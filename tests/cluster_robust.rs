//! Robust against real API servers (issue 11), against the test API server: every call under
//! the retry table (20 % 429, 20 % 500, a dropped connection every 4th request), bounded waits
//! (a black hole that accepts and never answers), `diff` as `kubectl diff` (drift by another
//! field manager, objects that cannot be checked yet), an honest server dry run, a canary
//! secret echoed back by the server absent from every output, and the `kind` profile's
//! default credentials refused off Kind.

use crate::common;

use common::cluster::Cluster;

use kfctl::catalog::attribute::attribute_prerendered;
use kfctl::catalog::{Catalog, RenderedObject};
use kfctl::cluster::diff::{Action, diff};
use kfctl::cluster::install::Operation;
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::record::{RECORD_NAME, RECORD_NAMESPACE};
use kfctl::cluster::status::status;
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl::cluster::{DryRun, InstallOptions, install};
use kfctl_testapi::{FaultAction, FaultRule, ObjectKey, RequestMatch, StatusRule, Target as Rule, TestApiConfig};
use kube::core::params::{Patch, PatchParams};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

impl Cluster {
    fn robust_options(&self) -> InstallOptions {
        let mut o = self.options_for("minimal", "v1.11.0");
        o.timeout = Duration::from_secs(120);
        o.crd_grace = Duration::from_secs(10);
        o
    }

    /// Run the kfctl-rs binary against this server.
    fn kfctl(&self, args: &[&str]) -> Output {
        kfctl_with(&self.kubeconfig, args)
    }

    /// Write a YAML stream of `docs` into the cluster's folder.
    fn objects_file(&self, docs: &[Value]) -> PathBuf {
        let path = self.dir.path().join("objects.yaml");
        std::fs::write(&path, kfctl_yaml::to_yaml_stream(docs)).unwrap();
        path
    }

    fn record_text(&self) -> String {
        let key = ObjectKey::new("", "configmaps", Some(RECORD_NAMESPACE), RECORD_NAME);
        self.server.object(&key).map(|cm| cm.to_string()).unwrap_or_default()
    }
}

fn kfctl_with(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(common::binary())
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text_of(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn obj(api: &str, kind: &str, ns: Option<&str>, name: &str, extra: Value) -> Value {
    let mut meta = json!({"name": name});
    if let Some(ns) = ns {
        meta["namespace"] = json!(ns);
    }
    let mut doc = json!({"apiVersion": api, "kind": kind, "metadata": meta});
    if let (Some(doc), Some(extra)) = (doc.as_object_mut(), extra.as_object()) {
        doc.extend(extra.clone());
    }
    doc
}

fn deployment(replicas: u32) -> Value {
    obj(
        "apps/v1",
        "Deployment",
        Some("kf"),
        "web",
        json!({"spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
}

/// A namespace, a ConfigMap and a Deployment.
fn small_platform() -> Vec<Value> {
    vec![
        obj("v1", "Namespace", None, "kf", json!({})),
        obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"k": "v"}})),
        deployment(1),
    ]
}

fn tagged(docs: Vec<Value>) -> Vec<RenderedObject> {
    attribute_prerendered(&Catalog::for_release(common::release()).unwrap(), docs)
}

/// The `minimal` profile rendered natively from the upstream snapshot, once per test binary.
fn minimal() -> Vec<RenderedObject> {
    static RENDERED: std::sync::OnceLock<Vec<RenderedObject>> = std::sync::OnceLock::new();
    RENDERED.get_or_init(|| common::cluster::render_for_test_server("minimal", common::release())).clone()
}

/// The server's controllers for what minimal installs: cert-manager's resources become ready.
fn controllers(config: TestApiConfig) -> TestApiConfig {
    let mut config = config;
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    config
}

/// The lease every run takes, free again once a run ended.
fn lease_is_free(cluster: &Cluster, after: &str) {
    let key = ObjectKey::new("coordination.k8s.io", "leases", Some(RECORD_NAMESPACE), "kfctl-rs-lock");
    assert!(cluster.server.object(&key).is_none(), "the lease is still held after {after}");
}

/// diff before install, install, status, upgrade, uninstall of minimal: each must succeed,
/// and leave the lease free, whatever `before_each` (called before each run) does to the server.
async fn full_cycle(cluster: &Cluster, before_each: impl Fn(&Cluster)) {
    let objects = minimal();
    before_each(cluster);
    let entries = diff(&objects, &cluster.target(), 8).await.unwrap_or_else(|e| panic!("diff: {e}"));
    assert!(entries.iter().all(|e| e.action == Action::Create), "before install everything is created");
    for operation in [Operation::Install, Operation::Upgrade] {
        before_each(cluster);
        let options = InstallOptions { operation, ..cluster.robust_options() };
        let report = install(objects.clone(), options, &mut RecordingProgress::default())
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", operation.name()));
        assert_eq!(report.waves_done, report.waves_total);
        lease_is_free(cluster, operation.name());
        before_each(cluster);
        let health = status(&cluster.target(), 8).await.unwrap_or_else(|e| panic!("status: {e}"));
        assert!(health.healthy, "status after a complete {}: {health:?}", operation.name());
    }
    before_each(cluster);
    let options = UninstallOptions { concurrency: 8, ..Default::default() };
    let removed = uninstall(&cluster.target(), &options, &mut RecordingProgress::default())
        .await
        .unwrap_or_else(|e| panic!("uninstall: {e}"));
    assert!(!removed.deleted.is_empty());
    lease_is_free(cluster, "uninstall");
}

/// [`full_cycle`] with `fault` on throughout, which must have fired on at least 1 request in 10.
async fn full_cycle_through(fault: FaultRule) {
    let cluster = Cluster::start(controllers(TestApiConfig::default()).fault(fault));
    full_cycle(&cluster, |_| {}).await;
    let answered = cluster.server.requests();
    let faulted = answered.iter().filter(|r| r.status == 429 || r.status == 500 || r.status == 0).count();
    assert!(faulted * 10 >= answered.len(), "the faults fired ({faulted} of {})", answered.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn minimal_cycle_completes_when_every_runs_lease_create_answer_is_lost() {
    let lose =
        || FaultRule::new(RequestMatch::any().method("POST").resource("leases"), FaultAction::LoseResponse).times(1);
    let cluster = Cluster::start(controllers(TestApiConfig::default()));
    full_cycle(&cluster, |cluster| cluster.server.set_fault(lose())).await;
    let lost = cluster.server.requests().into_iter().filter(|r| r.method == "POST" && r.path.contains("/leases"));
    assert_eq!(lost.count(), 3, "install, upgrade and uninstall each created the lease once (its answer lost)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn minimal_survives_one_request_in_five_answered_429() {
    full_cycle_through(FaultRule::new(RequestMatch::any(), FaultAction::too_many_requests(1)).every(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn minimal_survives_one_request_in_five_answered_500() {
    full_cycle_through(FaultRule::new(RequestMatch::any(), FaultAction::internal_error("boom")).every(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn minimal_survives_a_dropped_connection_every_fourth_request() {
    full_cycle_through(FaultRule::new(RequestMatch::any(), FaultAction::DropConnection).every(4)).await;
}

#[tokio::test]
async fn a_429_that_never_settles_names_the_request_and_is_not_unreachable() {
    let cluster = Cluster::start(
        TestApiConfig::default()
            .fault(FaultRule::new(RequestMatch::any().path_contains("/version"), FaultAction::too_many_requests(1))),
    );
    let err = install(tagged(small_platform()), cluster.robust_options(), &mut RecordingProgress::default())
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("GET /version") && text.contains("429"), "{text}");
    assert!(!text.contains("unreachable"), "{text}");
    let tries = cluster.server.requests().iter().filter(|r| r.path == "/version").count();
    assert!(tries > 1, "retried: {tries}");
}

#[tokio::test]
async fn a_server_that_stops_answering_fails_within_the_timeout_naming_the_server() {
    let cluster = Cluster::start(TestApiConfig::default().fault(FaultRule::new(
        RequestMatch::any().method("GET").path_contains("/apis/apps"),
        FaultAction::NeverAnswer,
    )));
    let mut options = cluster.robust_options();
    options.timeout = Duration::from_secs(3);
    let started = Instant::now();
    let err = install(tagged(small_platform()), options, &mut RecordingProgress::default()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    let text = err.to_string();
    assert!(text.contains(&format!("no answer from {}", cluster.server.url())), "{text}");
}

/// A TCP listener that accepts every connection and never answers.
fn black_hole() -> (String, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
            if held.len() > 64 {
                break;
            }
        }
    });
    (url, handle)
}

#[test]
fn install_against_a_black_hole_exits_within_75s_naming_the_server() {
    let (url, _listener) = black_hole();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {url}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n"
    )).unwrap();
    let objects = dir.path().join("objects.yaml");
    std::fs::write(&objects, kfctl_yaml::to_yaml_stream(&small_platform())).unwrap();
    let started = Instant::now();
    let args = ["install", "--profile", "kind", "--yes", "--timeout", "30s", "--objects", objects.to_str().unwrap()];
    let out = kfctl_with(&kubeconfig, &args);
    let elapsed = started.elapsed();
    let text = text_of(&out);
    assert!(elapsed < Duration::from_secs(75), "took {elapsed:?}: {text}");
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains(&format!("no answer from {url}"))
            && text.contains("when the --timeout deadline (30s) came")
            && text.contains("asking for the server's version"),
        "{text}"
    );
}

/// A merge patch by another field manager, as `kubectl patch` sends it.
async fn patch_replicas_as_another_manager(cluster: &Cluster, replicas: u32) {
    let api = kfctl::cluster::api::ApiClient::connect(&cluster.target()).await.unwrap();
    let params = PatchParams { field_manager: Some("kubectl-patch".into()), ..Default::default() };
    let request = kube::core::Request::new("/apis/apps/v1/namespaces/kf/deployments")
        .patch("web", &params, &Patch::Merge(json!({"spec": {"replicas": replicas}})))
        .unwrap();
    api.call(request).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_drift_by_another_manager_and_exits_1() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = cluster.objects_file(&small_platform());
    let args = ["diff", "--profile", "kind", "--objects", objects.to_str().unwrap()];
    let before = cluster.kfctl(&args);
    let text = text_of(&before);
    assert_eq!(before.status.code(), Some(1), "{text}");
    assert!(text.contains("ConfigMap kf/settings would create (its namespace is not created yet)"), "{text}");
    assert!(text.contains("+++ v1.ConfigMap.kf.settings") && text.contains("+  k: v"), "{text}");
    install(tagged(small_platform()), cluster.robust_options(), &mut RecordingProgress::default()).await.unwrap();
    let same = cluster.kfctl(&args);
    assert_eq!(same.status.code(), Some(0), "{}", text_of(&same));
    patch_replicas_as_another_manager(&cluster, 3).await;
    let drifted = cluster.kfctl(&args);
    let text = text_of(&drifted);
    assert_eq!(drifted.status.code(), Some(1), "{text}");
    assert!(text.contains("-  replicas: 3\n+  replicas: 1\n"), "{text}");
    assert!(text.contains("# conflict: .spec.replicas is owned by field manager \"kubectl-patch\""), "{text}");
    assert!(text.contains("1 of 3 objects would change"), "{text}");
}

#[test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
fn real_kubectl_patch_is_drift_that_diff_names() {
    let cluster = Cluster::start(TestApiConfig::default());
    let objects = cluster.objects_file(&small_platform());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime
        .block_on(install(tagged(small_platform()), cluster.robust_options(), &mut RecordingProgress::default()))
        .unwrap();
    let patched = Command::new(common::kubectl())
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .arg("--cache-dir")
        .arg(cluster.dir.path().join("cache"))
        .args(["patch", "deployment", "web", "-n", "kf", "--type=merge", "-p", "{\"spec\":{\"replicas\":3}}"])
        .output()
        .unwrap();
    assert!(patched.status.success(), "{}", text_of(&patched));
    let drifted = cluster.kfctl(&["diff", "--profile", "kind", "--objects", objects.to_str().unwrap()]);
    let text = text_of(&drifted);
    assert_eq!(drifted.status.code(), Some(1), "{text}");
    assert!(text.contains("-  replicas: 3\n+  replicas: 1\n") && text.contains("\"kubectl-patch\""), "{text}");
}

#[tokio::test]
async fn server_dry_run_reports_what_it_could_not_check_and_creates_nothing() {
    let cluster = Cluster::start(TestApiConfig::default());
    let mut options = cluster.robust_options();
    options.dry_run = DryRun::Server;
    let mut progress = RecordingProgress::default();
    let report = install(tagged(small_platform()), options, &mut progress).await.unwrap();
    let lines = progress.lines.join("\n");
    for object in ["ConfigMap kf/settings", "Deployment kf/web"] {
        assert!(lines.contains(&format!("dry run: {object} not checked, its namespace is not created yet")), "{lines}");
    }
    assert!(report.created <= 1, "only the namespace could be checked: {report:?}");
    assert!(!cluster.server.objects().iter().any(|o| o.key.name == "settings"), "nothing written");
}

/// A multi-line value with quotes, as a PEM key or a JSON credential file holds.
const CANARY: &str = "-----BEGIN PRIVATE KEY-----\nMIIEcanaryQ\"quoted\"Zm9vYmFy1234\nsecond'line-canary-5678\n-----END PRIVATE KEY-----";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_secret_echoed_by_the_server_is_absent_from_all_output() {
    let escaped = serde_json::to_string(CANARY).unwrap();
    let echoed = format!("Secret \"creds\" is invalid: data[tls.key]: Invalid value: {escaped}: raw {CANARY}");
    let cluster = Cluster::start(TestApiConfig::default().fault(FaultRule::new(
        RequestMatch::any().method("PATCH").resource("secrets"),
        FaultAction::status(422, "Invalid", &echoed),
    )));
    let mut docs = small_platform();
    docs.push(obj("v1", "Secret", Some("kf"), "creds", json!({"stringData": {"tls.key": CANARY}})));
    let objects = cluster.objects_file(&docs);
    let install_out = cluster.kfctl(&["install", "--profile", "kind", "--yes", "--objects", objects.to_str().unwrap()]);
    assert!(!install_out.status.success());
    let diff_out = cluster.kfctl(&["diff", "--profile", "kind", "--objects", objects.to_str().unwrap()]);
    let json_out = cluster.kfctl(&["diff", "--profile", "kind", "-o", "json", "--objects", objects.to_str().unwrap()]);
    let everything = [text_of(&install_out), text_of(&diff_out), text_of(&json_out), cluster.record_text()].join("\n");
    assert!(everything.contains("Secret kf/creds"), "{everything}");
    for part in ["MIIEcanaryQ", "Zm9vYmFy1234", "second'line-canary", "quoted"] {
        assert!(!everything.contains(part), "{part} leaked:\n{everything}");
    }
}

fn node(provider: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {"providerID": provider}})
}

#[test]
fn kind_profile_default_credentials_are_refused_off_kind() {
    let with_default_user = {
        let mut docs = small_platform();
        let config = format!("staticPasswords:\n- email: {}\n", kfctl::catalog::credentials::DEFAULT_EMAIL);
        docs.push(obj("v1", "ConfigMap", Some("kf"), "dex", json!({"data": {"config.yaml": config}})));
        docs
    };
    let cloud = Cluster::start(TestApiConfig::default());
    cloud.server.seed(node("aws:///eu-west-1a/i-0123")).unwrap();
    let objects = cloud.objects_file(&with_default_user);
    let args = ["install", "--profile", "kind", "--yes", "--objects", objects.to_str().unwrap()];
    let refused = cloud.kfctl(&args);
    let text = text_of(&refused);
    assert_eq!(refused.status.code(), Some(4), "{text}");
    assert!(text.contains("security:") && text.contains("not a Kind cluster"), "{text}");
    assert!(cloud.server.requests().iter().all(|r| r.method != "PATCH"), "nothing written");
    let mut allowing = args.to_vec();
    allowing.push("--allow-default-credentials");
    let allowed = cloud.kfctl(&allowing);
    assert!(allowed.status.success(), "{}", text_of(&allowed));
    let kind = Cluster::start(TestApiConfig::default());
    kind.server.seed(node("kind://docker/kubeflow/kubeflow-control-plane")).unwrap();
    let objects = kind.objects_file(&with_default_user);
    let on_kind = kind.kfctl(&["install", "--profile", "kind", "--yes", "--objects", objects.to_str().unwrap()]);
    assert!(on_kind.status.success(), "{}", text_of(&on_kind));
}
