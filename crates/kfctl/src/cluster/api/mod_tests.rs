//! The API client's pure parts.

use super::*;

#[test]
fn collection_paths_for_core_grouped_and_cluster_scoped() {
    let cm = ResourcePath { group: "".into(), version: "v1".into(), plural: "configmaps".into(), namespaced: true };
    assert_eq!(cm.collection(Some("kf")), "/api/v1/namespaces/kf/configmaps");
    let crb = ResourcePath {
        group: "rbac.authorization.k8s.io".into(),
        version: "v1".into(),
        plural: "clusterrolebindings".into(),
        namespaced: false,
    };
    assert_eq!(crb.collection(Some("ignored")), "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
}

#[test]
fn a_run_deadline_past_the_call_budget_is_the_only_deadline() {
    let deadline = Instant::now() + Duration::from_secs(300);
    let policy = CallPolicy::default().until(deadline);
    assert_eq!(policy.end_of_retries(), deadline, "calls retry until the run's deadline, not 2m");
    let short = Instant::now() + Duration::from_secs(3);
    assert_eq!(policy.until(short).end_of_retries(), short, "an earlier deadline still wins");
}
