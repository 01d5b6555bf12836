//! Issue 14's day-1 values, `global.users` and `global.storageClass`: each changes exactly
//! the objects it should (default and changed renders compared object by object), real Helm
//! of the export equals the render with them, and bad input is a usage error (exit 2) naming
//! the value, in kfctl-rs and in the export's `values.schema.json`.

use crate::common;

use kfctl::catalog::RenderRequest;
use kfctl::source::MirrorResolver;
use kfctl_yaml::compare;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};

const HASH: &str = "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72";
const PROFILE: &str = "multi-tenant";

/// A values file holding `doc`.
fn values_file(name: &str, doc: &Value) -> PathBuf {
    common::values_file("day1", name, doc)
}

/// The native render of multi-tenant with a values file (or none).
fn render(file: Option<&Path>) -> Vec<Value> {
    let mut request = common::render_request(PROFILE, Vec::new());
    request.value_files = file.map(Path::to_path_buf).into_iter().collect();
    let rendered = kfctl::catalog::render(&request).unwrap_or_else(|e| panic!("render: {e}"));
    rendered.objects.into_iter().map(|o| o.obj).collect()
}

fn default_render() -> &'static Vec<Value> {
    static OBJECTS: OnceLock<Vec<Value>> = OnceLock::new();
    OBJECTS.get_or_init(|| render(None))
}

fn cli(args: &[&str], extra: &[&str]) -> Output {
    common::kfctl_offline(&[args, &["--profile", PROFILE], extra].concat())
}

/// multi-tenant exported with default values, once per test run.
fn exported() -> &'static PathBuf {
    common::exported_multi_tenant()
}

fn helm(args: &[&str]) -> Output {
    Command::new(common::tool("helm-template")).arg(exported()).args(args).output().expect("helm-template runs")
}

fn assert_helm_equals(native: &[Value], file: &Path) {
    common::assert_helm_equals_native(native, &helm(&["-f", file.to_str().unwrap()]), "helm template");
}

fn label(obj: &Value) -> String {
    compare::object_label(obj)
}

/// Dex's ConfigMap (`auth/dex`).
fn dex_config(objs: &[Value]) -> &Value {
    objs.iter()
        .find(|o| {
            s(o, "/kind") == "ConfigMap" && s(o, "/metadata/namespace") == "auth" && s(o, "/metadata/name") == "dex"
        })
        .expect("Dex's ConfigMap")
}

fn s<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn storage_class_reaches_every_claim_and_nothing_else() {
    let file = values_file("storage", &json!({"global": {"storageClass": "fast"}}));
    let (before, after) = (default_render(), render(Some(&file)));
    assert_eq!(before.len(), after.len());
    let mut claims = 0;
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(label(old), label(new), "the same objects in the same order");
        let mut expected = old.clone();
        if s(old, "/kind") == "PersistentVolumeClaim" {
            expected["spec"]["storageClassName"] = json!("fast");
            claims += 1;
        }
        for t in expected.pointer_mut("/spec/volumeClaimTemplates").and_then(Value::as_array_mut).into_iter().flatten()
        {
            t["spec"]["storageClassName"] = json!("fast");
            claims += 1;
        }
        assert_eq!(&expected, new, "{}", label(old));
    }
    assert!(claims >= 3, "multi-tenant has claims (katib-mysql, mysql-pv-claim, seaweedfs-pvc): {claims}");
    let pvcs: Vec<&Value> = after.iter().filter(|o| s(o, "/kind") == "PersistentVolumeClaim").collect();
    assert!(pvcs.iter().all(|p| s(p, "/spec/storageClassName") == "fast"));
    assert_helm_equals(&after, &file);
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn two_users_replace_the_demo_profile_and_dex_login() {
    let values = json!({"global": {"users": [
        {"email": "Alice@Example.com", "passwordHash": HASH},
        {"email": "bob@example.org", "namespace": "team-bob"},
    ]}});
    let file = values_file("users", &values);
    let (before, after) = (default_render(), render(Some(&file)));
    let profiles: Vec<&Value> = after.iter().filter(|o| s(o, "/kind") == "Profile").collect();
    let owners: Vec<(&str, &str, &str)> =
        profiles.iter().map(|p| (s(p, "/metadata/name"), s(p, "/spec/owner/kind"), s(p, "/spec/owner/name"))).collect();
    assert_eq!(
        owners,
        [("kubeflow-alice-example-com", "User", "Alice@Example.com"), ("team-bob", "User", "bob@example.org")],
        "two Profiles, no demo one"
    );
    assert!(!after.iter().any(|o| s(o, "/metadata/name") == "kubeflow-user-example-com"));
    let demo = before.iter().find(|o| s(o, "/kind") == "Profile").unwrap();
    assert!(profiles.iter().all(|p| p["apiVersion"] == demo["apiVersion"]), "the demo Profile's apiVersion");
    // Everything but the Profiles, Dex's configuration and the demo hash is upstream's.
    let others =
        |objs: &[Value]| -> Vec<Value> { objs.iter().filter(|o| s(o, "/kind") != "Profile").cloned().collect() };
    let (old, new) = (others(before), others(&after));
    assert_eq!(old.len(), new.len());
    let changed: Vec<String> = old.iter().zip(&new).filter(|(a, b)| a != b).map(|(a, _)| label(a)).collect();
    assert_eq!(changed.len(), 2, "only Dex's ConfigMap and Secret: {changed:?}");
    let config = dex_config(&after);
    let text = s(config, "/data/config.yaml");
    assert!(text.contains(&format!(
        "- email: 'Alice@Example.com'\n  hash: '{HASH}'\n  username: 'Alice'\n  userID: 'kubeflow-alice-example-com'\n"
    )));
    assert!(!text.contains("user@example.com") && !text.contains("bob@"), "{text}");
    let secret = after.iter().find(|o| s(o, "/metadata/name") == "dex-passwords").unwrap();
    assert_eq!(s(secret, "/stringData/DEX_USER_PASSWORD"), "");
    assert_helm_equals(&after, &file);
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn users_without_passwords_leave_dex_no_static_login() {
    let file = values_file("sso-users", &json!({"global": {"users": [{"email": "carol@example.com"}]}}));
    let after = render(Some(&file));
    let config = dex_config(&after);
    assert!(s(config, "/data/config.yaml").contains("staticPasswords: []\n"));
    assert_helm_equals(&after, &file);
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn bad_users_and_storage_classes_are_usage_errors_in_kfctl_rs_and_helm() {
    let cases: &[(&str, Value, &str)] = &[
        ("no-email", json!({"global": {"users": [{"email": "a@b.io"}, {"namespace": "x"}]}}), "users[1].email"),
        ("bad-email", json!({"global": {"users": [{"email": "a@b.io"}, {"email": "not-an-email"}]}}), "users[1].email"),
        (
            "bad-namespace",
            json!({"global": {"users": [{"email": "a@b.io", "namespace": "Team_A"}]}}),
            "users[0].namespace",
        ),
        (
            "bad-hash",
            json!({"global": {"users": [{"email": "a@b.io", "passwordHash": "12341234"}]}}),
            "users[0].passwordHash",
        ),
        ("bad-class", json!({"global": {"storageClass": "Fast SSD"}}), "storageClass"),
    ];
    for (name, values, path) in cases {
        let file = values_file(name, values);
        let out = cli(&["template", "-f", file.to_str().unwrap()], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(&format!("global.{path}")), "{name}: {stderr}");
        let out = helm(&["-f", file.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "helm accepted {name}");
        let key = path.rsplit('.').next().unwrap();
        assert!(stderr.contains("schema") && stderr.contains(key), "{name}: {stderr}");
    }
    // Checked by kfctl-rs only (JSON Schema cannot derive a namespace or relate two values).
    let derived = values_file("derived", &json!({"global": {"users": [{"email": "a_b@example.com"}]}}));
    let both = values_file(
        "both",
        &json!({"global": {"users": [{"email": "a@b.io"}]}, "dex": {"staticUser": {"email": "x@y.io"}}}),
    );
    for (file, expect) in [(derived, "global.users[0].namespace"), (both, "dex.staticUser")] {
        let out = cli(&["template", "-f", file.to_str().unwrap()], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expect), "{stderr}");
    }
}

/// Each pod spec (a map with `containers`) of `obj`, as a copy.
fn pod_specs(obj: &Value) -> Vec<Value> {
    let mut copy = obj.clone();
    let mut specs = Vec::new();
    kfctl::catalog::params::for_each_pod_spec(&mut copy, &mut |spec| specs.push(Value::Object(spec.clone())));
    specs
}

fn is_runtime(obj: &Value) -> bool {
    matches!(s(obj, "/kind"), "ClusterTrainingRuntime" | "ClusterServingRuntime")
}

/// Issue 13: the global scheduling values reach the platform's own pods only — not the pod
/// templates of users' runtimes (Trainer's, KServe's) nor the istio-cni DaemonSet — and a
/// component's own value still wins over them. Issue 27: the component's own value does not
/// reach its node agent either (`istio.nodeSelector` pins istiod, never the CNI).
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn global_scheduling_skips_users_runtimes_and_node_agents() {
    let toleration = json!({"key": "dedicated", "operator": "Equal", "value": "kubeflow", "effect": "NoSchedule"});
    let values = json!({"global": {"nodeSelector": {"pool": "platform"}, "tolerations": [toleration]},
                        "kserve": {"nodeSelector": {"pool": "serving"}},
                        "istio": {"nodeSelector": {"pool": "mesh"}, "tolerations": [toleration]}});
    let file = values_file("scoped-scheduling", &values);
    let (before, after) = (default_render(), render(Some(&file)));
    assert_eq!(before.len(), after.len());
    let (mut platform, mut skipped, mut kserve) = (0, 0, 0);
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(label(old), label(new), "the same objects in the same order");
        let agent = s(old, "/kind") == "DaemonSet";
        for (o, n) in pod_specs(old).iter().zip(pod_specs(new)) {
            if is_runtime(old) || agent {
                assert_eq!(o, &n, "{}: neither global nor its component's scheduling may reach it", label(old));
                skipped += 1;
                continue;
            }
            let pool = n.pointer("/nodeSelector/pool").and_then(Value::as_str);
            kserve += usize::from(pool == Some("serving"));
            assert!(matches!(pool, Some("platform" | "serving" | "mesh")), "{}: {pool:?}", label(old));
            let tolerations = n["tolerations"].as_array();
            assert!(tolerations.is_some_and(|t| t.contains(&toleration)), "{}: global's tolerations", label(old));
            platform += 1;
        }
    }
    assert!(platform >= 40 && kserve >= 1, "platform pods {platform}, kserve's own {kserve}");
    // 11 serving runtimes, 14 pod templates of 6 training runtimes, the istio-cni DaemonSet.
    assert!(skipped >= 26, "runtimes and the istio-cni DaemonSet: {skipped}");
    assert_helm_equals(&after, &file);
}

/// Issue 14 item 5: `values/trainer-gpu-nodes.yaml` (`trainer.runtimes.*`) changes exactly the
/// training runtimes' `node` pod templates — node selector, tolerations, the `node` container's
/// GPU resources — and nothing else; real Helm of the export equals the render.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn gpu_runtimes_value_changes_only_the_training_runtimes_node_pods() {
    let file = common::repo_root().join("values/trainer-gpu-nodes.yaml");
    let (before, after) = (default_render(), render(Some(&file)));
    assert_eq!(before.len(), after.len());
    let mut changed_pods = 0;
    for (old, new) in before.iter().zip(&after) {
        let mut expected = old.clone();
        if s(old, "/kind") == "ClusterTrainingRuntime" {
            kfctl::catalog::params::for_each_pod_spec(&mut expected, &mut |spec| {
                if !kfctl::catalog::scheduling::runs_container(spec, "node") {
                    return;
                }
                changed_pods += 1;
                let selector = spec.entry("nodeSelector").or_insert_with(|| json!({}));
                selector["nvidia.com/gpu.present"] = json!("true");
                let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
                tolerations
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}));
                for c in spec["containers"].as_array_mut().unwrap() {
                    if c["name"] == "node" {
                        c["resources"] = json!({"limits": {"nvidia.com/gpu": 1}});
                    }
                }
            });
        }
        assert_eq!(&expected, new, "{}", label(old));
    }
    assert!(changed_pods >= 6, "the runtimes' node pod templates: {changed_pods}");
    assert_helm_equals(&after, &file);
}

/// Issue 14's third check for `trainer.runtimes`: the same change expressed as kustomize
/// would express it — JSON 6902 patches on the ClusterTrainingRuntimes added to the printed
/// kustomization of `minimal` — built by real kustomize equals the render with
/// `values/trainer-gpu-nodes.yaml`.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn gpu_runtimes_equal_real_kustomize_of_the_printed_kustomization_with_patches() {
    use kfctl::catalog::{Catalog, profile};
    let request = |files: Vec<PathBuf>| RenderRequest {
        profile: "minimal".into(),
        components: Vec::new(),
        value_files: files,
        sets: Vec::new(),
        manifests_dir: common::manifests_dir(),
        remote: Arc::new(MirrorResolver { root: common::mirror_dir() }),
        layout: common::layout(),
    };
    let objs = |files| -> Vec<Value> {
        kfctl::catalog::render(&request(files)).unwrap().objects.into_iter().map(|o| o.obj).collect()
    };
    let (before, after) = (objs(Vec::new()), objs(vec![common::repo_root().join("values/trainer-gpu-nodes.yaml")]));
    let mut patches = Vec::new();
    for runtime in before.iter().filter(|o| s(o, "/kind") == "ClusterTrainingRuntime") {
        let jobs = runtime.pointer("/spec/template/spec/replicatedJobs").and_then(Value::as_array).unwrap();
        let mut ops = Vec::new();
        for (i, job) in jobs.iter().enumerate() {
            let pod = format!("/spec/template/spec/replicatedJobs/{i}/template/spec/template/spec");
            let containers = job.pointer("/template/spec/template/spec/containers").and_then(Value::as_array).unwrap();
            let Some(j) = containers.iter().position(|c| c["name"] == "node") else { continue };
            assert!(job.pointer("/template/spec/template/spec/nodeSelector").is_none(), "upstream sets none");
            assert!(job.pointer("/template/spec/template/spec/tolerations").is_none(), "upstream sets none");
            ops.push(json!({"op": "add", "path": format!("{pod}/nodeSelector"), "value": {"nvidia.com/gpu.present": "true"}}));
            ops.push(json!({"op": "add", "path": format!("{pod}/tolerations"), "value": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}));
            ops.push(json!({"op": "add", "path": format!("{pod}/containers/{j}/resources"), "value": {"limits": {"nvidia.com/gpu": 1}}}));
        }
        let target = json!({"group": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": s(runtime, "/metadata/name")});
        patches.push(json!({"target": target, "patch": serde_json::to_string(&ops).unwrap()}));
    }
    assert!(patches.len() >= 6, "minimal's training runtimes: {}", patches.len());
    let catalog = Catalog::for_release(common::release()).unwrap();
    let k = profile::resolve("minimal", &catalog).unwrap().kustomization(&catalog).unwrap();
    let mut doc = kfctl_yaml::parse_stream(&profile::kustomization_yaml(&k), "kustomization").unwrap().remove(0);
    assert!(doc.get("patches").is_none(), "minimal's kustomization has no patches of its own");
    doc["patches"] = Value::Array(patches);
    let dir = common::localized_snapshot().join(format!("kfctl-gpu-runtimes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kustomization.yaml"), kfctl_yaml::to_yaml(&doc)).unwrap();
    let out = Command::new(common::tool("kustomize-build")).arg(&dir).output().expect("kustomize-build runs");
    assert!(out.status.success(), "real kustomize: {}", String::from_utf8_lossy(&out.stderr));
    let kustomize = kfctl_yaml::parse_stream(&String::from_utf8(out.stdout).unwrap(), "kustomize output").unwrap();
    if let Some(report) = compare::unordered_report(&kustomize, &after, 10) {
        panic!("the render with trainer.runtimes differs from real kustomize with the patches:\n{report}");
    }
    assert!(compare::unordered_report(&before, &after, 1).is_some(), "the value changes the render");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn existing_secrets_drop_exactly_their_secrets_and_unhash_references() {
    let file = values_file("existing", &json!({"global": {"existingSecrets": ["oauth2-proxy", "dex-passwords"]}}));
    let (before, after) = (default_render(), render(Some(&file)));
    let is_listed = |o: &Value| {
        s(o, "/kind") == "Secret"
            && ((s(o, "/metadata/namespace") == "oauth2-proxy" && s(o, "/metadata/name").starts_with("oauth2-proxy-"))
                || (s(o, "/metadata/namespace") == "auth" && s(o, "/metadata/name") == "dex-passwords"))
    };
    let dropped: Vec<&Value> = before.iter().filter(|o| is_listed(o)).collect();
    assert_eq!(dropped.len(), 2, "multi-tenant renders both Secrets");
    let hashed = dropped.iter().map(|o| s(o, "/metadata/name")).find(|n| *n != "dex-passwords").unwrap();
    let kept: Vec<Value> = before
        .iter()
        .filter(|o| !is_listed(o))
        .map(|o| {
            let text = o.to_string().replace(&format!("\"{hashed}\""), "\"oauth2-proxy\"");
            serde_json::from_str(&text).unwrap()
        })
        .collect();
    assert_eq!(kept.len(), after.len(), "only the listed Secrets are left out");
    for (expected, got) in kept.iter().zip(&after) {
        assert_eq!(expected, got, "{}", label(got));
    }
    let referencing = |objs: &[Value]| objs.iter().filter(|o| o.to_string().contains(&format!("\"{hashed}\""))).count();
    assert!(referencing(before) >= 2, "upstream's Deployment references the hashed Secret");
    assert_eq!(referencing(&after), 0, "no reference to the hashed name is left");
}

/// Issue 27: `kserve.runtimes.resources` merges over each runtime's own resources, as a
/// workload's `resources` do over theirs: a GPU limit keeps every ClusterServingRuntime's CPU
/// and memory (replacing them would drop both from all eleven); real Helm agrees.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn runtime_resources_merge_over_each_runtimes_own() {
    let gpu = json!({"kserve": {"runtimes": {"resources": {"limits": {"nvidia.com/gpu": 1}}}}});
    let file = values_file("runtime-resources-merge", &gpu);
    let (before, after) = (default_render(), render(Some(&file)));
    let mut merged = 0;
    for (old, new) in before.iter().zip(&after) {
        if s(old, "/kind") != "ClusterServingRuntime" {
            assert_eq!(old, new, "{}", label(old));
            continue;
        }
        let container = |o: &Value| o.pointer("/spec/containers/0/resources").cloned().unwrap_or(json!({}));
        let mut expected = container(old);
        assert!(expected.pointer("/limits/cpu").is_some(), "{}: upstream sets CPU", label(old));
        expected["limits"]["nvidia.com/gpu"] = json!(1);
        assert_eq!(container(new), expected, "{}", label(old));
        merged += 1;
    }
    assert!(merged >= 11, "the serving runtimes: {merged}");
    assert_helm_equals(&after, &file);
}
