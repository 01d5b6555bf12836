//! Issue 38: kfctl-rs never deletes what it did not create, against the test API server (the
//! in-repo test double of a Kubernetes API server; no real cluster) and real kubectl:
//!
//! - a cert-manager another field manager applied beforehand, then `install` with cert-manager
//!   enabled (refused on a conflict, then with `--force-conflicts`), then `uninstall --purge`:
//!   every pre-existing object, CRD and Namespace is still there, and the plan, the install
//!   summary and the uninstall report say they are not kfctl-rs's;
//! - record entries forged with a valid seal and live UIDs delete nothing without the mark;
//! - lost create answers (every third write) followed by dropping the component leave nothing
//!   behind.

use crate::common;

use common::cluster::{Cluster, cert_manager_cluster, kubectl_applies};
use kfctl::catalog::{RenderedObject, render};
use kfctl::cluster::mark::{MARK_ANNOTATION, MARK_LABEL};
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::record::{RECORD_KEY, RECORD_NAME, RECORD_NAMESPACE};
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl::cluster::upgrade::change_plan;
use kfctl::cluster::{ClusterError, InstallOptions, install};
use kfctl_testapi::{FaultAction, FaultRule, ObjectKey, RequestMatch, TestApiConfig};
use serde_json::{Value, json};
use std::time::Duration;

fn identity(o: &Value) -> String {
    let s = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    format!("{} {} {}/{}", s("/apiVersion"), s("/kind"), s("/metadata/namespace"), s("/metadata/name"))
}

/// cert-manager's objects of the kind render, as the cluster's own team would apply them.
fn cert_manager() -> Vec<RenderedObject> {
    let rendered = render(&common::render_request_set("kind", &[])).expect("kind renders");
    rendered.objects.into_iter().filter(|o| o.component == "cert-manager").collect()
}

fn options(cluster: &Cluster, force_conflicts: bool) -> InstallOptions {
    let mut o = cluster.options_for("kind", common::release());
    o.timeout = Duration::from_secs(120);
    o.preflight.allow_default_credentials = true;
    o.force_conflicts = force_conflicts;
    o
}

fn purge() -> UninstallOptions {
    UninstallOptions { purge: true, concurrency: 8, timeout: Duration::from_secs(60), ..Default::default() }
}

/// Every object of `objects` is still on the cluster, none of them terminating or marked.
fn all_still_there(cluster: &Cluster, objects: &[RenderedObject]) {
    let live: Vec<Value> = cluster.server.objects().into_iter().map(|s| s.object).collect();
    for o in objects {
        let id = identity(&o.obj);
        let found = live.iter().find(|l| identity(l) == id).unwrap_or_else(|| panic!("{id} was deleted"));
        assert!(found.pointer("/metadata/deletionTimestamp").is_none(), "{id} is terminating");
        assert!(found.pointer(&format!("/metadata/labels/{}", MARK_LABEL.replace('/', "~1"))).is_none(), "{id} marked");
    }
}

#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
async fn a_cert_manager_applied_before_survives_install_force_conflicts_and_uninstall_purge() {
    let cluster = cert_manager_cluster();
    let theirs = cert_manager();
    assert!(theirs.iter().any(|o| o.obj["kind"] == "CustomResourceDefinition"), "the render holds its CRDs");
    assert!(theirs.iter().any(|o| o.obj["kind"] == "Namespace"), "the render holds its namespace");
    // their team runs two replicas of the controller: a field kfctl-rs's apply would change
    let mut changed = theirs.clone();
    let controller = changed
        .iter_mut()
        .find(|o| o.obj["kind"] == "Deployment" && o.obj["metadata"]["name"] == "cert-manager")
        .expect("cert-manager's controller");
    controller.obj["spec"]["replicas"] = json!(2);
    kubectl_applies(&cluster, &changed);

    // the plan says every one of them is not kfctl-rs's
    let plan = change_plan(&theirs, &cluster.target(), true, 8).await.unwrap();
    assert_eq!(
        plan.preexisting(),
        theirs.len(),
        "{:?}",
        plan.objects.iter().filter(|o| !o.preexisting).collect::<Vec<_>>()
    );
    assert!(plan.objects.iter().all(|o| o.reason.as_deref().is_some_and(|r| r.contains("not kfctl-rs's"))));

    // plain install stops on the other manager's field, naming it and the way to leave it be
    let refused = install(theirs.clone(), options(&cluster, false), &mut RecordingProgress::default()).await;
    let err = refused.expect_err("the conflict on spec.replicas");
    assert!(matches!(err, ClusterError::Conflict { .. }), "{err}");
    assert!(err.to_string().contains(".provided=true") && err.to_string().contains("never deleted"), "{err}");

    // --force-conflicts takes the fields, never the objects
    let report = install(theirs.clone(), options(&cluster, true), &mut RecordingProgress::default()).await.unwrap();
    assert_eq!(report.preexisting.len(), theirs.len(), "the summary names every one of them");
    assert_eq!(report.created, 0);
    let record = cluster.record().unwrap();
    assert!(record.inventory.iter().all(|e| !e.created && !e.adopted), "recorded as pre-existing");

    let removed = uninstall(&cluster.target(), &purge(), &mut RecordingProgress::default()).await.unwrap();
    all_still_there(&cluster, &theirs);
    assert!(removed.deleted.is_empty(), "deleted: {:?}", removed.deleted);
    assert!(removed.purged.is_empty(), "purged: {:?}", removed.purged);
    let not_ours = removed.kept.iter().filter(|k| k.reason.contains("not kfctl-rs's")).count();
    assert_eq!(not_ours, theirs.len(), "the report says each is not kfctl-rs's: {:?}", removed.kept);
}

fn platform(extra: usize) -> Vec<RenderedObject> {
    let mut docs = vec![
        ("platform", json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}})),
        (
            "platform",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "kf"}}),
        ),
    ];
    for i in 0..extra {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("extra-{i}"), "namespace": "kf"}});
        docs.push(("extra", cm));
    }
    docs.into_iter().map(|(component, obj)| RenderedObject::new(component, obj)).collect()
}

/// What a forger who can write the record computes: the seal is sha256 over the entry, public.
fn sealed_entry(mut entry: Value) -> Value {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(format!("kfctl-rs record entry\n{entry}").as_bytes());
    entry["digest"] = json!(hex::encode(&hash[..8]));
    entry
}

/// Add entries for the user's objects to the record, each with the live UID and a valid seal.
fn forge(cluster: &Cluster, targets: &[(&str, &str, Option<&str>, &str)]) {
    let key = ObjectKey::new("", "configmaps", Some(RECORD_NAMESPACE), RECORD_NAME);
    let mut cm = cluster.server.object(&key).unwrap();
    let mut doc: Value = serde_json::from_str(cm["data"][RECORD_KEY].as_str().unwrap()).unwrap();
    for &(resource, kind, namespace, name) in targets {
        let live = cluster.server.object(&ObjectKey::new("", resource, namespace, name)).unwrap();
        let mut entry = json!({"apiVersion": "v1", "kind": kind, "name": name, "component": "platform",
            "wave": 1, "created": true, "uid": live["metadata"]["uid"]});
        if let Some(ns) = namespace {
            entry["namespace"] = json!(ns);
        }
        doc["inventory"].as_array_mut().unwrap().push(sealed_entry(entry));
    }
    cm["data"][RECORD_KEY] = json!(doc.to_string());
    cluster.server.seed(cm).unwrap();
    let record = cluster.record().unwrap();
    for &(_, _, _, name) in targets {
        assert!(record.inventory.iter().any(|e| e.reference.name == name), "the forged seal of {name} does not pass");
    }
}

#[tokio::test]
async fn record_entries_forged_with_a_valid_seal_and_live_uids_delete_nothing_unmarked() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(platform(0), cluster.options_for("minimal", "v1"), &mut RecordingProgress::default()).await.unwrap();
    let settings = cluster.server.object(&ObjectKey::new("", "configmaps", Some("kf"), "settings")).unwrap();
    assert_eq!(settings["metadata"]["labels"][MARK_LABEL], json!(RECORD_NAME), "what kfctl-rs created is marked");
    assert_eq!(settings["metadata"]["annotations"][MARK_ANNOTATION], json!("kfctl-system/kfctl-rs-install"));
    // a user's bare namespace and another team's ServiceAccount: no managedFields at all
    cluster.server.seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "user"}})).unwrap();
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "theirs", "namespace": "kf"}});
    cluster.server.seed(sa).unwrap();
    let forged =
        [("namespaces", "Namespace", None, "user"), ("serviceaccounts", "ServiceAccount", Some("kf"), "theirs")];

    // a prune of the forged entries (the render does not hold them) deletes neither
    forge(&cluster, &forged);
    let mut options = cluster.options_for("minimal", "v1");
    options.purge = true;
    let report = install(platform(0), options, &mut RecordingProgress::default()).await.unwrap();
    assert!(report.prune.pruned.is_empty(), "{:?}", report.prune.pruned);
    assert!(cluster.has("", "namespaces", None, "user") && cluster.has("", "serviceaccounts", Some("kf"), "theirs"));

    forge(&cluster, &forged);
    let removed = uninstall(&cluster.target(), &purge(), &mut RecordingProgress::default()).await.unwrap();
    assert!(cluster.has("", "namespaces", None, "user"), "the user's namespace was deleted");
    assert!(cluster.has("", "serviceaccounts", Some("kf"), "theirs"), "the other team's ServiceAccount was deleted");
    for name in ["user", "theirs"] {
        let kept = removed.kept.iter().find(|k| k.object.name == name).unwrap_or_else(|| panic!("{name} not named"));
        assert!(kept.reason.contains("carries no kfctl-rs mark"), "{name}: {}", kept.reason);
    }
    let deleted: Vec<&str> = removed.deleted.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(deleted, ["settings"], "kf stays: it holds their ServiceAccount; {removed:?}");
}

#[tokio::test]
async fn lost_create_answers_then_dropping_the_component_leave_nothing_behind() {
    let lose = FaultRule::new(RequestMatch::any().method("PATCH"), FaultAction::LoseResponse).every(3);
    let cluster = Cluster::start(TestApiConfig::default().fault(lose));
    let mut options = cluster.options_for("minimal", "v1");
    options.purge = true;
    let report = install(platform(9), options.clone(), &mut RecordingProgress::default()).await.unwrap();
    assert_eq!(report.created, 11, "every create counted, lost answers included");
    let record = cluster.record().unwrap();
    assert!(record.inventory.iter().all(|e| e.created && e.uid.is_some()), "{:?}", record.inventory);

    let report = install(platform(0), options, &mut RecordingProgress::default()).await.unwrap();
    let mut pruned: Vec<String> = report.prune.pruned.iter().map(|o| o.name.clone()).collect();
    pruned.sort();
    assert_eq!(pruned, (0..9).map(|i| format!("extra-{i}")).collect::<Vec<_>>(), "{:?}", report.prune.kept);
    for i in 0..9 {
        assert!(!cluster.has("", "configmaps", Some("kf"), &format!("extra-{i}")), "extra-{i} left behind");
    }
}
