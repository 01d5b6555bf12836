//! Issue 4's contract: profiles render 1:1 with real kustomize, values change exactly what
//! they say and nothing else, `images` covers the render, and bad input is a usage error.

use crate::common;

use kfctl::catalog::{self, Catalog, RenderRequest, profile};
use kfctl_yaml::compare;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn request(profile: &str, sets: &[&str]) -> RenderRequest {
    common::render_request_set(profile, sets)
}

fn render(profile: &str, sets: &[&str]) -> Vec<Value> {
    let rendered =
        catalog::render(&request(profile, sets)).unwrap_or_else(|e| panic!("render {profile} {sets:?}: {e}"));
    rendered.objects.into_iter().map(|o| o.obj).collect()
}

fn default_render(profile: &str) -> &'static Vec<Value> {
    static CACHE: OnceLock<std::sync::Mutex<std::collections::HashMap<String, &'static Vec<Value>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let leaked: &'static Vec<Value> =
        map.entry(profile.to_string()).or_insert_with(|| Box::leak(Box::new(render(profile, &[]))));
    leaked
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn multi_tenant_equals_upstream_example_golden() {
    let golden_path = common::golden_dir().join("example.yaml");
    let golden = kfctl_yaml::parse_stream(&std::fs::read_to_string(&golden_path).unwrap(), "example.yaml").unwrap();
    let actual = default_render("multi-tenant");
    assert_eq!(golden.len(), common::example_object_count());
    if let Some(report) = compare::ordered_report(&golden, actual, 20) {
        panic!("multi-tenant differs from golden example.yaml:\n{report}");
    }
}

/// Real kustomize of what `kfctl-rs profile kustomization NAME --version <release>` prints,
/// in a folder directly under the localized snapshot.
fn real_kustomize_of_profile(name: &str) -> Vec<Value> {
    let printed = Command::new(common::binary())
        .args(["profile", "kustomization", name, "--version", common::release()])
        .output()
        .expect("kfctl-rs runs");
    assert!(printed.status.success(), "profile kustomization {name}: {}", String::from_utf8_lossy(&printed.stderr));
    let dir = common::localized_snapshot().join(format!("kfctl-profile-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kustomization.yaml"), &printed.stdout).unwrap();
    let out = Command::new(common::tool("kustomize-build")).arg(&dir).output().expect("kustomize-build runs");
    assert!(out.status.success(), "real kustomize failed on profile {name}: {}", String::from_utf8_lossy(&out.stderr));
    kfctl_yaml::parse_stream(&String::from_utf8(out.stdout).unwrap(), "kustomize output").unwrap()
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn every_builtin_profile_equals_real_kustomize_of_its_printed_kustomization() {
    for name in profile::builtin_names() {
        let expected = real_kustomize_of_profile(name);
        let actual = default_render(name);
        if let Some(report) = compare::ordered_report(&expected, actual, 20) {
            panic!(
                "profile {name}: template differs from real kustomize of `kfctl-rs profile kustomization {name}`:\n{report}"
            );
        }
        println!("profile {name}: {} objects, equal to real kustomize", actual.len());
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn minimal_has_trainer_and_jobset_and_no_istio_object() {
    let objs = default_render("minimal");
    let has = |kind: &str, name: &str| objs.iter().any(|o| o["kind"] == kind && o["metadata"]["name"] == name);
    assert!(has("CustomResourceDefinition", "trainjobs.trainer.kubeflow.org"));
    assert!(has("Deployment", "kubeflow-trainer-controller-manager"));
    assert!(has("Deployment", "jobset-controller-manager"));
    let istio: Vec<String> = objs
        .iter()
        .filter(|o| o["apiVersion"].as_str().unwrap_or("").contains("istio.io"))
        .map(compare::object_label)
        .collect();
    assert!(istio.is_empty(), "istio objects in minimal: {istio:?}");
}

/// Every (object, field path) whose value differs between two renders, plus objects only in one.
fn changes(before: &[Value], after: &[Value]) -> Vec<String> {
    let report = compare::unordered_report(before, after, 100_000).unwrap_or_default();
    report.lines().filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// [`changes`] with kustomize's hash suffixes masked on both sides: what changed in the
/// objects' content, with generated objects renamed by their new content matched to their old
/// names. `renamed` lists the names only `after` has.
fn content_changes(before: &[Value], after: &[Value]) -> (Vec<String>, Vec<String>) {
    let names =
        |objs: &[Value]| -> std::collections::BTreeSet<String> { objs.iter().map(compare::object_label).collect() };
    let old = names(before);
    let renamed = names(after).into_iter().filter(|n| !old.contains(n)).collect();
    let (mut before, mut after) = (before.to_vec(), after.to_vec());
    compare::mask_hash_suffixes(&mut before);
    compare::mask_hash_suffixes(&mut after);
    (changes(&before, &after), renamed)
}

fn image_fields(objs: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for o in objs {
        let mut copy = o.clone();
        catalog::params::for_each_image(&mut copy, &mut |i| out.push(i.clone()));
    }
    out
}

const REGISTRY: &str = "registry.example.com";

/// Why `after` is not `before` with some image references moved under [`REGISTRY`]; `None` when
/// it is. Both are split into reference-like tokens and the text between them: the text must be
/// equal, and each token that differs must be `REGISTRY/…` ending in the same last path segment
/// (name and tag or digest) as the token it replaces.
fn not_a_registry_move(before: &str, after: &str) -> Option<String> {
    fn tokens(s: &str) -> Vec<(bool, &str)> {
        let is_ref = |c: char| c.is_ascii_alphanumeric() || "._/:@-".contains(c);
        let mut out: Vec<(bool, &str)> = Vec::new();
        let mut start = 0;
        for (i, c) in s.char_indices().chain([(s.len(), ' ')]) {
            if out.is_empty() && i == 0 {
                continue;
            }
            let kind = is_ref(c);
            let prev_kind = s[start..].chars().next().is_some_and(is_ref);
            if i == s.len() || kind != prev_kind {
                out.push((prev_kind, &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (old, new) = (tokens(before), tokens(after));
    if old.len() != new.len() {
        return Some(format!("the text around the references differs ({} vs {} parts)", old.len(), new.len()));
    }
    old.iter().zip(&new).find_map(|((is_ref, o), (_, n))| {
        let last = |t: &str| t.rsplit('/').next().unwrap_or("").to_string();
        let moved = *is_ref && n.starts_with(&format!("{REGISTRY}/")) && last(o) == last(n);
        (o != n && !moved).then(|| format!("{o:?} became {n:?}"))
    })
}

/// Every leaf where `after` is not [`not_a_registry_move`] of `before`, by object and path.
fn non_registry_changes(before: &Value, after: &Value, at: &str, out: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) if b.len() == a.len() => {
            for (k, bv) in b {
                match a.get(k) {
                    Some(av) => non_registry_changes(bv, av, &format!("{at}.{k}"), out),
                    None => out.push(format!("{at}: key {k} is gone")),
                }
            }
        }
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                non_registry_changes(bv, av, &format!("{at}[{i}]"), out);
            }
        }
        (Value::String(b), Value::String(a)) => {
            if let Some(why) = not_a_registry_move(b, a) {
                out.push(format!("{at}: {why}"));
            }
        }
        (b, a) if b == a => {}
        _ => out.push(format!("{at}: the structure changed")),
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn image_registry_moves_every_image_field_and_changes_nothing_else() {
    let before = default_render("multi-tenant");
    let after = render("multi-tenant", &[&format!("global.imageRegistry={REGISTRY}")]);
    let images = image_fields(&after);
    assert_eq!(images.len(), image_fields(before).len());
    assert!(
        images.iter().all(|i| i.starts_with(&format!("{REGISTRY}/"))),
        "{:?}",
        images.iter().find(|i| !i.starts_with(&format!("{REGISTRY}/")))
    );
    // Configuration naming images moves too, which renames the generated ConfigMaps holding it.
    let (mut old, mut new) = (before.clone(), after.clone());
    compare::mask_hash_suffixes(&mut old);
    compare::mask_hash_suffixes(&mut new);
    assert_eq!(old.len(), new.len());
    let mut wrong = Vec::new();
    for (o, n) in old.iter().zip(&new) {
        assert_eq!(compare::object_label(o), compare::object_label(n), "the order changed");
        non_registry_changes(o, n, &compare::object_label(o), &mut wrong);
    }
    assert!(wrong.is_empty(), "changes besides image references moving: {wrong:#?}");
    let (_, renamed) = content_changes(before, &after);
    assert!(renamed.iter().all(|n| n.starts_with("ConfigMap ")), "renamed: {renamed:?}");
    for name in ["jupyter-web-app-config-", "kubeflow-pipelines-profile-controller-code-"] {
        assert!(renamed.iter().any(|n| n.contains(name)), "{name}* not renamed: {renamed:?}");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn disabling_a_component_removes_exactly_its_objects() {
    let before = default_render("multi-tenant");
    let rendered = catalog::render(&request("multi-tenant", &[])).unwrap();
    let katib: Vec<String> = rendered
        .objects
        .iter()
        .filter(|o| o.component == "katib")
        .map(|o| format!("missing: {}", compare::object_label(&o.obj)))
        .collect();
    assert!(katib.len() > 20, "katib has {} objects", katib.len());
    let after = render("multi-tenant", &["katib.enabled=false"]);
    let mut got = changes(before, &after);
    let mut want = katib;
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn replicas_resources_and_pss_change_exactly_one_field_each() {
    let before = default_render("multi-tenant");
    let cases: [(&str, &str); 3] = [
        ("katib.replicas.katib-ui=3", "Deployment kubeflow/katib-ui: .spec.replicas: expected 1, got 3"),
        (
            "pipelines.resources.ml-pipeline.ml-pipeline-api-server.limits.cpu=2",
            "Deployment kubeflow/ml-pipeline: .spec.template.spec.containers[0].resources",
        ),
        ("global.podSecurity.profiles=restricted", "namespace-labels.yaml\"]: expected"),
    ];
    for (set, expect) in cases {
        let (got, renamed) = content_changes(before, &render("multi-tenant", &[set]));
        assert_eq!(got.len(), 1, "--set {set} changed {got:?}");
        assert!(got[0].contains(expect), "--set {set}: {}", got[0]);
        // The Pod Security label lives in a generated ConfigMap: kustomize's hash renames it.
        // (`profiles-namespace-labels-data-` since 26.03.1's Dashboard v2.)
        let want: &[&str] = if set.starts_with("global.podSecurity") { &["namespace-labels-data-"] } else { &[] };
        assert_eq!(renamed.len(), want.len(), "--set {set} renamed {renamed:?}");
        assert!(
            renamed.iter().zip(want).all(|(r, w)| r.starts_with("ConfigMap kubeflow/") && r.contains(w)),
            "--set {set} renamed {renamed:?}"
        );
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn credentials_from_a_values_file_replace_exactly_the_default_credentials() {
    let before = default_render("multi-tenant");
    let dir = common::scratch_root().join("creds");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("secrets.yaml");
    let _ = std::fs::remove_file(&file);
    let status = Command::new(env!("CARGO_BIN_EXE_kfctl-rs"))
        .args(["secrets", "generate", "--print-password", "--email", "admin@example.org", "--out"])
        .arg(&file)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mut req = request("multi-tenant", &[]);
    req.value_files = vec![file.clone()];
    let rendered = catalog::render(&req).unwrap();
    assert!(
        rendered.default_credentials.is_empty(),
        "still default: {:?}",
        rendered.default_credentials.iter().map(|c| c.value).collect::<Vec<_>>()
    );
    let after: Vec<Value> = rendered.objects.into_iter().map(|o| o.obj).collect();
    let (got, renamed) = content_changes(before, &after);
    // oauth2-proxy's Secret is generated: its new content gives it a new hashed name.
    assert_eq!(renamed.len(), 1, "{renamed:?}");
    assert!(renamed[0].starts_with("Secret oauth2-proxy/oauth2-proxy-"), "{renamed:?}");
    let fields = [
        "config.yaml",
        "DEX_USER_PASSWORD",
        "OIDC_CLIENT_SECRET",
        "client-secret",
        "cookie-secret",
        "accesskey",
        "secretkey",
    ];
    assert_eq!(got.len(), fields.len(), "{got:#?}");
    for f in fields {
        assert!(got.iter().any(|c| c.contains(f)), "{f} not changed");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let defaults = catalog::render(&request("multi-tenant", &[])).unwrap().default_credentials;
    assert_eq!(defaults.len(), 6, "each default credential is reported once");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn images_lists_every_image_field_and_known_configuration() {
    let objs = default_render("multi-tenant");
    let listed = catalog::images::collect(objs);
    for image in image_fields(objs) {
        assert!(listed.contains(&image), "{image} missing from images");
    }
    // Images named only inside configuration (Pipelines' driver and launcher, KServe's storage
    // initializer, Katib's metrics collector), whatever version the release pins.
    for config_image in [
        "ghcr.io/kubeflow/kfp-driver:",
        "ghcr.io/kubeflow/kfp-launcher:",
        "kserve/storage-initializer:",
        "ghcr.io/kubeflow/katib/file-metrics-collector:",
    ] {
        assert!(listed.iter().any(|i| i.contains(config_image)), "{config_image}* missing");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn bad_values_are_usage_errors_that_name_the_key() {
    let cases = [
        (vec!["katib.enabeld=false"], "unknown key `katib.enabeld`; did you mean `katib.enabled`?"),
        (vec!["katib.replicas.katib-ui=three"], "must be a whole number"),
        (vec!["novalue"], "no `=`"),
        (vec!["global.podSecurity.profiles=strict"], "must be one of"),
        (vec!["kserve.enabled=true", "knative-serving.enabled=false"], "component `kserve` needs knative-serving"),
    ];
    for (sets, expect) in cases {
        let err = match catalog::render(&request("multi-tenant", &sets)) {
            Err(e) => e,
            Ok(_) => panic!("{sets:?} rendered"),
        };
        use kfctl::exit::ExitStatus as _;
        assert_eq!(err.exit_code(), kfctl::exit::Code::Usage, "{sets:?}: not a usage error: {err}");
        assert!(err.to_string().contains(expect), "{sets:?}: {err}");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn cli_template_prints_the_notice_on_stderr_and_exits_2_on_bad_values() {
    let bin = env!("CARGO_BIN_EXE_kfctl-rs");
    let base = ["template", "--profile", "minimal", "--source"];
    let out = Command::new(bin)
        .args(base)
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("best-effort"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("kind: CustomResourceDefinition"));
    let bad = Command::new(bin)
        .args(base)
        .arg(common::manifests_dir())
        .args(["--set", "trainer.enabeld=false"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("trainer.enabeld"));
}

fn render_with_files(profile: &str, files: &[PathBuf]) -> catalog::Rendered {
    let mut req = request(profile, &[]);
    req.value_files = files.to_vec();
    catalog::render(&req).unwrap_or_else(|e| panic!("{files:?}: {e}"))
}

fn repo_file(path: &str) -> PathBuf {
    common::repo_root().join(path)
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn values_private_registry_moves_images_and_adds_pull_secrets() {
    let r = render_with_files("multi-tenant", &[repo_file("values/private-registry.yaml")]);
    let objs: Vec<Value> = r.objects.into_iter().map(|o| o.obj).collect();
    assert!(image_fields(&objs).iter().all(|i| i.starts_with("registry.example.com/kubeflow-mirror/")));
    let deployment = objs.iter().find(|o| o["kind"] == "Deployment").unwrap();
    assert_eq!(deployment.pointer("/spec/template/spec/imagePullSecrets/0/name").unwrap(), "registry-credentials");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn values_production_secrets_lists_every_credential_and_generated_secrets_fill_them() {
    let file = repo_file("values/production-secrets.yaml");
    let empty = render_with_files("multi-tenant", std::slice::from_ref(&file));
    assert_eq!(empty.default_credentials.len(), 6, "empty values keep (and warn about) every default");
    // The credentials upstream ships a well-known default for are the ones the render still
    // warns about; a credential without one (the external database's password) is not listed.
    let listed: Vec<&str> = empty.default_credentials.iter().map(|c| c.value).collect();
    let doc = kfctl_yaml::parse_stream(&std::fs::read_to_string(&file).unwrap(), "f").unwrap().remove(0);
    for key in &listed {
        let path: Vec<&str> = key.split('.').collect();
        assert!(catalog::values::get(&doc, &path).is_some(), "{key} missing from values/production-secrets.yaml");
    }
    let dir = common::scratch_root().join("prod");
    std::fs::create_dir_all(&dir).unwrap();
    let secrets = dir.join("secrets.yaml");
    let _ = std::fs::remove_file(&secrets);
    assert!(
        Command::new(env!("CARGO_BIN_EXE_kfctl-rs"))
            .args(["secrets", "generate", "--print-password", "--out"])
            .arg(&secrets)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success()
    );
    let filled = render_with_files("multi-tenant", &[file, secrets]);
    assert!(filled.default_credentials.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn values_pss_restricted_restricts_profile_namespaces() {
    let r = render_with_files("multi-tenant", &[repo_file("values/pss-restricted.yaml")]);
    let cm = r
        .objects
        .iter()
        .find_map(|o| o.obj.pointer("/data/namespace-labels.yaml"))
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(cm.contains("pod-security.kubernetes.io/enforce: \"restricted\""), "{cm}");
    let namespaces: Vec<&Value> = r
        .objects
        .iter()
        .map(|o| &o.obj)
        .filter(|o| {
            o["kind"] == "Namespace" && o.pointer("/metadata/labels/pod-security.kubernetes.io~1enforce").is_some()
        })
        .collect();
    assert!(
        namespaces
            .iter()
            .all(|n| n.pointer("/metadata/labels/pod-security.kubernetes.io~1enforce").unwrap() == "restricted")
    );
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn values_trainer_gpu_nodes_schedules_only_the_training_runtimes_pods() {
    let r = render_with_files("multi-tenant", &[repo_file("values/trainer-gpu-nodes.yaml")]);
    let mut runtime_pods = 0;
    for o in &r.objects {
        let runtime = o.obj.get("kind").and_then(|k| k.as_str()) == Some("ClusterTrainingRuntime");
        let mut copy = o.obj.clone();
        catalog::params::for_each_pod_spec(&mut copy, &mut |spec| {
            let node = catalog::scheduling::runs_container(spec, "node");
            let gpu = spec.get("nodeSelector").and_then(|n| n.get("nvidia.com/gpu.present")).is_some();
            assert_eq!(gpu, runtime && node, "{} in {}", compare::object_label(&o.obj), o.component);
            if gpu {
                runtime_pods += 1;
                let limit = spec["containers"].pointer("/0/resources/limits/nvidia.com~1gpu");
                assert_eq!(limit, Some(&serde_json::json!(1)), "{}", compare::object_label(&o.obj));
            }
        });
    }
    assert!(runtime_pods >= 6, "the runtimes' node pod templates: {runtime_pods}");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn a_user_profile_with_the_ambient_istio_variant_equals_real_kustomize() {
    let dir = common::scratch_root().join("ambient");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ambient.yaml");
    std::fs::write(
        &file,
        "name: ambient\nextends: multi-tenant\ncomponents:\n  istio: {variant: ambient-oauth2-proxy}\n",
    )
    .unwrap();
    let name = file.to_str().unwrap();
    let catalog = Catalog::for_release(common::release()).unwrap();
    let k = profile::resolve(name, &catalog).unwrap().kustomization(&catalog).unwrap();
    let kdir = common::localized_snapshot().join("kfctl-profile-ambient");
    std::fs::create_dir_all(&kdir).unwrap();
    std::fs::write(kdir.join("kustomization.yaml"), profile::kustomization_yaml(&k)).unwrap();
    let out = Command::new(common::tool("kustomize-build")).arg(&kdir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = kfctl_yaml::parse_stream(&String::from_utf8(out.stdout).unwrap(), "kustomize").unwrap();
    let actual = render(name, &[]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(compare::ordered_report(&expected, &actual, 10).is_none());
    assert!(!actual.iter().any(|o| o["kind"] == "Namespace"
        && o["metadata"]["name"] == "kubeflow"
        && o.pointer("/metadata/labels/istio.io~1dataplane-mode").is_none()));
}
