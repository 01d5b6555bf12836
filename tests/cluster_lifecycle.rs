//! Day-2 lifecycle against the test API server: upgrade = converge with prune, CRD stored
//! versions, an uninstall that keeps users' data, Terminating namespaces, a record that tells
//! the truth (lost responses, the Lease, the last run), and v1.10.2 → v1.11.0 on the goldens.

use crate::common;

use common::cluster::{Cluster, crd, golden, identity_of, kind_render, obj};

use kfctl::catalog::RenderedObject;
use kfctl::cluster::api::{ApiClient, ResourcePath};
use kfctl::cluster::install::Operation;
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::record::RECORD_NAMESPACE;
use kfctl::cluster::status::status;
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl::cluster::upgrade::{Change, change_plan};
use kfctl::cluster::{ClusterError, InstallOptions, install};
use kfctl_testapi::{FaultAction, FaultRule, Hold, ObjectKey, RequestMatch, StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::time::Duration;

impl Cluster {
    fn lifecycle_options(&self, version: &str) -> InstallOptions {
        let mut o = self.options_for("multi-tenant", version);
        o.timeout = Duration::from_secs(60);
        o.lock_wait = Duration::from_secs(20);
        o
    }

    /// Every stored object but leases, with its resourceVersion.
    fn versions(&self) -> Vec<(String, Value)> {
        let mut all: Vec<(String, Value)> = self
            .server
            .objects()
            .into_iter()
            .filter(|o| o.object["kind"] != "Lease")
            .map(|o| (format!("{:?}", o.key), o.object["metadata"]["resourceVersion"].clone()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    fn writes(&self) -> usize {
        let requests = self.server.requests();
        let review = |path: &str| path.contains("selfsubjectaccessreviews");
        requests.iter().filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD") && !review(&r.path)).count()
    }
}

fn tag(component: &str, docs: Vec<Value>) -> Vec<RenderedObject> {
    docs.into_iter().map(|obj| RenderedObject::new(component, obj)).collect()
}

/// A platform: `kf` with a config map and a CRD; spark (optional) with its own CRD, PVC,
/// namespace, service account and config map.
fn platform(with_spark: bool) -> Vec<RenderedObject> {
    let mut objects = tag(
        "platform",
        vec![
            obj("v1", "Namespace", None, "kf", json!({})),
            crd("trainjobs", "TrainJob", &[("v1", true)]),
            obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"a": "1"}})),
        ],
    );
    if with_spark {
        objects.extend(tag(
            "spark-operator",
            vec![
                obj("v1", "Namespace", None, "spark", json!({})),
                crd("sparkapps", "SparkApp", &[("v1", true)]),
                obj("v1", "ServiceAccount", Some("kf"), "spark-operator", json!({})),
                obj("v1", "ConfigMap", Some("kf"), "spark-config", json!({"data": {"b": "2"}})),
                obj(
                    "v1",
                    "PersistentVolumeClaim",
                    Some("kf"),
                    "spark-data",
                    json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
                ),
            ],
        ));
    }
    objects
}

fn identity(o: &RenderedObject) -> (String, String, String) {
    identity_of(&o.obj)
}

fn notices(progress: &RecordingProgress) -> Vec<String> {
    progress.lines.clone()
}

/// cert-manager's controller, as status rules.
fn cert_manager(config: TestApiConfig) -> TestApiConfig {
    let mut config = config;
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    config
}

#[tokio::test]
async fn dropping_a_component_prunes_its_objects_keeps_its_data_and_a_rerun_changes_nothing() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(platform(true), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    assert!(cluster.has("", "configmaps", Some("kf"), "spark-config"));

    let plan = change_plan(&platform(false), &cluster.target(), false, 8).await.unwrap();
    let marks =
        |c: Change| plan.objects.iter().filter(|o| o.change == c).map(|o| o.object.name.clone()).collect::<Vec<_>>();
    assert_eq!(marks(Change::Prune), ["spark-config", "spark-operator"]);
    assert_eq!(marks(Change::Unchanged).len(), 3);
    assert!(marks(Change::Create).is_empty() && marks(Change::Update).is_empty());
    assert_eq!(plan.kept.len(), 3, "{:?}", plan.kept);

    let mut progress = RecordingProgress::default();
    let mut options = cluster.lifecycle_options("v2");
    options.operation = Operation::Upgrade;
    let report = install(platform(false), options, &mut progress).await.unwrap();
    let pruned: Vec<&str> = report.prune.pruned.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(pruned, ["spark-config", "spark-operator"]);
    assert!(!cluster.has("", "configmaps", Some("kf"), "spark-config"));
    assert!(!cluster.has("", "serviceaccounts", Some("kf"), "spark-operator"));
    assert!(cluster.has("apiextensions.k8s.io", "customresourcedefinitions", None, "sparkapps.example.org"));
    assert!(cluster.has("", "persistentvolumeclaims", Some("kf"), "spark-data"));
    assert!(cluster.has("", "namespaces", None, "spark"));
    assert_eq!(
        report.prune.kept_summary,
        [
            "kept: 1 CRDs — their custom resources would be lost; --purge to delete",
            "kept: 1 PVCs — their volumes' data would be lost; --purge to delete",
            "kept: 1 Namespaces — everything in them would be lost; --purge to delete"
        ]
    );
    assert!(notices(&progress).iter().any(|l| l.contains("kept: 1 CRDs")), "{:?}", notices(&progress));
    let record = cluster.record().unwrap();
    assert!(record.inventory.iter().all(|e| e.component != "spark-operator"), "{:?}", record.inventory);
    assert_eq!(record.kept.len(), 3);
    let report = status(&cluster.target(), 8).await.unwrap();
    assert!(report.components.iter().all(|c| c.name != "spark-operator") && report.healthy, "{report:?}");

    // a re-run writes nothing but the lease
    let before = cluster.versions();
    let mut options = cluster.lifecycle_options("v2");
    options.operation = Operation::Upgrade;
    let report = install(platform(false), options, &mut RecordingProgress::default()).await.unwrap();
    assert!(report.prune.pruned.is_empty() && report.created == 0);
    assert_eq!(cluster.versions(), before, "a re-run changed objects");
    let rerun = change_plan(&platform(false), &cluster.target(), false, 8).await.unwrap();
    assert!(rerun.objects.iter().all(|o| o.change == Change::Unchanged), "{:?}", rerun.objects);
    assert_eq!(cluster.record().unwrap(), record);
}

#[tokio::test]
async fn upgrade_refuses_when_nothing_is_installed_and_a_stored_version_drop_applies_nothing() {
    let cluster = Cluster::start(TestApiConfig::default());
    let mut options = cluster.lifecycle_options("v1");
    options.operation = Operation::Upgrade;
    let err = install(platform(false), options, &mut RecordingProgress::default()).await.unwrap_err();
    assert!(err.to_string().contains("nothing installed by kfctl-rs"), "{err}");
    assert!(cluster.record().is_none());

    let old = vec![crd("widgets", "Widget", &[("v1alpha1", true)])];
    install(tag("platform", old), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    let writes = cluster.writes();
    let new = vec![crd("widgets", "Widget", &[("v1", true)]), obj("v1", "Namespace", None, "fresh", json!({}))];
    let err = install(tag("platform", new), cluster.lifecycle_options("v2"), &mut RecordingProgress::default())
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("widgets.example.org") && text.contains("v1alpha1") && text.contains("storedVersions"),
        "{text}"
    );
    assert!(matches!(err, ClusterError::Lifecycle(_)));
    assert_eq!(cluster.writes(), writes, "a refused upgrade wrote something");
    assert!(!cluster.has("", "namespaces", None, "fresh"));
}

fn user_train_job(ns: &str) -> Value {
    obj("example.org/v1", "TrainJob", Some(ns), "mine", json!({"spec": {"x": 1}}))
}

#[tokio::test]
async fn uninstall_keeps_crds_and_users_objects_purge_removes_them_and_reinstall_waits_for_terminating() {
    let cluster = Cluster::start(TestApiConfig::default().namespace_finalize_after(Duration::from_millis(600)));
    install(platform(false), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    cluster.server.seed(obj("v1", "Namespace", None, "user", json!({}))).unwrap();
    cluster.server.seed(user_train_job("user")).unwrap();
    cluster.server.seed(user_train_job("kf")).unwrap();

    let options = UninstallOptions { concurrency: 8, timeout: Duration::from_secs(20), ..Default::default() };
    let mut progress = RecordingProgress::default();
    let report = uninstall(&cluster.target(), &options, &mut progress).await.unwrap();
    let kept: Vec<(String, String)> = report.kept.iter().map(|k| (k.object.name.clone(), k.reason.clone())).collect();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept[0].0 == "trainjobs.example.org" && kept[0].1.contains("custom resources would be lost"));
    assert!(kept[1].0 == "kf" && kept[1].1 == "holds 1 objects kfctl-rs did not create", "{kept:?}");
    assert!(cluster.has("example.org", "trainjobs", Some("user"), "mine"));
    assert!(cluster.has("example.org", "trainjobs", Some("kf"), "mine"));
    assert!(!cluster.has("", "configmaps", Some("kf"), "settings"));
    assert!(!cluster.has("", "namespaces", None, RECORD_NAMESPACE), "uninstall returned before its namespace was gone");

    // install right after: converges (kf kept; the record namespace re-created)
    install(platform(false), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    let purge = UninstallOptions { purge: true, ..options.clone() };
    cluster.server.clear_requests();
    let report = uninstall(&cluster.target(), &purge, &mut RecordingProgress::default()).await.unwrap();
    assert!(report.deleted.iter().any(|o| o.name == "trainjobs.example.org"), "{report:?}");
    let purged: Vec<(&str, usize)> = report.purged.iter().map(|p| (p.crd.as_str(), p.custom_resources)).collect();
    assert_eq!(purged, [("trainjobs.example.org", 2)], "the user's two TrainJobs go with their CRD");
    assert!(!cluster.has("apiextensions.k8s.io", "customresourcedefinitions", None, "trainjobs.example.org"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!cluster.has("example.org", "trainjobs", Some("user"), "mine"), "purge leaves custom resources");

    // a namespace deleted just before an install: the install waits for it and re-creates it
    install(platform(false), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    let uninstalled = uninstall(&cluster.target(), &purge, &mut RecordingProgress::default()).await.unwrap();
    assert!(uninstalled.deleted.iter().any(|o| o.name == "kf"), "{uninstalled:?}");
    install(platform(false), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    assert!(cluster.has("", "configmaps", Some("kf"), "settings"));
    assert!(status(&cluster.target(), 8).await.unwrap().healthy);
}

#[tokio::test]
async fn a_namespace_still_terminating_is_waited_for_and_recreated() {
    let cluster = Cluster::start(TestApiConfig::default().namespace_finalize_after(Duration::from_millis(800)));
    install(platform(false), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    let api = ApiClient::connect(&cluster.target()).await.unwrap();
    let namespaces =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "namespaces".into(), namespaced: false };
    assert!(api.delete(&namespaces, None, "kf").await.unwrap());
    let kf = cluster.server.object(&ObjectKey::new("", "namespaces", None, "kf")).unwrap();
    assert!(kf["metadata"].get("deletionTimestamp").is_some(), "the test double did not keep kf Terminating");
    let mut progress = RecordingProgress::default();
    install(platform(false), cluster.lifecycle_options("v1"), &mut progress).await.unwrap();
    let kf = cluster.server.object(&ObjectKey::new("", "namespaces", None, "kf")).unwrap();
    assert!(kf["metadata"].get("deletionTimestamp").is_none(), "{kf}");
    assert!(cluster.has("", "configmaps", Some("kf"), "settings"));
    assert!(notices(&progress).iter().any(|l| l.contains("Terminating")), "{:?}", notices(&progress));
}

#[tokio::test]
async fn a_lost_create_response_still_counts_as_created() {
    let lose = FaultRule::new(RequestMatch::any().method("PATCH").name("settings"), FaultAction::LoseResponse).times(1);
    let cluster = Cluster::start(TestApiConfig::default().fault(lose));
    let report =
        install(platform(false), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    let settings = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH" && r.path.contains("/configmaps/settings"))
        .count();
    assert_eq!(settings, 2, "the lost response was not retried");
    let record = cluster.record().unwrap();
    let entry = record.inventory.iter().find(|e| e.reference.name == "settings").unwrap();
    assert!(entry.created, "{entry:?}");
    assert_eq!(report.created, 3);
}

/// Two installs that meet at the lease, as a script the test API server enforces (no hoping
/// that two tasks overlap): both read the Lease as free; the first create waits until both reads
/// were answered, the second until the first was answered 201, so it is refused with 409; the
/// winner's first apply waits until the loser has read the Lease as held twice (it says that it
/// waits between the two reads).
fn lease_race() -> TestApiConfig {
    // a create is POSTed to the collection: its path names no object
    let read = || RequestMatch::any().method("GET").resource("leases").name("kfctl-rs-lock");
    let create = || RequestMatch::any().method("POST").resource("leases");
    let bound = Duration::from_secs(15);
    let hold = |until: RequestMatch, count: u32, status: u16| {
        FaultAction::Hold(Hold::until(until, count).answered_with(status).at_most(bound))
    };
    let both_read_it_free = FaultRule::new(create(), hold(read(), 2, 404)).times(1);
    let one_created_it = FaultRule::new(create(), hold(create(), 1, 201)).every(2).times(1);
    let first_apply = RequestMatch::any().method("PATCH").resource("namespaces").name("kf");
    let loser_waits = FaultRule::new(first_apply, hold(read(), 2, 200)).times(1);
    TestApiConfig::default().fault(both_read_it_free).fault(one_created_it).fault(loser_waits)
}

#[tokio::test]
async fn concurrent_installs_serialise_on_the_lease_in_a_scripted_interleaving() {
    let cluster = Cluster::start(lease_race());
    let (mut a, mut b) = (RecordingProgress::default(), RecordingProgress::default());
    let (ra, rb) = tokio::join!(
        install(platform(true), cluster.lifecycle_options("v1"), &mut a),
        install(platform(true), cluster.lifecycle_options("v1"), &mut b)
    );
    ra.unwrap();
    rb.unwrap();
    let requests = cluster.server.requests();
    assert!(requests.iter().all(|r| !r.hold_expired), "the scripted interleaving did not happen");
    let creates: Vec<u16> =
        requests.iter().filter(|r| r.method == "POST" && r.path.contains("/leases")).map(|r| r.status).collect();
    let leases: Vec<String> = requests
        .iter()
        .filter(|r| r.path.contains("/leases") || r.path.starts_with("/api/v1/namespaces/kf?"))
        .map(|r| format!("{} {} {} after {:?}", r.method, r.path, r.status, r.elapsed))
        .collect();
    assert_eq!(creates[..2], [201, 409], "{leases:#?}");
    // the log is in arrival order: the winner's first apply arrived before the loser's two
    // reads of the held lease and was answered after them, half a second apart
    let first_apply = requests.iter().find(|r| r.path.starts_with("/api/v1/namespaces/kf?")).unwrap();
    assert!(first_apply.elapsed >= Duration::from_millis(400), "{leases:#?}");
    let waiting = |p: &RecordingProgress| {
        notices(p).into_iter().filter(|l| l.contains("waiting for lease kfctl-system/kfctl-rs-lock")).count()
    };
    assert_eq!(waiting(&a) + waiting(&b), 1, "exactly one install waited: {:?} {:?}", notices(&a), notices(&b));
    let record = cluster.record().unwrap();
    assert_eq!(record.inventory.len(), 8);
    assert!(record.inventory.iter().all(|e| e.created || e.reference.kind == "Namespace"), "{:?}", record.inventory);
    assert!(
        !cluster.has("coordination.k8s.io", "leases", Some(RECORD_NAMESPACE), "kfctl-rs-lock"),
        "lease not released"
    );
}

#[tokio::test]
async fn a_held_lease_names_its_holder_and_a_stale_one_is_taken_over() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(platform(true), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    let held = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "kfctl-rs-lock", "namespace": RECORD_NAMESPACE},
        "spec": {"holderIdentity": "kfctl-rs install on ci-runner (pid 7)", "leaseDurationSeconds": 3600,
                 "acquireTime": "2030-01-01T00:00:00.000000Z", "renewTime": "2030-01-01T00:00:00.000000Z"}});
    cluster.server.seed(held.clone()).unwrap();
    let mut options = cluster.lifecycle_options("v1");
    options.lock_wait = Duration::from_millis(300);
    let err = install(platform(true), options, &mut RecordingProgress::default()).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("held by kfctl-rs install on ci-runner (pid 7) since 2030-01-01T00:00:00"), "{text}");

    let mut stale = held;
    stale["spec"]["renewTime"] = json!("2020-01-01T00:00:00.000000Z");
    stale["spec"]["leaseDurationSeconds"] = json!(1);
    cluster.server.seed(stale).unwrap();
    let mut progress = RecordingProgress::default();
    install(platform(true), cluster.lifecycle_options("v1"), &mut progress).await.unwrap();
    assert!(notices(&progress).iter().any(|l| l.contains("took over a stale lease")), "{:?}", notices(&progress));
}

#[tokio::test]
async fn status_tells_a_failed_run_from_a_healthy_one() {
    let refuse = FaultRule::new(
        RequestMatch::any().method("PATCH").name("settings"),
        FaultAction::status(422, "Invalid", "settings is invalid"),
    );
    let cluster = Cluster::start(TestApiConfig::default());
    install(platform(false), cluster.lifecycle_options("v1"), &mut RecordingProgress::default()).await.unwrap();
    cluster.server.set_fault(refuse);
    install(platform(false), cluster.lifecycle_options("v2"), &mut RecordingProgress::default()).await.unwrap_err();
    let report = status(&cluster.target(), 8).await.unwrap();
    assert!(!report.healthy && report.state == "failed", "{}", report.state);
    let run = report.record.last_run.clone().unwrap();
    assert!(!run.succeeded && run.stage.contains("wave") && run.error.unwrap().contains("settings is invalid"));
    let text = kfctl::cluster::status::render_text(&report);
    assert!(
        text.contains("last run: install from v1 to v2 failed at wave ") && text.contains("state: failed"),
        "{text}"
    );
    cluster.server.clear_faults();
    install(platform(false), cluster.lifecycle_options("v2"), &mut RecordingProgress::default()).await.unwrap();
    let report = status(&cluster.target(), 8).await.unwrap();
    assert!(report.healthy && report.record.last_run.unwrap().succeeded);
}

#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn upgrade_v1_10_2_to_v1_11_0_multi_tenant_keeps_the_users_notebook() {
    let cluster = Cluster::start(cert_manager(TestApiConfig::default()));
    let quiet = |o: &mut InstallOptions| {
        o.timeout = Duration::from_secs(300);
        o.preflight.allow_default_credentials = true;
    };
    let mut options = cluster.lifecycle_options("v1.10.2");
    quiet(&mut options);
    install(golden("v1.10.2"), options, &mut RecordingProgress::default()).await.unwrap();
    cluster.server.seed(obj("v1", "Namespace", None, "kubeflow-user", json!({}))).unwrap();
    cluster
        .server
        .seed(obj("kubeflow.org/v1", "Notebook", Some("kubeflow-user"), "mine", json!({"spec": {}})))
        .unwrap();

    let mut options = cluster.lifecycle_options("v1.11.0");
    quiet(&mut options);
    options.operation = Operation::Upgrade;
    let report = install(golden("v1.11.0"), options, &mut RecordingProgress::default()).await.unwrap();
    let new: std::collections::HashSet<_> = golden("v1.11.0").iter().map(identity).collect();
    let only_old: Vec<_> = golden("v1.10.2").iter().map(identity).filter(|i| !new.contains(i)).collect();
    let guarded = |gk: &str| {
        ["apiextensions.k8s.io/CustomResourceDefinition", "/PersistentVolumeClaim", "/Namespace"].contains(&gk)
    };
    let live: std::collections::HashSet<(String, String, String)> = cluster
        .server
        .objects()
        .into_iter()
        .map(|o| {
            let v = o.object;
            let api = v["apiVersion"].as_str().unwrap_or("");
            let group = api.rsplit_once('/').map_or("", |(g, _)| g).to_string();
            (
                format!("{group}/{}", v["kind"].as_str().unwrap_or("")),
                v["metadata"]["namespace"].as_str().unwrap_or("").to_string(),
                v["metadata"]["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // kustomize gives cluster-scoped custom resources (ClusterTrainingRuntime) the namespace of
    // their kustomization, which the server drops; a namespaced object without one goes to
    // `default`, as with kubectl.
    let present = |(gk, ns, name): &(String, String, String)| {
        let stored = if ns.is_empty() { ["default", ""] } else { [ns.as_str(), ""] };
        stored.iter().any(|ns| live.contains(&(gk.clone(), ns.to_string(), name.clone())))
    };
    for id in &new {
        assert!(present(id), "missing after upgrade: {id:?}");
    }
    for id in &only_old {
        assert_eq!(present(id), guarded(&id.0), "only in v1.10.2: {id:?}");
    }
    let kept = only_old.iter().filter(|i| guarded(&i.0)).count();
    assert_eq!(report.prune.kept.len(), kept);
    assert!(cluster.has("kubeflow.org", "notebooks", Some("kubeflow-user"), "mine"), "the user's Notebook is gone");

    let rerun = change_plan(&golden("v1.11.0"), &cluster.target(), false, 16).await.unwrap();
    let changed: Vec<_> = rerun.objects.iter().filter(|o| o.change != Change::Unchanged).collect();
    assert!(changed.is_empty(), "a re-run would change {} objects, e.g. {:?}", changed.len(), changed.first());
}

/// Issue 36's acceptance: a kfctl-rs install of 26.03 with the kind profile upgrades to 26.03.1
/// in one run, with none of upstream's manual deletes: the JobSet controller's Deployment is
/// replaced (its selector changed), the old dashboard, profiles controller and admission
/// webhook objects are pruned, objects that moved into `dashboard` and `notebooks-v1` are
/// handed over in place (same UID), the Hub's objects wait for the Profile's namespace, and
/// the users' objects stay.
#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn upgrade_26_03_kind_to_26_03_1_in_one_run_keeps_users_objects_and_hands_moved_objects_over() {
    let cluster = Cluster::start(cert_manager(TestApiConfig::default()));
    let quiet = |o: &mut InstallOptions| {
        o.timeout = Duration::from_secs(300);
        o.preflight.allow_default_credentials = true;
    };
    let (old, new) = (kind_render("26.03"), kind_render("26.03.1"));
    let mut options = cluster.options_for("kind", "26.03");
    quiet(&mut options);
    install(old.clone(), options, &mut RecordingProgress::default()).await.unwrap();
    let users = common::cluster::users_objects(&old);
    for object in &users {
        cluster.server.seed(object.clone()).unwrap();
    }
    let uid_of = |id: &(String, String, String)| {
        cluster
            .server
            .objects()
            .into_iter()
            .find(|o| identity_of(&o.object) == *id)
            .map(|o| o.object["metadata"]["uid"].clone())
    };
    // Moved into `dashboard` unchanged where it matters: kept in place. The profiles
    // controller's Deployment moved too, but its selector changed (immutable): replaced.
    let moved = (
        "apiextensions.k8s.io/CustomResourceDefinition".to_string(),
        String::new(),
        "poddefaults.kubeflow.org".to_string(),
    );
    let moved_uid = uid_of(&moved).expect("26.03's PodDefault CRD is installed");
    let replaced = ("apps/Deployment".to_string(), "kubeflow".to_string(), "profiles-deployment".to_string());
    let replaced_uid = uid_of(&replaced).expect("26.03's profiles controller is installed");

    // The plan names each replace with its field, and each prune.
    let plan = change_plan(&new, &cluster.target(), false, 16).await.unwrap();
    let change_of = |kind: &str, name: &str| {
        plan.objects
            .iter()
            .find(|o| o.object.kind == kind && o.object.name == name)
            .map(|o| (o.change, o.reason.clone()))
    };
    for deployment in ["jobset-controller-manager", "profiles-deployment"] {
        let (change, reason) = change_of("Deployment", deployment).unwrap_or_else(|| panic!("{deployment} planned"));
        assert_eq!(change, Change::Replace, "{deployment}");
        assert!(reason.is_some_and(|r| r.contains("spec.selector")), "{deployment}: the plan names the field");
    }
    assert_eq!(change_of("Deployment", "centraldashboard").map(|(c, _)| c), Some(Change::Prune));
    assert_eq!(change_of("Deployment", "admission-webhook-deployment").map(|(c, _)| c), Some(Change::Prune));

    let mut options = cluster.options_for("kind", "26.03.1");
    quiet(&mut options);
    options.operation = Operation::Upgrade;
    let mut progress = RecordingProgress::default();
    let report = install(new.clone(), options, &mut progress).await.unwrap();

    let new_ids: std::collections::HashSet<_> = new.iter().map(identity).collect();
    let guarded = |gk: &str| {
        ["apiextensions.k8s.io/CustomResourceDefinition", "/PersistentVolumeClaim", "/Namespace"].contains(&gk)
    };
    let live: std::collections::HashSet<_> = cluster.server.objects().iter().map(|o| identity_of(&o.object)).collect();
    let present = |(gk, ns, name): &(String, String, String)| {
        [ns.as_str(), "default", ""].iter().any(|ns| live.contains(&(gk.clone(), ns.to_string(), name.clone())))
    };
    for id in &new_ids {
        assert!(present(id), "missing after upgrade: {id:?}");
    }
    for id in old.iter().map(identity).filter(|i| !new_ids.contains(i)) {
        assert_eq!(present(&id), guarded(&id.0), "only in 26.03: {id:?}");
    }
    let old_dashboard = ("apps/Deployment".to_string(), "kubeflow".to_string(), "centraldashboard".to_string());
    assert!(!present(&old_dashboard), "the old Central Dashboard is pruned");
    assert!(report.prune.pruned.len() >= 30, "pruned {}", report.prune.pruned.len());
    assert_eq!(uid_of(&moved), Some(moved_uid), "the PodDefault CRD moved into `dashboard` in place, not re-created");
    assert!(uid_of(&replaced).is_some_and(|uid| uid != replaced_uid), "profiles-deployment's new selector: replaced");
    for object in &users {
        assert!(live.contains(&identity_of(object)), "the user's {:?} is gone", identity_of(object));
    }
    let record = cluster.record().unwrap();
    assert_eq!(record.meta.upstream_version, "26.03.1");
    let rerun = change_plan(&new, &cluster.target(), false, 16).await.unwrap();
    let changed: Vec<_> = rerun.objects.iter().filter(|o| o.change != Change::Unchanged).collect();
    assert!(changed.is_empty(), "a re-run would change {} objects, e.g. {:?}", changed.len(), changed.first());
}
