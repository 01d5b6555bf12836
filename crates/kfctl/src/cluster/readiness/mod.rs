//! The readiness table: when an applied object counts as working, and when it has failed.
//!
//! Each rule reads the live object (as the API server returns it) and answers
//! [`Readiness::Ready`] or [`Readiness::Pending`] with a short message a person can act on
//! ("0/1 ready", "not Established"). Rules are chosen by kind from [`READINESS`]; webhook
//! configurations that cert-manager injects wait for their caBundle. Kinds without a rule are
//! done once applied: waiting on conditions a controller may never set (an Istio
//! VirtualService has none) would turn an install into a timeout.
//!
//! The same table says when a pending object will not get ready by waiting, like kapp's
//! failure states and `kubectl rollout status`: each row lists its [`FailsWhen`] facts, and an
//! object that is not ready and matches one is [`Readiness::Failed`], which ends the wave at
//! once (`crate::cluster::judge` applies the facts that need more than the object: pods and stalls).
//! Facts only judge what the controller has seen: a status older than the object's generation
//! (`observedGeneration`) never fails it, so fixing the spec and installing again resumes.
//! Everything else (`Progressing=True` with `ReplicaSetUpdated`, a Certificate `Issuing` or
//! `DoesNotExist`, a Job still running) keeps waiting.

pub(crate) mod judge;
pub mod progress;

use crate::cluster::object::{ObjectRef, annotation};
use serde_json::Value;
use std::time::Duration;

mod failure;
#[cfg(test)]
mod tests;

pub(crate) use failure::{
    Failure, POD_LIST_EVERY, condition_failure, newest_replica_set, pod_failure, pod_selector, progress_marker,
};

/// What an object is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    NamespaceActive,
    CrdEstablished,
    DeploymentAvailable,
    StatefulSetReady,
    DaemonSetReady,
    JobComplete,
    ApiServiceAvailable,
    ReadyCondition,
    CaBundleInjected,
}

/// When a pending object has failed rather than not being ready yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailsWhen {
    /// Condition `kind` has `status` with one of `reasons` (any reason when empty).
    Condition { kind: &'static str, status: &'static str, reasons: &'static [&'static str] },
    /// Condition `kind` has had `status` for longer than `longer_than`, by its
    /// `lastTransitionTime`.
    ConditionFor { kind: &'static str, status: &'static str, longer_than: Duration },
    /// The rollout counters ([`progress_marker`]) have not moved for longer than this, as the
    /// engine saw them across polls (`status` cannot tell: it reads once).
    NoProgressFor(Duration),
    /// A container of the workload's pods (its `spec.selector.matchLabels`) waits with one of
    /// [`POD_FAILURES`]; listed only for objects still pending after a poll, at most every
    /// [`POD_LIST_EVERY`].
    PodsWaiting,
}

/// One row of the readiness table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    /// `group/Kind` (bare `Kind` for the core group).
    pub kind: &'static str,
    /// What it waits for.
    pub rule: Rule,
    /// When waiting is over because it failed.
    pub fails_when: &'static [FailsWhen],
}

/// Container waiting reasons that do not clear by waiting: a crashing container (the kubelet
/// backs off up to 5 minutes between restarts), an image that cannot be pulled (`ErrImagePull`
/// is the failed pull itself, `ImagePullBackOff` the wait before the next), an image name that
/// cannot be parsed. `ContainerCreating`, `PodInitializing` and `CreateContainerConfigError`
/// (a Secret or ConfigMap another wave or a controller may still create) keep waiting.
pub(crate) const POD_FAILURES: &[&str] = &["CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName"];

/// How long a StatefulSet's or DaemonSet's rollout counters may stand still before it counts as
/// stuck: they have no progress deadline of their own, so this is a Deployment's default
/// `progressDeadlineSeconds` (600). Conservative: a StatefulSet creates its pods one at a time,
/// but any pod getting ready, created or updated moves a counter.
pub(crate) const ROLLOUT_STALL: Duration = Duration::from_secs(600);

/// How long an APIService may report `Available=False` before it counts as failed: the same
/// bound, since its backing Deployment has that long to progress.
pub(crate) const API_SERVICE_UNAVAILABLE: Duration = Duration::from_secs(600);

/// The readiness table: each kind's rule and its failure facts.
///
/// * Deployment: `Progressing=False` with `ProgressDeadlineExceeded` is what the deployment
///   controller sets after `progressDeadlineSeconds` without progress (what `kubectl rollout
///   status` reports as "exceeded its progress deadline").
/// * Job: `Failed=True` is final (backoffLimit, activeDeadlineSeconds, a pod failure policy).
/// * cert-manager Certificate: a failed issuance sets `Issuing=False` with the failed request's
///   reason, `Failed` (or `Denied` when an approver denied it), and is retried only after an
///   hour's backoff; `Ready=False` with those reasons is taken as the same. `Ready=False` with
///   `DoesNotExist`, `Pending`, `Issuing`, `Renewing` or `Expired` is transient.
/// * APIService: `Available=False` longer than [`API_SERVICE_UNAVAILABLE`].
/// * StatefulSet, DaemonSet: counters still for [`ROLLOUT_STALL`].
pub(crate) const READINESS: &[Row] = &[
    Row { kind: "Namespace", rule: Rule::NamespaceActive, fails_when: &[] },
    Row { kind: "apiextensions.k8s.io/CustomResourceDefinition", rule: Rule::CrdEstablished, fails_when: &[] },
    Row {
        kind: "apps/Deployment",
        rule: Rule::DeploymentAvailable,
        fails_when: &[
            FailsWhen::Condition { kind: "Progressing", status: "False", reasons: &["ProgressDeadlineExceeded"] },
            FailsWhen::PodsWaiting,
        ],
    },
    Row {
        kind: "apps/StatefulSet",
        rule: Rule::StatefulSetReady,
        fails_when: &[FailsWhen::NoProgressFor(ROLLOUT_STALL), FailsWhen::PodsWaiting],
    },
    Row {
        kind: "apps/DaemonSet",
        rule: Rule::DaemonSetReady,
        fails_when: &[FailsWhen::NoProgressFor(ROLLOUT_STALL), FailsWhen::PodsWaiting],
    },
    Row {
        kind: "batch/Job",
        rule: Rule::JobComplete,
        fails_when: &[FailsWhen::Condition { kind: "Failed", status: "True", reasons: &[] }, FailsWhen::PodsWaiting],
    },
    Row {
        kind: "apiregistration.k8s.io/APIService",
        rule: Rule::ApiServiceAvailable,
        fails_when: &[FailsWhen::ConditionFor {
            kind: "Available",
            status: "False",
            longer_than: API_SERVICE_UNAVAILABLE,
        }],
    },
    Row {
        kind: "cert-manager.io/Certificate",
        rule: Rule::ReadyCondition,
        fails_when: &[
            FailsWhen::Condition { kind: "Ready", status: "False", reasons: &["Failed", "Denied"] },
            FailsWhen::Condition { kind: "Issuing", status: "False", reasons: &["Failed", "Denied"] },
        ],
    },
    Row { kind: "cert-manager.io/Issuer", rule: Rule::ReadyCondition, fails_when: &[] },
    Row { kind: "cert-manager.io/ClusterIssuer", rule: Rule::ReadyCondition, fails_when: &[] },
];

/// The row of an object's kind, if the table has one.
pub(crate) fn row_for(r: &ObjectRef) -> Option<&'static Row> {
    let gk = r.group_kind();
    READINESS.iter().find(|row| row.kind == gk)
}

/// The failure facts of an object's kind (none for kinds without a row).
pub(crate) fn fails_when(r: &ObjectRef) -> &'static [FailsWhen] {
    row_for(r).map_or(&[], |row| row.fails_when)
}

/// The annotations by which cert-manager's cainjector fills in a caBundle.
pub(crate) const CA_INJECTION_ANNOTATIONS: &[&str] =
    &["cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret"];

/// Whether cert-manager injects this object's caBundle.
pub(crate) fn is_ca_injected(doc: &Value) -> bool {
    CA_INJECTION_ANNOTATIONS.iter().any(|key| annotation(doc, key).is_some())
}

/// The rule for an object, if it has one.
pub(crate) fn rule_for(r: &ObjectRef, doc: &Value) -> Option<Rule> {
    if let Some(row) = row_for(r) {
        return Some(row.rule);
    }
    let is_webhook_config = r.group() == "admissionregistration.k8s.io" && r.kind.ends_with("WebhookConfiguration");
    (is_webhook_config && is_ca_injected(doc)).then_some(Rule::CaBundleInjected)
}

impl Rule {
    /// Whether a later wave needs this wait, so an install that does not wait for readiness
    /// (`--wait=false`) still waits for it: the namespaces objects go into, the kinds custom
    /// resources are (CRDs, aggregated APIs) and the caBundles webhooks are called with. The
    /// readiness of workloads, Jobs and cert-manager resources is only the final report's.
    pub(crate) fn gates_later_waves(self) -> bool {
        match self {
            Rule::NamespaceActive | Rule::CrdEstablished | Rule::ApiServiceAvailable | Rule::CaBundleInjected => true,
            Rule::DeploymentAvailable
            | Rule::StatefulSetReady
            | Rule::DaemonSetReady
            | Rule::JobComplete
            | Rule::ReadyCondition => false,
        }
    }

    /// What the rule waits for, as the plan shows it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Rule::NamespaceActive => "namespace Active",
            Rule::CrdEstablished => "Established and served by discovery",
            Rule::DeploymentAvailable => "Available at the current generation",
            Rule::StatefulSetReady => "all replicas ready at the current revision",
            Rule::DaemonSetReady => "scheduled pods ready at the current generation",
            Rule::JobComplete => "Complete",
            Rule::ApiServiceAvailable => "Available",
            Rule::ReadyCondition => "Ready condition True",
            Rule::CaBundleInjected => "caBundle injected by cert-manager",
        }
    }

    /// Judge a live object.
    pub(crate) fn evaluate(self, live: &Value) -> Readiness {
        match self {
            Rule::NamespaceActive => namespace_active(live),
            Rule::CrdEstablished => condition_true(live, "Established"),
            Rule::DeploymentAvailable => deployment_available(live),
            Rule::StatefulSetReady => statefulset_ready(live),
            Rule::DaemonSetReady => daemonset_ready(live),
            Rule::JobComplete => job_complete(live),
            Rule::ApiServiceAvailable => condition_true(live, "Available"),
            Rule::ReadyCondition => ready_condition(live),
            Rule::CaBundleInjected => ca_bundle_injected(live),
        }
    }
}

/// The verdict on one live object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Readiness {
    Ready,
    Pending(String),
    /// Waiting will not make it ready: why, as a [`Failure`].
    Failed(Failure),
}

/// The verdict on a live object from what it says itself: its rule, then (when not ready) its
/// row's condition facts, judged at `now` (seconds since the epoch).
pub(crate) fn verdict(r: &ObjectRef, rule: Rule, live: &Value, now: i64) -> Readiness {
    match rule.evaluate(live) {
        Readiness::Pending(message) => match condition_failure(fails_when(r), live, now) {
            Some(failure) => Readiness::Failed(failure),
            None => Readiness::Pending(message),
        },
        verdict => verdict,
    }
}

fn int(v: &Value, pointer: &str) -> Option<i64> {
    v.pointer(pointer).and_then(Value::as_i64)
}

fn condition<'a>(live: &'a Value, kind: &str) -> Option<&'a Value> {
    live.pointer("/status/conditions")?.as_array()?.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
}

fn condition_status(live: &Value, kind: &str) -> Option<String> {
    condition(live, kind).and_then(|c| c.get("status")).and_then(Value::as_str).map(str::to_string)
}

fn condition_true(live: &Value, kind: &str) -> Readiness {
    match condition_status(live, kind).as_deref() {
        Some("True") => Readiness::Ready,
        _ => {
            let why = condition(live, kind).and_then(|c| c.get("message")).and_then(Value::as_str).unwrap_or("");
            let suffix = if why.is_empty() { String::new() } else { format!(": {why}") };
            Readiness::Pending(format!("not {kind}{suffix}"))
        }
    }
}

/// `Some(message)` when the controller has not yet seen the current generation.
fn stale_generation(live: &Value) -> Option<String> {
    let generation = int(live, "/metadata/generation")?;
    let observed = int(live, "/status/observedGeneration").unwrap_or(0);
    (observed < generation).then(|| format!("generation {generation} not yet observed"))
}

fn namespace_active(live: &Value) -> Readiness {
    match live.pointer("/status/phase").and_then(Value::as_str) {
        None | Some("Active") => Readiness::Ready,
        Some(phase) => Readiness::Pending(format!("phase {phase}")),
    }
}

fn replica_check(live: &Value, want: i64, have: i64, noun: &str) -> Readiness {
    if let Some(stale) = stale_generation(live) {
        return Readiness::Pending(stale);
    }
    if have < want { Readiness::Pending(format!("{have}/{want} {noun}")) } else { Readiness::Ready }
}

fn deployment_available(live: &Value) -> Readiness {
    let want = int(live, "/spec/replicas").unwrap_or(1);
    let available = int(live, "/status/availableReplicas").unwrap_or(0);
    let updated = int(live, "/status/updatedReplicas").unwrap_or(0);
    match replica_check(live, want, available.min(updated), "ready") {
        Readiness::Ready if want > 0 && condition_status(live, "Available").as_deref() != Some("True") => {
            Readiness::Pending("not Available".into())
        }
        verdict => verdict,
    }
}

fn statefulset_ready(live: &Value) -> Readiness {
    let want = int(live, "/spec/replicas").unwrap_or(1);
    let ready = int(live, "/status/readyReplicas").unwrap_or(0);
    let updated = int(live, "/status/updatedReplicas").unwrap_or(ready);
    replica_check(live, want, ready.min(updated), "ready")
}

fn daemonset_ready(live: &Value) -> Readiness {
    let want = int(live, "/status/desiredNumberScheduled").unwrap_or(0);
    let ready = int(live, "/status/numberReady").unwrap_or(0);
    let updated = int(live, "/status/updatedNumberScheduled").unwrap_or(ready);
    if live.pointer("/status/desiredNumberScheduled").is_none() {
        return Readiness::Pending("not yet scheduled".into());
    }
    replica_check(live, want, ready.min(updated), "ready")
}

fn job_complete(live: &Value) -> Readiness {
    condition_true(live, "Complete")
}

fn ready_condition(live: &Value) -> Readiness {
    if let Some(stale) = live.pointer("/status/observedGeneration").and(stale_generation(live)) {
        return Readiness::Pending(stale);
    }
    condition_true(live, "Ready")
}

fn ca_bundle_injected(live: &Value) -> Readiness {
    let hooks = live.get("webhooks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let missing = hooks
        .iter()
        .filter(|h| h.pointer("/clientConfig/caBundle").and_then(Value::as_str).is_none_or(str::is_empty))
        .count();
    if missing == 0 {
        Readiness::Ready
    } else {
        Readiness::Pending(format!("caBundle not injected in {missing} webhook(s)"))
    }
}
