//! One test per reconcile step, driven through [`State`] with explicit instants.

use super::*;
use crate::config::TestApiConfig;

fn state(config: TestApiConfig) -> State {
    State::new(config)
}

fn put(state: &mut State, key: &ObjectKey, object: Value, at: Instant) {
    state.controller_write(key, object, "test", None, at);
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": name}}}}})
}

fn deploy_key(name: &str) -> ObjectKey {
    ObjectKey::new("apps", "deployments", Some("default"), name)
}

#[test]
fn set_status_rule_merges_after_its_delay_once_per_generation() {
    let rule =
        StatusRule::set_status(Target::kind("Deployment"), Duration::from_millis(100), json!({"phase": "Scripted"}));
    let mut s = state(TestApiConfig::default().status_rule(rule));
    let t0 = Instant::now();
    put(&mut s, &deploy_key("web"), deployment("web"), t0);
    reconcile(&mut s, t0);
    assert!(s.store.get(&deploy_key("web")).unwrap().object["status"].get("phase").is_none());
    assert_eq!(s.next_wakeup, Some(t0 + Duration::from_millis(100)), "a pass is scheduled for the deadline");
    reconcile(&mut s, t0 + Duration::from_millis(100));
    assert_eq!(s.store.get(&deploy_key("web")).unwrap().object["status"]["phase"], "Scripted");
}

#[test]
fn workloads_ready_after_delays_every_workload_kind_then_makes_it_ready() {
    let mut s = state(TestApiConfig::default().workloads_ready_after(Duration::from_millis(300)));
    let t0 = Instant::now();
    let (web, key) = (deployment("web"), deploy_key("web"));
    let set_key = ObjectKey::new("apps", "statefulsets", Some("default"), "db");
    let mut db = deployment("db");
    db["kind"] = json!("StatefulSet");
    put(&mut s, &key, web, t0);
    put(&mut s, &set_key, db, t0);
    reconcile(&mut s, t0 + Duration::from_millis(299));
    let ready = |s: &State, k: &ObjectKey| s.store.get(k).unwrap().object["status"]["readyReplicas"].as_i64();
    assert_ne!(ready(&s, &key), Some(1), "ready before its delay");
    assert_ne!(ready(&s, &set_key), Some(1), "ready before its delay");
    reconcile(&mut s, t0 + Duration::from_millis(300));
    assert_eq!((ready(&s, &key), ready(&s, &set_key)), (Some(1), Some(1)));
}

#[test]
fn idle_pass_writes_nothing() {
    let mut s = state(TestApiConfig::default());
    let t0 = Instant::now();
    put(&mut s, &deploy_key("web"), deployment("web"), t0);
    reconcile(&mut s, t0);
    let revision = s.store.revision();
    reconcile(&mut s, t0 + Duration::from_secs(5));
    assert_eq!(s.store.revision(), revision);
}

#[test]
fn crd_becomes_established_after_the_configured_delay() {
    let mut s = state(TestApiConfig::default().crd_established_after(Duration::from_millis(50)));
    let key = ObjectKey::new("apiextensions.k8s.io", "customresourcedefinitions", None, "things.example.com");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}});
    let t0 = Instant::now();
    put(&mut s, &key, crd, t0);
    reconcile(&mut s, t0);
    let pending = s.store.get(&key).unwrap().object.clone();
    assert!(!crd_established(&pending));
    assert_eq!(pending["status"]["acceptedNames"]["listKind"], "ThingList");
    assert!(s.catalog(t0, false).find("example.com", "v1", "things").is_none());
    reconcile(&mut s, t0 + Duration::from_millis(50));
    assert!(crd_established(&s.store.get(&key).unwrap().object));
    assert!(s.catalog(t0 + Duration::from_millis(50), false).find("example.com", "v1", "things").is_some());
    assert!(s.catalog(t0 + Duration::from_millis(50), true).find("example.com", "v1", "things").is_some());
}

#[test]
fn service_endpoints_follow_workload_readiness() {
    let never = StatusRule::never_ready(Target::object("Deployment", Some("default"), "web"));
    let mut s = state(TestApiConfig::default().status_rule(never));
    let t0 = Instant::now();
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}});
    put(&mut s, &ObjectKey::new("", "services", Some("default"), "web"), svc, t0);
    reconcile(&mut s, t0);
    let ep_key = ObjectKey::new("", "endpoints", Some("default"), "web");
    assert!(s.store.get(&ep_key).unwrap().object.get("subsets").is_none(), "no workload selected yet");
    put(&mut s, &deploy_key("web"), deployment("web"), t0);
    reconcile(&mut s, t0);
    let subsets = s.store.get(&ep_key).unwrap().object["subsets"].clone();
    assert_eq!(subsets[0]["notReadyAddresses"][0]["ip"], "10.244.0.10");
    assert_eq!(subsets[0]["ports"][0], json!({"port": 8443, "protocol": "TCP", "name": "https"}));
    s.config.status_rules.clear();
    s.reconciled_revision = None;
    let mut d = s.store.get(&deploy_key("web")).unwrap().object.clone();
    d["spec"]["replicas"] = json!(2);
    put(&mut s, &deploy_key("web"), d, t0);
    reconcile(&mut s, t0);
    assert_eq!(s.store.get(&ep_key).unwrap().object["subsets"][0]["addresses"].as_array().unwrap().len(), 2);
    let slices = s.store.list("discovery.k8s.io", "endpointslices", Some("default"));
    assert_eq!(slices[0].1.object["endpoints"][0]["conditions"]["ready"], true);
}

#[test]
fn the_endpoint_controller_runs_only_after_what_it_reads_changed() {
    let mut s = state(TestApiConfig::default());
    let t0 = Instant::now();
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 443}]}});
    put(&mut s, &ObjectKey::new("", "services", Some("default"), "web"), svc, t0);
    assert!(endpoints_may_change(&s), "a first pass is always due");
    reconcile(&mut s, t0);
    assert!(!endpoints_may_change(&s), "its own writes do not call for another pass");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}});
    put(&mut s, &ObjectKey::new("", "configmaps", Some("default"), "c"), cm, t0);
    assert!(!endpoints_may_change(&s), "a ConfigMap is none of its inputs");
    reconcile(&mut s, t0);
    put(&mut s, &deploy_key("web"), deployment("web"), t0);
    assert!(endpoints_may_change(&s), "a workload changed");
    reconcile(&mut s, t0);
    let ep_key = ObjectKey::new("", "endpoints", Some("default"), "web");
    assert!(s.store.get(&ep_key).unwrap().object.get("subsets").is_some(), "the new workload is selected");
}

#[test]
fn terminating_namespace_is_emptied_then_removed() {
    let mut s = state(TestApiConfig::default());
    let t0 = Instant::now();
    put(&mut s, &deploy_key("web"), deployment("web"), t0);
    s.store.delete(&ObjectKey::new("", "namespaces", None, "default"), "t", false);
    reconcile(&mut s, t0);
    assert!(s.store.get(&deploy_key("web")).is_none());
    assert!(s.store.get(&ObjectKey::new("", "namespaces", None, "default")).is_none());
}

#[test]
fn orphans_and_kinds_without_crd_are_collected() {
    let mut s = state(TestApiConfig::default());
    let t0 = Instant::now();
    let mut owned = deployment("child");
    owned["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "no-such-uid"}]);
    put(&mut s, &deploy_key("child"), owned, t0);
    put(
        &mut s,
        &ObjectKey::new("example.com", "things", None, "orphan"),
        json!({"apiVersion": "example.com/v1", "kind": "Thing"}),
        t0,
    );
    reconcile(&mut s, t0);
    assert!(s.store.get(&deploy_key("child")).is_none());
    assert!(s.store.get(&ObjectKey::new("example.com", "things", None, "orphan")).is_none());
}
