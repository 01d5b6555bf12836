//! One test per status rule and per built-in readiness shape.

use super::*;

fn deploy(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "kf", "generation": 3},
        "spec": {"replicas": replicas}})
}

#[test]
fn target_matches_kind_group_name_namespace_annotation() {
    let d = deploy("web", 1);
    assert!(Target::kind("Deployment").in_group("apps").matches(&d));
    assert!(!Target::kind("Deployment").in_group("").matches(&d));
    assert!(Target::object("Deployment", Some("kf"), "web").matches(&d));
    assert!(!Target::object("Deployment", Some("other"), "web").matches(&d));
    assert!(!Target::kind("Deployment").with_annotation("a").matches(&d));
}

#[test]
fn workload_kinds_default_to_ready_immediately_others_to_none() {
    assert_eq!(readiness_for(&[], &deploy("web", 1)), Some(StatusBehavior::ReadyAfter(Duration::ZERO)));
    assert_eq!(readiness_for(&[], &json!({"kind": "ConfigMap"})), None);
}

#[test]
fn rule_ready_after_overrides_default() {
    let rules = [StatusRule::ready_after(Target::kind("Deployment"), Duration::from_millis(50))];
    assert_eq!(readiness_for(&rules, &deploy("web", 1)), Some(StatusBehavior::ReadyAfter(Duration::from_millis(50))));
}

#[test]
fn rule_never_ready_later_rule_wins() {
    let rules = [
        StatusRule::ready_after(Target::kind("Deployment"), Duration::ZERO),
        StatusRule::never_ready(Target::object("Deployment", Some("kf"), "stuck")),
    ];
    assert_eq!(readiness_for(&rules, &deploy("stuck", 1)), Some(StatusBehavior::NeverReady));
    assert_eq!(readiness_for(&rules, &deploy("web", 1)), Some(StatusBehavior::ReadyAfter(Duration::ZERO)));
}

#[test]
fn deployment_ready_status_mirrors_controller() {
    let status = readiness_status(&deploy("web", 2), true, "t");
    assert_eq!(status["observedGeneration"], 3);
    assert_eq!(status["readyReplicas"], 2);
    assert_eq!(status["conditions"][0]["type"], "Available");
    assert_eq!(status["conditions"][0]["status"], "True");
    let pending = readiness_status(&deploy("web", 2), false, "t");
    assert!(pending.get("readyReplicas").is_none());
    assert_eq!(pending["unavailableReplicas"], 2);
    assert_eq!(pending["conditions"][0]["reason"], "MinimumReplicasUnavailable");
}

#[test]
fn statefulset_daemonset_job_statuses() {
    let sts = json!({"kind": "StatefulSet", "metadata": {"name": "db", "generation": 1}, "spec": {"replicas": 1}});
    assert_eq!(readiness_status(&sts, true, "t")["readyReplicas"], 1);
    let ds = json!({"kind": "DaemonSet", "metadata": {"name": "d"}});
    assert_eq!(readiness_status(&ds, false, "t")["numberUnavailable"], 1);
    let job = json!({"kind": "Job", "metadata": {"name": "j"}, "spec": {"completions": 2}});
    let done = readiness_status(&job, true, "t");
    assert_eq!(done["succeeded"], 2);
    assert_eq!(done["conditions"][1]["type"], "Complete");
}

#[test]
fn apiservice_available_and_generic_ready_condition() {
    let api = json!({"kind": "APIService", "metadata": {"name": "v1beta1.metrics.k8s.io"}});
    assert_eq!(readiness_status(&api, true, "t")["conditions"][0]["type"], "Available");
    let cr = json!({"kind": "Profile", "metadata": {"name": "p", "generation": 2}, "status": {"keep": 1}});
    let status = readiness_status(&cr, true, "t");
    assert_eq!((status["keep"].clone(), status["conditions"][0]["type"].clone()), (json!(1), json!("Ready")));
}

#[test]
fn serving_pods_reads_status() {
    let mut d = deploy("web", 2);
    assert_eq!(serving_pods(&d), 0);
    d["status"] = readiness_status(&d, true, "t");
    assert_eq!(serving_pods(&d), 2);
}

#[test]
fn ca_bundle_injection_into_webhooks_crd_apiservice() {
    let hook =
        json!({"kind": "ValidatingWebhookConfiguration", "webhooks": [{"name": "a", "clientConfig": {"service": {}}}]});
    let injected = with_ca_bundle(&hook, "Q0E=").unwrap();
    assert_eq!(injected["webhooks"][0]["clientConfig"]["caBundle"], "Q0E=");
    assert!(with_ca_bundle(&injected, "Q0E=").is_none());
    let crd = json!({"kind": "CustomResourceDefinition", "spec": {"conversion": {"strategy": "None"}}});
    assert!(with_ca_bundle(&crd, "Q0E=").is_none());
    let api = json!({"kind": "APIService", "spec": {}});
    assert_eq!(with_ca_bundle(&api, "Q0E=").unwrap()["spec"]["caBundle"], "Q0E=");
}
