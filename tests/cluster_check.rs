//! Issue 40: `check --pre` against the test API server (the in-repo test double of a
//! Kubernetes API server; no real cluster): every item judged, nothing written. A cluster
//! outside the release's range, one without a default StorageClass and one with a foreign CRD
//! each fail their item with a hint; a good cluster passes; `-o json` is stable. An arm64 node
//! fails the architectures item naming an image `charts/image-platforms.yaml` says is amd64-only.

use crate::common::cluster::{Cluster, crd, obj};

use kfctl::catalog::RenderedObject;
use kfctl::cluster::check::{ITEMS, Mark, PreCheckOptions, check_pre};
use kfctl_testapi::{FaultAction, FaultRule, RequestMatch, TestApiConfig};
use serde_json::json;
use std::time::Duration;

/// Built for amd64, arm64 and ppc64le (kubeflow/katib's publishing workflow, in the data file).
const MULTI_ARCH: &str = "ghcr.io/kubeflow/katib/katib-controller:v0.19.0";
/// Published for amd64 only (kubeflow/pipelines#13957, in the data file).
const AMD64_ONLY: &str = "gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0";

fn objects() -> Vec<RenderedObject> {
    let web = json!({"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": MULTI_ARCH,
            "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}]}}});
    [
        obj("v1", "Namespace", None, "kf", json!({})),
        crd("widgets", "Widget", &[("v1", true)]),
        obj(
            "v1",
            "PersistentVolumeClaim",
            Some("kf"),
            "data",
            json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}),
        ),
        obj("apps/v1", "Deployment", Some("kf"), "web", json!({"spec": web})),
    ]
    .into_iter()
    .map(|obj| RenderedObject::new("platform", obj))
    .collect()
}

fn cluster(version: &str, storage_class: bool) -> Cluster {
    let cluster = Cluster::start(TestApiConfig::default().git_version(version));
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi"}, "nodeInfo": {"architecture": "amd64"}}});
    cluster.server.seed(node).unwrap();
    if storage_class {
        let class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "standard",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "x"});
        cluster.server.seed(class).unwrap();
    }
    cluster
}

fn options(cluster: &Cluster) -> PreCheckOptions {
    PreCheckOptions {
        target: cluster.target(),
        release: "26.03.1".into(),
        supported: semver::VersionReq::parse(">=1.35.0").unwrap(),
        provided: Vec::new(),
        timeout: Duration::from_secs(20),
    }
}

fn mark_of(report: &kfctl::cluster::check::CheckReport, id: &str) -> (Mark, String, Option<String>) {
    let item = report.items.iter().find(|i| i.id == id).unwrap_or_else(|| panic!("{id} not run"));
    (item.mark, item.detail.clone(), item.hint.clone())
}

#[tokio::test]
async fn a_good_cluster_passes_every_item_and_nothing_is_written() {
    let cluster = cluster("v1.36.1", true);
    cluster.server.clear_requests();
    let report = check_pre(&objects(), &options(&cluster)).await.unwrap();
    assert!(!report.failed(), "{}", report.render_text());
    let ids: Vec<&str> = report.items.iter().map(|i| i.id).collect();
    assert_eq!(ids, ITEMS.iter().map(|i| i.id).collect::<Vec<_>>(), "every item, in order");
    let (_, capacity, _) = mark_of(&report, "capacity");
    assert!(
        capacity.contains("1 node(s) with 8.0 CPU and 32.0 GiB allocatable; the plan requests 1.0 CPU and 0.5 GiB"),
        "{capacity}"
    );
    let writes: Vec<String> = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD") && !r.path.contains("accessreviews"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "check wrote: {writes:?}");
    let json = |r: &kfctl::cluster::check::CheckReport| serde_json::to_string_pretty(r).unwrap();
    let again = check_pre(&objects(), &options(&cluster)).await.unwrap();
    assert_eq!(json(&report), json(&again), "-o json is stable");
}

#[tokio::test]
async fn outside_the_range_without_a_storage_class_and_with_a_foreign_crd_each_item_fails_with_its_hint() {
    let cluster = cluster("v1.33.1", false);
    // another team's CRD (the test double records seeds under the field manager `test-seed`)
    cluster.server.seed(crd("widgets", "Widget", &[("v1", true)])).unwrap();
    let report = check_pre(&objects(), &options(&cluster)).await.unwrap();
    assert!(report.failed());
    let (mark, detail, hint) = mark_of(&report, "kubernetes");
    assert_eq!(mark, Mark::Fail, "{detail}");
    assert!(detail.contains("v1.33.1") && hint.unwrap().contains("26.03.1's range"), "{detail}");
    let (mark, detail, hint) = mark_of(&report, "storage");
    assert_eq!(mark, Mark::Fail, "{detail}");
    assert!(
        detail.contains("1 PersistentVolumeClaims would stay Pending") && hint.unwrap().contains("is-default-class")
    );
    let (mark, detail, hint) = mark_of(&report, "existing");
    assert_eq!(mark, Mark::Fail, "{detail}");
    assert!(detail.contains("widgets.example.org (managed by test-seed"), "{detail}");
    assert!(hint.unwrap().contains(".provided=true"));
    assert_eq!(mark_of(&report, "architectures").0, Mark::Pass);
    let text = report.render_text();
    assert!(
        text.contains("✘ Kubernetes in the release's range:")
            && text.ends_with("3 item(s) failed; see GUIDE.md#check-before-verify-after\n"),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_fails_the_first_item_and_ends_the_list() {
    let cluster = cluster("v1.36.1", true);
    cluster.server.set_fault(FaultRule::new(RequestMatch::any(), FaultAction::NeverAnswer));
    let mut options = options(&cluster);
    options.timeout = Duration::from_secs(3);
    let started = std::time::Instant::now();
    let report = check_pre(&objects(), &options).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(report.items.len(), 1, "{:?}", report.items);
    assert_eq!((report.items[0].id, report.items[0].mark), ("api", Mark::Fail));
    assert!(report.items[0].hint.as_deref().unwrap().contains("kubeconfig"));
}

fn arm64_node(cluster: &Cluster) {
    let arm = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi"}, "nodeInfo": {"architecture": "arm64"}}});
    cluster.server.seed(arm).unwrap();
}

/// [`objects`] with a Deployment running `image`.
fn with_image(name: &str, image: &str) -> Vec<RenderedObject> {
    let spec = json!({"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": name, "image": image}]}}});
    let mut all = objects();
    all.push(RenderedObject::new("platform", obj("apps/v1", "Deployment", Some("kf"), name, json!({"spec": spec}))));
    all
}

#[tokio::test]
async fn a_namespace_enforcing_restricted_pod_security_is_a_warning_and_arm64_nodes_pass_multi_arch_images() {
    let cluster = cluster("v1.36.1", true);
    let strict = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf",
        "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
    cluster.server.seed(strict).unwrap();
    arm64_node(&cluster);
    let report = check_pre(&objects(), &options(&cluster)).await.unwrap();
    let (mark, detail, hint) = mark_of(&report, "pod-security");
    assert_eq!(mark, Mark::Warn, "{detail}");
    assert!(detail.contains("kf (pod-security.kubernetes.io/enforce=restricted)") && hint.is_some(), "{detail}");
    let (mark, detail, _) = mark_of(&report, "architectures");
    assert_eq!(mark, Mark::Pass, "{detail}");
    assert_eq!(detail, "nodes: amd64, arm64; all 1 image(s) are built for them");
    assert!(!report.failed(), "warnings only: {}", report.render_text());
}

#[tokio::test]
async fn an_arm64_node_fails_the_architectures_item_naming_the_amd64_only_image() {
    let cluster = cluster("v1.36.1", true);
    arm64_node(&cluster);
    let report = check_pre(&with_image("mlmd", AMD64_ONLY), &options(&cluster)).await.unwrap();
    let (mark, detail, hint) = mark_of(&report, "architectures");
    assert_eq!(mark, Mark::Fail, "{detail}");
    assert_eq!(detail, format!("nodes: amd64, arm64; 1 image(s) have no build for arm64: {AMD64_ONLY} (linux/amd64)"));
    let hint = hint.unwrap();
    assert!(hint.contains("`global.nodeSelector`") && hint.contains("kubeflow/pipelines/issues/13957"), "{hint}");
    assert!(report.failed());
    assert!(report.render_text().contains("✘ node architectures the images are built for: nodes: amd64, arm64;"));
}

#[tokio::test]
async fn on_amd64_nodes_known_images_pass_and_unknown_ones_warn_with_their_count() {
    let cluster = cluster("v1.36.1", true);
    let report = check_pre(&with_image("mlmd", AMD64_ONLY), &options(&cluster)).await.unwrap();
    let (mark, detail, _) = mark_of(&report, "architectures");
    assert_eq!((mark, detail.as_str()), (Mark::Pass, "nodes: amd64; all 2 image(s) are built for them"));
    let report = check_pre(&with_image("site", "registry.example.com/site:1"), &options(&cluster)).await.unwrap();
    let (mark, detail, hint) = mark_of(&report, "architectures");
    assert_eq!(mark, Mark::Warn, "{detail}");
    assert!(detail.ends_with("; 1 of 2 image(s) unknown to the catalog's platform data"), "{detail}");
    assert!(hint.unwrap().ends_with(": registry.example.com/site:1"));
    assert!(!report.failed());
}
