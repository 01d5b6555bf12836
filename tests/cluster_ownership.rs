//! Ownership before any delete, and lost answers settled to the truth, against the test API
//! server (the in-repo test double of a Kubernetes API server; no real cluster): a record with
//! entries added by hand (a user's ConfigMap, `kube-public`, a user's namespace) steers no
//! delete in install, uninstall or `--purge`, sealed or not; an object re-created by someone
//! else is not pruned; a create or delete whose answer was lost is recorded as what it did.

use crate::common::cluster::Cluster;

use kfctl::catalog::RenderedObject;
use kfctl::cluster::api::{ApiClient, ResourcePath};
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::record::{RECORD_KEY, RECORD_NAME, RECORD_NAMESPACE};
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl::cluster::{InstallOptions, install};
use kfctl_testapi::{FaultAction, FaultRule, ObjectKey, RequestMatch, TestApiConfig};
use serde_json::{Value, json};
use std::time::Duration;

fn objects(extra: bool) -> Vec<RenderedObject> {
    let mut docs = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "kf"}, "data": {"a": "1"}}),
    ];
    if extra {
        docs.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "kf"}, "data": {"b": "2"}}));
    }
    docs.into_iter().map(|obj| RenderedObject::new("platform", obj)).collect()
}

fn options(cluster: &Cluster) -> InstallOptions {
    let mut o = cluster.options_for("minimal", "v1");
    o.purge = true;
    o
}

fn purge() -> UninstallOptions {
    UninstallOptions { purge: true, timeout: Duration::from_secs(20), ..Default::default() }
}

fn record_key() -> ObjectKey {
    ObjectKey::new("", "configmaps", Some(RECORD_NAMESPACE), RECORD_NAME)
}

/// Add entries to the stored record by hand, as `kubectl edit` would; `sealed: false` also
/// drops the seal, as if the record were older than seals (so only the live checks remain).
fn tamper(cluster: &Cluster, sealed: bool) {
    let mut cm = cluster.server.object(&record_key()).unwrap();
    let mut doc: Value = serde_json::from_str(cm["data"][RECORD_KEY].as_str().unwrap()).unwrap();
    let entry = |kind: &str, ns: Option<&str>, name: &str| {
        let mut e = json!({"apiVersion": "v1", "kind": kind, "name": name, "component": "platform", "wave": 1, "created": true});
        if let Some(ns) = ns {
            e["namespace"] = json!(ns);
        }
        e
    };
    let inventory = doc["inventory"].as_array_mut().unwrap();
    // the editor even copies the live UID of the user's ConfigMap into its entry
    let mut mine = entry("ConfigMap", Some("kf"), "mine");
    let live = cluster.server.object(&ObjectKey::new("", "configmaps", Some("kf"), "mine")).unwrap();
    mine["uid"] = live["metadata"]["uid"].clone();
    inventory.push(mine);
    inventory.push(entry("Namespace", None, "kube-public"));
    inventory.push(entry("Namespace", None, "user"));
    if !sealed {
        doc.as_object_mut().unwrap().remove("sealed");
    }
    cm["data"][RECORD_KEY] = json!(doc.to_string());
    cluster.server.seed(cm).unwrap();
}

fn users_objects(cluster: &Cluster) {
    cluster
        .server
        .seed(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mine", "namespace": "kf"}}))
        .unwrap();
    cluster.server.seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "user"}})).unwrap();
    cluster
        .server
        .seed(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "data", "namespace": "user"}}))
        .unwrap();
}

fn users_objects_survive(cluster: &Cluster) {
    assert!(cluster.has("", "configmaps", Some("kf"), "mine"), "the user's ConfigMap was deleted");
    assert!(cluster.has("", "namespaces", None, "kube-public"), "kube-public was deleted");
    let user = cluster.server.object(&ObjectKey::new("", "namespaces", None, "user")).expect("the user's namespace");
    assert!(user["metadata"].get("deletionTimestamp").is_none(), "the user's namespace is terminating");
    assert!(cluster.has("", "configmaps", Some("user"), "data"));
}

fn reasons(kept: &[kfctl::cluster::prune::Kept]) -> Vec<(String, String)> {
    let mut v: Vec<_> = kept.iter().map(|k| (k.object.name.clone(), k.reason.clone())).collect();
    v.sort();
    v
}

#[tokio::test]
async fn entries_added_to_the_record_by_hand_steer_no_delete_sealed_or_not() {
    for sealed in [true, false] {
        let cluster = Cluster::start(TestApiConfig::default());
        install(objects(false), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
        users_objects(&cluster);

        tamper(&cluster, sealed);
        let mut progress = RecordingProgress::default();
        let report = install(objects(false), options(&cluster), &mut progress).await.unwrap();
        users_objects_survive(&cluster);
        assert!(report.prune.pruned.is_empty(), "{:?}", report.prune.pruned);
        let kept = reasons(&report.prune.kept);
        assert_eq!(kept.len(), 3, "sealed {sealed}: {kept:?}");
        for (name, reason) in &kept {
            let why = match (sealed, name.as_str()) {
                (true, _) => "added or changed by hand",
                (false, "kube-public") => "belongs to the cluster",
                (false, "user") => "holds 1 objects kfctl-rs did not create",
                (false, _) => "carries no kfctl-rs mark",
            };
            assert!(reason.contains(why), "sealed {sealed}: {name}: {reason}");
        }
        assert!(progress.lines.iter().filter(|l| l.starts_with("not pruned: ")).count() == 3, "{:?}", progress.lines);
        let record = cluster.record().unwrap();
        assert_eq!(record.inventory.len(), 2, "the hand-added entries stay in the record: {:?}", record.inventory);

        tamper(&cluster, sealed);
        let report = uninstall(&cluster.target(), &purge(), &mut RecordingProgress::default()).await.unwrap();
        users_objects_survive(&cluster);
        let kept = reasons(&report.kept);
        let names: Vec<&str> = kept.iter().map(|(n, _)| n.as_str()).collect();
        // kf stays too: it holds the user's ConfigMap; an unsealed record's UIDs are not
        // trusted, and without a UID to check, even kfctl-rs's own `settings` is not deleted
        if sealed {
            assert_eq!(names, ["kf", "kube-public", "mine", "user"], "{kept:?}");
            assert!(report.deleted.iter().any(|o| o.name == "settings"), "{report:?}");
        } else {
            assert_eq!(names, ["kf", "kube-public", "mine", "settings", "user"], "{kept:?}");
            assert!(kept.iter().any(|(n, why)| n == "settings" && why.contains("holds no UID")), "{kept:?}");
            assert!(report.deleted.is_empty(), "{report:?}");
        }
    }
}

#[tokio::test]
async fn an_object_re_created_by_someone_else_is_not_pruned() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(objects(true), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    let recorded = cluster.record().unwrap();
    let entry = recorded.inventory.iter().find(|e| e.reference.name == "extra").unwrap();
    let live = cluster.server.object(&ObjectKey::new("", "configmaps", Some("kf"), "extra")).unwrap();
    assert_eq!(entry.uid.as_deref(), live["metadata"]["uid"].as_str(), "the record keeps the UID");

    let api = ApiClient::connect(&cluster.target()).await.unwrap();
    let path =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "configmaps".into(), namespaced: true };
    assert!(api.delete(&path, Some("kf"), "extra").await.unwrap());
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "kf"}, "data": {"theirs": "1"}});
    api.apply(&path, Some("kf"), "extra", &body, false, false).await.unwrap();

    let report = install(objects(false), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    assert!(cluster.has("", "configmaps", Some("kf"), "extra"), "someone else's re-created object was pruned");
    let kept = reasons(&report.prune.kept);
    assert!(kept.len() == 1 && kept[0].1.contains("is not the one kfctl-rs recorded"), "{kept:?}");
}

#[tokio::test]
async fn a_lost_create_answer_then_a_prune_deletes_and_reports_the_object() {
    let lose = FaultRule::new(RequestMatch::any().method("PATCH").name("extra"), FaultAction::LoseResponse).times(1);
    let cluster = Cluster::start(TestApiConfig::default().fault(lose));
    install(objects(true), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    let extra = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH" && r.path.contains("/configmaps/extra"))
        .count();
    assert_eq!(extra, 2, "the lost answer was not settled by a second apply");
    let recorded = cluster.record().unwrap();
    let entry = recorded.inventory.iter().find(|e| e.reference.name == "extra").unwrap();
    assert!(entry.created && entry.uid.is_some(), "{entry:?}");

    let mut progress = RecordingProgress::default();
    let report = install(objects(false), options(&cluster), &mut progress).await.unwrap();
    assert_eq!(report.prune.pruned.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["extra"]);
    assert!(!cluster.has("", "configmaps", Some("kf"), "extra"));
    assert!(
        progress.lines.iter().any(|l| l == "pruned 1 objects the new render no longer holds"),
        "{:?}",
        progress.lines
    );
}

#[tokio::test]
async fn a_lost_delete_answer_counts_as_deleted_not_already_gone() {
    let lose =
        FaultRule::new(RequestMatch::any().method("DELETE").name("settings"), FaultAction::LoseResponse).times(1);
    let cluster = Cluster::start(TestApiConfig::default());
    install(objects(false), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    cluster.server.set_fault(lose);
    let report = uninstall(&cluster.target(), &purge(), &mut RecordingProgress::default()).await.unwrap();
    assert!(report.deleted.iter().any(|o| o.name == "settings"), "{report:?}");
    assert!(report.already_gone.is_empty(), "{report:?}");
    assert!(!cluster.has("", "configmaps", Some("kf"), "settings"));
}

#[test]
fn uninstall_purge_yes_prints_the_crds_and_custom_resources_it_deleted() {
    let cluster = Cluster::start(TestApiConfig::default());
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {"group": "example.org", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let mut objects = objects(false);
    objects.push(RenderedObject::new("platform", crd));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(install(objects, options(&cluster), &mut RecordingProgress::default())).unwrap();
    for name in ["a", "b", "c"] {
        let widget =
            json!({"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "kf"}});
        cluster.server.seed(widget).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kfctl-rs"))
        .args(["uninstall", "--purge", "--yes", "--kubeconfig"])
        .arg(&cluster.kubeconfig)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("purged: 1 CRDs and the 3 custom resources of their kinds"), "{stdout}");
    assert!(stdout.contains("  purged: CRD widgets.example.org and its 3 custom resources"), "{stdout}");
}

#[tokio::test]
async fn uninstall_dry_run_reports_what_would_go_and_deletes_nothing() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(objects(true), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    users_objects(&cluster);
    let before = cluster.server.requests().len();
    let dry = UninstallOptions { dry_run: true, ..purge() };
    let report = uninstall(&cluster.target(), &dry, &mut RecordingProgress::default()).await.unwrap();
    let mut would: Vec<&str> = report.deleted.iter().map(|o| o.name.as_str()).collect();
    would.sort();
    assert_eq!(would, ["extra", "settings"], "kf holds the user's ConfigMap: kept; {report:?}");
    assert!(report.kept.iter().any(|k| k.object.name == "kf"), "{report:?}");
    assert!(
        cluster.has("", "configmaps", Some("kf"), "settings") && cluster.has("", "configmaps", Some("kf"), "extra")
    );
    users_objects_survive(&cluster);
    assert!(cluster.record().is_some(), "the record stays");
    let since: Vec<_> = cluster.server.requests().into_iter().skip(before).collect();
    let deletes: Vec<_> = since.iter().filter(|r| r.method == "DELETE").collect();
    assert_eq!(deletes.len(), 2, "each would-be delete was checked by the server: {deletes:?}");
    // kube sends the dry run in the DeleteOptions body, as kubectl does
    let dry_run =
        |r: &&kfctl_testapi::RecordedRequest| String::from_utf8_lossy(&r.body).contains(r#""dryRun":["All"]"#);
    assert!(deletes.iter().all(dry_run), "{deletes:?}");
    let leases: Vec<_> = since
        .iter()
        .filter(|r| r.path.contains("/namespaces/kfctl-system/leases"))
        .map(|r| (&r.method, &r.path))
        .collect();
    assert!(leases.is_empty(), "a dry run takes no lease: {leases:?}");
}
