//! The install engine against the test API server: races, faults, timeouts, conflicts,
//! interrupts, idempotence, uninstall, and the whole platform (example.yaml of the release under test).

use crate::common;

use common::cluster::Cluster;

use kfctl::catalog::attribute::attribute_prerendered;
use kfctl::catalog::{Catalog, RenderedObject};
use kfctl::cluster::api::{ApiClient, ResourcePath, Target};
use kfctl::cluster::diff::{Action, diff};
use kfctl::cluster::object::{ObjectRef, crd_kinds};
use kfctl::cluster::plan::Plan;
use kfctl::cluster::progress::{Event, Progress, RecordingProgress};
use kfctl::cluster::record::{InstallMeta, RECORD_NAMESPACE};
use kfctl::cluster::retry::TransportKind;
use kfctl::cluster::status::status;
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl::cluster::{ClusterError, InstallOptions, install};
use kfctl::exit::{Code, ExitStatus};
use kfctl_testapi::{FaultAction, FaultRule, ObjectKey, RequestMatch, StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn example() -> Vec<Value> {
    let path = common::example_golden();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    kfctl_yaml::parse_objects(&text, "example.yaml").unwrap()
}

/// Objects tagged with their components as `install --objects` tags a pre-rendered stream.
fn tagged(docs: Vec<Value>) -> Vec<RenderedObject> {
    attribute_prerendered(&Catalog::for_release(common::release()).unwrap(), docs)
}

/// Without cert-manager's CA injection annotations. The test API server treats lists as atomic
/// for field ownership, so a cainjector write owns all of `.webhooks` there (a real server keys
/// that list by name and the re-apply does not conflict); injection is tested on its own.
fn without_ca_injection(docs: Vec<Value>) -> Vec<Value> {
    docs.into_iter()
        .map(|mut d| {
            if let Some(annotations) = d["metadata"]["annotations"].as_object_mut() {
                annotations.retain(|k, _| !k.starts_with("cert-manager.io/inject-ca-from"));
            }
            d
        })
        .collect()
}

impl Cluster {
    fn options(&self) -> InstallOptions {
        self.options_for("kind", "v1.11.0")
    }

    /// For the whole platform (~650 objects), which takes 10–30 s in a debug build beside the
    /// other tests: these tests are about one pass with nothing refused, not speed (that is
    /// the benchmark's), so the deadline is wide.
    fn platform_options(&self) -> InstallOptions {
        let mut o = self.options();
        o.timeout = Duration::from_secs(180);
        o
    }
}

/// cert-manager's controller and cainjector, as status rules.
fn cert_manager_rules(config: TestApiConfig) -> TestApiConfig {
    let mut config = config;
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    for annotation in ["cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret"] {
        config = config.status_rule(StatusRule::inject_ca_bundle(
            Rule::default().with_annotation(annotation),
            Duration::ZERO,
            "Y2E=",
        ));
    }
    config
}

fn obj(api: &str, kind: &str, ns: Option<&str>, name: &str, extra: Value) -> Value {
    let mut meta = json!({"name": name});
    if let Some(ns) = ns {
        meta["namespace"] = json!(ns);
    }
    let mut doc = json!({"apiVersion": api, "kind": kind, "metadata": meta});
    if let (Some(doc_map), Value::Object(extra)) = (doc.as_object_mut(), extra) {
        doc_map.extend(extra);
    }
    doc
}

fn namespace(name: &str) -> Value {
    obj("v1", "Namespace", None, name, json!({}))
}

fn configmap(ns: &str, name: &str, value: &str) -> Value {
    obj("v1", "ConfigMap", Some(ns), name, json!({"data": {"k": value}}))
}

fn deployment(ns: &str, name: &str) -> Value {
    obj(
        "apps/v1",
        "Deployment",
        Some(ns),
        name,
        json!({"spec": {"replicas": 1,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}),
    )
}

fn widget_crd() -> Value {
    obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        "widgets.example.org",
        json!({"spec": {
        "group": "example.org", "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
    )
}

fn small_platform() -> Vec<Value> {
    vec![
        namespace("kf"),
        widget_crd(),
        configmap("kf", "settings", "a"),
        obj("v1", "Secret", Some("kf"), "creds", json!({"stringData": {"password": "hunter2-s3cret"}})),
        deployment("kf", "web"),
        obj(
            "v1",
            "Service",
            Some("kf"),
            "web",
            json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 443}]}}),
        ),
        obj("example.org/v1", "Widget", Some("kf"), "w1", json!({"spec": {"size": 1}})),
    ]
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn plan_of_example_yaml_holds_exactly_its_objects_and_orders_resources_after_crds() {
    let docs = example();
    assert_eq!(docs.len(), common::example_object_count());
    let plan = Plan::build(&tagged(docs.clone())).unwrap();
    let planned: Vec<&ObjectRef> = plan.objects().map(|o| &o.reference).collect();
    assert_eq!(planned.len(), common::example_object_count());
    let unique: std::collections::HashSet<&ObjectRef> = planned.iter().copied().collect();
    assert_eq!(unique.len(), common::example_object_count());
    let crds = crd_kinds(&docs);
    let crd_wave = |name: &str| {
        plan.wave_of(planned.iter().find(|r| r.kind == "CustomResourceDefinition" && r.name == name).unwrap())
    };
    let mut custom = 0;
    for r in &planned {
        if let Some(crd) = crds.get(&r.group_kind()) {
            custom += 1;
            assert!(plan.wave_of(r) > crd_wave(crd), "{r} is not after its CRD {crd}");
        }
    }
    assert!(custom > 80, "only {custom} custom resources found");
    let cert_manager = plan
        .objects()
        .find(|o| o.reference.name == "cert-manager-webhook" && o.reference.kind == "Deployment")
        .unwrap();
    let certificate =
        plan.objects().find(|o| o.reference.kind == "Certificate" && o.reference.group() == "cert-manager.io").unwrap();
    assert!(plan.wave_of(&cert_manager.reference) < plan.wave_of(&certificate.reference));
    let last = plan.waves.last().unwrap();
    assert!(last.objects.iter().all(|o| o.reference.kind == "ValidatingWebhookConfiguration"));
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(json["waves"][0]["objects"][0]["kind"], "Namespace");
}

#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn whole_platform_installs_then_rerun_is_byte_identical_and_changes_nothing() {
    let cluster = Cluster::start(cert_manager_rules(TestApiConfig::default()));
    let docs = without_ca_injection(example());
    let mut progress = RecordingProgress::default();
    let report = install(tagged(docs.clone()), cluster.platform_options(), &mut progress).await.unwrap();
    assert_eq!((report.applied, report.waves_done), (common::example_object_count(), report.waves_total));
    let record = cluster.record().unwrap();
    assert!(record.is_complete());
    assert_eq!(record.inventory.len(), common::example_object_count());
    assert!(cluster.has("apps", "deployments", Some("kubeflow"), "ml-pipeline"));
    let first: Vec<(String, Vec<u8>)> =
        cluster.patches().into_iter().filter(|(p, _)| !p.contains(RECORD_NAMESPACE)).collect();
    let versions = |c: &Cluster| -> Vec<(String, Value)> {
        let mut v: Vec<(String, Value)> = c
            .server
            .objects()
            .into_iter()
            .map(|o| (format!("{:?}", o.key), o.object["metadata"]["resourceVersion"].clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let before = versions(&cluster);
    cluster.server.clear_requests();
    install(tagged(docs), cluster.platform_options(), &mut RecordingProgress::default()).await.unwrap();
    let second = cluster.patches();
    assert_eq!(second.len(), first.len(), "a re-run applies each object once and writes no record");
    let mut a = first.clone();
    let mut b = second.clone();
    a.sort();
    b.sort();
    assert!(a == b, "re-run patch bodies differ");
    assert_eq!(versions(&cluster), before, "an unchanged re-run changed objects");
    let report = status(&cluster.target(), 16).await.unwrap();
    assert!(report.healthy, "{:?}", report.components.iter().filter(|c| !c.pending.is_empty()).collect::<Vec<_>>());
}

#[tokio::test]
async fn webhook_failing_three_times_is_retried_until_it_answers() {
    let cluster = Cluster::start(
        TestApiConfig::default().fault(
            FaultRule::new(
                RequestMatch::any().method("PATCH").resource("configmaps").name("settings"),
                FaultAction::webhook_refused("validate.example.org"),
            )
            .times(3),
        ),
    );
    let mut progress = RecordingProgress::default();
    install(tagged(small_platform()), cluster.options(), &mut progress).await.unwrap();
    let attempts = cluster
        .patches()
        .iter()
        .filter(|(p, _)| p.ends_with("/configmaps/settings") || p.contains("/configmaps/settings?"))
        .count();
    assert_eq!(attempts, 4);
    assert_eq!(progress.lines.iter().filter(|l| l.starts_with("retrying ConfigMap kf/settings")).count(), 3);
    assert!(cluster.has("", "configmaps", Some("kf"), "settings"));
}

#[tokio::test]
async fn injected_webhook_waits_for_its_service_endpoint_and_ca_bundle() {
    let annotation = "cert-manager.io/inject-ca-from";
    let config = TestApiConfig::default()
        .status_rule(StatusRule::ready_after(Rule::object("Deployment", Some("kf"), "web"), Duration::from_millis(300)))
        .status_rule(StatusRule::inject_ca_bundle(
            Rule::default().with_annotation(annotation),
            Duration::from_millis(300),
            "Y2E=",
        ));
    let cluster = Cluster::start(config);
    let mut docs = small_platform();
    docs.push(obj(
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        None,
        "web-hook",
        json!({
        "metadata": {"name": "web-hook", "annotations": {annotation: "kf/web-cert"}},
        "webhooks": [{"name": "web.example.org", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"caBundle": "Cg==", "service": {"namespace": "kf", "name": "web", "path": "/mutate"}}}]}),
    ));
    let mut progress = RecordingProgress::default();
    install(tagged(docs), cluster.options(), &mut progress).await.unwrap();
    let patch =
        cluster.patches().into_iter().find(|(p, _)| p.contains("mutatingwebhookconfigurations/web-hook")).unwrap();
    let body: Value = serde_json::from_slice(&patch.1).unwrap();
    assert!(body.pointer("/webhooks/0/clientConfig/caBundle").is_none(), "the injected caBundle was sent");
    let live = cluster
        .server
        .object(&ObjectKey::new("admissionregistration.k8s.io", "mutatingwebhookconfigurations", None, "web-hook"))
        .unwrap();
    assert_eq!(live["webhooks"][0]["clientConfig"]["caBundle"], "Y2E=");
    assert!(progress.lines.iter().any(|l| l.contains("caBundle not injected")), "{:#?}", progress.lines);
}

#[tokio::test]
async fn late_crd_and_lagging_discovery_are_waited_for() {
    let config = TestApiConfig::default()
        .crd_established_after(Duration::from_millis(400))
        .discovery_lag(Duration::from_millis(400));
    let cluster = Cluster::start(config);
    let mut progress = RecordingProgress::default();
    install(tagged(small_platform()), cluster.options(), &mut progress).await.unwrap();
    assert!(cluster.has("example.org", "widgets", Some("kf"), "w1"));
    assert!(
        progress.lines.iter().any(|l| l.contains("not yet served by discovery") || l.contains("not Established")),
        "{:#?}",
        progress.lines
    );
    let failed = cluster.refused_custom_resource_requests("widgets");
    assert!(failed.is_empty(), "custom resources were sent before discovery served their kind: {failed:?}");
}

#[tokio::test]
async fn throttling_server_errors_and_lock_conflicts_are_retried() {
    let on = |name: &str| RequestMatch::any().method("PATCH").name(name);
    let config = TestApiConfig::default()
        .fault(FaultRule::new(on("settings"), FaultAction::too_many_requests(1)).times(1))
        .fault(FaultRule::new(on("web"), FaultAction::service_unavailable()).times(2))
        .fault(FaultRule::new(on("creds"), FaultAction::ConflictModified).times(2))
        .fault(FaultRule::new(on("kf"), FaultAction::etcd_leader_changed()).times(1));
    let cluster = Cluster::start(config);
    let started = Instant::now();
    install(tagged(small_platform()), cluster.options(), &mut RecordingProgress::default()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After: 1 was not honoured");
    let statuses: Vec<u16> = cluster.server.requests().iter().map(|r| r.status).collect();
    for code in [429, 503, 409, 500] {
        assert!(statuses.contains(&code), "fault {code} did not fire");
    }
    assert!(cluster.has("", "secrets", Some("kf"), "creds"));
}

#[tokio::test]
async fn deployment_that_never_becomes_ready_times_out_on_time_and_is_listed() {
    let cluster = Cluster::start(TestApiConfig::default().status_rule(StatusRule::never_ready(Rule::object(
        "Deployment",
        Some("kf"),
        "web",
    ))));
    let mut options = cluster.options();
    options.timeout = Duration::from_secs(2);
    let started = Instant::now();
    let err = install(tagged(small_platform()), options, &mut RecordingProgress::default()).await.unwrap_err();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "timed out {elapsed:?} after start, deadline 2s");
    assert!(elapsed >= Duration::from_millis(1900), "gave up early: {elapsed:?}");
    assert_eq!(err.exit_code(), Code::Timeout);
    let text = err.to_string();
    assert!(text.contains("Deployment kf/web (0/1 ready)"), "{text}");
    let record = cluster.record().unwrap();
    assert!(!record.is_complete());
    assert!(record.inventory.iter().any(|e| e.reference.name == "web"));
}

/// Reads of the Deployment take 300 ms, so the read under way at the deadline is nearly always
/// cut off by it: the timeout must still list what the last read in time saw.
#[tokio::test]
async fn read_cut_off_by_the_deadline_keeps_the_last_status_seen() {
    let slow_read = RequestMatch::any().method("GET").name("web");
    let config = TestApiConfig::default()
        .status_rule(StatusRule::never_ready(Rule::object("Deployment", Some("kf"), "web")))
        .fault(FaultRule::new(slow_read, FaultAction::Delay(Duration::from_millis(300))));
    let cluster = Cluster::start(config);
    let mut options = cluster.options();
    options.timeout = Duration::from_secs(2);
    let err = install(tagged(small_platform()), options, &mut RecordingProgress::default()).await.unwrap_err();
    assert_eq!(err.exit_code(), Code::Timeout);
    let text = err.to_string();
    assert!(text.contains("Deployment kf/web (0/1 ready)") && !text.contains("cannot read"), "{text}");
}

#[tokio::test]
async fn conflict_with_another_manager_names_field_and_manager_then_force_takes_over() {
    let cluster = Cluster::start(TestApiConfig::default());
    cluster.server.seed(namespace("kf")).unwrap();
    cluster.server.seed(configmap("kf", "settings", "theirs")).unwrap();
    let err =
        install(tagged(small_platform()), cluster.options(), &mut RecordingProgress::default()).await.unwrap_err();
    assert!(matches!(err, ClusterError::Conflict { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(".data.k") && text.contains("test-seed") && text.contains("--force-conflicts"), "{text}");
    let mut options = cluster.options();
    options.force_conflicts = true;
    install(tagged(small_platform()), options, &mut RecordingProgress::default()).await.unwrap();
    let cm = cluster.server.object(&ObjectKey::new("", "configmaps", Some("kf"), "settings")).unwrap();
    assert_eq!(cm["data"]["k"], "a");
}

/// Sets the interrupt after `after` applied objects, like Ctrl-C.
struct InterruptAfter {
    after: usize,
    seen: usize,
    tx: tokio::sync::watch::Sender<bool>,
}

impl Progress for InterruptAfter {
    fn event(&mut self, event: &Event<'_>) {
        if let Event::Applied { .. } = event {
            self.seen += 1;
            if self.seen == self.after {
                let _ = self.tx.send(true);
            }
        }
    }
}

fn stored_state(cluster: &Cluster) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = cluster
        .server
        .objects()
        .into_iter()
        .filter(|o| {
            o.key.namespace.as_deref() != Some(RECORD_NAMESPACE) && o.object["metadata"]["name"] != RECORD_NAMESPACE
        })
        .map(|o| {
            (
                format!("{}/{}/{:?}/{}", o.key.group, o.key.resource, o.key.namespace, o.key.name),
                o.object["data"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// What the retry table reads is typed from the server's Status (details) or the socket, not
/// from the message: a dropped connection, a refused one, an unrouted resource, a missing
/// namespace. One attempt each (`without_retries`): the retry table would settle the dropped one.
#[tokio::test]
async fn api_failures_are_typed_from_status_details_and_the_transport() {
    let cluster = Cluster::start(
        TestApiConfig::default()
            .fault(FaultRule::new(RequestMatch::any().path_contains("/version"), FaultAction::DropConnection).times(1)),
    );
    let api = ApiClient::connect(&cluster.target()).await.unwrap().without_retries();
    let dropped = api.get_path("/version").await.unwrap_err();
    assert_eq!((dropped.status, dropped.transport()), (None, Some(TransportKind::Dropped)), "{dropped}");
    let unserved = api.get_path("/apis/example.org/v1/namespaces/kf/widgets/w").await.unwrap_err();
    assert!(unserved.is_unserved_resource(), "{unserved:?}");
    let configmaps =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "configmaps".into(), namespaced: true };
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "nowhere"}});
    let missing = api.apply(&configmaps, Some("nowhere"), "c", &body, false, false).await.unwrap_err();
    assert!(missing.is_missing_namespace() && !missing.is_unserved_resource(), "{missing:?}");
    assert!(api.get(&configmaps, Some("default"), "absent").await.unwrap().is_none(), "a missing object is None");

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let yaml = cluster.server.kubeconfig_yaml().replace(cluster.server.url(), &format!("http://127.0.0.1:{port}"));
    std::fs::write(&kubeconfig, yaml).unwrap();
    let nobody =
        ApiClient::connect(&Target { kubeconfig: Some(kubeconfig), context: None }).await.unwrap().without_retries();
    let refused = nobody.get_path("/version").await.unwrap_err();
    assert_eq!(refused.transport(), Some(TransportKind::Refused), "{refused}");
}

#[tokio::test]
async fn dropped_connection_and_interrupt_then_rerun_converge_to_the_same_objects() {
    let reference = Cluster::start(TestApiConfig::default());
    install(tagged(small_platform()), reference.options(), &mut RecordingProgress::default()).await.unwrap();

    let cluster = Cluster::start(
        TestApiConfig::default().fault(
            FaultRule::new(RequestMatch::any().method("PATCH").resource("deployments"), FaultAction::DropConnection)
                .times(1),
        ),
    );
    let (tx, rx) = tokio::sync::watch::channel(false);
    let mut options = cluster.options();
    options.interrupt = Some(rx);
    options.concurrency = 1;
    let err =
        install(tagged(small_platform()), options, &mut InterruptAfter { after: 3, seen: 0, tx }).await.unwrap_err();
    assert_eq!(err.exit_code(), Code::Interrupted, "{err}");
    let partial = cluster.record().expect("an interrupted install records its progress");
    assert_eq!(partial.inventory.len(), 3);
    assert!(!partial.is_complete());

    install(tagged(small_platform()), cluster.options(), &mut RecordingProgress::default()).await.unwrap();
    assert!(cluster.server.requests().iter().any(|r| r.status == 0), "the dropped connection did not happen");
    assert_eq!(stored_state(&cluster), stored_state(&reference));
    assert!(cluster.record().unwrap().is_complete());
}

#[tokio::test]
async fn uninstall_after_partial_install_removes_inventory_and_keeps_preexisting_namespace() {
    let cluster = Cluster::start(TestApiConfig::default().status_rule(StatusRule::never_ready(Rule::object(
        "Deployment",
        Some("kf"),
        "web",
    ))));
    cluster.server.seed(namespace("kf")).unwrap();
    let mut options = cluster.options();
    options.timeout = Duration::from_secs(1);
    let err = install(tagged(small_platform()), options, &mut RecordingProgress::default()).await.unwrap_err();
    assert_eq!(err.exit_code(), Code::Timeout);
    let lease = ObjectKey::new("coordination.k8s.io", "leases", Some(RECORD_NAMESPACE), "kfctl-rs-lock");
    assert!(
        cluster.server.object(&lease).is_none(),
        "the timed-out install left its lease for the next run to wait on"
    );
    let record = cluster.record().unwrap();
    let options = UninstallOptions { concurrency: 8, ..Default::default() };
    let report = uninstall(&cluster.target(), &options, &mut RecordingProgress::default()).await.unwrap();
    // CRDs are kept by default (their custom resources would be lost): tests/cluster_lifecycle.rs
    let kept: Vec<&str> = report.kept.iter().map(|k| k.object.name.as_str()).collect();
    assert_eq!(kept, ["widgets.example.org", "kf"]);
    assert_eq!(report.deleted.len(), record.inventory.len() - 2);
    assert!(!cluster.has("", "configmaps", Some("kf"), "settings"));
    assert!(!cluster.has("apps", "deployments", Some("kf"), "web"));
    assert!(cluster.has("apiextensions.k8s.io", "customresourcedefinitions", None, "widgets.example.org"));
    assert!(cluster.record().is_none());
    let gone = uninstall(&cluster.target(), &options, &mut RecordingProgress::default()).await.unwrap_err();
    assert!(matches!(gone, ClusterError::NoRecord));
}

#[tokio::test]
async fn secret_values_never_reach_errors_progress_or_diffs() {
    let leak = "hunter2-s3cret";
    let cluster = Cluster::start(TestApiConfig::default().fault(FaultRule::new(
        RequestMatch::any().method("PATCH").resource("secrets"),
        FaultAction::status(
            422,
            "Invalid",
            &format!("Secret \"creds\" is invalid: stringData[password]: Invalid value: \"{leak}\""),
        ),
    )));
    let mut progress = RecordingProgress::default();
    let err = install(tagged(small_platform()), cluster.options(), &mut progress).await.unwrap_err();
    let text = format!("{err} {err:?} {:?}", progress.lines);
    assert!(text.contains("Secret kf/creds"), "{text}");
    assert!(!text.contains(leak), "secret value leaked: {text}");
    cluster.server.clear_faults();
    install(tagged(small_platform()), cluster.options(), &mut RecordingProgress::default()).await.unwrap();
    let mut changed = small_platform();
    changed[3]["stringData"]["password"] = json!("another-s3cret-value");
    let entries = diff(&tagged(changed), &cluster.target(), 4).await.unwrap();
    let secret = entries.iter().find(|e| e.object.kind == "Secret").unwrap();
    assert_eq!(secret.action, Action::Change);
    let shown = serde_json::to_string(&entries).unwrap() + &kfctl::cluster::diff::render_text(&entries);
    assert!(!shown.contains("another-s3cret-value") && !shown.contains(leak), "{shown}");
    assert!(entries.iter().filter(|e| e.object.kind != "Secret").all(|e| e.action == Action::Unchanged), "{shown}");
}

#[tokio::test]
async fn preflight_refuses_unsupported_versions_and_missing_rights_before_any_write() {
    let old = Cluster::start(TestApiConfig::default().git_version("v1.31.2"));
    let err = install(tagged(small_platform()), old.options(), &mut RecordingProgress::default()).await.unwrap_err();
    assert!(err.to_string().contains("v1.31.2") && err.exit_code() == Code::Cluster, "{err}");
    assert!(old.patches().is_empty());
    let denied = Cluster::start(TestApiConfig::default().deny(kfctl_testapi::AccessDenial {
        verb: Some("patch".into()),
        resource: Some("customresourcedefinitions".into()),
        ..Default::default()
    }));
    let err = install(tagged(small_platform()), denied.options(), &mut RecordingProgress::default()).await.unwrap_err();
    assert!(err.to_string().contains("patch customresourcedefinitions.apiextensions.k8s.io"), "{err}");
    assert!(denied.patches().is_empty());
    let mut unknown = small_platform();
    unknown.push(obj("nobody.example.com/v1", "Ghost", Some("kf"), "g", json!({})));
    let err = install(tagged(unknown), denied.options(), &mut RecordingProgress::default()).await.unwrap_err();
    assert!(err.to_string().contains("Ghost"), "{err}");
}

/// Opt-in: the same install against a real cluster. Run it with `KUBECONFIG=... cargo test
/// --test cluster_install -- --ignored real_cluster`; it fails, never skips, without a cluster.
#[tokio::test]
#[ignore = "needs cluster: set KUBECONFIG and run with --ignored real_cluster"]
async fn real_cluster_install() {
    assert!(std::env::var_os("KUBECONFIG").is_some(), "set KUBECONFIG to the cluster to install example.yaml on");
    let meta = InstallMeta { profile: "kind".into(), upstream_version: "v1.11.0".into(), ..Default::default() };
    let mut options = InstallOptions::new(Target::default(), meta);
    options.timeout = Duration::from_secs(30 * 60);
    let mut progress = kfctl::cluster::progress::LineProgress::new(std::io::stderr(), Duration::from_secs(10));
    let report = install(tagged(example()), options, &mut progress).await.unwrap();
    assert_eq!(report.waves_done, report.waves_total);
}

/// CPU time (user + system) of this process's threads, split into the test API server's
/// thread and everything else (the client), from /proc/self/task/*/stat (clock ticks of 10 ms).
fn cpu_times() -> (Duration, Duration) {
    let (mut server, mut client) = (0u64, 0u64);
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let Some((head, tail)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = tail.split_whitespace().collect();
        let ticks = fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
            + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        if head.ends_with("(test-apiserver") { server += ticks } else { client += ticks }
    }
    (Duration::from_millis(server * 10), Duration::from_millis(client * 10))
}

/// One benchmark install: wall time, client and server CPU time, request count.
async fn bench_install(latency: Duration, docs: Vec<Value>) -> (Duration, Duration, Duration, usize) {
    let config = TestApiConfig { reconcile_interval: Duration::from_millis(500), ..TestApiConfig::default() };
    let cluster = Cluster::start(cert_manager_rules(config.latency(latency)));
    let mut options = cluster.options();
    options.poll_interval = Duration::from_millis(10);
    if let Some(n) = std::env::var("KFCTL_BENCH_CONCURRENCY").ok().and_then(|v| v.parse().ok()) {
        options.concurrency = n;
    }
    let (server_before, client_before) = cpu_times();
    let started = Instant::now();
    let report = install(tagged(docs), options, &mut RecordingProgress::default()).await.unwrap();
    let wall = started.elapsed();
    let (server_after, client_after) = cpu_times();
    assert_eq!(report.applied, common::example_object_count());
    (wall, client_after - client_before, server_after - server_before, cluster.server.requests().len())
}

/// Benchmark: the whole platform with 5 ms added to every request. Run in release:
/// `cargo test --release --test cluster_install -- --ignored benchmark --nocapture`
/// (`KFCTL_BENCH_CONCURRENCY=N` overrides the apply concurrency, 16 by default).
///
/// The test server handles requests one at a time on its own thread, so the wall time is bound
/// by its work; the client's time is its own CPU time (every thread but the server's), and the
/// wall time beyond the server's CPU time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture benchmark (figures in tests/bench/README.md)"]
async fn benchmark_example_yaml_with_5ms_latency() {
    let docs = example();
    let (wall, client_cpu, server_cpu, requests) = bench_install(Duration::from_millis(5), docs).await;
    eprintln!(
        "benchmark: {} objects, {requests} requests, 5 ms added per request: wall {:.3}s, client CPU {:.3}s, test server CPU {:.3}s",
        common::example_object_count(),
        wall.as_secs_f64(),
        client_cpu.as_secs_f64(),
        server_cpu.as_secs_f64()
    );
    assert!(client_cpu <= Duration::from_secs(2), "client CPU {client_cpu:?}");
    assert!(
        wall.saturating_sub(server_cpu) <= Duration::from_secs(2),
        "wall {wall:?} beyond the server's {server_cpu:?}"
    );
}

#[tokio::test]
async fn server_dry_run_persists_nothing_and_skips_resources_of_uninstalled_crds() {
    let fresh = Cluster::start(TestApiConfig::default());
    let mut options = fresh.options();
    options.dry_run = kfctl::cluster::DryRun::Server;
    let mut progress = RecordingProgress::default();
    let report = install(tagged(small_platform()), options, &mut progress).await.unwrap();
    assert_eq!(report.applied, 2, "only the namespace and the CRD can be judged on a fresh cluster");
    assert!(
        progress
            .lines
            .iter()
            .any(|l| { l.contains("ConfigMap kf/settings not checked, its namespace is not created yet") })
    );

    let cluster = Cluster::start(TestApiConfig::default());
    cluster.server.seed(namespace("kf")).unwrap();
    let before = stored_state(&cluster);
    let mut options = cluster.options();
    options.dry_run = kfctl::cluster::DryRun::Server;
    let mut progress = RecordingProgress::default();
    let report = install(tagged(small_platform()), options, &mut progress).await.unwrap();
    assert!(report.dry_run);
    assert_eq!(report.applied, small_platform().len() - 1);
    assert!(progress.lines.iter().any(|l| l.contains("Widget kf/w1 not checked")), "{:#?}", progress.lines);
    assert!(cluster.patches().iter().all(|(p, _)| p.contains("dryRun=All")));
    assert_eq!(stored_state(&cluster), before);
    assert!(cluster.record().is_none());
}

/// With admission webhooks simulated (refused until their Service has a ready endpoint, x509
/// until their caBundle is set), the whole platform installs in one pass: the waves put each
/// webhook after its Service's workload, and its configuration before what it admits.
#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn whole_platform_installs_in_one_pass_with_webhooks_simulated() {
    let mut config = cert_manager_rules(TestApiConfig::default().simulate_webhooks(true));
    for kind in ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] {
        // Controllers that manage their own certificates (Istio, Knative, JobSet, Trainer) set these.
        config = config.status_rule(StatusRule::inject_ca_bundle(Rule::kind(kind), Duration::ZERO, "Y2E="));
    }
    let cluster = Cluster::start(config);
    let mut progress = RecordingProgress::default();
    let report = install(tagged(example()), cluster.platform_options(), &mut progress).await.unwrap();
    assert_eq!(report.waves_done, report.waves_total);
    let refused: Vec<String> = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| r.status == 500)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(refused.is_empty(), "writes refused by webhooks: {refused:#?}");
}
