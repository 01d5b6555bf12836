//! Issue 24, items 2 and 4: changes the API server refuses to patch. The test API server (the
//! in-repo **test double** of kube-apiserver) refuses immutable fields with upstream's 422, and
//! real kubectl 1.33 prints it; kfctl-rs plans such changes as `replace` (delete, wait until
//! gone, create), upgrades through them in one run, orphans a StatefulSet's pods and claims, and
//! stops before any write on a PVC change. No real cluster is involved.

use crate::common;

use common::cluster::{Cluster, obj};
use kfctl::catalog::RenderedObject;
use kfctl::cluster::api::{ApiClient, ResourcePath};
use kfctl::cluster::diff::{diff, render_text};
use kfctl::cluster::immutable::{RULES, is_immutable_refusal};
use kfctl::cluster::install::Operation;
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::upgrade::{Change, change_plan};
use kfctl::cluster::{InstallOptions, install};
use kfctl_testapi::{FaultAction, FaultRule, ObjectKey, RequestMatch, TestApiConfig, TestApiServer};
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

fn binding(role: &str) -> Value {
    obj(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        None,
        "kf-reader",
        json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "web", "namespace": "kf"}]}),
    )
}

fn deployment(app: &str) -> Value {
    obj(
        "apps/v1",
        "Deployment",
        Some("kf"),
        "web",
        json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
}

fn claim(class: &str) -> Value {
    obj(
        "v1",
        "PersistentVolumeClaim",
        Some("kf"),
        "data",
        json!({"spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    )
}

fn statefulset(class: &str) -> Value {
    obj(
        "apps/v1",
        "StatefulSet",
        Some("kf"),
        "db",
        json!({"spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "mysql"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"storageClassName": class,
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
    )
}

/// A small platform: the roles, a binding to `role`, a Deployment selecting `app`, a claim of
/// `class`, a StatefulSet whose claims are of `sts_class`.
fn platform(role: &str, app: &str, class: &str, sts_class: &str) -> Vec<RenderedObject> {
    let docs = vec![
        obj("v1", "Namespace", None, "kf", json!({})),
        obj("rbac.authorization.k8s.io/v1", "ClusterRole", None, "reader-a", json!({"rules": []})),
        obj("rbac.authorization.k8s.io/v1", "ClusterRole", None, "reader-b", json!({"rules": []})),
        binding(role),
        deployment(app),
        claim(class),
        statefulset(sts_class),
    ];
    docs.into_iter().map(|obj| RenderedObject::new("platform", obj)).collect()
}

fn options(cluster: &Cluster, version: &str, upgrade: bool) -> InstallOptions {
    let mut o = cluster.options_for("replace", version);
    if upgrade {
        o.operation = Operation::Upgrade;
    }
    o
}

fn writes(cluster: &Cluster) -> usize {
    let requests = cluster.server.requests();
    let review = |path: &str| path.contains("selfsubjectaccessreviews");
    requests.iter().filter(|r| !matches!(r.method.as_str(), "GET" | "HEAD") && !review(&r.path)).count()
}

#[tokio::test]
async fn a_role_ref_and_a_selector_change_are_planned_as_replace_and_upgrade_in_one_run() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(
        platform("reader-a", "web", "standard", "standard"),
        options(&cluster, "v1", false),
        &mut RecordingProgress::default(),
    )
    .await
    .unwrap();
    let next = platform("reader-b", "web2", "standard", "standard");

    let plan = change_plan(&next, &cluster.target(), false, 8).await.unwrap();
    let replaced: Vec<(String, String)> = plan
        .objects
        .iter()
        .filter(|o| o.change == Change::Replace)
        .map(|o| (o.object.to_string(), o.reason.clone().unwrap_or_default()))
        .collect();
    assert_eq!(replaced.len(), 2, "{replaced:?}");
    assert!(
        replaced[0].0 == "ClusterRoleBinding kf-reader" && replaced[0].1.starts_with("roleRef is immutable"),
        "{replaced:?}"
    );
    assert!(
        replaced[1].0 == "Deployment kf/web" && replaced[1].1.starts_with("spec.selector is immutable"),
        "{replaced:?}"
    );
    assert!(plan.objects.iter().all(|o| matches!(o.change, Change::Replace | Change::Unchanged)), "{:?}", plan.objects);
    let text = render_text(&diff(&next, &cluster.target(), 8).await.unwrap());
    assert!(
        text.contains(
            "# Deployment kf/web would replace (spec.selector is immutable: delete, wait until gone, create)"
        ),
        "{text}"
    );
    assert!(text.contains("-      app: web\n") && text.contains("+      app: web2\n"), "{text}");

    let mut progress = RecordingProgress::default();
    let report = install(next.clone(), options(&cluster, "v2", true), &mut progress).await.unwrap();
    assert_eq!(report.created, 2, "the two replaced objects are created again");
    let live = |resource: &str, ns: Option<&str>, name: &str| {
        let group = if resource == "deployments" { "apps" } else { "rbac.authorization.k8s.io" };
        cluster.server.object(&ObjectKey::new(group, resource, ns, name)).unwrap()
    };
    assert_eq!(live("clusterrolebindings", None, "kf-reader")["roleRef"]["name"], "reader-b");
    assert_eq!(live("deployments", Some("kf"), "web")["spec"]["selector"]["matchLabels"]["app"], "web2");
    assert!(progress.lines.iter().any(|l| l.contains("replacing Deployment kf/web")), "{:?}", progress.lines);
    let rerun = change_plan(&next, &cluster.target(), false, 8).await.unwrap();
    assert!(rerun.objects.iter().all(|o| o.change == Change::Unchanged), "{:?}", rerun.objects);
}

#[tokio::test]
async fn a_claims_storage_class_change_stops_before_any_write_naming_it() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(
        platform("reader-a", "web", "standard", "standard"),
        options(&cluster, "v1", false),
        &mut RecordingProgress::default(),
    )
    .await
    .unwrap();
    let next = platform("reader-b", "web", "fast", "standard");
    let plan = change_plan(&next, &cluster.target(), false, 8).await.unwrap();
    let blocked: Vec<_> = plan.objects.iter().filter(|o| o.change == Change::Blocked).collect();
    assert_eq!(blocked.len(), 1);
    assert!(blocked[0].reason.as_deref().unwrap().contains("spec.storageClassName cannot change in place"));

    let before = writes(&cluster);
    let err = install(next, options(&cluster, "v2", true), &mut RecordingProgress::default()).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "PersistentVolumeClaim kf/data: spec.storageClassName cannot change in place; nothing was written;"
        ) && text.contains("copy the data"),
        "{text}"
    );
    assert_eq!(writes(&cluster), before, "a refused upgrade wrote something");
    let binding =
        cluster.server.object(&ObjectKey::new("rbac.authorization.k8s.io", "clusterrolebindings", None, "kf-reader"));
    assert_eq!(binding.unwrap()["roleRef"]["name"], "reader-a");
}

#[tokio::test]
async fn a_statefulset_is_replaced_with_its_pods_and_claims_orphaned() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(
        platform("reader-a", "web", "standard", "standard"),
        options(&cluster, "v1", false),
        &mut RecordingProgress::default(),
    )
    .await
    .unwrap();
    let sts = cluster.server.object(&ObjectKey::new("apps", "statefulsets", Some("kf"), "db")).unwrap();
    let owner = json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": sts["metadata"]["uid"]}]);
    let pod = obj(
        "v1",
        "Pod",
        Some("kf"),
        "db-0",
        json!({"metadata": {"name": "db-0", "namespace": "kf", "labels": {"app": "db"}, "ownerReferences": owner},
        "spec": {"containers": [{"name": "db", "image": "mysql"}]}}),
    );
    cluster.server.seed(pod).unwrap();
    cluster
        .server
        .seed(obj(
            "v1",
            "PersistentVolumeClaim",
            Some("kf"),
            "data-db-0",
            json!({"spec": {"accessModes": ["ReadWriteOnce"]}}),
        ))
        .unwrap();

    let next = platform("reader-a", "web", "standard", "fast");
    let plan = change_plan(&next, &cluster.target(), false, 8).await.unwrap();
    let sts_change = plan.objects.iter().find(|o| o.object.kind == "StatefulSet").unwrap();
    assert_eq!(sts_change.change, Change::Replace);
    assert!(
        sts_change
            .reason
            .as_deref()
            .unwrap()
            .contains("spec.volumeClaimTemplates[0].spec.storageClassName is immutable: delete (pods and PVCs kept)")
    );
    install(next, options(&cluster, "v2", true), &mut RecordingProgress::default()).await.unwrap();
    let sts = cluster.server.object(&ObjectKey::new("apps", "statefulsets", Some("kf"), "db")).unwrap();
    assert_eq!(sts["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"], "fast");
    let pod = cluster.server.object(&ObjectKey::new("", "pods", Some("kf"), "db-0")).expect("the pod is kept");
    assert!(pod["metadata"].get("ownerReferences").is_none_or(|o| o.as_array().is_some_and(Vec::is_empty)), "{pod}");
    assert!(cluster.has("", "persistentvolumeclaims", Some("kf"), "data-db-0"), "the pod's claim is kept");
}

#[tokio::test]
async fn a_refusal_the_table_did_not_foresee_is_replaced_for_a_kind_it_replaces() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(
        platform("reader-a", "web", "standard", "standard"),
        options(&cluster, "v1", false),
        &mut RecordingProgress::default(),
    )
    .await
    .unwrap();
    let message = "Deployment.apps \"web\" is invalid: spec.strategy: Invalid value: \"Recreate\": field is immutable";
    let refuse =
        FaultRule::new(RequestMatch::any().method("PATCH").name("web"), FaultAction::status(422, "Invalid", message))
            .times(1);
    cluster.server.set_fault(refuse);
    let mut next = platform("reader-a", "web", "standard", "standard");
    next[4].obj["spec"]["strategy"] = json!({"type": "Recreate"});
    let mut progress = RecordingProgress::default();
    install(next, options(&cluster, "v2", true), &mut progress).await.unwrap();
    assert!(
        progress
            .lines
            .iter()
            .any(|l| l
                .contains("replacing Deployment kf/web: spec.strategy is immutable (the server refused the patch)")),
        "{:?}",
        progress.lines
    );
    let web = cluster.server.object(&ObjectKey::new("apps", "deployments", Some("kf"), "web")).unwrap();
    assert_eq!(web["spec"]["strategy"]["type"], "Recreate");
}

/// One object before and after a change of each rule's field: (group/Kind, field, before, after).
fn cases() -> Vec<(&'static str, &'static str, Value, Value)> {
    let with = |mut doc: Value, pointer: &str, value: Value| {
        *doc.pointer_mut(pointer).unwrap() = value;
        doc
    };
    let ds = with(deployment("web"), "/kind", json!("DaemonSet"));
    let rs = with(deployment("web"), "/kind", json!("ReplicaSet"));
    let job = obj(
        "batch/v1",
        "Job",
        Some("kf"),
        "job",
        json!({"spec": {"selector": {"matchLabels": {"j": "1"}},
        "template": {"metadata": {"labels": {"j": "1"}}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "a"}]}}}}),
    );
    let svc =
        obj("v1", "Service", Some("kf"), "svc", json!({"spec": {"clusterIP": "10.96.0.7", "ports": [{"port": 80}]}}));
    let rb = with(
        with(binding("reader-a"), "/kind", json!("RoleBinding")),
        "/metadata",
        json!({"name": "rb", "namespace": "kf"}),
    );
    let crd = obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        "widgets.example.org",
        json!({"spec": {"group": "example.org", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    );
    vec![
        (
            "apps/Deployment",
            "spec.selector",
            deployment("web"),
            with(deployment("web"), "/spec/selector/matchLabels/app", json!("x")),
        ),
        ("apps/DaemonSet", "spec.selector", ds.clone(), with(ds, "/spec/selector/matchLabels/app", json!("x"))),
        ("apps/ReplicaSet", "spec.selector", rs.clone(), with(rs, "/spec/selector/matchLabels/app", json!("x"))),
        ("batch/Job", "spec.selector", job.clone(), with(job.clone(), "/spec/selector/matchLabels/j", json!("2"))),
        ("batch/Job", "spec.template", job.clone(), with(job, "/spec/template/spec/containers/0/image", json!("b"))),
        ("Service", "spec.clusterIP", svc.clone(), with(svc, "/spec/clusterIP", json!("None"))),
        ("rbac.authorization.k8s.io/RoleBinding", "roleRef", rb.clone(), with(rb, "/roleRef/name", json!("reader-b"))),
        ("rbac.authorization.k8s.io/ClusterRoleBinding", "roleRef", binding("reader-a"), binding("reader-b")),
        ("apps/StatefulSet", "spec", statefulset("a"), statefulset("b")),
        ("PersistentVolumeClaim", "spec", claim("a"), claim("b")),
        (
            "apiextensions.k8s.io/CustomResourceDefinition",
            "spec.scope",
            crd.clone(),
            with(crd.clone(), "/spec/scope", json!("Cluster")),
        ),
        (
            "apiextensions.k8s.io/CustomResourceDefinition",
            "spec.names.kind",
            crd.clone(),
            with(crd, "/spec/names/kind", json!("Gadget")),
        ),
    ]
}

fn path_of(doc: &Value) -> (ResourcePath, Option<String>, String) {
    let api = doc["apiVersion"].as_str().unwrap();
    let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
    let kind = doc["kind"].as_str().unwrap();
    let plural = match kind {
        "PersistentVolumeClaim" => "persistentvolumeclaims".to_string(),
        "CustomResourceDefinition" => "customresourcedefinitions".to_string(),
        k => format!("{}s", k.to_lowercase()),
    };
    let ns = doc["metadata"]["namespace"].as_str().map(str::to_string);
    let path = ResourcePath { group: group.into(), version: version.into(), plural, namespaced: ns.is_some() };
    (path, ns, doc["metadata"]["name"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn the_test_double_refuses_every_rule_of_the_table_in_words_kfctl_recognises() {
    for rule in RULES {
        assert!(
            cases().iter().any(|(gk, f, _, _)| *gk == rule.group_kind && *f == rule.field),
            "no case for {} {}",
            rule.group_kind,
            rule.field
        );
    }
    let server = TestApiServer::start(TestApiConfig::default().crd_established_after(Duration::ZERO));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let api =
        ApiClient::connect(&kfctl::cluster::api::Target { kubeconfig: Some(kubeconfig), context: None }).await.unwrap();
    let namespaces =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "namespaces".into(), namespaced: false };
    api.apply(
        &namespaces,
        None,
        "kf",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}}),
        true,
        false,
    )
    .await
    .unwrap();
    for (gk, field, before, after) in cases() {
        let (path, ns, name) = path_of(&before);
        api.apply(&path, ns.as_deref(), &name, &before, true, false).await.unwrap_or_else(|f| panic!("{gk}: {f}"));
        if gk.ends_with("CustomResourceDefinition") {
            server.objects(); // let the reconcile pass mark it Established
        }
        let refused = api.apply(&path, ns.as_deref(), &name, &after, true, false).await.expect_err(gk);
        assert!(is_immutable_refusal(&refused), "{gk} {field}: {refused}");
        assert!(refused.message.contains(&format!("\"{name}\" is invalid: ")), "{gk}: {}", refused.message);
        api.delete(&path, ns.as_deref(), &name).await.unwrap();
    }
}

fn kubectl(dir: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(common::kubectl())
        .arg("--kubeconfig")
        .arg(dir.join("kubeconfig"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--request-timeout=20s")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("kubectl runs");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
fn real_kubectl_shows_the_immutable_field_refusals() {
    let server = TestApiServer::start(TestApiConfig::default());
    let dir = tempfile::tempdir().unwrap();
    server.write_kubeconfig(&dir.path().join("kubeconfig")).unwrap();
    let stream =
        |docs: &[Value]| docs.iter().map(|d| serde_json::to_string(d).unwrap()).collect::<Vec<_>>().join("\n---\n");
    let first =
        [obj("v1", "Namespace", None, "kf", json!({})), binding("reader-a"), deployment("web"), statefulset("a")];
    std::fs::write(dir.path().join("v1.yaml"), stream(&first)).unwrap();
    let (ok, out) = kubectl(dir.path(), &["apply", "--server-side", "-f", "v1.yaml"]);
    assert!(ok, "{out}");
    for (doc, expected) in [
        (
            deployment("web2"),
            "The Deployment \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
        ),
        (
            binding("reader-b"),
            "The ClusterRoleBinding \"kf-reader\" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"reader-b\"}: cannot change roleRef",
        ),
        (
            statefulset("b"),
            "The StatefulSet \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
    ] {
        std::fs::write(dir.path().join("v2.yaml"), stream(&[doc])).unwrap();
        let (ok, out) = kubectl(dir.path(), &["apply", "--server-side", "--force-conflicts", "-f", "v2.yaml"]);
        assert!(!ok && out.contains(expected), "{out}");
    }
}
