//! Scriptable status: what the (absent) controllers would write, and when.
//!
//! A real cluster has controllers that turn a Deployment into Pods and report readiness; the
//! test API server has a rule table instead. Each [`StatusRule`] names a [`Target`] (kind,
//! group, namespace, name, annotation) and a [`StatusBehavior`]:
//!
//! * `ReadyAfter(d)`: the object reports ready `d` after its generation last changed (before
//!   that it reports progressing/unavailable). Workload kinds (Deployment, StatefulSet,
//!   DaemonSet, ReplicaSet, Job, Pod, PVC, APIService) default to `ReadyAfter(0)`; any other
//!   kind targeted by a rule gets a generic `Ready` condition;
//! * `NeverReady`: the object stays unavailable forever;
//! * `SetStatus`: merge a scripted status in after a delay;
//! * `InjectCaBundle`: act as cert-manager's cainjector, setting the `caBundle` of webhook
//!   configurations, CRD conversion webhooks and APIServices after a delay.
//!
//! Later rules win over earlier ones. This module is pure: it computes statuses; `reconcile.rs`
//! decides when to write them.

use std::time::Duration;

use serde_json::{Value, json};

/// Which objects a rule applies to; unset fields match anything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Target {
    /// API group (`apps`; empty string for core).
    pub group: Option<String>,
    /// Kind (`Deployment`).
    pub kind: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
    /// An annotation key the object must carry (e.g. `cert-manager.io/inject-ca-from`).
    pub annotation: Option<String>,
}

impl Target {
    /// Every object of a kind.
    pub fn kind(kind: &str) -> Self {
        Target { kind: Some(kind.into()), ..Self::default() }
    }
    /// One object.
    pub fn object(kind: &str, namespace: Option<&str>, name: &str) -> Self {
        Target {
            kind: Some(kind.into()),
            namespace: namespace.map(String::from),
            name: Some(name.into()),
            ..Self::default()
        }
    }
    /// Restrict to an API group.
    pub fn in_group(mut self, group: &str) -> Self {
        self.group = Some(group.into());
        self
    }
    /// Restrict to objects carrying an annotation.
    pub fn with_annotation(mut self, key: &str) -> Self {
        self.annotation = Some(key.into());
        self
    }

    /// Whether an object is targeted.
    pub fn matches(&self, object: &Value) -> bool {
        let api_version = object["apiVersion"].as_str().unwrap_or("");
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        let meta = &object["metadata"];
        let eq = |want: &Option<String>, got: &str| want.as_deref().is_none_or(|w| w == got);
        eq(&self.group, group)
            && eq(&self.kind, object["kind"].as_str().unwrap_or(""))
            && eq(&self.namespace, meta["namespace"].as_str().unwrap_or(""))
            && eq(&self.name, meta["name"].as_str().unwrap_or(""))
            && self.annotation.as_deref().is_none_or(|a| meta["annotations"].get(a).is_some())
    }
}

/// How targeted objects' status evolves.
#[derive(Clone, Debug, PartialEq)]
pub enum StatusBehavior {
    /// Ready this long after the last generation change.
    ReadyAfter(Duration),
    /// Never ready.
    NeverReady,
    /// Merge this status in, this long after the last generation change.
    SetStatus {
        /// Delay.
        after: Duration,
        /// Status fields to merge.
        status: Value,
    },
    /// Set every `caBundle` this long after creation.
    InjectCaBundle {
        /// Delay.
        after: Duration,
        /// Base64 PEM bundle.
        ca_bundle: String,
    },
}

/// One rule of the status table.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusRule {
    /// Which objects.
    pub target: Target,
    /// What happens to them.
    pub behavior: StatusBehavior,
}

impl StatusRule {
    /// Targeted objects become ready after `delay`.
    pub fn ready_after(target: Target, delay: Duration) -> Self {
        StatusRule { target, behavior: StatusBehavior::ReadyAfter(delay) }
    }
    /// Targeted objects never become ready.
    pub fn never_ready(target: Target) -> Self {
        StatusRule { target, behavior: StatusBehavior::NeverReady }
    }
    /// Merge a scripted status into targeted objects after `after`.
    pub fn set_status(target: Target, after: Duration, status: Value) -> Self {
        StatusRule { target, behavior: StatusBehavior::SetStatus { after, status } }
    }
    /// Inject a CA bundle into targeted objects after `after`.
    pub fn inject_ca_bundle(target: Target, after: Duration, ca_bundle: &str) -> Self {
        StatusRule { target, behavior: StatusBehavior::InjectCaBundle { after, ca_bundle: ca_bundle.into() } }
    }
}

/// Kinds whose controllers report readiness in a real cluster.
const READINESS_KINDS: &[&str] =
    &["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod", "PersistentVolumeClaim", "APIService"];

/// The readiness behavior in force for an object: the last matching ReadyAfter/NeverReady
/// rule, else `ReadyAfter(0)` for workload kinds, else none.
pub(crate) fn readiness_for(rules: &[StatusRule], object: &Value) -> Option<StatusBehavior> {
    let ruled = rules.iter().rev().find(|r| {
        matches!(r.behavior, StatusBehavior::ReadyAfter(_) | StatusBehavior::NeverReady) && r.target.matches(object)
    });
    match ruled {
        Some(rule) => Some(rule.behavior.clone()),
        None => READINESS_KINDS
            .contains(&object["kind"].as_str().unwrap_or(""))
            .then_some(StatusBehavior::ReadyAfter(Duration::ZERO)),
    }
}

fn replicas(object: &Value) -> i64 {
    object["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// Insert non-zero counts only (upstream omits zero counters).
fn counts(status: &mut Value, pairs: &[(&str, i64)]) {
    for (key, value) in pairs {
        if *value != 0 {
            status[*key] = json!(value);
        }
    }
}

fn condition(kind: &str, ok: bool, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": kind, "status": if ok { "True" } else { "False" }, "lastTransitionTime": now, "reason": reason, "message": message})
}

fn deployment_status(object: &Value, ready: bool, generation: i64, now: &str) -> Value {
    let r = replicas(object);
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    let mut status = json!({"observedGeneration": generation});
    let (ready_n, unavailable) = if ready { (r, 0) } else { (0, r) };
    counts(
        &mut status,
        &[
            ("replicas", r),
            ("updatedReplicas", r),
            ("readyReplicas", ready_n),
            ("availableReplicas", ready_n),
            ("unavailableReplicas", unavailable),
        ],
    );
    let mut available =
        condition("Available", ready, "MinimumReplicasAvailable", "Deployment has minimum availability.", now);
    if !ready {
        available = condition(
            "Available",
            false,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        );
    }
    let (reason, message) = if ready {
        ("NewReplicaSetAvailable", format!("ReplicaSet \"{name}-5d8f7c9b6\" has successfully progressed."))
    } else {
        ("ReplicaSetUpdated", format!("ReplicaSet \"{name}-5d8f7c9b6\" is progressing."))
    };
    status["conditions"] = json!([available, condition("Progressing", true, reason, &message, now)]);
    status
}

fn job_status(object: &Value, ready: bool, now: &str) -> Value {
    let completions = object["spec"]["completions"].as_i64().unwrap_or(1);
    let mut status = json!({"startTime": now, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {}});
    if ready {
        status["succeeded"] = json!(completions);
        status["completionTime"] = json!(now);
        status["conditions"] = json!([
            condition(
                "SuccessCriteriaMet",
                true,
                "CompletionsReached",
                "Reached expected number of succeeded pods",
                now
            ),
            condition("Complete", true, "CompletionsReached", "Reached expected number of succeeded pods", now),
        ]);
    } else {
        status["active"] = json!(1);
    }
    status
}

/// The status a controller would report for an object that is (or is not yet) ready.
pub(crate) fn readiness_status(object: &Value, ready: bool, now: &str) -> Value {
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    let r = replicas(object);
    let ready_n = if ready { r } else { 0 };
    let mut status = json!({"observedGeneration": generation});
    match object["kind"].as_str().unwrap_or("") {
        "Deployment" => return deployment_status(object, ready, generation, now),
        "Job" => return job_status(object, ready, now),
        "StatefulSet" => {
            counts(
                &mut status,
                &[
                    ("replicas", r),
                    ("readyReplicas", ready_n),
                    ("currentReplicas", r),
                    ("updatedReplicas", r),
                    ("availableReplicas", ready_n),
                ],
            );
            status["currentRevision"] = json!(format!("{name}-6c4f8d7b9"));
            status["updateRevision"] = json!(format!("{name}-6c4f8d7b9"));
            status["collisionCount"] = json!(0);
        }
        "ReplicaSet" => counts(
            &mut status,
            &[("replicas", r), ("fullyLabeledReplicas", r), ("readyReplicas", ready_n), ("availableReplicas", ready_n)],
        ),
        "DaemonSet" => {
            let n = i64::from(ready);
            status = json!({"observedGeneration": generation, "currentNumberScheduled": 1, "desiredNumberScheduled": 1, "numberMisscheduled": 0, "numberReady": n, "updatedNumberScheduled": 1});
            counts(&mut status, &[("numberAvailable", n), ("numberUnavailable", 1 - n)]);
        }
        "Pod" => {
            status = json!({"phase": if ready { "Running" } else { "Pending" }, "conditions": [condition("Ready", ready, "", "", now)]});
        }
        "PersistentVolumeClaim" => status = json!({"phase": if ready { "Bound" } else { "Pending" }}),
        "APIService" => {
            let (reason, message) = if ready {
                ("Passed", "all checks passed")
            } else {
                ("MissingEndpoints", "endpoints for service/x in \"x\" have no addresses")
            };
            status = json!({"conditions": [condition("Available", ready, reason, message, now)]});
        }
        _ => {
            let reason = if ready { "Ready" } else { "NotReady" };
            let mut merged = object["status"].clone();
            if !merged.is_object() {
                merged = json!({});
            }
            merged["observedGeneration"] = json!(generation);
            merged["conditions"] = json!([condition("Ready", ready, reason, "", now)]);
            return merged;
        }
    }
    status
}

/// How many pods of a workload would currently serve traffic, judged from its status (so a
/// status scripted by a test counts as much as one written by a rule).
pub(crate) fn serving_pods(object: &Value) -> i64 {
    let status = &object["status"];
    match object["kind"].as_str().unwrap_or("") {
        "Deployment" | "StatefulSet" | "ReplicaSet" => status["readyReplicas"].as_i64().unwrap_or(0),
        "DaemonSet" => status["numberReady"].as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// The object with every `caBundle` set (webhook configurations, CRD conversion webhook,
/// APIService), or `None` when the kind has no bundle or it is already set. Checks before
/// copying, since CRDs can be large.
pub(crate) fn with_ca_bundle(object: &Value, bundle: &str) -> Option<Value> {
    let has = |client_config: &Value| client_config["caBundle"].as_str() == Some(bundle);
    let kind = object["kind"].as_str().unwrap_or("");
    let done = match kind {
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            object["webhooks"].as_array()?.iter().all(|w| has(&w["clientConfig"]))
        }
        "CustomResourceDefinition" => {
            object["spec"]["conversion"]["webhook"].as_object()?;
            has(&object["spec"]["conversion"]["webhook"]["clientConfig"])
        }
        "APIService" => object["spec"]["caBundle"].as_str() == Some(bundle),
        _ => return None,
    };
    if done {
        return None;
    }
    let mut out = object.clone();
    match kind {
        "CustomResourceDefinition" => out["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = json!(bundle),
        "APIService" => out["spec"]["caBundle"] = json!(bundle),
        _ => {
            for webhook in out["webhooks"].as_array_mut()? {
                webhook["clientConfig"]["caBundle"] = json!(bundle);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "status_rules_tests.rs"]
mod tests;
