//! The stand-in for controllers: one pass that moves the store toward what a cluster would do.
//!
//! It runs before every request and on a background tick. Each step is idempotent and writes
//! only when something would change, so a quiet store stays at the same `resourceVersion`:
//!
//! 1. CRDs get `NamesAccepted`, then `Established` once `crd_established_after` has passed;
//! 2. objects with a readiness behavior (see `status_rules.rs`) get the controller's status for
//!    "not ready yet" and later "ready", once per generation (a status scripted by a test in the
//!    meantime is left alone until the next transition);
//! 3. `SetStatus` and `InjectCaBundle` rules fire after their delays;
//! 4. Services with a selector get Endpoints and an EndpointSlice whose address is ready once a
//!    selected workload serves (webhook gating reads these);
//! 5. terminating namespaces are emptied and then removed; objects whose owners are all gone,
//!    and custom objects whose CRD is gone, are garbage-collected.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::{Value, json};

use super::apply::merge_into;
use super::state::{State, crd_established, timestamp_now};
use super::status_rules::{StatusBehavior, readiness_for, readiness_status, serving_pods, with_ca_bundle};
use super::store::ObjectKey;

/// Run every step once.
pub fn reconcile(state: &mut State, now: Instant) {
    establish_crds(state, now);
    apply_readiness(state, now);
    apply_scripted(state, now);
    sync_endpoints(state, now);
    finish_namespaces(state, now);
    collect_garbage(state, now);
}

fn keys_where(state: &State, keep: impl Fn(&ObjectKey, &Value) -> bool) -> Vec<ObjectKey> {
    state.store.iter().filter(|(k, e)| keep(k, &e.object)).map(|(k, _)| k.clone()).collect()
}

fn mark(state: &mut State, key: &ObjectKey, mark: String) -> bool {
    state.store.entry_mut(key).is_some_and(|e| e.marks.insert(mark))
}

fn establish_crds(state: &mut State, now: Instant) {
    let due = state.config.crd_established_after;
    for key in keys_where(state, |k, _| k.group == "apiextensions.k8s.io" && k.resource == "customresourcedefinitions") {
        let Some(entry) = state.store.get(&key) else { continue };
        let established = now.duration_since(entry.created) >= due;
        let object = entry.object.clone();
        let generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
        if !mark(state, &key, format!("crd:{generation}:{established}")) {
            continue;
        }
        let ts = timestamp_now();
        let spec = &object["spec"];
        let storage: Vec<Value> = spec["versions"].as_array().into_iter().flatten()
            .filter(|v| v["storage"] == true).map(|v| v["name"].clone()).collect();
        let mut names = spec["names"].clone();
        if names["singular"].is_null() {
            names["singular"] = json!(names["kind"].as_str().unwrap_or("").to_lowercase());
        }
        if names["listKind"].is_null() {
            names["listKind"] = json!(format!("{}List", names["kind"].as_str().unwrap_or("")));
        }
        let (reason, message) = if established { ("InitialNamesAccepted", "the initial names have been accepted") } else { ("Installing", "the resource is being installed") };
        let mut updated = object.clone();
        updated["status"] = json!({
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": ts, "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": if established { "True" } else { "False" }, "lastTransitionTime": ts, "reason": reason, "message": message}],
            "acceptedNames": names, "storedVersions": storage});
        if crd_established(&object) && !established {
            continue;
        }
        state.controller_write(&key, updated, "kube-apiserver", Some("status"), now);
    }
}

fn apply_readiness(state: &mut State, now: Instant) {
    let rules = state.config.status_rules.clone();
    let targets = keys_where(state, |_, o| o["metadata"].get("deletionTimestamp").is_none() && readiness_for(&rules, o).is_some());
    for key in targets {
        let Some(entry) = state.store.get(&key) else { continue };
        let object = entry.object.clone();
        let elapsed = now.duration_since(entry.generation_changed);
        let ready = match readiness_for(&rules, &object) {
            Some(StatusBehavior::ReadyAfter(delay)) => elapsed >= delay,
            _ => false,
        };
        let generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
        if !mark(state, &key, format!("ready:{generation}:{ready}")) {
            continue;
        }
        let mut updated = object.clone();
        updated["status"] = readiness_status(&object, ready, &timestamp_now());
        state.controller_write(&key, updated, "kube-controller-manager", Some("status"), now);
    }
}

fn apply_scripted(state: &mut State, now: Instant) {
    let rules = state.config.status_rules.clone();
    for (index, rule) in rules.iter().enumerate() {
        for key in keys_where(state, |_, o| rule.target.matches(o)) {
            let Some(entry) = state.store.get(&key) else { continue };
            let object = entry.object.clone();
            match &rule.behavior {
                StatusBehavior::SetStatus { after, status } if now.duration_since(entry.generation_changed) >= *after => {
                    let generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
                    if mark(state, &key, format!("set:{index}:{generation}")) {
                        let mut updated = object.clone();
                        if !updated["status"].is_object() {
                            updated["status"] = json!({});
                        }
                        merge_into(&mut updated["status"], status);
                        state.controller_write(&key, updated, "test-status-rule", Some("status"), now);
                    }
                }
                StatusBehavior::InjectCaBundle { after, ca_bundle } if now.duration_since(entry.created) >= *after => {
                    if let Some(updated) = with_ca_bundle(&object, ca_bundle) {
                        state.controller_write(&key, updated, "cert-manager-cainjector", None, now);
                    }
                }
                _ => {}
            }
        }
    }
}

fn selector_matches(selector: &serde_json::Map<String, Value>, labels: &Value) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
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

/// Ready and matched pod counts for a Service's selector in its namespace.
fn backing_pods(state: &State, namespace: &str, selector: &serde_json::Map<String, Value>) -> (i64, bool) {
    let mut ready = 0;
    let mut matched = false;
    for (key, entry) in state.store.iter() {
        let o = &entry.object;
        let workload = matches!(o["kind"].as_str(), Some("Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"));
        if workload && key.namespace.as_deref() == Some(namespace) && selector_matches(selector, &o["spec"]["template"]["metadata"]["labels"]) {
            matched = true;
            ready += serving_pods(o);
        }
    }
    (ready, matched)
}

fn sync_endpoints(state: &mut State, now: Instant) {
    for key in keys_where(state, |k, o| k.group.is_empty() && k.resource == "services" && o["spec"]["selector"].is_object()) {
        let Some(service) = state.store.get(&key).map(|e| e.object.clone()) else { continue };
        let namespace = key.namespace.clone().unwrap_or_default();
        let selector = service["spec"]["selector"].as_object().cloned().unwrap_or_default();
        let (ready, matched) = backing_pods(state, &namespace, &selector);
        let ports = endpoint_ports(&service);
        let addresses: Vec<Value> = (0..ready.clamp(1, 5)).map(|i| json!({"ip": format!("10.244.0.{}", 10 + i)})).collect();
        let mut endpoints = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": key.name, "namespace": namespace}});
        if matched {
            let field = if ready > 0 { "addresses" } else { "notReadyAddresses" };
            endpoints["subsets"] = json!([{ field: addresses, "ports": ports }]);
        }
        let ep_key = ObjectKey::new("", "endpoints", Some(&namespace), &key.name);
        let current = state.store.get(&ep_key).map(|e| e.object["subsets"].clone());
        if current.as_ref() != Some(&endpoints["subsets"]) {
            let mut merged = state.store.get(&ep_key).map(|e| e.object.clone()).unwrap_or_else(|| endpoints.clone());
            merged["subsets"] = endpoints["subsets"].clone();
            if endpoints.get("subsets").is_none() {
                merged.as_object_mut().map(|m| m.remove("subsets"));
            }
            state.controller_write(&ep_key, merged, "endpoint-controller", None, now);
        }
        sync_slice(state, &service, &namespace, if matched { addresses } else { Vec::new() }, ready > 0, ports, now);
    }
}

fn sync_slice(state: &mut State, service: &Value, namespace: &str, addresses: Vec<Value>, ready: bool, ports: Vec<Value>, now: Instant) {
    let name = service["metadata"]["name"].as_str().unwrap_or("");
    let endpoints: Vec<Value> = addresses
        .iter()
        .map(|a| json!({"addresses": [a["ip"]], "conditions": {"ready": ready, "serving": ready, "terminating": false}}))
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

fn finish_namespaces(state: &mut State, now: Instant) {
    let ts = timestamp_now();
    let terminating = keys_where(state, |k, o| k.group.is_empty() && k.resource == "namespaces" && o["metadata"].get("deletionTimestamp").is_some());
    for ns_key in terminating {
        let contents = keys_where(state, |k, _| k.namespace.as_deref() == Some(ns_key.name.as_str()));
        for key in &contents {
            state.store.delete(key, now, &ts, false);
        }
        let remaining = keys_where(state, |k, _| k.namespace.as_deref() == Some(ns_key.name.as_str()));
        let held = state.store.get(&ns_key).is_some_and(|e| e.object["metadata"]["finalizers"].as_array().is_some_and(|f| !f.is_empty()));
        if remaining.is_empty() && !held {
            state.store.remove(&ns_key);
        }
    }
}

fn collect_garbage(state: &mut State, now: Instant) {
    let ts = timestamp_now();
    let uids: HashSet<String> = state.store.iter().filter_map(|(_, e)| e.object["metadata"]["uid"].as_str().map(String::from)).collect();
    let served = state.catalog(now, false);
    let orphans = keys_where(state, |k, o| {
        let owners = o["metadata"]["ownerReferences"].as_array();
        let owners_gone = owners.is_some_and(|refs| !refs.is_empty() && refs.iter().all(|r| !r["uid"].as_str().is_some_and(|u| uids.contains(u))));
        let kind_gone = !served.types().iter().any(|t| t.group == k.group && t.resource == k.resource);
        (owners_gone || kind_gone) && o["metadata"].get("deletionTimestamp").is_none()
    });
    for key in orphans {
        state.store.delete(&key, now, &ts, false);
    }
}
