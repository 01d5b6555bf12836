//! Rollback against the test API server: a failed upgrade's record says where it stopped and
//! keeps the previous release; `rollback` returns to it (what the newer release added pruned but
//! guarded kinds, what it changed put back, users' objects kept), and refuses with its reason
//! when there is no previous release, when the values differ, when another version is asked
//! for, and when a CRD stores objects in a version the previous release lacks.

use crate::common;

use common::cluster::{Cluster, crd, identity_of, kind_render, obj};

use kfctl::catalog::RenderedObject;
use kfctl::cluster::install::Operation;
use kfctl::cluster::object::ObjectRef;
use kfctl::cluster::plan::{Plan, PlannedObject};
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::rollback::RollbackError;
use kfctl::cluster::status::{render_text, status};
use kfctl::cluster::upgrade::{Change, change_plan};
use kfctl::cluster::{ClusterError, InstallOptions, install};
use kfctl_testapi::{FaultAction, FaultRule, RequestMatch, StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::process::Output;
use std::time::Duration;

type Id = (String, String, String);

fn options(cluster: &Cluster, version: &str, operation: Operation) -> InstallOptions {
    let mut o = cluster.options_for("kind", version);
    o.timeout = Duration::from_secs(300);
    o.lock_wait = Duration::from_secs(20);
    o.preflight.allow_default_credentials = true;
    o.operation = operation;
    o
}

fn tag(docs: Vec<Value>) -> Vec<RenderedObject> {
    docs.into_iter().map(|obj| RenderedObject::new("platform", obj)).collect()
}

/// A small release: `v1` has a config map; `v2` changes it and adds a config map and a namespace.
fn small(version: &str) -> Vec<RenderedObject> {
    let settings = |a: &str| obj("v1", "ConfigMap", Some("kf"), "settings", json!({"data": {"a": a}}));
    let mut docs = vec![obj("v1", "Namespace", None, "kf", json!({}))];
    match version {
        "v1" => docs.push(settings("1")),
        _ => docs.extend([
            settings("2"),
            obj("v1", "ConfigMap", Some("kf"), "added", json!({"data": {"b": "2"}})),
            obj("v1", "Namespace", None, "added-ns", json!({})),
        ]),
    }
    tag(docs)
}

fn writes(cluster: &Cluster) -> usize {
    let requests = cluster.server.requests();
    let review = |path: &str| path.contains("selfsubjectaccessreviews");
    requests.iter().filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD") && !review(&r.path)).count()
}

async fn run(_cluster: &Cluster, objects: Vec<RenderedObject>, o: InstallOptions) -> Result<(), ClusterError> {
    install(objects, o, &mut RecordingProgress::default()).await.map(|_| ())
}

async fn unchanged_plan(objects: &[RenderedObject], cluster: &Cluster) {
    let plan = change_plan(objects, &cluster.target(), false, 16).await.unwrap();
    let changed: Vec<_> = plan.objects.iter().filter(|o| o.change != Change::Unchanged).collect();
    assert!(changed.is_empty(), "{} objects would change, e.g. {:?}", changed.len(), changed.first());
}

#[tokio::test]
async fn rollback_after_a_completed_upgrade_prunes_what_it_added_and_puts_back_what_it_changed() {
    let cluster = Cluster::start(TestApiConfig::default());
    run(&cluster, small("v1"), options(&cluster, "v1", Operation::Install)).await.unwrap();
    assert_eq!(cluster.record().unwrap().previous, None, "a first install has nothing before it");
    run(&cluster, small("v2"), options(&cluster, "v2", Operation::Upgrade)).await.unwrap();
    let record = cluster.record().unwrap();
    assert_eq!(record.previous.as_ref().map(|p| p.upstream_version.as_str()), Some("v1"));
    let report = status(&cluster.target(), 8).await.unwrap();
    assert!(render_text(&report).contains("previous: v1 (profile kind), rollback with kfctl-rs rollback"));
    assert_eq!(serde_json::to_value(&report).unwrap()["record"]["previous"]["upstreamVersion"], "v1");

    run(&cluster, small("v1"), options(&cluster, "v1", Operation::Rollback)).await.unwrap();
    assert!(!cluster.has("", "configmaps", Some("kf"), "added"), "v2's config map is pruned");
    assert!(cluster.has("", "namespaces", None, "added-ns"), "a Namespace is guarded: kept");
    unchanged_plan(&small("v1"), &cluster).await;
    let record = cluster.record().unwrap();
    let run = record.last_run.clone().unwrap();
    assert_eq!((run.operation.as_str(), run.succeeded, run.from.as_deref()), ("rollback", true, Some("v2")));
    assert_eq!(record.meta.upstream_version, "v1");
    assert_eq!(record.previous.map(|p| p.upstream_version), Some("v2".into()), "rolling back again goes forward");
}

#[tokio::test]
async fn rollback_refuses_without_a_record_or_a_previous_release_and_writes_nothing() {
    let cluster = Cluster::start(TestApiConfig::default());
    let err = run(&cluster, small("v1"), options(&cluster, "v1", Operation::Rollback)).await.unwrap_err();
    assert!(matches!(err, ClusterError::Rollback(RollbackError::NothingInstalled { .. })), "{err}");
    assert!(cluster.record().is_none());
    run(&cluster, small("v1"), options(&cluster, "v1", Operation::Install)).await.unwrap();
    let before = writes(&cluster);
    let err = run(&cluster, small("v1"), options(&cluster, "v1", Operation::Rollback)).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("nothing to roll back to: the record holds no previous release")
            && text.contains("install a release with `kfctl-rs upgrade --version V`"),
        "{text}"
    );
    assert_eq!(writes(&cluster), before, "a refused rollback wrote something");

    let out = common::cluster::kfctl(&cluster, &["rollback", "--yes"]);
    assert_eq!(out.status.code(), Some(5), "{}", text_of(&out));
    assert!(text_of(&out).contains("nothing to roll back to"), "{}", text_of(&out));
    assert_eq!(writes(&cluster), before);
}

#[tokio::test]
async fn rollback_with_other_values_or_another_version_refuses_naming_both() {
    let cluster = Cluster::start(TestApiConfig::default());
    run(&cluster, small("v1"), options(&cluster, "v1", Operation::Install)).await.unwrap();
    run(&cluster, small("v2"), options(&cluster, "v2", Operation::Upgrade)).await.unwrap();
    let before = writes(&cluster);
    let mut other_values = options(&cluster, "v1", Operation::Rollback);
    other_values.meta.values_digest = "sha256:other".into();
    let err = run(&cluster, small("v1"), other_values).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("the values (digest sha256:other) differ from those v1 was installed with"), "{text}");
    assert!(text.contains("-f/--set") && text.contains("`kfctl-rs upgrade --version v1`"), "{text}");
    assert_eq!(kfctl::exit::code_of(&err), Some(kfctl::exit::Code::Usage));
    let err = run(&cluster, small("v1"), options(&cluster, "v0", Operation::Rollback)).await.unwrap_err();
    assert!(err.to_string().contains("--version v0: the previous release is v1 (profile kind)"), "{err}");
    assert_eq!(writes(&cluster), before, "a refused rollback wrote something");

    let out = common::cluster::kfctl(&cluster, &["rollback", "--yes", "--version", "26.10"]);
    assert_eq!(out.status.code(), Some(2), "{}", text_of(&out));
    assert!(text_of(&out).contains("--version 26.10: the previous release is v1 (profile kind)"), "{}", text_of(&out));
    assert_eq!(writes(&cluster), before);
}

#[tokio::test]
async fn rollback_refuses_when_a_crd_stores_a_version_the_previous_release_lacks() {
    let cluster = Cluster::start(TestApiConfig::default());
    let with = |versions: &[(&str, bool)]| tag(vec![crd("widgets", "Widget", versions)]);
    run(&cluster, with(&[("v1alpha1", true)]), options(&cluster, "26.03", Operation::Install)).await.unwrap();
    let newer = with(&[("v1alpha1", false), ("v1", true)]);
    run(&cluster, newer, options(&cluster, "26.03.1", Operation::Upgrade)).await.unwrap();
    let before = writes(&cluster);
    for operation in [Operation::Rollback, Operation::Upgrade] {
        let back = options(&cluster, "26.03", operation);
        let err = run(&cluster, with(&[("v1alpha1", true)]), back).await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ClusterError::Rollback(RollbackError::StoredVersions { .. })), "{text}");
        assert!(text.contains("customresourcedefinition widgets.example.org: cannot roll back to 26.03"), "{text}");
        assert!(text.contains("storedVersions lists v1,") && text.contains("kubectl patch"), "{text}");
    }
    assert_eq!(writes(&cluster), before, "a refused rollback wrote something");
}

/// The command line's `rollback` on a pre-rendered stream (`--objects`, whose record says
/// `pre-rendered` and no values): `--plan` shows the prune, the run rolls back.
#[tokio::test]
async fn the_rollback_verb_plans_and_rolls_back_a_pre_rendered_install() {
    let cluster = Cluster::start(TestApiConfig::default());
    let pre_rendered = |o: &mut InstallOptions| {
        o.meta.upstream_version = "pre-rendered".into();
        o.meta.values_digest = String::new();
    };
    let mut first = options(&cluster, "v1", Operation::Install);
    pre_rendered(&mut first);
    run(&cluster, small("v1"), first).await.unwrap();
    run(&cluster, small("v2"), options(&cluster, "v2", Operation::Upgrade)).await.unwrap();
    let docs: Vec<Value> = small("v1").into_iter().map(|o| o.obj).collect();
    let file = cluster.dir.path().join("v1.yaml");
    std::fs::write(&file, kfctl_yaml::to_yaml_stream(&docs)).unwrap();
    let file = file.display().to_string();

    let out = common::cluster::kfctl(&cluster, &["rollback", "--plan", "--objects", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let text = text_of(&out);
    assert!(text.contains("1 update") && text.contains("1 prune") && text.contains("ConfigMap kf/added"), "{text}");
    assert!(cluster.has("", "configmaps", Some("kf"), "added"), "--plan wrote nothing");

    let out = common::cluster::kfctl(&cluster, &["rollback", "--yes", "--objects", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let text = text_of(&out);
    assert!(text.contains("rollback: v2 (kind) → pre-rendered (kind)") && text.contains("rolled back: "), "{text}");
    assert!(!cluster.has("", "configmaps", Some("kf"), "added"));
    unchanged_plan(&small("v1"), &cluster).await;
}

fn namespace_of(r: &ObjectRef) -> String {
    serde_json::to_value(r).unwrap()["namespace"].as_str().unwrap_or("").to_string()
}

fn guarded(group_kind: &str) -> bool {
    ["apiextensions.k8s.io/CustomResourceDefinition", "/PersistentVolumeClaim", "/Namespace"].contains(&group_kind)
}

/// An object only `new` has, not guarded, in a late wave of `new`'s plan (the last wave that
/// has one): the upgrade fails there, after most of `new` was applied. With its wave and the
/// plan's wave count.
fn late_new_object(old: &[RenderedObject], new: &[RenderedObject]) -> (ObjectRef, usize, usize) {
    let old_ids: HashSet<Id> = old.iter().map(|o| identity_of(&o.obj)).collect();
    let plan = Plan::build(new).unwrap();
    let only_new = |o: &&PlannedObject| {
        let gk = format!("{}/{}", o.reference.group(), o.reference.kind);
        let id = (gk, namespace_of(&o.reference), o.reference.name.clone());
        !old_ids.contains(&id) && !guarded(&id.0)
    };
    let wave = plan.waves.iter().rev().find(|w| w.objects.iter().any(|o| only_new(&o))).unwrap();
    let object = wave.objects.iter().find(only_new).unwrap().reference.clone();
    (object, wave.index, plan.waves.len())
}

/// Issue 36 item 3's acceptance: 26.03 `kind`, users' objects, an upgrade to 26.03.1 that
/// fails in a late wave (one object refused with 422 for good), its record saying so and
/// holding 26.03 as previous; `rollback` returns to 26.03: a plan of 26.03 is empty, what only
/// 26.03.1 has is gone but guarded kinds, the users' objects are there.
#[tokio::test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn a_failed_upgrade_26_03_to_26_03_1_records_where_it_stopped_and_rollback_returns_to_26_03() {
    let mut config = TestApiConfig::default();
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    let cluster = Cluster::start(config);
    let (old, new) = (kind_render("26.03"), kind_render("26.03.1"));
    run(&cluster, old.clone(), options(&cluster, "26.03", Operation::Install)).await.unwrap();
    let users = common::cluster::users_objects(&old);
    for object in &users {
        cluster.server.seed(object.clone()).unwrap();
    }
    let (refused, wave, waves) = late_new_object(&old, &new);
    assert!(wave * 2 > waves, "{refused} is in wave {wave} of {waves}: not a late one");
    let mut matching = RequestMatch::any().method("PATCH").kind(&refused.kind).name(&refused.name);
    let ns = namespace_of(&refused);
    if !ns.is_empty() {
        matching = matching.namespace(&ns);
    }
    let refuse = FaultRule::new(matching, FaultAction::status(422, "Invalid", "refused by the test"));
    cluster.server.set_fault(refuse);
    let err = run(&cluster, new.clone(), options(&cluster, "26.03.1", Operation::Upgrade)).await.unwrap_err();
    assert!(err.to_string().contains(&format!("{refused}: the API server refused it: 422")), "{err}");

    let record = cluster.record().unwrap();
    let last = record.last_run.clone().unwrap();
    assert!(!last.succeeded && last.stage.starts_with(&format!("wave {wave}/{waves}")), "{last:?}");
    assert_eq!(last.from.as_deref(), Some("26.03"));
    assert!(last.applied > 0 && last.applied < last.planned && last.planned == new.len(), "{last:?}");
    assert_eq!(record.previous.as_ref().map(|p| p.upstream_version.as_str()), Some("26.03"));
    let text = render_text(&status(&cluster.target(), 16).await.unwrap());
    let stopped = format!("upgrade from 26.03 to 26.03.1 failed at wave {wave}/{waves}");
    assert!(text.contains(&stopped) && text.contains(&format!("of {} objects applied", new.len())), "{text}");
    assert!(text.contains("previous: 26.03 (profile kind), rollback with kfctl-rs rollback"), "{text}");

    let old_ids: HashSet<Id> = old.iter().map(|o| identity_of(&o.obj)).collect();
    let only_new: Vec<Id> = new.iter().map(|o| identity_of(&o.obj)).filter(|i| !old_ids.contains(i)).collect();
    let left_of = |cluster: &Cluster| {
        let live: HashSet<Id> = cluster.server.objects().iter().map(|o| identity_of(&o.object)).collect();
        let present = |(gk, ns, name): &Id| {
            [ns.as_str(), "default", ""].iter().any(|ns| live.contains(&(gk.clone(), ns.to_string(), name.clone())))
        };
        only_new.iter().filter(|i| present(i) && !guarded(&i.0)).cloned().collect::<Vec<Id>>()
    };
    assert!(left_of(&cluster).len() > 10, "the failed upgrade applied objects only 26.03.1 has");

    cluster.server.clear_faults();
    run(&cluster, old.clone(), options(&cluster, "26.03", Operation::Rollback)).await.unwrap();
    unchanged_plan(&old, &cluster).await;
    let left = left_of(&cluster);
    assert!(left.is_empty(), "{} objects only 26.03.1 has are still there, e.g. {:?}", left.len(), left.first());
    let live: HashSet<Id> = cluster.server.objects().iter().map(|o| identity_of(&o.object)).collect();
    for object in &users {
        assert!(live.contains(&identity_of(object)), "the user's {:?} is gone", identity_of(object));
    }
    let record = cluster.record().unwrap();
    assert_eq!(record.meta.upstream_version, "26.03");
    assert_eq!(record.previous, None, "back on 26.03 after a failed upgrade: nothing newer completed");
    assert!(record.last_run.is_some_and(|r| r.succeeded && r.operation == "rollback"));
}

fn text_of(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}
