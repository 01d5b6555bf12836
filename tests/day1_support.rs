//! What the day-1 value suites (`day1_gateway.rs`, `day1_storage.rs`) share: the native render
//! of multi-tenant with `--set` values (in process), its default render, the diff of the two by
//! object, real Helm of the exported chart with the same `--set`, and real kustomize of
//! `template --as-kustomization` with them. Included by each suite with `#[path]`.

use kfctl_yaml::compare;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

pub const PROFILE: &str = "multi-tenant";

/// The native render of multi-tenant with `--set` flags.
pub fn render(sets: &[&str]) -> Vec<Value> {
    let rendered = kfctl::catalog::render(&crate::common::render_request_set(PROFILE, sets))
        .unwrap_or_else(|e| panic!("render with {sets:?}: {e}"));
    rendered.objects.into_iter().map(|o| o.obj).collect()
}

pub fn default_render() -> &'static Vec<Value> {
    static OBJECTS: OnceLock<Vec<Value>> = OnceLock::new();
    OBJECTS.get_or_init(|| render(&[]))
}

pub fn s<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// How a valued render differs from the default one, object by object (matched by identity).
#[derive(Debug, Default)]
pub struct Delta {
    /// (default object, valued object) for every object the values changed.
    pub changed: Vec<(Value, Value)>,
    pub added: Vec<Value>,
    pub removed: Vec<Value>,
}

pub fn delta(before: &[Value], after: &[Value]) -> Delta {
    let mut out = Delta::default();
    for new in after {
        match before.iter().find(|old| compare::identity(old) == compare::identity(new)) {
            Some(old) if old != new => out.changed.push((old.clone(), new.clone())),
            Some(_) => {}
            None => out.added.push(new.clone()),
        }
    }
    out.removed = before
        .iter()
        .filter(|o| !after.iter().any(|n| compare::identity(n) == compare::identity(o)))
        .cloned()
        .collect();
    out
}

/// kfctl-rs (offline, multi-tenant) with `args`.
pub fn cli(args: &[&str]) -> Output {
    crate::common::kfctl_offline(&[args, &["--profile", PROFILE]].concat())
}

/// `--set` flags as command-line arguments.
pub fn set_args<'a>(sets: &[&'a str]) -> Vec<&'a str> {
    sets.iter().flat_map(|s| ["--set", s]).collect()
}

/// multi-tenant exported with default values, once per test run.
pub fn exported() -> &'static PathBuf {
    crate::common::exported_multi_tenant()
}

/// Real Helm of the export with `--set` flags.
pub fn helm(sets: &[&str]) -> Output {
    Command::new(crate::common::tool("helm-template"))
        .arg(exported())
        .args(set_args(sets))
        .output()
        .expect("helm-template runs")
}

/// Real Helm's objects with `sets` equal `native` (any order, Helm's own metadata aside).
pub fn assert_helm_equals(native: &[Value], sets: &[&str]) {
    crate::common::assert_helm_equals_native(native, &helm(sets), &format!("helm template {sets:?}"));
}

/// The components the gateway values change (the Gateway, the ingress Service), with what they need.
pub const GATEWAY: [&str; 5] =
    ["kubeflow-istio-resources", "istio", "istio-crds", "istio-namespace", "kubeflow-namespace"];

/// Real kustomize of `template --as-kustomization` with `sets`, on `components` (empty: the
/// whole profile), prints byte for byte what `template` prints with them; the folder's file
/// names are returned.
pub fn assert_kustomize_equals(case: &str, components: &[&str], sets: &[&str]) -> Vec<String> {
    let (dir, bytes) = crate::common::assert_as_kustomization_equals_render(case, PROFILE, components, &set_args(sets));
    println!("{case}: real kustomize byte-identical with the render ({bytes} bytes)");
    let mut files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    files
}

/// A bad value is a usage error (exit 2) of kfctl-rs naming `names`, and real Helm of the
/// export refuses it too (schema or `fail`), naming `helm_names`.
pub fn assert_refused(sets: &[&str], names: &str, helm_names: &str) {
    let out = cli(&[&["template"][..], &set_args(sets)].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{sets:?}: {stderr}");
    assert!(stderr.contains(names), "{sets:?}: kfctl-rs should name {names}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let out = helm(sets);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "helm accepted {sets:?}");
    assert!(stderr.contains(helm_names), "{sets:?}: helm should name {helm_names}: {stderr}");
}
