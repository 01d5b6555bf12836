//! Issue 24, item 1: `adopt` takes over a platform kubectl installed (server-side, as upstream's
//! loop does, or client-side), on the test API server — the in-repo **test double** of
//! kube-apiserver — and with real kubectl 1.33 where present. It refuses, writing nothing, on an
//! empty cluster, on another release and when a kfctl-rs record exists; after it, upgrade, status,
//! diff and uninstall work as for a kfctl-rs install. No real cluster is involved.

use crate::common;

use common::cluster::{Cluster, golden, identity_of as identity, obj, users_objects};
use kfctl::catalog::RenderedObject;
use kfctl::cluster::adopt::{AdoptError, AdoptOptions, adopt};
use kfctl::cluster::diff::{Action, diff};
use kfctl::cluster::install::Operation;
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::status::status;
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl::cluster::upgrade::{Change, change_plan};
use kfctl::cluster::{ClusterError, InstallOptions, install};
use kfctl_testapi::{ObjectKey, StatusRule, Target as Rule, TestApiConfig};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn web(tag: &str) -> Value {
    obj(
        "apps/v1",
        "Deployment",
        Some("kf"),
        "web",
        json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": format!("ghcr.io/kubeflow/web:{tag}")}]}}}}),
    )
}

fn namespace() -> Value {
    obj(
        "v1",
        "Namespace",
        None,
        "kf",
        json!({"metadata": {"name": "kf", "labels": {"app.kubernetes.io/part-of": "kubeflow"}}}),
    )
}

fn settings() -> Value {
    obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"a": "1"}}))
}

fn extra() -> Value {
    obj("v1", "ConfigMap", Some("kf"), "extra", json!({"data": {"b": "2"}}))
}

fn tagged(docs: Vec<Value>) -> Vec<RenderedObject> {
    docs.into_iter().map(|obj| RenderedObject::new("platform", obj)).collect()
}

fn release(tag: &str) -> Vec<RenderedObject> {
    tagged(vec![namespace(), settings(), extra(), web(tag)])
}

fn writes(cluster: &Cluster) -> usize {
    let requests = cluster.server.requests();
    let review = |path: &str| path.contains("selfsubjectaccessreviews");
    requests.iter().filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD") && !review(&r.path)).count()
}

async fn kube_client(cluster: &Cluster) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(&cluster.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
    kube::Client::try_from(config).unwrap()
}

fn dynamic(client: &kube::Client, doc: &Value) -> Api<DynamicObject> {
    let api = doc["apiVersion"].as_str().unwrap();
    let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
    let kind = doc["kind"].as_str().unwrap();
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    match doc["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// The objects as kubectl leaves them: the namespace and the Deployment applied server-side
/// (manager `kubectl`), the ConfigMap created client-side (`kubectl-client-side-apply`, with its
/// last-applied annotation); `extra` is not installed.
async fn kubectl_installed(cluster: &Cluster, tag: &str) {
    let client = kube_client(cluster).await;
    for doc in [namespace(), web(tag)] {
        let name = doc["metadata"]["name"].as_str().unwrap().to_string();
        let object: DynamicObject = serde_json::from_value(doc.clone()).unwrap();
        dynamic(&client, &doc)
            .patch(&name, &PatchParams::apply("kubectl").force(), &Patch::Apply(object))
            .await
            .unwrap();
    }
    let mut cm = settings();
    cm["metadata"]["annotations"] = json!({"kubectl.kubernetes.io/last-applied-configuration": settings().to_string()});
    let object: DynamicObject = serde_json::from_value(cm.clone()).unwrap();
    let params = PostParams { field_manager: Some("kubectl-client-side-apply".into()), ..Default::default() };
    dynamic(&client, &cm).create(&params, &object).await.unwrap();
}

fn managers(cluster: &Cluster, key: &ObjectKey) -> Vec<(String, String)> {
    let live = cluster.server.object(key).unwrap();
    let entries = live["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
    entries.iter().map(|e| (e["manager"].as_str().unwrap().into(), e["operation"].as_str().unwrap().into())).collect()
}

fn kfctl(cluster: &Cluster, objects: &Path, args: &[&str]) -> Output {
    Command::new(common::binary())
        .args(args)
        .args(["--profile", "adopted", "--objects"])
        .arg(objects)
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn write_stream(dir: &Path, name: &str, objects: &[RenderedObject]) -> std::path::PathBuf {
    let path = dir.join(name);
    let docs: Vec<String> = objects.iter().map(|o| kfctl_yaml::to_yaml(&o.obj)).collect();
    std::fs::write(&path, docs.join("---\n")).unwrap();
    path
}

#[tokio::test]
async fn adopt_refuses_an_empty_cluster_takes_over_kubectls_objects_once_and_day_two_works() {
    let cluster = Cluster::start(
        TestApiConfig::default().status_rule(StatusRule::ready_after(Rule::kind("Deployment"), Duration::ZERO)),
    );
    let options = AdoptOptions::new(cluster.target(), cluster.options_for("adopted", "v1").meta);
    let err = adopt(&release("v1"), &options, &mut RecordingProgress::default()).await.unwrap_err();
    assert!(matches!(&err, ClusterError::Adopt(e) if matches!(**e, AdoptError::NothingPresent { .. })), "{err}");
    assert!(err.to_string().contains("none of the 4 objects of v1 exists"), "{err}");
    assert_eq!(writes(&cluster), 0, "a refused adopt wrote something");

    kubectl_installed(&cluster, "v1").await;
    let stream = write_stream(cluster.dir.path(), "v1.yaml", &release("v1"));
    let before = writes(&cluster);
    let out = kfctl(&cluster, &stream, &["adopt", "--plan"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("3 present, 0 differing, 1 missing, of 4 objects; 3 managed by kubectl"), "{text}");
    assert!(text.contains("missing   wave  2  ConfigMap kf/extra; not created"), "{text}");
    let out = kfctl(&cluster, &stream, &["adopt"]);
    assert_eq!(out.status.code(), Some(2), "no terminal, no --yes: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(writes(&cluster), before, "adopt --plan or an unconfirmed adopt wrote something");

    let out = kfctl(&cluster, &stream, &["adopt", "--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("adopted 3 objects of pre-rendered (profile adopted)")
            && text.contains("3 taken over from kubectl"),
        "{text}"
    );
    let record = cluster.record().unwrap();
    assert_eq!(record.inventory.len(), 3);
    assert!(record.inventory.iter().all(|e| e.adopted && !e.created), "{:?}", record.inventory);
    assert_eq!(record.last_run.as_ref().unwrap().operation, "adopt");
    for key in [
        ObjectKey::new("", "namespaces", None, "kf"),
        ObjectKey::new("", "configmaps", Some("kf"), "settings"),
        ObjectKey::new("apps", "deployments", Some("kf"), "web"),
    ] {
        let m = managers(&cluster, &key);
        assert!(m.iter().all(|(name, _)| !name.starts_with("kubectl")), "{key:?}: {m:?}");
        assert!(m.contains(&("kfctl-rs".to_string(), "Apply".to_string())), "{key:?}: {m:?}");
    }
    let cm = cluster.server.object(&ObjectKey::new("", "configmaps", Some("kf"), "settings")).unwrap();
    assert!(
        cm["metadata"]["annotations"].get("kubectl.kubernetes.io/last-applied-configuration").is_some(),
        "adopt changes nothing else"
    );

    let before = writes(&cluster);
    let out = kfctl(&cluster, &stream, &["adopt", "--yes"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("already has a kfctl-rs install record (pre-rendered, profile adopted)")
            && err.contains("kfctl-rs upgrade"),
        "{err}"
    );
    assert_eq!(writes(&cluster), before, "a second adopt wrote something");

    let entries = diff(&release("v1"), &cluster.target(), 8).await.unwrap();
    let changed: Vec<_> =
        entries.iter().filter(|e| e.action != Action::Unchanged).map(|e| (e.object.to_string(), e.action)).collect();
    assert_eq!(changed, [("ConfigMap kf/extra".to_string(), Action::Create)]);
    assert!(entries.iter().all(|e| e.conflicts.is_empty()), "kubectl owns nothing any more");

    // upgrade: the missing object is created, the Deployment the new render drops is pruned
    let next = tagged(vec![namespace(), settings(), extra()]);
    let mut upgrade: InstallOptions = cluster.options_for("adopted", "v2");
    upgrade.operation = Operation::Upgrade;
    let report = install(next.clone(), upgrade, &mut RecordingProgress::default()).await.unwrap();
    assert_eq!(report.prune.pruned.iter().map(|o| o.to_string()).collect::<Vec<_>>(), ["Deployment kf/web"]);
    assert!(cluster.has("", "configmaps", Some("kf"), "extra"));
    let plan = change_plan(&next, &cluster.target(), false, 8).await.unwrap();
    assert!(plan.objects.iter().all(|o| o.change == Change::Unchanged), "{:?}", plan.objects);
    assert!(status(&cluster.target(), 8).await.unwrap().healthy);
    let gone =
        uninstall(&cluster.target(), &UninstallOptions::default(), &mut RecordingProgress::default()).await.unwrap();
    assert!(
        gone.deleted.iter().any(|o| o.name == "settings") && gone.deleted.iter().any(|o| o.name == "kf"),
        "{gone:?}"
    );
}

#[tokio::test]
async fn adopt_refuses_another_release_naming_it_and_writes_nothing() {
    let cluster = Cluster::start(TestApiConfig::default());
    kubectl_installed(&cluster, "v1.10.2").await;
    let before = writes(&cluster);
    let mut meta = cluster.options_for("adopted", "v1.11.0").meta;
    meta.upstream_version = "v1.11.0".into();
    let err = adopt(&release("v1.11.0"), &AdoptOptions::new(cluster.target(), meta), &mut RecordingProgress::default())
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("plainly holds another release than v1.11.0: 1 of 1 objects compared run other image tags or version labels (most often v1.10.2)")
            && text.contains("Deployment kf/web image spec.template.spec.containers.c is ghcr.io/kubeflow/web:v1.10.2 where v1.11.0 renders ghcr.io/kubeflow/web:v1.11.0"),
        "{text}"
    );
    assert_eq!(writes(&cluster), before);
    assert!(cluster.record().is_none());
}

#[tokio::test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn real_kubectl_installs_v1_10_2_upstreams_way_then_adopt_and_upgrade_to_v1_11_0() {
    adopt_then_upgrade("v1.10.2", "v1.11.0").await;
}

/// Issue 24's acceptance: v1.11.0 installed upstream's way, adopted, upgraded to 26.03.
#[tokio::test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn real_kubectl_installs_v1_11_0_upstreams_way_then_adopt_and_upgrade_to_26_03() {
    adopt_then_upgrade("v1.11.0", "26.03").await;
}

/// Issue 36's acceptance: 26.03 installed upstream's way, adopted, upgraded to 26.03.1 in one
/// run with none of upstream's manual deletes (the JobSet controller's selector, the old
/// dashboard, profiles controller and admission webhook objects).
#[tokio::test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn real_kubectl_installs_26_03_upstreams_way_then_adopt_and_upgrade_to_26_03_1() {
    adopt_then_upgrade("26.03", "26.03.1").await;
}

/// Real kubectl applies `from`'s `example/` server-side until it settles (upstream's README
/// loop); a user adds a Namespace, a Profile, a Notebook, a PodDefault, a TrainJob, an
/// InferenceService and a PVC (those whose kinds `from` serves); adopt as `to` is refused (another
/// release), adopt as `from` takes over every object; upgrade to `to` leaves every object of
/// `to`, removes what only `from` had except CRDs, PVCs and Namespaces, keeps the user's
/// objects, and a second plan changes nothing.
async fn adopt_then_upgrade(from: &str, to: &str) {
    let mut config = TestApiConfig::default();
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    let cluster = Cluster::start(config);
    let dir = cluster.dir.path();
    let old = golden(from);
    let file = write_stream(dir, "example.yaml", &old);
    let mut settled = false;
    for _ in 0..4 {
        let out = Command::new(common::kubectl())
            .arg("--kubeconfig")
            .arg(&cluster.kubeconfig)
            .args(["--cache-dir"])
            .arg(dir.join("cache"))
            .args(["apply", "--server-side", "--force-conflicts", "-f"])
            .arg(&file)
            .output()
            .unwrap();
        if out.status.success() {
            settled = true;
            break;
        }
    }
    assert!(settled, "kubectl's loop did not settle");
    let users = users_objects(&old);
    for object in &users {
        cluster.server.seed(object.clone()).unwrap();
    }

    // The whole platform twice on the test double beside the other suites: generous bounds,
    // since what is tested is the outcome, not the speed (that is the benchmark's).
    let quiet = |o: &mut InstallOptions| {
        o.timeout = Duration::from_secs(900);
        o.preflight.allow_default_credentials = true;
    };
    let meta = |v: &str| {
        let mut m = cluster.options_for("multi-tenant", v).meta;
        m.upstream_version = v.into();
        m
    };
    let before = writes(&cluster);
    let mut refused = AdoptOptions::new(cluster.target(), meta(to));
    refused.timeout = Duration::from_secs(900);
    let err = adopt(&golden(to), &refused, &mut RecordingProgress::default()).await.unwrap_err();
    assert!(err.to_string().contains(&format!("plainly holds another release than {to}")), "{err}");
    assert_eq!(writes(&cluster), before);
    let mut o = AdoptOptions::new(cluster.target(), meta(from));
    o.timeout = Duration::from_secs(900);
    let report = adopt(&old, &o, &mut RecordingProgress::default()).await.unwrap();
    assert_eq!((report.adopted, report.missing), (old.len(), 0), "{report:?}");
    let kubectl_left = cluster
        .server
        .objects()
        .into_iter()
        .filter(|o| {
            o.object["metadata"]["managedFields"].as_array().into_iter().flatten().any(|e| e["manager"] == "kubectl")
        })
        .count();
    assert_eq!(kubectl_left, 0, "kubectl still manages objects after adopt");

    let mut options = cluster.options_for("multi-tenant", to);
    quiet(&mut options);
    options.operation = Operation::Upgrade;
    let upgraded = install(golden(to), options, &mut RecordingProgress::default()).await.unwrap();
    let new: HashSet<_> = golden(to).iter().map(|o| identity(&o.obj)).collect();
    let live: HashSet<_> = cluster.server.objects().iter().map(|o| identity(&o.object)).collect();
    let present = |(gk, ns, name): &(String, String, String)| {
        [ns.as_str(), "default", ""].iter().any(|ns| live.contains(&(gk.clone(), ns.to_string(), name.clone())))
    };
    let guarded = |gk: &str| {
        ["apiextensions.k8s.io/CustomResourceDefinition", "/PersistentVolumeClaim", "/Namespace"].contains(&gk)
    };
    for id in &new {
        assert!(present(id), "missing after upgrade: {id:?}");
    }
    for id in old.iter().map(|o| identity(&o.obj)).filter(|i| !new.contains(i)) {
        assert_eq!(present(&id), guarded(&id.0), "only in {from}: {id:?}");
    }
    assert!(!upgraded.prune.pruned.is_empty());
    for object in &users {
        assert!(live.contains(&identity(object)), "the user's {:?} is gone", identity(object));
    }
    let gone = old.iter().filter(|o| !new.contains(&identity(&o.obj))).count();
    let arrived = new.len() - (old.len() - gone);
    println!("{from} -> {to}: {gone} objects only {from} had, {arrived} new; pruned {}", upgraded.prune.pruned.len());
    let rerun = change_plan(&golden(to), &cluster.target(), false, 16).await.unwrap();
    let changed: Vec<_> = rerun.objects.iter().filter(|o| o.change != Change::Unchanged).collect();
    assert!(changed.is_empty(), "a re-run would change {} objects, e.g. {:?}", changed.len(), changed.first());
}
