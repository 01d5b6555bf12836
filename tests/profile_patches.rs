//! Issue 14, item 6: a profile file's own `patches`, `resources`, `images` and `replacements`
//! render byte for byte as real kustomize builds the kustomization `profile kustomization`
//! prints; objects keep their component; the chart export templates the patched objects; bad
//! input is an error naming the profile file and the entry. Fixtures: `tests/fixtures/profiles/`.

use crate::common;

use kfctl::catalog::{self, RenderRequest};
use kfctl_yaml::compare;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    common::repo_root().join("tests/fixtures/profiles").join(format!("{name}.yaml"))
}

/// `kfctl-rs ARGS --source <the release under test> --remote-mirror <mirror> --offline`.
fn kfctl(args: &[&str], out: Option<&Path>) -> Output {
    let mut cmd = Command::new(common::binary());
    cmd.args(args)
        .args(["--version", common::release()])
        .arg("--source")
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir());
    cmd.arg("--offline");
    if let Some(out) = out {
        cmd.arg("--out").arg(out);
    }
    cmd.output().expect("kfctl-rs runs")
}

fn template_text(profile: &Path) -> String {
    let out = kfctl(&["template", "--profile", profile.to_str().unwrap()], None);
    assert!(out.status.success(), "template {}: {}", profile.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Real kustomize of the kustomization `kfctl-rs profile kustomization FILE` prints, in a
/// folder directly under the localized manifests root (with `--load-restrictor none` when the
/// printed kustomization says it needs it).
fn real_kustomize_of_printed(name: &str) -> String {
    let out = Command::new(common::binary())
        .args(["profile", "kustomization"])
        .arg(fixture(name))
        .args(["--version", common::release()])
        .output()
        .expect("kfctl-rs runs");
    assert!(out.status.success(), "profile kustomization {name}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let dir = common::localized_snapshot().join(format!("kfctl-profile-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kustomization.yaml"), &text).unwrap();
    let mut cmd = Command::new(common::tool("kustomize-build"));
    cmd.arg(&dir);
    if text.contains("--load-restrictor LoadRestrictionsNone") {
        cmd.args(["--load-restrictor", "none"]);
    }
    let out = cmd.output().expect("kustomize-build runs");
    assert!(out.status.success(), "real kustomize failed on {name}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn parse(text: &str) -> Vec<Value> {
    kfctl_yaml::parse_stream(text, "output").unwrap()
}

fn find<'a>(objs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objs.iter()
        .find(|o| o["kind"] == json!(kind) && o["metadata"]["name"] == json!(name))
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The fixture renders byte for byte as real kustomize of its printed kustomization; returns
/// the objects for the fixture's own check.
fn equal_to_real_kustomize(name: &str) -> Vec<Value> {
    let ours = template_text(&fixture(name));
    let theirs = real_kustomize_of_printed(name);
    if ours != theirs {
        let report = compare::ordered_report(&parse(&theirs), &parse(&ours), 20);
        panic!("profile {name}: template differs from real kustomize of its printed kustomization:\n{report:?}");
    }
    parse(&ours)
}

/// Trainer's controller, the object the fixtures change (they extend `minimal`).
fn controller(objs: &[Value]) -> &Value {
    find(objs, "Deployment", CONTROLLER)
}

const CONTROLLER: &str = "kubeflow-trainer-controller-manager";

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn a_json6902_patch_renders_as_real_kustomize() {
    let objs = equal_to_real_kustomize("json6902");
    assert_eq!(controller(&objs)["spec"]["replicas"], json!(2));
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn a_strategic_merge_patch_with_a_target_from_a_file_renders_as_real_kustomize() {
    let objs = equal_to_real_kustomize("strategic");
    let template = &controller(&objs)["spec"]["template"];
    assert_eq!(template["metadata"]["annotations"]["example.com/patched-by"], json!("kfctl-profile"));
    let env = template["spec"]["containers"][0]["env"].as_array().unwrap();
    assert!(env.contains(&json!({"name": "EXTRA", "value": "yes"})), "{env:?}");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn an_extra_resource_file_renders_as_real_kustomize() {
    let objs = equal_to_real_kustomize("resources");
    assert_eq!(find(&objs, "ConfigMap", "kfctl-extra")["data"]["greeting"], json!("hello from the profile"));
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn an_images_entry_renders_as_real_kustomize() {
    let objs = equal_to_real_kustomize("images");
    let image = &controller(&objs)["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(image, &json!("registry.example.com/kubeflow/trainer-controller-manager:v2.1.0-custom"));
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn a_replacements_entry_renders_as_real_kustomize() {
    let objs = equal_to_real_kustomize("replacements");
    let service = find(&objs, "Service", CONTROLLER);
    let copied = &service["metadata"]["annotations"]["example.com/controller-image"];
    let image = &controller(&objs)["spec"]["template"]["spec"]["containers"][0]["image"];
    assert!(image.as_str().is_some_and(|i| i.starts_with("ghcr.io/kubeflow/trainer/")), "{image}");
    assert_eq!(copied, image);
}

fn request(profile: &str) -> RenderRequest {
    common::render_request(profile, Vec::new())
}

fn components_by_object(profile: &str) -> Vec<(String, String)> {
    let rendered = catalog::render(&request(profile)).unwrap_or_else(|e| panic!("render {profile}: {e}"));
    rendered.objects.iter().map(|o| (compare::object_label(&o.obj), o.component.clone())).collect()
}

/// Patched objects keep their component; the profile's own resources are tagged `unknown`.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn objects_keep_their_component() {
    let minimal = components_by_object("minimal");
    assert_eq!(components_by_object(fixture("json6902").to_str().unwrap()), minimal);
    let mut with_extra = components_by_object(fixture("resources").to_str().unwrap());
    let extra = with_extra.iter().position(|(label, _)| label.contains("kfctl-extra")).expect("the extra ConfigMap");
    assert_eq!(with_extra.remove(extra).1, "unknown");
    assert_eq!(with_extra, minimal);
}

fn assert_refused(name: &str, expected: &[&str]) {
    let out = kfctl(&["template", "--profile", fixture(name).to_str().unwrap()], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // the user's profile file is the user's input: a usage error, as kubectl and helm say
    assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
    for part in expected {
        assert!(stderr.contains(part), "{name}: `{part}` not in: {stderr}");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn bad_input_names_the_profile_file_and_the_entry() {
    let file = |n: &str| fixture(n).display().to_string();
    assert_refused(
        "bad-unmatched",
        &[&format!(
            "{}: patches[0]: its target (kind=Deployment, name=no-such-deployment) selects no object",
            file("bad-unmatched")
        )],
    );
    assert_refused("bad-smp-missing", &[&file("bad-smp-missing"), "patches[0]", "no-such-deployment"]);
    assert_refused("bad-resource", &[&format!("{}: resources[0]: `extra/no-such-file.yaml`", file("bad-resource"))]);
    assert_refused("bad-key", &[&file("bad-key"), "unknown field `pathces`"]);
}

/// The chart export starts from the render: it templates the patched objects, and real Helm
/// renders them as `kfctl-rs template` does. A profile's own resources belong to no component:
/// the export refuses them, naming the object.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn the_chart_export_templates_the_patched_objects() {
    let out = common::scratch_root().join("patch-export");
    let _ = std::fs::remove_dir_all(&out);
    let chart = out.join("kubeflow");
    let profile = fixture("json6902");
    let result = kfctl(&["chart", "export", "--profile", profile.to_str().unwrap()], Some(&chart));
    assert!(result.status.success(), "export: {}", String::from_utf8_lossy(&result.stderr));
    let helm = Command::new(common::tool("helm-template")).arg(&chart).output().expect("helm-template runs");
    assert!(helm.status.success(), "helm template: {}", String::from_utf8_lossy(&helm.stderr));
    let helm: Vec<Value> = String::from_utf8(helm.stdout)
        .unwrap()
        .split("\n---\n")
        .flat_map(|doc| kfctl_yaml::parse_stream(doc, "helm template output").unwrap())
        .collect();
    let ours = parse(&template_text(&profile));
    if let Some(report) = compare::unordered_report(&ours, &helm, 20) {
        panic!("helm template of the export differs from kfctl-rs template:\n{report}");
    }
    assert_eq!(controller(&helm)["spec"]["replicas"], json!(2));
    let extra = fixture("resources");
    let refused = kfctl(&["chart", "export", "--profile", extra.to_str().unwrap()], Some(&out.join("extra")));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains("kfctl-extra"), "{stderr}");
    std::fs::remove_dir_all(&out).unwrap();
}
