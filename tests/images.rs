//! Issue 12's contract: every image reference of a render, wherever it is named, moves with
//! `global.imageRegistry`, `images` lists it, and Helm of the export moves it the same way.
//!
//! The scan here is written apart from the catalog's image model (`charts/*/images.yaml`):
//! it walks every string of every object, parses strings that hold JSON or YAML and walks
//! those too, and takes as an image reference every token that parses as one and is either
//! tagged or pinned with a path (`repo/name:tag`, `host/…@sha256:…`), or sits where an image
//! is named (a key containing `image`, an `image:` line, a `*_IMAGE` env value, an
//! `--…image` argument). Only the catalog's `exceptions:` (each with its reason) are read
//! from the model.

use crate::common;

use kfctl::catalog::{self, RenderRequest, image_refs};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const MIRROR: &str = "mirror.example.com/kf";

fn request(profile: &str, sets: &[&str]) -> RenderRequest {
    common::render_request_set(profile, sets)
}

fn render(profile: &str, sets: &[&str]) -> Vec<Value> {
    let r = catalog::render(&request(profile, sets)).unwrap_or_else(|e| panic!("render {profile}: {e}"));
    r.objects.into_iter().map(|o| o.obj).collect()
}

// ---------------------------------------------------------------------------------------------
// The independent scan.

fn is_ref_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._/:@-".contains(c)
}

fn segment_ok(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// `Some((tagged or pinned, has a path))` when `token` parses as an image reference.
fn parse_reference(token: &str) -> Option<(bool, bool)> {
    if token.contains("//") || token.ends_with(['/', ':', '.']) {
        return None;
    }
    let (name, digest) = token.split_once('@').map_or((token, None), |(n, d)| (n, Some(d)));
    if digest.is_some_and(|d| !(d.starts_with("sha256:") && d.len() == 71)) {
        return None;
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let last = parts.pop()?;
    let (last, tag) = last.split_once(':').map_or((last, None), |(l, t)| (l, Some(t)));
    if tag.is_some_and(|t| t.is_empty() || !t.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))) {
        return None;
    }
    let host_like = parts.first().is_some_and(|f| f.contains('.') || f.contains(':') || *f == "localhost");
    let path: Vec<&str> = parts.iter().skip(usize::from(host_like)).copied().chain([last]).collect();
    if !path.iter().all(|s| segment_ok(s)) {
        return None;
    }
    Some((tag.is_some() || digest.is_some(), !parts.is_empty()))
}

#[derive(Default)]
struct Scan {
    /// reference → (object, field) of its first sighting.
    found: BTreeMap<String, (String, String)>,
}

impl Scan {
    fn text(&mut self, text: &str, object: &str, field: &str, named_here: bool) {
        for token in text.split(|c: char| !is_ref_char(c)).filter(|t| !t.is_empty()) {
            if let Some((pinned, path)) = parse_reference(token)
                && ((pinned && path) || named_here)
            {
                self.found.entry(token.to_string()).or_insert_with(|| (object.to_string(), field.to_string()));
            }
        }
    }

    fn walk(&mut self, value: &Value, object: &str, field: &str, named_here: bool) {
        match value {
            Value::Object(m) => {
                for (k, v) in m {
                    let lower = k.to_lowercase();
                    let names =
                        lower.contains("image") && !["pull", "policy", "version"].iter().any(|w| lower.contains(w));
                    self.walk(v, object, &format!("{field}.{k}"), names);
                }
                if let (Some(Value::String(name)), Some(Value::String(v))) = (m.get("name"), m.get("value"))
                    && name.ends_with("_IMAGE")
                {
                    self.text(v, object, &format!("{field}.value"), true);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.walk(v, object, &format!("{field}[{i}]"), named_here);
                    let flag = v.as_str().filter(|s| s.starts_with("--") && s.contains("image") && !s.contains('='));
                    if let (Some(_), Some(Value::String(next))) = (flag, items.get(i + 1)) {
                        self.text(next, object, &format!("{field}[{}]", i + 1), true);
                    }
                }
            }
            Value::String(s) => self.string(s, object, field, named_here),
            _ => {}
        }
    }

    fn string(&mut self, s: &str, object: &str, field: &str, named_here: bool) {
        let trimmed = s.trim_start();
        if s.contains('\n') || trimmed.starts_with('{') || trimmed.starts_with('[') {
            let parsed = serde_json::from_str::<Value>(s)
                .ok()
                .map(|v| vec![v])
                .or_else(|| kfctl_yaml::parse_stream(s, "embedded").ok());
            for doc in parsed.into_iter().flatten() {
                self.walk(&doc, object, &format!("{field}>"), false);
            }
            for line in s.lines().filter(|l| !l.contains('{')) {
                let l = line.trim_start().trim_start_matches("- ").trim_start_matches('"');
                if let Some(rest) = l.strip_prefix("image").map(|r| r.trim_start_matches('"').trim_start())
                    && let Some(value) = rest.strip_prefix(':')
                {
                    self.text(value, object, field, true);
                }
            }
        }
        if let Some(value) = s.strip_prefix("--").and_then(|f| f.split_once('=')).filter(|(f, _)| f.contains("image")) {
            self.text(value.1, object, field, true);
        }
        self.text(s, object, field, named_here);
    }
}

fn object_id(obj: &Value) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or_default();
    format!("{}/{}/{}", s("/kind"), s("/metadata/namespace"), s("/metadata/name"))
}

/// Every image-like reference in `objects`, with where it was first seen; the fields the
/// catalog lists as exceptions are left out.
fn scan(objects: &[Value]) -> BTreeMap<String, (String, String)> {
    let exceptions: Vec<&image_refs::Exception> =
        image_refs::all().unwrap().iter().flat_map(|(_, f)| &f.exceptions).collect();
    let mut out = BTreeMap::new();
    for obj in objects {
        let mut one = Scan::default();
        one.walk(obj, &object_id(obj), "", false);
        for (reference, (object, field)) in one.found {
            let excepted = exceptions.iter().any(|e| {
                image_refs::is_object(obj, &e.object) && field.trim_start_matches('.').starts_with(&e.field.join("."))
            });
            if !excepted {
                out.entry(reference).or_insert((object, field));
            }
        }
    }
    out
}

fn outside_mirror(found: &BTreeMap<String, (String, String)>) -> Vec<String> {
    found
        .iter()
        .filter(|(r, _)| !r.starts_with(&format!("{MIRROR}/")))
        .map(|(r, (o, f))| format!("{r} in {o} {f}"))
        .collect()
}

#[test]
fn the_scan_finds_references_in_fields_text_and_embedded_configuration() {
    let obj = serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "data": {
        "a": "{\"x\": {\"image\": \"kserve/agent:v1\"}}",
        "b": "spec:\n  containers:\n  - image: busybox:1.28\n",
        "c": "ghcr.io/k/queue@sha256:0123456789012345678901234567890123456789012345678901234567890123",
        "d": "https://github.com/x/y:z", "e": "apps/v1", "f": "8080:80"}});
    let found: Vec<String> = scan(&[obj]).into_keys().collect();
    assert_eq!(
        found,
        [
            "busybox:1.28",
            "ghcr.io/k/queue@sha256:0123456789012345678901234567890123456789012345678901234567890123",
            "kserve/agent:v1"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// The registry override reaches every reference.

fn assert_override_reaches_everything(profile: &str) {
    let objects = render(profile, &[&format!("global.imageRegistry={MIRROR}")]);
    let left = outside_mirror(&scan(&objects));
    assert!(left.is_empty(), "{profile}: {} references outside {MIRROR}:\n{}", left.len(), left.join("\n"));
    let listed = catalog::images::collect(&objects);
    let off: Vec<&String> = listed.iter().filter(|r| !r.starts_with(&format!("{MIRROR}/"))).collect();
    assert!(off.is_empty(), "{profile}: images lists references outside the mirror: {off:?}");
    // Istio's composed images: the hub itself moved.
    if listed.iter().any(|r| r.contains("/istio-release/")) {
        assert!(listed.iter().any(|r| r.starts_with(&format!("{MIRROR}/istio-release/proxyv2:"))), "{listed:?}");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn registry_override_reaches_every_reference_kind() {
    assert_override_reaches_everything("kind");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn registry_override_reaches_every_reference_minimal() {
    assert_override_reaches_everything("minimal");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn registry_override_reaches_every_reference_multi_tenant() {
    assert_override_reaches_everything("multi-tenant");
}

// ---------------------------------------------------------------------------------------------
// `images` lists every reference the scan finds.

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn images_lists_every_reference_the_scan_finds_fully_qualified() {
    for profile in ["kind", "minimal", "multi-tenant"] {
        let objects = render(profile, &[]);
        let listed = catalog::images::collect(&objects);
        for (reference, (object, field)) in scan(&objects) {
            // An untagged name in configuration is listed with the tag upstream gives it beside.
            let covered = listed.iter().any(|l| {
                l == &reference || l.starts_with(&format!("{reference}:")) || l.starts_with(&format!("{reference}@"))
            });
            let composed = !reference.contains('/') && !reference.contains(':');
            assert!(covered || composed, "{profile}: {reference} ({object} {field}) missing from images");
        }
        for l in &listed {
            // `name[:tag][@digest]`; a bare name (26.03.1's model catalog runs `busybox`) is a
            // Docker Hub library image at `latest`, as the kubelet pulls it.
            let (name, _) = l.split_once('@').unwrap_or((l, ""));
            let path = name.rsplit_once(':').filter(|(_, tag)| !tag.contains('/')).map_or(name, |(p, _)| p);
            let pullable = !path.is_empty()
                && !l.contains(char::is_whitespace)
                && path.split('/').all(|part| !part.is_empty() && part == part.to_lowercase());
            assert!(pullable, "{profile}: {l} is not a pullable reference");
        }
        let mut unique = listed.clone();
        unique.dedup();
        assert_eq!(unique, listed, "{profile}: each reference once");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn per_image_keys_are_named_after_the_image_and_move_configuration_references() {
    let r = catalog::render(&request("multi-tenant", &[])).unwrap();
    for (component, section) in r.defaults.as_object().unwrap() {
        for (key, image) in section.get("images").and_then(Value::as_object).into_iter().flatten() {
            let image = image.as_str().unwrap();
            assert!(!key.contains("sha256"), "{component}.images.{key} ({image}) carries a digest");
            if let Some((_, tag)) = image.rsplit('/').next().unwrap().split_once(':') {
                assert!(!key.contains(&tag.replace('.', "-")), "{component}.images.{key} ({image}) carries its tag");
            }
        }
    }
    let queue = "knative-serving.images.queue=my.io/queue:v1";
    let driver = "pipelines.images.kfp-driver=my.io/driver:v2";
    let objects = render("multi-tenant", &[queue, driver]);
    let listed = catalog::images::collect(&objects);
    assert!(
        listed.contains(&"my.io/queue:v1".to_string()) && listed.contains(&"my.io/driver:v2".to_string()),
        "{listed:?}"
    );
    // Issue 27: an image given by its key is pulled as given, on its own registry, while
    // `global.imageRegistry` moves every other image.
    let mirrored = render("multi-tenant", &[queue, driver, "global.imageRegistry=mirror.example.com"]);
    let listed = catalog::images::collect(&mirrored);
    assert!(listed.contains(&"my.io/queue:v1".to_string()), "{listed:?}");
    assert!(listed.contains(&"my.io/driver:v2".to_string()), "{listed:?}");
    let elsewhere: Vec<&String> =
        listed.iter().filter(|i| !i.starts_with("mirror.example.com/") && !i.starts_with("my.io/")).collect();
    assert!(elsewhere.is_empty(), "moved by the registry: {elsewhere:?}");
}

// ---------------------------------------------------------------------------------------------
// The command line: -o json, -o script, bad registry values.

fn kfctl(args: &[&str]) -> std::process::Output {
    Command::new(common::binary())
        .args(args)
        .args(["--version", common::release()])
        .arg("--source")
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir())
        .output()
        .unwrap()
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn images_json_says_where_and_script_copies_each_image_once() {
    let text = kfctl(&["images", "--profile", "minimal"]);
    assert!(text.status.success(), "{}", String::from_utf8_lossy(&text.stderr));
    let lines: Vec<String> = String::from_utf8(text.stdout).unwrap().lines().map(String::from).collect();
    let json = kfctl(&["images", "--profile", "minimal", "-o", "json"]);
    let list: Vec<Value> = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(list.len(), lines.len());
    for entry in &list {
        let used = entry["usedBy"].as_array().unwrap();
        assert!(!used.is_empty() && used.iter().all(|u| u["object"].is_string() && u["field"].is_string()), "{entry}");
    }
    let script = kfctl(&["images", "--profile", "minimal", "-o", "script", "--mirror", MIRROR]);
    assert!(script.status.success(), "{}", String::from_utf8_lossy(&script.stderr));
    let script = String::from_utf8(script.stdout).unwrap();
    let copies: Vec<&str> = script.lines().filter(|l| l.starts_with("skopeo copy")).collect();
    assert_eq!(copies.len(), lines.len());
    for (copy, image) in copies.iter().zip(&lines) {
        assert!(copy.contains(&format!("docker://{image} docker://{MIRROR}/")), "{copy}");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn bad_registry_values_are_usage_errors_naming_the_value() {
    for bad in ["https://registry.example.com", "my registry.io", "Registry.Example.com"] {
        let set = format!("global.imageRegistry={bad}");
        let out = kfctl(&["template", "--profile", "minimal", "--set-string", &set]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains(&format!("{bad:?}")) && err.contains("global.imageRegistry"), "{bad}: {err}");
        let out =
            Command::new(common::binary()).args(["images", "--profile", "minimal", "--mirror", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "--mirror {bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("{bad:?}")));
    }
}

// ---------------------------------------------------------------------------------------------
// Real Helm of the export with the same override equals the render.

fn helm_template(chart: &Path, sets: &[String]) -> Vec<Value> {
    let mut cmd = Command::new(common::tool("helm-template"));
    cmd.arg(chart);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let out = cmd.output().expect("helm-template runs");
    assert!(out.status.success(), "helm template: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    text.split("\n---\n")
        .flat_map(|doc| kfctl_yaml::parse_stream(doc, "helm output").unwrap())
        .filter(|d| !d.is_null())
        .collect()
}

fn assert_helm_equals_render(profile: &str) {
    let dir = common::scratch_root().join(format!("images-{profile}"));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("chart");
    let export = Command::new(common::binary())
        .args(["chart", "export", "--profile", profile, "--version", common::release(), "--source"])
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(export.status.success(), "export {profile}: {}", String::from_utf8_lossy(&export.stderr));
    let set = format!("global.imageRegistry={MIRROR}");
    let helm = helm_template(&out, std::slice::from_ref(&set));
    let native = render(profile, &[&set]);
    if let Some(report) = kfctl_yaml::compare::unordered_report(&native, &helm, 25) {
        panic!("{profile}: helm template differs from kfctl-rs with {set}:\n{report}");
    }
    let left = outside_mirror(&scan(&helm));
    assert!(left.is_empty(), "{profile}: helm output keeps {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn helm_of_the_export_with_the_registry_equals_the_render_kind() {
    assert_helm_equals_render("kind");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn helm_of_the_export_with_the_registry_equals_the_render_minimal() {
    assert_helm_equals_render("minimal");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn helm_of_the_export_with_the_registry_equals_the_render_multi_tenant() {
    assert_helm_equals_render("multi-tenant");
}
