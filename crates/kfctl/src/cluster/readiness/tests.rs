//! Unit tests of the readiness table: every rule, and every failure fact of every row.

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
    let running = json!({"status": {"active": 1}});
    assert_eq!(Rule::JobComplete.evaluate(&running), Readiness::Pending("not Complete".into()));
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
    let down = json!({"status": {"conditions": [{"type": "Available", "status": "False", "message": "no endpoints"}]}});
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

fn reason(kind: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message})
}

fn reference(api_version: &str, kind: &str) -> ObjectRef {
    ObjectRef { api_version: api_version.into(), kind: kind.into(), namespace: Some("kf".into()), name: "x".into() }
}

fn failed(reason: &str, message: &str) -> Readiness {
    Readiness::Failed(Failure { reason: reason.into(), message: message.into() })
}

/// Seconds since the epoch of 2026-01-01T00:00:00Z, the tests' "now".
const NOW: i64 = 1_767_225_600;

fn deployment_with(progressing: Value) -> Value {
    json!({"metadata": {"generation": 3}, "spec": {"replicas": 1},
        "status": {"observedGeneration": 3, "updatedReplicas": 1, "conditions": [
            reason("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
            progressing]}})
}

#[test]
fn every_row_names_a_rule_once() {
    let mut kinds: Vec<&str> = READINESS.iter().map(|row| row.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), READINESS.len(), "a kind has two rows");
}

#[test]
fn failure_row_deployment_progress_deadline_exceeded_fails() {
    let r = reference("apps/v1", "Deployment");
    let message = "ReplicaSet \"web-5d8f\" has timed out progressing.";
    let d = deployment_with(reason("Progressing", "False", "ProgressDeadlineExceeded", message));
    let verdict = verdict(&r, Rule::DeploymentAvailable, &d, NOW);
    assert_eq!(verdict, failed("ProgressDeadlineExceeded", message));
}

#[test]
fn failure_row_deployment_still_progressing_keeps_waiting() {
    let r = reference("apps/v1", "Deployment");
    let d = deployment_with(reason("Progressing", "True", "ReplicaSetUpdated", "ReplicaSet \"web\" is progressing."));
    assert_eq!(verdict(&r, Rule::DeploymentAvailable, &d, NOW), Readiness::Pending("0/1 ready".into()));
    // another reason with Progressing=False is not the deadline
    let other = deployment_with(reason("Progressing", "False", "SomethingElse", ""));
    assert!(matches!(verdict(&r, Rule::DeploymentAvailable, &other, NOW), Readiness::Pending(_)));
}

#[test]
fn failure_row_deployment_deadline_of_an_older_generation_is_not_judged() {
    let r = reference("apps/v1", "Deployment");
    let mut d = deployment_with(reason("Progressing", "False", "ProgressDeadlineExceeded", "old"));
    d["metadata"]["generation"] = json!(4);
    assert_eq!(
        verdict(&r, Rule::DeploymentAvailable, &d, NOW),
        Readiness::Pending("generation 4 not yet observed".into())
    );
}

#[test]
fn failure_row_ready_objects_are_never_failed() {
    let r = reference("apps/v1", "Deployment");
    let mut d = deployment_with(reason("Progressing", "False", "ProgressDeadlineExceeded", "stale"));
    d["status"]["availableReplicas"] = json!(1);
    d["status"]["conditions"][0] = cond("Available", "True");
    assert_eq!(verdict(&r, Rule::DeploymentAvailable, &d, NOW), Readiness::Ready);
}

#[test]
fn failure_row_job_failed_fails_with_its_reason() {
    let r = reference("batch/v1", "Job");
    let job = json!({"metadata": {"generation": 1}, "status": {"failed": 7, "conditions": [
        reason("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]}});
    let want = failed("BackoffLimitExceeded", "Job has reached the specified backoff limit");
    assert_eq!(verdict(&r, Rule::JobComplete, &job, NOW), want);
    let running = json!({"metadata": {"generation": 1}, "status": {"active": 1}});
    assert!(matches!(verdict(&r, Rule::JobComplete, &running, NOW), Readiness::Pending(_)));
}

#[test]
fn failure_row_certificate_terminal_reasons_fail_and_transient_ones_wait() {
    let r = reference("cert-manager.io/v1", "Certificate");
    let cert = |conds: Value| json!({"metadata": {"generation": 1}, "status": {"conditions": conds}});
    let issuing = cert(json!([
        reason("Ready", "False", "DoesNotExist", "Issuing certificate as Secret does not exist"),
        reason("Issuing", "False", "Failed", "The certificate request has failed to complete and will be retried: x"),
    ]));
    assert_eq!(
        verdict(&r, Rule::ReadyCondition, &issuing, NOW),
        failed("Failed", "The certificate request has failed to complete and will be retried: x")
    );
    assert!(matches!(
        verdict(&r, Rule::ReadyCondition, &cert(json!([reason("Ready", "False", "Denied", "no")])), NOW),
        Readiness::Failed(_)
    ));
    for transient in ["DoesNotExist", "Pending", "Issuing", "Renewing", "Expired"] {
        let c = cert(json!([reason("Ready", "False", transient, ""), reason("Issuing", "True", "Issuing", "")]));
        assert!(matches!(verdict(&r, Rule::ReadyCondition, &c, NOW), Readiness::Pending(_)), "{transient}");
    }
    // a condition written for an older generation says nothing
    let mut old = cert(json!([{"type": "Issuing", "status": "False", "reason": "Failed", "observedGeneration": 1}]));
    old["metadata"]["generation"] = json!(2);
    assert!(matches!(verdict(&r, Rule::ReadyCondition, &old, NOW), Readiness::Pending(_)));
    // issuers have no failure facts
    let issuer = reference("cert-manager.io/v1", "Issuer");
    assert!(matches!(verdict(&issuer, Rule::ReadyCondition, &issuing, NOW), Readiness::Pending(_)));
}

#[test]
fn failure_row_apiservice_unavailable_past_the_bound_fails() {
    let r = reference("apiregistration.k8s.io/v1", "APIService");
    let at = |t: &str| {
        json!({"status": {"conditions": [{"type": "Available", "status": "False",
        "reason": "MissingEndpoints", "message": "no endpoints", "lastTransitionTime": t}]}})
    };
    let recent = at("2025-12-31T23:55:00Z");
    assert_eq!(
        verdict(&r, Rule::ApiServiceAvailable, &recent, NOW),
        Readiness::Pending("not Available: no endpoints".into())
    );
    let long = at("2025-12-31T23:49:00Z");
    assert_eq!(
        verdict(&r, Rule::ApiServiceAvailable, &long, NOW),
        failed("MissingEndpoints", "Available=False for 660s: no endpoints")
    );
    let undated = json!({"status": {"conditions": [cond("Available", "False")]}});
    assert!(matches!(verdict(&r, Rule::ApiServiceAvailable, &undated, NOW), Readiness::Pending(_)));
}

#[test]
fn failure_row_statefulset_and_daemonset_stall_on_unchanged_counters() {
    for kind in ["StatefulSet", "DaemonSet"] {
        assert!(fails_when(&reference("apps/v1", kind)).contains(&FailsWhen::NoProgressFor(ROLLOUT_STALL)), "{kind}");
    }
    assert!(ROLLOUT_STALL >= Duration::from_secs(600), "the stall bound must stay conservative");
    let s = json!({"metadata": {"generation": 1}, "spec": {"replicas": 2}, "status": {"observedGeneration": 1, "readyReplicas": 1}});
    let mut moved = s.clone();
    moved["status"]["readyReplicas"] = json!(2);
    assert_ne!(progress_marker(&s), progress_marker(&moved));
    let mut respecced = s.clone();
    respecced["metadata"]["generation"] = json!(2);
    assert_ne!(progress_marker(&s), progress_marker(&respecced));
    // condition facts alone never fail them
    let sts = reference("apps/v1", "StatefulSet");
    assert!(matches!(verdict(&sts, Rule::StatefulSetReady, &s, NOW), Readiness::Pending(_)));
}

fn pod(name: &str, owner: &str, waiting: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"app": "web", "controller-revision-hash": "rev2"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": owner}]},
        "status": {"containerStatuses": [{"name": "c", "state": {"waiting": {"reason": waiting, "message": "back-off 40s"}}}]}})
}

#[test]
fn failure_row_pods_waiting_on_a_failure_reason_fail_their_workload() {
    for kind in ["Deployment", "StatefulSet", "DaemonSet", "Job"] {
        let group = if kind == "Job" { "batch/v1" } else { "apps/v1" };
        assert!(fails_when(&reference(group, kind)).contains(&FailsWhen::PodsWaiting), "{kind}");
    }
    let deployment = json!({"kind": "Deployment", "metadata": {"uid": "d1"}, "spec": {"selector": {"matchLabels": {"app": "web", "tier": "a"}}}});
    assert_eq!(pod_selector(&deployment).as_deref(), Some("app=web,tier=a"));
    for reason in POD_FAILURES {
        let pods = json!({"items": [pod("web-1", "web-new", "ContainerCreating"), pod("web-2", "web-new", reason)]});
        assert_eq!(
            pod_failure(&deployment, &pods, None),
            Some(Failure { reason: (*reason).into(), message: "pod web-2 container c: back-off 40s".into() })
        );
    }
    let creating = json!({"items": [pod("web-1", "web-new", "ContainerCreating")]});
    assert_eq!(pod_failure(&deployment, &creating, None), None);
    let mut init = pod("web-3", "web-new", "PodInitializing");
    init["status"]["initContainerStatuses"] =
        json!([{"name": "init", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]);
    let failure = pod_failure(&deployment, &json!({"items": [init]}), None).unwrap();
    assert_eq!((failure.reason.as_str(), failure.message.as_str()), ("CrashLoopBackOff", "pod web-3 container init"));
}

#[test]
fn failure_row_pods_of_an_old_rollout_do_not_fail_the_new_one() {
    let deployment = json!({"kind": "Deployment", "metadata": {"uid": "d1"}});
    let rs = |name: &str, revision: &str, uid: &str| {
        json!({"metadata": {"name": name,
        "annotations": {"deployment.kubernetes.io/revision": revision}, "ownerReferences": [{"uid": uid}]}})
    };
    let sets = json!({"items": [rs("web-old", "1", "d1"), rs("web-new", "2", "d1"), rs("other", "9", "d2")]});
    let newest = newest_replica_set(&deployment, &sets);
    assert_eq!(newest.as_deref(), Some("web-new"));
    let pods = json!({"items": [pod("web-1", "web-old", "CrashLoopBackOff")]});
    assert_eq!(pod_failure(&deployment, &pods, newest.as_deref()), None);
    let sts = json!({"kind": "StatefulSet", "status": {"updateRevision": "rev3"}});
    assert_eq!(pod_failure(&sts, &pods, None), None, "a pod of revision rev2 is not rev3's");
}

#[test]
fn failure_row_pods_are_not_listed_without_plain_match_labels() {
    assert_eq!(pod_selector(&json!({"spec": {}})), None);
    assert_eq!(pod_selector(&json!({"spec": {"selector": {"matchLabels": {}}}})), None);
    let expressions = json!({"spec": {"selector": {"matchLabels": {"a": "b"},
        "matchExpressions": [{"key": "c", "operator": "Exists"}]}}});
    assert_eq!(pod_selector(&expressions), None);
}

#[test]
fn failure_row_kinds_without_facts_only_wait() {
    for (api, kind) in [("v1", "Namespace"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition")] {
        assert!(fails_when(&reference(api, kind)).is_empty(), "{kind}");
    }
    let r = reference("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration");
    assert!(fails_when(&r).is_empty());
}
