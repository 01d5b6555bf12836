//! Readiness that knows failure (issue 36, item 2), against the test API server: a Deployment
//! past its progress deadline, a failed Job and crash-looping pods end their wave at once
//! (exit code 1, naming the object and its reason) instead of waiting out a 5-minute
//! `--timeout`; a transient state keeps waiting and succeeds; `status` shows a failed object.

use crate::common;

use common::cluster::{Cluster, obj};

use kfctl::catalog::attribute::attribute_prerendered;
use kfctl::catalog::{Catalog, RenderedObject};
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::status::{render_text, status};
use kfctl::cluster::{ClusterError, InstallOptions, install};
use kfctl::exit::{Code, ExitStatus};
use kfctl_testapi::{StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The `--timeout` of every install here: the default's 5 minutes, which a failure must not wait.
const TIMEOUT: Duration = Duration::from_secs(300);

/// How long a failing install may take at most.
const AT_ONCE: Duration = Duration::from_secs(60);

impl Cluster {
    fn failure_options(&self) -> InstallOptions {
        let mut o = self.options_for("kind", "v1.11.0");
        o.timeout = TIMEOUT;
        o
    }
}

fn tagged(docs: Vec<Value>) -> Vec<RenderedObject> {
    attribute_prerendered(&Catalog::for_release(common::release()).unwrap(), docs)
}

fn deployment(name: &str) -> Value {
    obj(
        "apps/v1",
        "Deployment",
        Some("kf"),
        name,
        json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
}

fn job(name: &str) -> Value {
    obj(
        "batch/v1",
        "Job",
        Some("kf"),
        name,
        json!({"spec": {"backoffLimit": 1, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}}}),
    )
}

/// A namespace, a ConfigMap and a Deployment `web`.
fn small_platform() -> Vec<Value> {
    vec![
        obj("v1", "Namespace", None, "kf", json!({})),
        obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"k": "v"}})),
        deployment("web"),
    ]
}

const DEADLINE_MESSAGE: &str = "ReplicaSet \"web-5d8f7c9b6\" has timed out progressing.";

/// What the deployment controller reports after `progressDeadlineSeconds` without progress.
fn progress_deadline_exceeded() -> Value {
    json!({"conditions": [
        {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
            "message": "Deployment does not have minimum availability."},
        {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": DEADLINE_MESSAGE}]})
}

/// `target` never gets ready and reports `status`.
fn scripted(config: TestApiConfig, target: Rule, status: Value) -> TestApiConfig {
    config.status_rule(StatusRule::never_ready(target.clone())).status_rule(StatusRule::set_status(
        target,
        Duration::ZERO,
        status,
    ))
}

/// Install `docs`, expecting [`ClusterError::Failed`] within [`AT_ONCE`]; its message.
async fn install_fails(cluster: &Cluster, docs: Vec<RenderedObject>, options: InstallOptions) -> String {
    let started = Instant::now();
    let err = install(docs, options, &mut RecordingProgress::default()).await.unwrap_err();
    assert!(started.elapsed() < AT_ONCE, "the failure waited {:?}: {err}", started.elapsed());
    assert!(matches!(err, ClusterError::Failed { .. }), "not a failure: {err}");
    assert_eq!(err.exit_code(), Code::Failure, "{err}");
    let record = cluster.record().expect("the failed run keeps its record");
    let last = record.last_run.expect("the record says how the run ended");
    assert!(!last.succeeded && last.error.as_deref() == Some(err.to_string().as_str()), "{last:?}");
    err.to_string()
}

#[tokio::test]
async fn a_deployment_past_its_progress_deadline_fails_its_wave_at_once() {
    let web = Rule::object("Deployment", Some("kf"), "web");
    let cluster = Cluster::start(scripted(TestApiConfig::default(), web, json!(progress_deadline_exceeded())));
    let text = install_fails(&cluster, tagged(small_platform()), cluster.failure_options()).await;
    let want = format!(
        "Deployment kf/web failed: ProgressDeadlineExceeded: {}; fix it (kubectl describe deployment -n kf web) and \
         run install again, which resumes",
        DEADLINE_MESSAGE.trim_end_matches('.')
    );
    assert!(text.starts_with("wave ") && text.ends_with(&want), "{text}");
    assert!(text.contains("/") && text.contains("): Deployment kf/web"), "the wave is numbered: {text}");
}

#[tokio::test]
async fn a_failed_job_fails_its_wave_at_once() {
    let failed = json!({"failed": 2, "conditions": [{"type": "Failed", "status": "True",
        "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]});
    let cluster =
        Cluster::start(scripted(TestApiConfig::default(), Rule::object("Job", Some("kf"), "migrate"), failed));
    let mut docs = small_platform();
    docs.push(job("migrate"));
    let text = install_fails(&cluster, tagged(docs), cluster.failure_options()).await;
    assert!(
        text.contains(
            "Job kf/migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit; fix it \
             (kubectl describe job -n kf migrate)"
        ),
        "{text}"
    );
    assert!(!text.contains("Deployment kf/web"), "a ready object is not named: {text}");
}

/// A pod of Deployment `web` (by its labels) whose container waits with `reason`.
fn web_pod(cluster: &Cluster, name: &str, reason: &str) {
    let pod = obj(
        "v1",
        "Pod",
        Some("kf"),
        name,
        json!({"metadata": {"name": name, "namespace": "kf", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    );
    cluster.server.seed(pod).unwrap();
    let waiting = json!({"containerStatuses": [{"name": "c", "ready": false, "restartCount": 4,
        "state": {"waiting": {"reason": reason, "message": "back-off 1m20s restarting failed container=c"}}}]});
    cluster.server.set_status_rule(StatusRule::never_ready(Rule::object("Pod", Some("kf"), name)));
    cluster.server.set_status_rule(StatusRule::set_status(
        Rule::object("Pod", Some("kf"), name),
        Duration::ZERO,
        waiting,
    ));
}

#[tokio::test]
async fn crash_looping_pods_fail_their_deployment() {
    let config =
        TestApiConfig::default().status_rule(StatusRule::never_ready(Rule::object("Deployment", Some("kf"), "web")));
    let cluster = Cluster::start(config);
    web_pod(&cluster, "web-5d8f7c9b6-x2x7q", "CrashLoopBackOff");
    let text = install_fails(&cluster, tagged(small_platform()), cluster.failure_options()).await;
    assert!(
        text.contains(
            "Deployment kf/web failed: CrashLoopBackOff: pod web-5d8f7c9b6-x2x7q container c: back-off 1m20s \
             restarting failed container=c; fix it (kubectl describe deployment -n kf web)"
        ),
        "{text}"
    );
}

fn pod_lists(cluster: &Cluster) -> usize {
    cluster
        .server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/api/v1/namespaces/kf/pods"))
        .count()
}

#[tokio::test]
async fn a_transient_state_keeps_waiting_and_succeeds_once_ready() {
    let web = Rule::object("Deployment", Some("kf"), "web");
    let cluster =
        Cluster::start(TestApiConfig::default().status_rule(StatusRule::ready_after(web, Duration::from_secs(2))));
    // a pod still creating is transient too
    web_pod(&cluster, "web-5d8f7c9b6-abcde", "ContainerCreating");
    let mut progress = RecordingProgress::default();
    let started = Instant::now();
    let report = install(tagged(small_platform()), cluster.failure_options(), &mut progress).await.unwrap();
    assert!(started.elapsed() >= Duration::from_secs(2), "did not wait for the Deployment");
    assert_eq!(report.waves_done, report.waves_total);
    assert!(progress.lines.iter().any(|l| l.contains("Deployment kf/web (0/1 ready)")), "{:#?}", progress.lines);
    let live = cluster.server.object(&kfctl_testapi::ObjectKey::new("apps", "deployments", Some("kf"), "web")).unwrap();
    assert_eq!(live["status"]["conditions"][1]["reason"], "NewReplicaSetAvailable");
    // pods were listed (the pending Deployment's), and at a modest rate: 2 s of 20 ms polls
    let lists = pod_lists(&cluster);
    assert!((1..=2).contains(&lists), "{lists} pod lists");
}

#[tokio::test]
async fn a_wave_ready_at_once_lists_no_pods() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(tagged(small_platform()), cluster.failure_options(), &mut RecordingProgress::default()).await.unwrap();
    assert_eq!(pod_lists(&cluster), 0);
}

#[tokio::test]
async fn status_reports_an_installed_object_that_failed_since() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(tagged(small_platform()), cluster.failure_options(), &mut RecordingProgress::default()).await.unwrap();
    assert!(status(&cluster.target(), 4).await.unwrap().healthy);
    let web = Rule::object("Deployment", Some("kf"), "web");
    cluster.server.set_status_rule(StatusRule::never_ready(web.clone()));
    cluster.server.set_status_rule(StatusRule::set_status(web, Duration::ZERO, progress_deadline_exceeded()));
    let report = status(&cluster.target(), 4).await.unwrap();
    assert!(!report.healthy);
    assert_eq!(report.state, "failed", "the last run succeeded, the Deployment failed since");
    let text = render_text(&report);
    let line = format!("  failed: Deployment kf/web (ProgressDeadlineExceeded: {DEADLINE_MESSAGE})");
    assert!(text.lines().any(|l| l == line), "{text}");
    let json = serde_json::to_value(&report).unwrap();
    let failed =
        json["components"].as_array().unwrap().iter().flat_map(|c| c["failed"].as_array().cloned().unwrap_or_default());
    let reasons: Vec<Value> = failed.map(|f| f["reason"].clone()).collect();
    assert_eq!(reasons, vec![json!("ProgressDeadlineExceeded")]);
}

/// The `minimal` profile (Trainer + JobSet) rendered from the snapshot, without CA injection.
fn minimal() -> Vec<RenderedObject> {
    common::cluster::render_for_test_server("minimal", common::release())
}

#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn minimal_profile_with_a_deployment_past_its_deadline_fails_within_a_minute() {
    let objects = minimal();
    let stuck = objects
        .iter()
        .map(|o| &o.obj)
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["namespace"].is_string())
        .expect("minimal installs a Deployment");
    let (namespace, name) = (
        stuck["metadata"]["namespace"].as_str().unwrap().to_string(),
        stuck["metadata"]["name"].as_str().unwrap().to_string(),
    );
    let mut config = TestApiConfig::default();
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    let config = scripted(config, Rule::object("Deployment", Some(&namespace), &name), progress_deadline_exceeded());
    let cluster = Cluster::start(config);
    let mut options = cluster.options_for("minimal", "v1.11.0");
    options.timeout = TIMEOUT;
    let text = install_fails(&cluster, objects, options).await;
    let want = format!("Deployment {namespace}/{name} failed: ProgressDeadlineExceeded");
    assert!(text.contains(&want), "{text}");
    assert!(text.contains(&format!("kubectl describe deployment -n {namespace} {name}")), "{text}");
}
