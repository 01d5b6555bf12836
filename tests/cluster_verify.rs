//! Issue 40: `verify` against the test API server (the in-repo test double of a Kubernetes API
//! server; no real cluster): the flow and the cleanup. Each step's object is created and
//! waited for; everything verify made is gone afterwards (or left with `keep`); a step whose
//! object fails ends the run naming it; a test Profile that exists stops it before any write.

use crate::common::cluster::{Cluster, obj};

use kfctl::cluster::ClusterError;
use kfctl::cluster::verify::{Outcome, VerifyOptions, verify};
use kfctl_testapi::{ObjectKey, StatusRule, Target as Rule, TestApiConfig};
use serde_json::{Value, json};
use std::time::Duration;

fn crd(group: &str, plural: &str, kind: &str, version: &str, scope: &str) -> Value {
    obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        &format!("{plural}.{group}"),
        json!({"spec": {"group": group, "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": [{"name": version, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
    )
}

/// A platform whose Notebooks, TrainJobs and InferenceServices work (or whose TrainJobs fail).
fn platform(trainjob: Value) -> Cluster {
    let ready = |kind: &str, status: Value| StatusRule::set_status(Rule::kind(kind), Duration::from_millis(50), status);
    let config = TestApiConfig::default()
        .status_rule(ready("Notebook", json!({"readyReplicas": 1})))
        .status_rule(ready("TrainJob", trainjob))
        .status_rule(ready(
            "InferenceService",
            json!({"conditions": [{"type": "Ready", "status": "True", "message": "serving"}]}),
        ));
    let cluster = Cluster::start(config);
    for crd in [
        crd("kubeflow.org", "profiles", "Profile", "v1", "Cluster"),
        crd("kubeflow.org", "notebooks", "Notebook", "v1", "Namespaced"),
        crd("trainer.kubeflow.org", "trainjobs", "TrainJob", "v1alpha1", "Namespaced"),
        crd("serving.kserve.io", "inferenceservices", "InferenceService", "v1beta1", "Namespaced"),
    ] {
        cluster.server.seed(crd).unwrap();
    }
    cluster
}

fn complete() -> Value {
    json!({"conditions": [{"type": "Complete", "status": "True", "message": "done"}]})
}

fn options(cluster: &Cluster) -> VerifyOptions {
    VerifyOptions {
        target: cluster.target(),
        namespace: "kfctl-verify".into(),
        owner: "user@example.com".into(),
        timeout: Duration::from_secs(30),
        poll: Duration::from_millis(20),
        keep: false,
    }
}

fn left(cluster: &Cluster) -> Vec<String> {
    cluster
        .server
        .objects()
        .into_iter()
        .filter(|s| {
            s.object["metadata"]["name"] == "kfctl-verify" || s.object["metadata"]["namespace"] == "kfctl-verify"
        })
        .filter(|s| s.object["metadata"].get("deletionTimestamp").is_none())
        .map(|s| format!("{} {}", s.object["kind"], s.object["metadata"]["name"]))
        .collect()
}

#[tokio::test]
async fn every_step_works_and_everything_verify_made_is_gone_afterwards() {
    let cluster = platform(complete());
    let report = verify(&options(&cluster)).await.unwrap();
    let outcomes: Vec<(&str, &Outcome)> = report.steps.iter().map(|s| (s.name.as_str(), &s.outcome)).collect();
    assert_eq!(
        outcomes,
        [
            ("profile", &Outcome::Passed),
            ("notebook", &Outcome::Passed),
            ("trainjob", &Outcome::Passed),
            ("inferenceservice", &Outcome::Passed)
        ],
        "{report:#?}"
    );
    assert!(!report.failed());
    assert_eq!(report.cleaned_up.len(), 4, "{:?}", report.cleaned_up);
    assert_eq!(left(&cluster), Vec::<String>::new(), "verify left objects behind");
}

#[tokio::test]
async fn a_failing_trainjob_ends_the_run_naming_it_and_keep_leaves_the_objects() {
    let failed =
        json!({"conditions": [{"type": "Failed", "status": "True", "message": "runtime torch-distributed not found"}]});
    let cluster = platform(failed);
    let mut options = options(&cluster);
    options.keep = true;
    let report = verify(&options).await.unwrap();
    assert!(report.failed());
    let last = report.steps.last().unwrap();
    assert_eq!((last.name.as_str(), &last.outcome), ("trainjob", &Outcome::Failed));
    assert!(
        last.object.contains("TrainJob kfctl-verify/kfctl-verify")
            && last.detail.contains("runtime torch-distributed not found"),
        "{last:?}"
    );
    assert_eq!(report.steps.len(), 3, "the InferenceService step did not run");
    assert!(
        cluster
            .server
            .object(&ObjectKey::new("trainer.kubeflow.org", "trainjobs", Some("kfctl-verify"), "kfctl-verify"))
            .is_some(),
        "--keep"
    );
}

#[tokio::test]
async fn a_kind_not_served_is_skipped_and_an_existing_profile_stops_before_any_write() {
    let cluster = Cluster::start(TestApiConfig::default().status_rule(StatusRule::set_status(
        Rule::kind("Notebook"),
        Duration::ZERO,
        json!({"readyReplicas": 1}),
    )));
    cluster.server.seed(crd("kubeflow.org", "profiles", "Profile", "v1", "Cluster")).unwrap();
    cluster.server.seed(crd("kubeflow.org", "notebooks", "Notebook", "v1", "Namespaced")).unwrap();
    let report = verify(&options(&cluster)).await.unwrap();
    let skipped: Vec<&str> =
        report.steps.iter().filter(|s| s.outcome == Outcome::Skipped).map(|s| s.name.as_str()).collect();
    assert_eq!(skipped, ["trainjob", "inferenceservice"], "{report:#?}");
    assert!(!report.failed());

    cluster.server.seed(obj("kubeflow.org/v1", "Profile", None, "kfctl-verify", json!({"spec": {}}))).unwrap();
    cluster.server.clear_requests();
    let err = verify(&options(&cluster)).await.unwrap_err();
    assert!(matches!(err, ClusterError::Verify(_)), "{err}");
    assert!(err.to_string().contains("profile kfctl-verify: it exists already"), "{err}");
    let writes = cluster.server.requests().into_iter().filter(|r| r.method != "GET").count();
    assert_eq!(writes, 0, "verify wrote before refusing");
}
