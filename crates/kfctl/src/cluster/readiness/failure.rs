//! Judging the failure facts of the readiness table ([`super::FailsWhen`]), as pure functions.
//!
//! Condition facts read the object alone ([`condition_failure`]); `status` and the install
//! wait use them alike. Pod facts read a pod list the caller fetched with [`pod_selector`]
//! ([`pod_failure`]), and the stall fact compares [`progress_marker`]s the caller kept across
//! polls: the I/O and the memory are `crate::cluster::judge`'s.

use super::{FailsWhen, POD_FAILURES, condition, int, stale_generation};
use serde_json::Value;
use std::time::Duration;

/// How often the pods of one pending workload are listed, at most. The first list waits for
/// the second poll, so a workload that gets ready at once costs no list.
pub(crate) const POD_LIST_EVERY: Duration = Duration::from_secs(10);

/// Why an object failed: the controller's reason (`ProgressDeadlineExceeded`,
/// `BackoffLimitExceeded`, `CrashLoopBackOff`) and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub reason: String,
    pub message: String,
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether a status (or one condition of it) was written for an older generation: then it says
/// nothing about the current spec.
fn stale(live: &Value, cond: &Value) -> bool {
    let generation = int(live, "/metadata/generation").unwrap_or(0);
    let cond_stale = cond.get("observedGeneration").and_then(Value::as_i64).is_some_and(|g| g < generation);
    cond_stale || (live.pointer("/status/observedGeneration").is_some() && stale_generation(live).is_some())
}

/// The first condition fact of `facts` a live object matches at `now` (seconds since the epoch).
pub(crate) fn condition_failure(facts: &[FailsWhen], live: &Value, now: i64) -> Option<Failure> {
    facts.iter().find_map(|fact| match *fact {
        FailsWhen::Condition { kind, status, reasons } => {
            let cond = condition(live, kind).filter(|c| text(c, "status") == status && !stale(live, c))?;
            let reason = text(cond, "reason");
            let terminal = reasons.is_empty() || reasons.contains(&reason);
            let reason = if reason.is_empty() { format!("{kind}={status}") } else { reason.to_string() };
            terminal.then(|| Failure { reason, message: text(cond, "message").to_string() })
        }
        FailsWhen::ConditionFor { kind, status, longer_than } => {
            let cond = condition(live, kind).filter(|c| text(c, "status") == status && !stale(live, c))?;
            let since = text(cond, "lastTransitionTime").parse::<k8s_openapi::jiff::Timestamp>().ok()?;
            let seconds = now - since.as_second();
            let over = u64::try_from(seconds).is_ok_and(|s| s > longer_than.as_secs());
            let reason = text(cond, "reason");
            let message = format!("{kind}={status} for {}s: {}", seconds, text(cond, "message"));
            over.then(|| Failure { reason: if reason.is_empty() { kind.into() } else { reason.into() }, message })
        }
        FailsWhen::NoProgressFor(_) | FailsWhen::PodsWaiting => None,
    })
}

/// The rollout counters of a StatefulSet or DaemonSet (and the generation): any pod created,
/// updated or getting ready changes it.
pub(crate) fn progress_marker(live: &Value) -> String {
    const COUNTERS: &[&str] = &[
        "observedGeneration",
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
        "currentRevision",
        "updateRevision",
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "numberReady",
        "updatedNumberScheduled",
        "numberAvailable",
    ];
    let status = live.get("status").unwrap_or(&Value::Null);
    let mut marker = format!("generation={}", int(live, "/metadata/generation").unwrap_or(0));
    for key in COUNTERS {
        if let Some(value) = status.get(*key) {
            marker.push_str(&format!(",{key}={value}"));
        }
    }
    marker
}

/// The label selector of a workload's pods, from `spec.selector.matchLabels`: `None` when it has
/// none or also has `matchExpressions` (labels alone would match pods that are not its own).
pub(crate) fn pod_selector(live: &Value) -> Option<String> {
    let selector = live.pointer("/spec/selector")?;
    if selector.get("matchExpressions").and_then(Value::as_array).is_some_and(|e| !e.is_empty()) {
        return None;
    }
    let labels = selector.get("matchLabels")?.as_object()?;
    let mut pairs: Vec<String> = labels.iter().filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}"))).collect();
    pairs.sort();
    (!pairs.is_empty() && pairs.len() == labels.len()).then(|| pairs.join(","))
}

/// The name of a Deployment's newest ReplicaSet among `replica_sets` (a list): owned by it (its
/// uid), highest `deployment.kubernetes.io/revision`.
pub(crate) fn newest_replica_set(deployment: &Value, replica_sets: &Value) -> Option<String> {
    let uid = deployment.pointer("/metadata/uid").and_then(Value::as_str)?;
    let owned = |rs: &&Value| {
        let owners = rs.pointer("/metadata/ownerReferences").and_then(Value::as_array);
        owners.is_some_and(|o| o.iter().any(|r| text(r, "uid") == uid))
    };
    let revision = |rs: &Value| {
        let text = rs.pointer("/metadata/annotations/deployment.kubernetes.io~1revision").and_then(Value::as_str);
        text.and_then(|t| t.parse::<i64>().ok()).unwrap_or(0)
    };
    let items = replica_sets.get("items").and_then(Value::as_array)?;
    let newest = items.iter().filter(owned).max_by_key(|rs| revision(rs))?;
    newest.pointer("/metadata/name").and_then(Value::as_str).map(str::to_string)
}

/// Whether a pod belongs to the workload's current rollout: a Deployment's pods of its newest
/// ReplicaSet (when known), a StatefulSet's of its `updateRevision`; old pods going away do not
/// fail a rollout that replaces them.
fn is_current(workload: &Value, pod: &Value, newest_rs: Option<&str>) -> bool {
    if let Some(rs) = newest_rs {
        let owners = pod.pointer("/metadata/ownerReferences").and_then(Value::as_array);
        return owners.is_some_and(|o| o.iter().any(|r| text(r, "kind") == "ReplicaSet" && text(r, "name") == rs));
    }
    let revision = workload.pointer("/status/updateRevision").and_then(Value::as_str);
    let label = pod.pointer("/metadata/labels/controller-revision-hash").and_then(Value::as_str);
    match (text(workload, "kind"), revision) {
        ("StatefulSet", Some(revision)) => label == Some(revision),
        _ => true,
    }
}

/// The first container of the workload's current pods (in `pods`, a list) waiting with one of
/// [`POD_FAILURES`].
pub(crate) fn pod_failure(workload: &Value, pods: &Value, newest_rs: Option<&str>) -> Option<Failure> {
    let items = pods.get("items").and_then(Value::as_array)?;
    items.iter().filter(|pod| is_current(workload, pod, newest_rs)).find_map(waiting_failure)
}

fn waiting_failure(pod: &Value) -> Option<Failure> {
    let name = pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
    ["initContainerStatuses", "containerStatuses"].iter().find_map(|key| {
        let statuses = pod.pointer(&format!("/status/{key}")).and_then(Value::as_array)?;
        statuses.iter().find_map(|c| {
            let waiting = c.pointer("/state/waiting")?;
            let reason = text(waiting, "reason");
            POD_FAILURES.contains(&reason).then(|| Failure {
                reason: reason.to_string(),
                message: format!("pod {name} container {}: {}", text(c, "name"), text(waiting, "message"))
                    .trim_end_matches([' ', ':'])
                    .to_string(),
            })
        })
    })
}
