//! The readiness table: when an applied object counts as working.
//!
//! Each rule reads the live object (as the API server returns it) and answers
//! [`Readiness::Ready`] or [`Readiness::Pending`] with a short message a person can act on
//! ("0/1 ready", "not Established"). Rules are chosen by kind from [`READINESS`]; webhook
//! configurations that cert-manager injects wait for their caBundle. Kinds without a rule are
//! done once applied: waiting on conditions a controller may never set (an Istio
//! VirtualService has none) would turn an install into a timeout.

use super::object::{ObjectRef, annotation};
use serde_json::Value;

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

/// Readiness rules by group/kind.
pub(crate) const READINESS: &[(&str, Rule)] = &[
    ("Namespace", Rule::NamespaceActive),
    ("apiextensions.k8s.io/CustomResourceDefinition", Rule::CrdEstablished),
    ("apps/Deployment", Rule::DeploymentAvailable),
    ("apps/StatefulSet", Rule::StatefulSetReady),
    ("apps/DaemonSet", Rule::DaemonSetReady),
    ("batch/Job", Rule::JobComplete),
    ("apiregistration.k8s.io/APIService", Rule::ApiServiceAvailable),
    ("cert-manager.io/Certificate", Rule::ReadyCondition),
    ("cert-manager.io/Issuer", Rule::ReadyCondition),
    ("cert-manager.io/ClusterIssuer", Rule::ReadyCondition),
];

/// The annotations by which cert-manager's cainjector fills in a caBundle.
pub(crate) const CA_INJECTION_ANNOTATIONS: &[&str] =
    &["cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret"];

/// Whether cert-manager injects this object's caBundle.
pub(crate) fn is_ca_injected(doc: &Value) -> bool {
    CA_INJECTION_ANNOTATIONS.iter().any(|key| annotation(doc, key).is_some())
}

/// The rule for an object, if it has one.
pub(crate) fn rule_for(r: &ObjectRef, doc: &Value) -> Option<Rule> {
    let gk = r.group_kind();
    if let Some((_, rule)) = READINESS.iter().find(|(k, _)| *k == gk) {
        return Some(*rule);
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
    if condition_status(live, "Failed").as_deref() == Some("True") {
        return Readiness::Pending("Failed".into());
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cond(kind: &str, status: &str) -> Value {
        json!({"type": kind, "status": status})
    }

    #[test]
    fn readiness_rule_deployment_available_at_current_generation() {
        let mut d = json!({"metadata": {"generation": 2}, "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "availableReplicas": 1, "updatedReplicas": 1, "conditions": [cond("Available", "True")]}});
        assert_eq!(Rule::DeploymentAvailable.evaluate(&d), Readiness::Pending("generation 2 not yet observed".into()));
        d["status"]["observedGeneration"] = json!(2);
        assert_eq!(Rule::DeploymentAvailable.evaluate(&d), Readiness::Ready);
        d["status"]["availableReplicas"] = json!(0);
        assert_eq!(Rule::DeploymentAvailable.evaluate(&d), Readiness::Pending("0/1 ready".into()));
    }

    #[test]
    fn readiness_rule_statefulset_ready() {
        let s = json!({"metadata": {"generation": 1}, "spec": {"replicas": 2}, "status": {"observedGeneration": 1, "readyReplicas": 1}});
        assert_eq!(Rule::StatefulSetReady.evaluate(&s), Readiness::Pending("1/2 ready".into()));
    }

    #[test]
    fn readiness_rule_daemonset_ready() {
        let unscheduled = json!({"metadata": {"generation": 1}, "status": {}});
        assert!(matches!(Rule::DaemonSetReady.evaluate(&unscheduled), Readiness::Pending(_)));
        let ok = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 3, "numberReady": 3, "updatedNumberScheduled": 3}});
        assert_eq!(Rule::DaemonSetReady.evaluate(&ok), Readiness::Ready);
    }

    #[test]
    fn readiness_rule_job_complete() {
        assert_eq!(
            Rule::JobComplete.evaluate(&json!({"status": {"conditions": [cond("Complete", "True")]}})),
            Readiness::Ready
        );
        let failed = json!({"status": {"conditions": [cond("Failed", "True")]}});
        assert_eq!(Rule::JobComplete.evaluate(&failed), Readiness::Pending("Failed".into()));
    }

    #[test]
    fn readiness_rule_crd_established() {
        assert_eq!(
            Rule::CrdEstablished.evaluate(&json!({"status": {"conditions": [cond("Established", "True")]}})),
            Readiness::Ready
        );
        assert_eq!(Rule::CrdEstablished.evaluate(&json!({})), Readiness::Pending("not Established".into()));
    }

    #[test]
    fn readiness_rule_apiservice_available() {
        let down =
            json!({"status": {"conditions": [{"type": "Available", "status": "False", "message": "no endpoints"}]}});
        assert_eq!(Rule::ApiServiceAvailable.evaluate(&down), Readiness::Pending("not Available: no endpoints".into()));
    }

    #[test]
    fn readiness_rule_generic_ready_condition() {
        assert_eq!(
            Rule::ReadyCondition.evaluate(&json!({"status": {"conditions": [cond("Ready", "True")]}})),
            Readiness::Ready
        );
        assert!(matches!(Rule::ReadyCondition.evaluate(&json!({"status": {}})), Readiness::Pending(_)));
    }

    #[test]
    fn readiness_rule_namespace_active() {
        assert_eq!(Rule::NamespaceActive.evaluate(&json!({"status": {"phase": "Active"}})), Readiness::Ready);
        assert!(matches!(
            Rule::NamespaceActive.evaluate(&json!({"status": {"phase": "Terminating"}})),
            Readiness::Pending(_)
        ));
    }

    #[test]
    fn readiness_rule_injected_webhooks_wait_for_ca_bundle() {
        let doc = json!({"metadata": {"annotations": {"cert-manager.io/inject-ca-from": "kubeflow/cert"}}});
        let r = ObjectRef::from_value(&json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration", "metadata": {"name": "w"}}), 0).unwrap();
        assert_eq!(rule_for(&r, &doc), Some(Rule::CaBundleInjected));
        assert_eq!(rule_for(&r, &json!({})), None);
        let live = json!({"webhooks": [{"clientConfig": {"caBundle": "Zm9v"}}, {"clientConfig": {}}]});
        assert_eq!(
            Rule::CaBundleInjected.evaluate(&live),
            Readiness::Pending("caBundle not injected in 1 webhook(s)".into())
        );
    }
}
