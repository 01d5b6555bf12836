//! Issue 11, item 7 (the chart part): credentials in an exported chart, checked on a real
//! export of `multi-tenant` given every credential at export time (`--set-string`, one canary
//! value each):
//!
//! - every file that can hold a credential value (each `values.yaml`, each Secret's template)
//!   is 0600, every other file 0644, and any file holding a canary is one of the 0600 ones;
//! - no README shows a canary (values tables, the export command line);
//! - a subchart's files hold a canary only when its own templates read that credential, and
//!   then its `values.yaml` does (so it still renders alone);
//! - `helm template` of the export equals `kfctl-rs template` with the same values, for the
//!   umbrella chart and for each subchart holding credentials installed on its own.

use crate::common;

use kfctl::catalog::params::CREDENTIALS;
use kfctl::catalog::strvals::{SetFlag, SetKind};
use kfctl_yaml::compare;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One canary per credential value path (the value's text is unique, so a hit names it).
fn canaries() -> BTreeMap<&'static str, String> {
    let mut out = BTreeMap::new();
    for (i, cred) in CREDENTIALS.iter().enumerate() {
        let text = if cred.value.ends_with("email") {
            format!("kfcanary{i}@example.org")
        } else {
            format!("kfcanary{i}-S3cr3t")
        };
        out.entry(cred.value).or_insert(text);
    }
    out
}

fn sets() -> Vec<String> {
    let mut sets: Vec<String> = canaries().into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    // `pipelines.database.password` is refused alone: it goes with the external database's host and user.
    sets.extend(["pipelines.database.host=mysql.example.org".to_string(), "pipelines.database.user=kfp".to_string()]);
    sets
}

fn binary() -> PathBuf {
    std::env::var_os("KFCTL_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kfctl-rs")))
}

/// `multi-tenant` exported once (with `--argocd`) with every canary.
fn exported() -> &'static PathBuf {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    OUT.get_or_init(|| {
        let dir = common::scratch_root().join("cred");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("kubeflow");
        let mut cmd = Command::new(binary());
        cmd.args(["chart", "export", "--profile", "multi-tenant", "--version", common::release(), "--source"])
            .arg(common::manifests_dir())
            .arg("--remote-mirror")
            .arg(common::mirror_dir())
            .arg("--out")
            .arg(&out)
            .args(["--argocd", "--argocd-repo-url", "https://git.example.com/ml/platform.git"]);
        for s in sets() {
            cmd.args(["--set-string", &s]);
        }
        let result = cmd.output().expect("kfctl-rs runs");
        assert!(result.status.success(), "export: {}", String::from_utf8_lossy(&result.stderr));
        out
    })
}

/// Every file of the export: path relative to it → (mode, text).
fn files(root: &Path) -> BTreeMap<String, (u32, String)> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (u32, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, (mode, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Where a credential value can be: a values file, or the template of a Secret.
fn can_hold_credentials(rel: &str, text: &str) -> bool {
    rel.rsplit('/').next() == Some("values.yaml")
        || (rel.contains("/templates/") && text.lines().any(|l| l == "kind: Secret"))
}

/// The subchart a file belongs to, if any.
fn subchart(rel: &str) -> Option<&str> {
    rel.strip_prefix("charts/").and_then(|r| r.split('/').next())
}

/// Whether the templates of subchart `component` read credential `value`.
fn reads(all: &BTreeMap<String, (u32, String)>, component: &str, value: &str) -> bool {
    let rel = if value.starts_with("global.") {
        value.to_string()
    } else {
        value.strip_prefix(&format!("{component}.")).map(str::to_string).unwrap_or_default()
    };
    let call = format!("include \"kfctl.credential\" (list $ \"{rel}\"");
    let templates = format!("charts/{component}/templates/");
    !rel.is_empty() && all.iter().any(|(p, (_, text))| p.starts_with(&templates) && text.contains(&call))
}

/// This process's umask (the export inherits it): a stricter one than 022 narrows 0644.
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:")).unwrap_or("022");
    u32::from_str_radix(line.trim(), 8).unwrap_or(0o022)
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn files_that_can_hold_credentials_are_0600_and_every_other_file_0644() {
    let all = files(exported());
    let mut private = 0;
    for (rel, (mode, text)) in &all {
        let expected = if can_hold_credentials(rel, text) { 0o600 } else { 0o644 & !umask() };
        assert_eq!(*mode, expected, "{rel}: mode {mode:o}, expected {expected:o}");
        private += usize::from(expected == 0o600);
    }
    assert!(all.contains_key("argocd/root.yaml") && all.contains_key("charts/dex/values.yaml"));
    assert!(private > 28, "only {private} private files: the umbrella and every subchart have a values.yaml");
    for (value, canary) in canaries() {
        let holders: Vec<&String> = all.iter().filter(|(_, (_, t))| t.contains(&canary)).map(|(p, _)| p).collect();
        assert!(holders.iter().any(|p| *p == "values.yaml"), "{value}: not in the umbrella's values.yaml");
        for rel in holders {
            assert_eq!(all[rel].0, 0o600, "{rel} holds {value} but is not 0600");
        }
    }
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn credentials_reach_no_readme_and_only_the_subcharts_that_read_them() {
    let all = files(exported());
    let readme = &all["README.md"].1;
    assert!(readme.contains("global.oidcClientSecret=<secret>"), "the export command shows the key, not the value");
    assert!(all["charts/dex/README.md"].1.contains("`<secret: set with --set-string staticUser.passwordHash="));
    for (value, canary) in canaries() {
        let mut readers = Vec::new();
        for (rel, _) in all.iter().filter(|(_, (_, t))| t.contains(&canary)) {
            assert!(!rel.ends_with("README.md"), "{rel} shows {value}");
            if let Some(component) = subchart(rel) {
                assert!(reads(&all, component, value), "{rel} holds {value}, which chart {component} never reads");
                readers.push(component.to_string());
            }
        }
        let expected: Vec<String> = all
            .keys()
            .filter_map(|p| subchart(p).filter(|c| p == &format!("charts/{c}/values.yaml")))
            .filter(|c| reads(&all, c, value))
            .map(str::to_string)
            .collect();
        readers.dedup();
        assert!(!expected.is_empty(), "{value}: no subchart reads it, the check would be vacuous");
        assert_eq!(readers, expected, "{value}: the subcharts holding it are not the ones reading it");
    }
}

fn helm_template(chart: &Path) -> Vec<Value> {
    let out = Command::new(common::tool("helm-template")).arg(chart).output().expect("helm-template runs");
    assert!(out.status.success(), "helm template {}: {}", chart.display(), String::from_utf8_lossy(&out.stderr));
    // One document at a time, as tests/helm_chart.rs reads it (the reader's per-document budgets).
    let (mut docs, mut current) = (Vec::new(), String::new());
    let mut flush = |current: &mut String| {
        docs.extend(kfctl_yaml::parse_stream(current, "helm template output").unwrap_or_else(|e| panic!("{e}")));
        current.clear();
    };
    for line in String::from_utf8(out.stdout).unwrap().split_inclusive('\n') {
        if line.trim_end() == "---" {
            flush(&mut current);
        } else {
            current.push_str(line);
        }
    }
    flush(&mut current);
    docs
}

fn native() -> Vec<kfctl::catalog::render::RenderedObject> {
    let request =
        common::render_request("multi-tenant", sets().into_iter().map(|s| SetFlag::new(SetKind::String, s)).collect());
    kfctl::catalog::render(&request).unwrap_or_else(|e| panic!("render: {e}")).objects
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn helm_template_of_the_export_equals_the_native_render_with_the_credentials() {
    let chart = exported();
    let objects = native();
    let expected: Vec<Value> = objects.iter().map(|o| o.obj.clone()).collect();
    let rendered = serde_json::to_string(&expected).unwrap();
    for canary in canaries().values() {
        let encoded = kfctl::catalog::params::base64_encode(canary.as_bytes());
        assert!(
            rendered.contains(canary.as_str()) || rendered.contains(&encoded),
            "{canary} changes nothing: the check would be vacuous"
        );
    }
    if let Some(report) = compare::unordered_report(&expected, &helm_template(chart), 25) {
        panic!("umbrella: helm template differs from kfctl-rs template with the credentials:\n{report}");
    }
    for component in ["dex", "oauth2-proxy", "pipelines"] {
        let own: Vec<Value> = objects.iter().filter(|o| o.component == component).map(|o| o.obj.clone()).collect();
        let helm = helm_template(&chart.join("charts").join(component));
        if let Some(report) = compare::unordered_report(&own, &helm, 25) {
            panic!("subchart {component} on its own differs from kfctl-rs template:\n{report}");
        }
    }
}
