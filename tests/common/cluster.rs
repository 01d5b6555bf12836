//! A test API server with a kubeconfig file pointing at it, for the cluster tests
//! (`cluster_install`, `cluster_lifecycle`, `cluster_robust`). The server is
//! `kfctl_testapi::TestApiServer`, the in-repo test double of a Kubernetes API server; nothing
//! here talks to a real cluster.

use kfctl::catalog::RenderedObject;
use kfctl::cluster::InstallOptions;
use kfctl::cluster::api::Target;
use kfctl::cluster::record::{InstallMeta, InstallRecord, RECORD_NAME, RECORD_NAMESPACE};
use kfctl::cluster::retry::Backoff;
use kfctl_testapi::{ObjectKey, StatusRule, Target as Rule, TestApiConfig, TestApiServer};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

/// A server plus a kubeconfig file (in `dir`) pointing at it.
pub struct Cluster {
    pub server: TestApiServer,
    pub dir: TempDir,
    pub kubeconfig: PathBuf,
}

impl Cluster {
    pub fn start(config: TestApiConfig) -> Cluster {
        let server = TestApiServer::start(config);
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).unwrap();
        Cluster { server, dir, kubeconfig }
    }

    pub fn target(&self) -> Target {
        Target { kubeconfig: Some(self.kubeconfig.clone()), context: None }
    }

    /// Install options for a run of `profile` at `version`, with the tests' fast timings: polls
    /// every 20 ms, retries after 10–200 ms, a 30 s deadline and a 5 s CRD grace.
    pub fn options_for(&self, profile: &str, version: &str) -> InstallOptions {
        let meta = InstallMeta {
            upgrade_notes: Vec::new(),
            profile: profile.into(),
            upstream_version: version.into(),
            upstream_digest: "sha256:test".into(),
            values_digest: "sha256:values".into(),
            provided: Vec::new(),
        };
        let mut o = InstallOptions::new(self.target(), meta);
        o.timeout = Duration::from_secs(30);
        o.poll_interval = Duration::from_millis(20);
        o.backoff = Backoff { initial: Duration::from_millis(10), max: Duration::from_millis(200) };
        o.crd_grace = Duration::from_secs(5);
        o
    }

    /// The install record, if one is stored.
    pub fn record(&self) -> Option<InstallRecord> {
        let key = ObjectKey::new("", "configmaps", Some(RECORD_NAMESPACE), RECORD_NAME);
        self.server.object(&key).map(|cm| InstallRecord::from_configmap(&cm).unwrap())
    }

    pub fn has(&self, group: &str, resource: &str, namespace: Option<&str>, name: &str) -> bool {
        self.server.object(&ObjectKey::new(group, resource, namespace, name)).is_some()
    }

    /// The requests for custom resources of `plural` (not their CRD) the server refused, as
    /// `METHOD PATH STATUS`: none when nothing was sent before discovery served the kind.
    pub fn refused_custom_resource_requests(&self, plural: &str) -> Vec<String> {
        let path = format!("/{plural}");
        self.server
            .requests()
            .iter()
            // a read that finds no object yet (404) is how every apply starts: not a refusal
            .filter(|r| r.method != "GET" && r.path.contains(&path) && !r.path.contains("/customresourcedefinitions/"))
            .filter(|r| r.status >= 400)
            .map(|r| format!("{} {} {}", r.method, r.path, r.status))
            .collect()
    }

    /// Every PATCH the server received: path and body.
    pub fn patches(&self) -> Vec<(String, Vec<u8>)> {
        self.server.requests().into_iter().filter(|r| r.method == "PATCH").map(|r| (r.path, r.body)).collect()
    }
}

/// An object of `kind` named `name` (in `ns`), with the top-level fields of `extra`.
pub fn obj(api: &str, kind: &str, ns: Option<&str>, name: &str, extra: Value) -> Value {
    let mut doc = json!({"apiVersion": api, "kind": kind, "metadata": {"name": name}});
    if let Some(ns) = ns {
        doc["metadata"]["namespace"] = json!(ns);
    }
    if let (Some(map), Value::Object(extra)) = (doc.as_object_mut(), extra) {
        map.extend(extra);
    }
    doc
}

/// Real kustomize's whole platform of `version` (its `example.yaml` golden), tagged by
/// component, with cert-manager's CA-injection annotations left out (the test double runs no
/// cert-manager to fill them).
pub fn golden(version: &str) -> Vec<RenderedObject> {
    let path = super::golden_dir_of(version).join("example.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs = kfctl_yaml::parse_objects(&text, "example.yaml").unwrap();
    let docs = docs
        .into_iter()
        .map(|mut d| {
            strip_ca_injection(&mut d);
            d
        })
        .collect();
    let catalog = kfctl::catalog::Catalog::for_release(version).unwrap();
    kfctl::catalog::attribute::attribute_prerendered(&catalog, docs)
}

/// The users' objects a platform holds beside its own, each of a kind whose CRD `platform`
/// installs: a Profile, and in a namespace of their own a Notebook, a PodDefault, a TrainJob
/// and an InferenceService (the PVC and the Namespace are built in).
pub fn users_objects(platform: &[RenderedObject]) -> Vec<Value> {
    let crds: std::collections::HashSet<String> = platform
        .iter()
        .filter(|o| o.obj["kind"] == "CustomResourceDefinition")
        .filter_map(|o| o.obj["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    let ns = Some("kubeflow-user");
    let candidates = [
        (
            "profiles.kubeflow.org",
            obj(
                "kubeflow.org/v1",
                "Profile",
                None,
                "alice",
                json!({"spec": {"owner": {"kind": "User", "name": "alice@example.com"}}}),
            ),
        ),
        ("notebooks.kubeflow.org", obj("kubeflow.org/v1", "Notebook", ns, "mine", json!({"spec": {}}))),
        (
            "poddefaults.kubeflow.org",
            obj("kubeflow.org/v1alpha1", "PodDefault", ns, "add-gpu", json!({"spec": {"selector": {}}})),
        ),
        (
            "trainjobs.trainer.kubeflow.org",
            obj("trainer.kubeflow.org/v1alpha1", "TrainJob", ns, "train", json!({"spec": {}})),
        ),
        (
            "inferenceservices.serving.kserve.io",
            obj("serving.kserve.io/v1beta1", "InferenceService", ns, "serve", json!({"spec": {}})),
        ),
    ];
    let mut out = vec![obj("v1", "Namespace", None, "kubeflow-user", json!({}))];
    out.extend(candidates.into_iter().filter(|(crd, _)| crds.contains(*crd)).map(|(_, o)| o));
    out.push(obj("v1", "PersistentVolumeClaim", ns, "work", json!({"spec": {"accessModes": ["ReadWriteOnce"]}})));
    out
}

/// Drop cert-manager's CA-injection annotations from an object: the test API server runs no
/// cert-manager to fill them (a test that wants injection scripts it).
pub fn strip_ca_injection(obj: &mut Value) {
    if let Some(annotations) = obj["metadata"]["annotations"].as_object_mut() {
        annotations.retain(|k, _| !k.starts_with("cert-manager.io/inject-ca-from"));
    }
}

/// `profile` of `version` rendered from its snapshot, as `install --profile` does, less
/// cert-manager's CA-injection annotations ([`strip_ca_injection`]).
pub fn render_for_test_server(profile: &str, version: &str) -> Vec<RenderedObject> {
    let mut request = super::render_request(profile, Vec::new());
    request.manifests_dir = super::manifests_dir_of(version);
    request.layout = kfctl::catalog::render::Layout::Release(version.into());
    let mut objects =
        kfctl::catalog::render(&request).unwrap_or_else(|e| panic!("{profile} on {version}: {e}")).objects;
    for o in &mut objects {
        strip_ca_injection(&mut o.obj);
    }
    objects
}

/// The kind profile of `version`, as [`render_for_test_server`] renders it.
pub fn kind_render(version: &str) -> Vec<RenderedObject> {
    render_for_test_server("kind", version)
}

/// An object's identity as the cluster suites compare it: `group/Kind`, namespace (empty when
/// cluster-scoped), name.
pub fn identity_of(v: &Value) -> (String, String, String) {
    let api = v["apiVersion"].as_str().unwrap_or("");
    let group = api.rsplit_once('/').map_or("", |(g, _)| g).to_string();
    (
        format!("{group}/{}", v["kind"].as_str().unwrap_or("")),
        v["metadata"]["namespace"].as_str().unwrap_or("").to_string(),
        v["metadata"]["name"].as_str().unwrap_or("").to_string(),
    )
}

/// A CustomResourceDefinition of `<plural>.example.org` (kind `kind`) serving `versions`, each
/// `(name, storage)`.
pub fn crd(plural: &str, kind: &str, versions: &[(&str, bool)]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|(v, storage)| {
            json!({"name": v, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
        })
        .collect();
    obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        None,
        &format!("{plural}.example.org"),
        json!({"spec": {"group": "example.org", "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": versions}}),
    )
}

/// The test double with cert-manager's controller and cainjector as status rules (whichever
/// cert-manager runs, kfctl-rs's or the cluster's own, they stand in for its pods).
pub fn cert_manager_cluster() -> Cluster {
    let mut config = TestApiConfig::default();
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    for annotation in ["cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret"] {
        let rule = Rule::default().with_annotation(annotation);
        config = config.status_rule(StatusRule::inject_ca_bundle(rule, Duration::ZERO, "Y2E="));
    }
    Cluster::start(config)
}

/// Real kubectl applies `objects` server-side until they settle, as a platform team would.
pub fn kubectl_applies(cluster: &Cluster, objects: &[RenderedObject]) {
    let file = cluster.dir.path().join("dependency.yaml");
    let docs: Vec<Value> = objects.iter().map(|o| o.obj.clone()).collect();
    std::fs::write(&file, kfctl_yaml::to_yaml_stream(&docs)).unwrap();
    let mut last = String::new();
    for _ in 0..4 {
        let out = Command::new(crate::common::kubectl())
            .arg("--kubeconfig")
            .arg(&cluster.kubeconfig)
            .arg("--cache-dir")
            .arg(cluster.dir.path().join("cache"))
            .args(["apply", "--server-side", "--force-conflicts", "-f"])
            .arg(&file)
            .output()
            .unwrap();
        if out.status.success() {
            cluster.server.objects(); // let the test double's controllers catch up (endpoints)
            return;
        }
        last = String::from_utf8_lossy(&out.stderr).to_string();
    }
    panic!("kubectl apply did not settle: {last}");
}

/// The kfctl-rs binary against the test server `cluster` (its kubeconfig, no `KUBECONFIG`, no
/// stdin).
pub fn kfctl(cluster: &Cluster, args: &[&str]) -> std::process::Output {
    std::process::Command::new(super::binary())
        .args(args)
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .env_remove("KUBECONFIG")
        .env("HOME", std::env::temp_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}
