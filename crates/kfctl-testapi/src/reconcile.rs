//! The stand-in for controllers: one pass that moves the store toward what a cluster would do.
//!
//! It runs before every request and on a background tick, but does work only when the store
//! changed since the last pass or a timed rule fell due (each step registers its next deadline
//! with [`State::wake_at`]), so reads and idle ticks cost nothing. Steps scan only the
//! resources they concern (ordered range scans), and each writes only when something would
//! change, so a quiet store stays at the same `resourceVersion`:
//!
//! 1. CRDs get `NamesAccepted`, then `Established` once `crd_established_after` has passed;
//! 2. objects with a readiness behavior (see `status_rules.rs`) get the controller's status for
//!    "not ready yet" and later "ready", once per generation (a status scripted by a test in the
//!    meantime is left alone until the next transition);
//! 3. `SetStatus` and `InjectCaBundle` rules fire after their delays;
//! 4. Services with a selector get Endpoints and an EndpointSlice whose address is ready once a
//!    selected workload serves (webhook gating reads these); Endpoints of deleted Services go
//!    (only when a Service, a workload or an endpoint object changed since the last pass);
//! 5. each Profile gets its namespace, as Kubeflow's Profiles controller makes it
//!    (`profiles.rs`);
//! 6. terminating namespaces are emptied and then removed; after deletions, objects whose owners
//!    are all gone, and custom objects whose CRD is gone, are garbage-collected.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::apply::merge_into;
use super::state::{State, crd_established, timestamp_now};
use super::status_rules::{
    StatusBehavior, StatusRule, Target, readiness_for, readiness_status, serving_pods, with_ca_bundle,
};
use super::store::{EventType, ObjectKey};

/// (group, resource) of the kinds with built-in readiness.
const READINESS_RESOURCES: &[(&str, &str)] = &[
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("apps", "replicasets"),
    ("batch", "jobs"),
    ("", "pods"),
    ("", "persistentvolumeclaims"),
    ("apiregistration.k8s.io", "apiservices"),
];

/// (group, resource) of the workloads whose pods back Services.
const WORKLOAD_RESOURCES: &[(&str, &str)] =
    &[("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"), ("apps", "replicasets")];

/// Run a pass if the store changed or a timed rule is due.
pub(crate) fn reconcile(state: &mut State, now: Instant) {
    let unchanged = state.reconciled_revision == Some(state.store.revision());
    if unchanged && state.next_wakeup.is_none_or(|t| now < t) {
        return;
    }
    state.next_wakeup = None;
    establish_crds(state, now);
    apply_readiness(state, now);
    apply_scripted(state, now);
    if endpoints_may_change(state) {
        sync_endpoints(state, now);
        drop_stale_endpoints(state);
        state.endpoints_synced = Some(state.store.revision());
    }
    super::profiles::make_profile_namespaces(state, now);
    finish_namespaces(state, now);
    collect_garbage(state, now);
    state.reconciled_revision = Some(state.store.revision());
}

fn keys_of(state: &State, group: &str, resource: &str) -> Vec<ObjectKey> {
    state.store.list(group, resource, None).into_iter().map(|(k, _)| k.clone()).collect()
}

fn all_keys(state: &State, keep: impl Fn(&ObjectKey, &Value) -> bool) -> Vec<ObjectKey> {
    state.store.iter().filter(|(k, e)| keep(k, &e.object)).map(|(k, _)| k.clone()).collect()
}

/// Keys of the objects a rule target can match: the resources of its kind, or everything.
fn target_keys(state: &State, target: &Target, now: Instant) -> Vec<ObjectKey> {
    let Some(kind) = &target.kind else { return all_keys(state, |_, o| target.matches(o)) };
    let catalog = state.catalog(now, false);
    let mut resources: Vec<(String, String)> = catalog
        .types()
        .filter(|t| &t.kind == kind && target.group.as_deref().is_none_or(|g| g == t.group))
        .map(|t| (t.group.clone(), t.resource.clone()))
        .collect();
    resources.dedup();
    let mut keys: Vec<ObjectKey> = resources.iter().flat_map(|(g, r)| keys_of(state, g, r)).collect();
    keys.retain(|k| state.store.get(k).is_some_and(|e| target.matches(&e.object)));
    keys
}

fn mark(state: &mut State, key: &ObjectKey, mark: String) -> bool {
    state.store.entry_mut(key).is_some_and(|e| e.marks.insert(mark))
}

/// `since + delay` has passed; otherwise ask to be woken then.
fn due(state: &mut State, since: Instant, delay: Duration, now: Instant) -> bool {
    let at = since + delay;
    if now >= at {
        return true;
    }
    state.wake_at(at);
    false
}

fn crd_status(object: &Value, established: bool, ts: &str) -> Value {
    let spec = &object["spec"];
    // like upstream, `storedVersions` only grows: a version once used for storage stays listed
    // until someone migrates the objects and edits the status
    let mut storage: Vec<Value> = object["status"]["storedVersions"].as_array().cloned().unwrap_or_default();
    for version in spec["versions"].as_array().into_iter().flatten().filter(|v| v["storage"] == true) {
        if !storage.contains(&version["name"]) {
            storage.push(version["name"].clone());
        }
    }
    let mut names = spec["names"].clone();
    let kind = names["kind"].as_str().unwrap_or("").to_string();
    if names["singular"].is_null() {
        names["singular"] = json!(kind.to_lowercase());
    }
    if names["listKind"].is_null() {
        names["listKind"] = json!(format!("{kind}List"));
    }
    let (reason, message) = if established {
        ("InitialNamesAccepted", "the initial names have been accepted")
    } else {
        ("Installing", "the resource is being installed")
    };
    json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": ts, "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": if established { "True" } else { "False" }, "lastTransitionTime": ts, "reason": reason, "message": message}],
        "acceptedNames": names, "storedVersions": storage})
}

fn establish_crds(state: &mut State, now: Instant) {
    let delay = state.config.crd_established_after;
    for key in keys_of(state, "apiextensions.k8s.io", "customresourcedefinitions") {
        let Some(entry) = state.store.get(&key) else { continue };
        let (created, generation) = (entry.created, entry.object["metadata"]["generation"].as_i64().unwrap_or(1));
        let already = crd_established(&entry.object);
        let established = due(state, created, delay, now);
        if (already && !established) || !mark(state, &key, format!("crd:{generation}:{established}")) {
            continue;
        }
        let Some(object) = state.store.get(&key).map(|e| e.object.clone()) else { continue };
        let mut updated = object.clone();
        updated["status"] = crd_status(&object, established, &timestamp_now());
        state.controller_write(&key, updated, "kube-apiserver", Some("status"), now);
    }
}

fn readiness_candidates(state: &State, rules: &[StatusRule], now: Instant) -> Vec<ObjectKey> {
    let mut keys: Vec<ObjectKey> = READINESS_RESOURCES.iter().flat_map(|(g, r)| keys_of(state, g, r)).collect();
    for rule in
        rules.iter().filter(|r| matches!(r.behavior, StatusBehavior::ReadyAfter(_) | StatusBehavior::NeverReady))
    {
        keys.extend(target_keys(state, &rule.target, now));
    }
    keys.sort();
    keys.dedup();
    keys
}

fn apply_readiness(state: &mut State, now: Instant) {
    let rules = state.config.status_rules.clone();
    for key in readiness_candidates(state, &rules, now) {
        let Some(entry) = state.store.get(&key) else { continue };
        if entry.object["metadata"].get("deletionTimestamp").is_some() {
            continue;
        }
        let since = entry.generation_changed;
        let generation = entry.object["metadata"]["generation"].as_i64().unwrap_or(1);
        let ready = match readiness_for(&rules, &entry.object) {
            Some(StatusBehavior::ReadyAfter(delay)) => due(state, since, delay, now),
            _ => false,
        };
        if !mark(state, &key, format!("ready:{generation}:{ready}")) {
            continue;
        }
        let Some(object) = state.store.get(&key).map(|e| e.object.clone()) else { continue };
        let mut updated = object.clone();
        updated["status"] = readiness_status(&object, ready, &timestamp_now());
        state.controller_write(&key, updated, "kube-controller-manager", Some("status"), now);
    }
}

fn apply_scripted(state: &mut State, now: Instant) {
    let rules = state.config.status_rules.clone();
    for (index, rule) in rules.iter().enumerate() {
        if matches!(rule.behavior, StatusBehavior::ReadyAfter(_) | StatusBehavior::NeverReady) {
            continue;
        }
        for key in target_keys(state, &rule.target, now) {
            let Some(entry) = state.store.get(&key) else { continue };
            let (created, since) = (entry.created, entry.generation_changed);
            let generation = entry.object["metadata"]["generation"].as_i64().unwrap_or(1);
            match &rule.behavior {
                StatusBehavior::SetStatus { after, status }
                    if due(state, since, *after, now) && mark(state, &key, format!("set:{index}:{generation}")) =>
                {
                    let Some(mut updated) = state.store.get(&key).map(|e| e.object.clone()) else { continue };
                    if !updated["status"].is_object() {
                        updated["status"] = json!({});
                    }
                    merge_into(&mut updated["status"], status);
                    state.controller_write(&key, updated, "test-status-rule", Some("status"), now);
                }
                StatusBehavior::InjectCaBundle { after, ca_bundle } if due(state, created, *after, now) => {
                    if let Some(updated) = state.store.get(&key).and_then(|e| with_ca_bundle(&e.object, ca_bundle)) {
                        state.controller_write(&key, updated, "cert-manager-cainjector", None, now);
                    }
                }
                _ => {}
            }
        }
    }
}

fn endpoint_ports(service: &Value) -> Vec<Value> {
    let ports = service["spec"]["ports"].as_array().cloned().unwrap_or_default();
    ports
        .iter()
        .map(|p| {
            let port = p["targetPort"].as_i64().or_else(|| p["port"].as_i64()).unwrap_or(80);
            let mut out = json!({"port": port, "protocol": p["protocol"].as_str().unwrap_or("TCP")});
            if let Some(name) = p["name"].as_str() {
                out["name"] = json!(name);
            }
            out
        })
        .collect()
}

/// Ready pods and whether any workload matches a Service's selector in its namespace.
fn backing_pods(state: &State, namespace: &str, selector: &serde_json::Map<String, Value>) -> (i64, bool) {
    let mut ready = 0;
    let mut matched = false;
    for (group, resource) in WORKLOAD_RESOURCES {
        for (_, entry) in state.store.list(group, resource, Some(namespace)) {
            let labels = &entry.object["spec"]["template"]["metadata"]["labels"];
            if selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                matched = true;
                ready += serving_pods(&entry.object);
            }
        }
    }
    (ready, matched)
}

/// What the endpoint controller reads: Services, the workloads behind them, and its own output.
const ENDPOINT_INPUTS: &[(&str, &str)] = &[
    ("", "services"),
    ("", "endpoints"),
    ("discovery.k8s.io", "endpointslices"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("apps", "replicasets"),
];

/// Whether anything the endpoint controller reads changed since its last pass (it compared
/// every Service with every workload of its namespace on every write: a fifth of the server's
/// CPU under real kubectl installing the whole platform).
fn endpoints_may_change(state: &State) -> bool {
    let Some(synced) = state.endpoints_synced else { return true };
    ENDPOINT_INPUTS.iter().any(|(group, resource)| state.store.changed_since(group, resource, synced))
}

fn sync_endpoints(state: &mut State, now: Instant) {
    for key in keys_of(state, "", "services") {
        let Some(service) = state.store.get(&key).map(|e| e.object.clone()) else { continue };
        let Some(selector) = service["spec"]["selector"].as_object().filter(|s| !s.is_empty()).cloned() else {
            continue;
        };
        let namespace = key.namespace.clone().unwrap_or_default();
        let (ready, matched) = backing_pods(state, &namespace, &selector);
        let ports = endpoint_ports(&service);
        let addresses: Vec<Value> =
            (0..ready.clamp(1, 5)).map(|i| json!({"ip": format!("10.244.0.{}", 10 + i)})).collect();
        let field = if ready > 0 { "addresses" } else { "notReadyAddresses" };
        let subsets = matched.then(|| json!([{ field: addresses, "ports": ports }]));
        let ep_key = ObjectKey::new("", "endpoints", Some(&namespace), &key.name);
        let live = state.store.get(&ep_key).map(|e| e.object.clone());
        if live.as_ref().map(|l| l.get("subsets").cloned()) != Some(subsets.clone()) {
            let mut endpoints = live.unwrap_or_else(|| json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": key.name, "namespace": namespace}}));
            match &subsets {
                Some(s) => endpoints["subsets"] = s.clone(),
                None => {
                    endpoints.as_object_mut().map(|m| m.remove("subsets"));
                }
            }
            state.controller_write(&ep_key, endpoints, "endpoint-controller", None, now);
        }
        let slice_addresses = if matched { addresses } else { Vec::new() };
        sync_slice(state, &service, &namespace, &slice_addresses, ready > 0, ports, now);
    }
}

fn sync_slice(
    state: &mut State,
    service: &Value,
    namespace: &str,
    addresses: &[Value],
    ready: bool,
    ports: Vec<Value>,
    now: Instant,
) {
    let name = service["metadata"]["name"].as_str().unwrap_or("");
    let endpoints: Vec<Value> = addresses
        .iter()
        .map(
            |a| json!({"addresses": [a["ip"]], "conditions": {"ready": ready, "serving": ready, "terminating": false}}),
        )
        .collect();
    let slice_name = format!("{name}-tst{:02}", name.len() % 100);
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": slice_name, "namespace": namespace,
            "labels": {"kubernetes.io/service-name": name, "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name, "uid": service["metadata"]["uid"],
                "controller": true, "blockOwnerDeletion": true}]},
        "addressType": "IPv4", "endpoints": endpoints, "ports": ports});
    let key = ObjectKey::new("discovery.k8s.io", "endpointslices", Some(namespace), &slice_name);
    let current = state.store.get(&key).map(|e| (e.object["endpoints"].clone(), e.object["ports"].clone()));
    if current != Some((slice["endpoints"].clone(), slice["ports"].clone())) {
        state.controller_write(&key, slice, "endpointslice-controller", None, now);
    }
}

/// Endpoints written by the endpoint controller whose Service is gone are deleted, as upstream's
/// controller does (EndpointSlices go through owner-reference garbage collection instead).
fn drop_stale_endpoints(state: &mut State) {
    let ts = timestamp_now();
    let stale: Vec<ObjectKey> = state
        .store
        .list("", "endpoints", None)
        .into_iter()
        .filter(|(k, e)| {
            let ours = e.object["metadata"]["managedFields"]
                .as_array()
                .is_some_and(|m| m.iter().any(|f| f["manager"] == "endpoint-controller"));
            ours && state.store.get(&ObjectKey::new("", "services", k.namespace.as_deref(), &k.name)).is_none()
        })
        .map(|(k, _)| k.clone())
        .collect();
    for key in stale {
        state.store.delete(&key, &ts, false);
    }
}

fn finish_namespaces(state: &mut State, now: Instant) {
    let ts = timestamp_now();
    let terminating: Vec<ObjectKey> = state
        .store
        .list("", "namespaces", None)
        .into_iter()
        .filter(|(_, e)| e.object["metadata"].get("deletionTimestamp").is_some())
        .map(|(k, _)| k.clone())
        .collect();
    for ns_key in terminating {
        let inside = |state: &State| all_keys(state, |k, _| k.namespace.as_deref() == Some(ns_key.name.as_str()));
        for key in inside(state) {
            state.store.delete(&key, &ts, false);
        }
        let held = state
            .store
            .get(&ns_key)
            .is_some_and(|e| e.object["metadata"]["finalizers"].as_array().is_some_and(|f| !f.is_empty()));
        // the namespace controller's own `spec.finalizers` entry is released once the namespace is
        // empty and its finalization delay (`namespace_finalize_after`) has passed
        let since = *state.terminating_since.entry(ns_key.name.clone()).or_insert(now);
        let due_at = since + state.config.namespace_finalize_after;
        if inside(state).is_empty() && !held {
            if now < due_at {
                state.wake_at(due_at);
                continue;
            }
            state.terminating_since.remove(&ns_key.name);
            state.store.remove(&ns_key);
        }
    }
}

/// Whether a change can orphan something: a deletion (or deletion mark), or an object with owners.
fn may_orphan(kind: EventType, object: &Value) -> bool {
    let meta = &object["metadata"];
    kind == EventType::Deleted
        || meta.get("deletionTimestamp").is_some()
        || meta["ownerReferences"].as_array().is_some_and(|r| !r.is_empty())
}

fn collect_garbage(state: &mut State, now: Instant) {
    if !state.store.any_change_after(state.collected_revision, |e| may_orphan(e.kind, &e.object)) {
        state.collected_revision = state.store.revision();
        return;
    }
    let ts = timestamp_now();
    let uids: HashSet<String> =
        state.store.iter().filter_map(|(_, e)| e.object["metadata"]["uid"].as_str().map(String::from)).collect();
    let served = state.catalog(now, false);
    let orphans = all_keys(state, |k, o| {
        let owners = o["metadata"]["ownerReferences"].as_array();
        let owners_gone = owners.is_some_and(|refs| {
            !refs.is_empty() && refs.iter().all(|r| !r["uid"].as_str().is_some_and(|u| uids.contains(u)))
        });
        let kind_gone = !served.types().any(|t| t.group == k.group && t.resource == k.resource);
        (owners_gone || kind_gone) && o["metadata"].get("deletionTimestamp").is_none()
    });
    for key in orphans {
        state.store.delete(&key, &ts, false);
    }
    state.collected_revision = state.store.revision();
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
