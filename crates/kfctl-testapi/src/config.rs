//! Configuration of the test API server: reported version, delays, rule tables, access denials.

use std::time::Duration;

use super::faults::FaultRule;
use super::status_rules::{StatusRule, Target};

/// The workload kinds (group, kind) [`TestApiConfig::workloads_ready_after`] delays.
pub const WORKLOAD_KINDS: &[(&str, &str)] =
    &[("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"), ("apps", "ReplicaSet"), ("batch", "Job")];

/// One denial for `SelfSubjectAccessReview`; unset fields match anything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccessDenial {
    /// Verb (`create`, `patch`, ...).
    pub verb: Option<String>,
    /// API group (empty string: core).
    pub group: Option<String>,
    /// Plural resource.
    pub resource: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
}

impl AccessDenial {
    /// Whether the review's `resourceAttributes` fall under this denial.
    pub fn denies(&self, verb: &str, group: &str, resource: &str, namespace: &str) -> bool {
        let eq = |want: &Option<String>, got: &str| want.as_deref().is_none_or(|w| w == "*" || w == got);
        eq(&self.verb, verb) && eq(&self.group, group) && eq(&self.resource, resource) && eq(&self.namespace, namespace)
    }
}

/// How a [`super::TestApiServer`] behaves. `Default` is a healthy, instant server reporting
/// Kubernetes v1.33.1.
#[derive(Clone, Debug)]
pub struct TestApiConfig {
    /// `gitVersion` served at `/version`.
    pub git_version: String,
    /// Delay from CRD creation to its `Established` condition (and to its kinds being served).
    pub crd_established_after: Duration,
    /// Extra delay after establishment before a CRD's kinds appear in discovery.
    pub discovery_lag: Duration,
    /// Latency added to every request.
    pub latency: Duration,
    /// How often the background reconciler runs (status rules, CRDs, endpoints, GC).
    pub reconcile_interval: Duration,
    /// Status rules, later ones winning.
    pub status_rules: Vec<StatusRule>,
    /// Fault rules, evaluated in order.
    pub faults: Vec<FaultRule>,
    /// SelfSubjectAccessReview denials (everything else is allowed).
    pub denied_access: Vec<AccessDenial>,
    /// Namespaces present at start (upstream has `default`, `kube-system`, `kube-public`, `kube-node-lease`).
    pub initial_namespaces: Vec<String>,
    /// How many changes watches can replay before answering 410 Gone.
    pub watch_history: usize,
    /// Refuse writes covered by admission webhooks that could not be called (see `webhooks.rs`).
    pub simulate_webhooks: bool,
    /// How long a deleted namespace stays `Terminating` after its contents are gone (upstream's
    /// namespace controller takes seconds; `uninstall && install` must wait for it).
    pub namespace_finalize_after: Duration,
}

impl Default for TestApiConfig {
    fn default() -> Self {
        TestApiConfig {
            git_version: "v1.33.1".into(),
            crd_established_after: Duration::ZERO,
            discovery_lag: Duration::ZERO,
            latency: Duration::ZERO,
            reconcile_interval: Duration::from_millis(10),
            status_rules: Vec::new(),
            faults: Vec::new(),
            denied_access: Vec::new(),
            initial_namespaces: ["default", "kube-system", "kube-public", "kube-node-lease"].map(String::from).to_vec(),
            watch_history: 50_000,
            simulate_webhooks: false,
            namespace_finalize_after: Duration::ZERO,
        }
    }
}

impl TestApiConfig {
    /// Report this `gitVersion` (e.g. `v1.31.0`).
    pub fn git_version(mut self, version: &str) -> Self {
        self.git_version = version.into();
        self
    }
    /// CRDs become Established after this delay.
    pub fn crd_established_after(mut self, delay: Duration) -> Self {
        self.crd_established_after = delay;
        self
    }
    /// Custom kinds appear in discovery this long after establishment.
    pub fn discovery_lag(mut self, delay: Duration) -> Self {
        self.discovery_lag = delay;
        self
    }
    /// Add latency to every request.
    pub fn latency(mut self, delay: Duration) -> Self {
        self.latency = delay;
        self
    }
    /// Add a status rule.
    pub fn status_rule(mut self, rule: StatusRule) -> Self {
        self.status_rules.push(rule);
        self
    }
    /// Workloads ([`WORKLOAD_KINDS`]) become ready this long after their generation changes
    /// (a status rule per kind, added after the rules already there).
    pub fn workloads_ready_after(mut self, delay: Duration) -> Self {
        for (group, kind) in WORKLOAD_KINDS {
            let rule = StatusRule::ready_after(Target::kind(kind).in_group(group), delay);
            self.status_rules.push(rule);
        }
        self
    }
    /// Add a fault rule.
    pub fn fault(mut self, rule: FaultRule) -> Self {
        self.faults.push(rule);
        self
    }
    /// Simulate admission webhooks: writes they cover fail until their Service has a ready
    /// endpoint and their `caBundle` is set.
    pub fn simulate_webhooks(mut self, on: bool) -> Self {
        self.simulate_webhooks = on;
        self
    }
    /// Deleted namespaces stay `Terminating` this long after they are emptied.
    pub fn namespace_finalize_after(mut self, delay: Duration) -> Self {
        self.namespace_finalize_after = delay;
        self
    }
    /// Deny a class of SelfSubjectAccessReviews.
    pub fn deny(mut self, denial: AccessDenial) -> Self {
        self.denied_access.push(denial);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denial_matches_wildcards_and_exact_fields() {
        let deny =
            AccessDenial { verb: Some("create".into()), resource: Some("clusterroles".into()), ..Default::default() };
        assert!(deny.denies("create", "rbac.authorization.k8s.io", "clusterroles", ""));
        assert!(!deny.denies("get", "rbac.authorization.k8s.io", "clusterroles", ""));
        let star = AccessDenial { verb: Some("*".into()), ..Default::default() };
        assert!(star.denies("delete", "", "pods", "kf"));
    }

    #[test]
    fn default_is_a_healthy_v1_33_server_with_system_namespaces() {
        let config = TestApiConfig::default();
        assert_eq!(config.git_version, "v1.33.1");
        assert!(config.initial_namespaces.contains(&"kube-system".to_string()));
        assert!(config.faults.is_empty() && config.latency.is_zero());
    }
}
