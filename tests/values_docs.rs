//! Issue 13, item 4: a documented values surface. Every key of an exported `values.yaml`
//! carries a helm-docs comment, every property of `values.schema.json` a description, both
//! from the one table (`kfctl::catalog::docs`), and `kfctl-rs values` prints exactly the
//! `values.yaml` the export writes.
//!
//! **The comment rule** (checked by [`undocumented_keys`]): walk the parsed `values.yaml`
//! from the top, keys in go-yaml's order. Every mapping key at every depth is *documented*,
//! except the keys inside a free-form value: a list's items, and the contents of a map named
//! `nodeSelector`, `affinity`, `commonLabels` or `commonAnnotations`, or at
//! `[<component>.]resources.<workload>.<container>` (those are the user's own keys; the comment
//! on the free-form value's own key describes them). A documented key with `d` ancestors is
//! written on a line that starts with `2·d` spaces and the key (plain or double-quoted) and a
//! colon, and the line directly above that line is `2·d` spaces, `# -- ` and a non-empty
//! description. The lines are found in document order (each after the previous one).

use crate::common;

use kfctl_yaml::go_yaml_key_cmp;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

fn kfctl(args: &[&str]) -> Output {
    common::kfctl_offline(args)
}

/// The export of `profile` with default values, made once per test run and profile.
fn exported(profile: &str) -> PathBuf {
    static DIRS: OnceLock<std::sync::Mutex<std::collections::BTreeMap<String, PathBuf>>> = OnceLock::new();
    let mut dirs = DIRS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    dirs.entry(profile.to_string())
        .or_insert_with(|| {
            let root = common::scratch_root().join(format!("values-docs-{profile}"));
            let _ = std::fs::remove_dir_all(&root);
            let out = root.join("kubeflow");
            let result = kfctl(&["chart", "export", "--profile", profile, "--out", out.to_str().unwrap()]);
            assert!(result.status.success(), "export {profile}: {}", String::from_utf8_lossy(&result.stderr));
            out
        })
        .clone()
}

/// Every file named `name` in the export: the umbrella's and each subchart's.
fn chart_files(chart: &Path, name: &str) -> Vec<PathBuf> {
    let mut files = vec![chart.join(name)];
    for entry in std::fs::read_dir(chart.join("charts")).unwrap() {
        files.push(entry.unwrap().path().join(name));
    }
    files
}

fn free_form(path: &[&str]) -> bool {
    let named = matches!(path.last(), Some(&("nodeSelector" | "affinity" | "commonLabels" | "commonAnnotations")));
    let resources = match path {
        ["resources", _, _] => true,
        [first, "resources", _, _] => *first != "global",
        _ => false,
    };
    named || resources
}

/// The documented keys of `value` as (ancestor count, key), in the order the file has them.
fn documented_keys<'a>(value: &'a Value, path: &mut Vec<&'a str>, out: &mut Vec<(usize, &'a str)>) {
    let Value::Object(map) = value else { return };
    if free_form(path) {
        return;
    }
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by(|a, b| go_yaml_key_cmp(a, b));
    for key in keys {
        out.push((path.len(), key));
        path.push(key);
        documented_keys(&map[key.as_str()], path, out);
        path.pop();
    }
}

/// The documented keys of a values.yaml without their `# --` comment (see the module docs).
fn undocumented_keys(text: &str) -> Vec<String> {
    let value = kfctl_yaml::parse_helm_values(text, "values.yaml").unwrap();
    let mut keys = Vec::new();
    documented_keys(&value, &mut Vec::new(), &mut keys);
    let lines: Vec<&str> = text.lines().collect();
    let mut cursor = 0;
    let mut missing = Vec::new();
    for (depth, key) in keys {
        let indent = " ".repeat(2 * depth);
        let starts = [format!("{indent}{key}:"), format!("{indent}\"{key}\":")];
        let is_key_line = |l: &&str| {
            starts
                .iter()
                .any(|s| l.strip_prefix(s.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with(' ')))
        };
        let Some(found) = lines[cursor..].iter().position(is_key_line) else {
            missing.push(format!("{indent}{key}: no such line after line {cursor}"));
            continue;
        };
        let at = cursor + found;
        let above = at.checked_sub(1).map(|i| lines[i]).unwrap_or_default();
        let documented = above.strip_prefix(&format!("{indent}# -- ")).is_some_and(|d| !d.trim().is_empty());
        if !documented {
            missing.push(format!("line {}: `{}` (above it: `{above}`)", at + 1, lines[at]));
        }
        cursor = at + 1;
    }
    missing
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn every_key_of_every_exported_values_yaml_has_a_helm_docs_comment() {
    let chart = exported("multi-tenant");
    let files = chart_files(&chart, "values.yaml");
    assert!(files.len() > 10, "multi-tenant exports its subcharts");
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let missing = undocumented_keys(&text);
        if !missing.is_empty() {
            failures.push(format!("{}:\n  {}", file.display(), missing.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "keys without a `# --` comment:\n{}", failures.join("\n"));
}

#[test]
fn the_rule_catches_a_key_without_a_comment() {
    let text = "# -- labels\ncommonLabels:\n  free: x\n# -- all\nglobal:\n  # -- x\n  a: 1\n  b: 2\n";
    assert_eq!(undocumented_keys(text), ["line 8: `  b: 2` (above it: `  a: 1`)"]);
    let text = "# -- n\nnodeSelector:\n  gpu: \"true\"\n# -- r\nresources:\n  # -- w\n  w:\n    # -- c\n    c:\n      limits: {}\n";
    assert!(undocumented_keys(text).is_empty());
}

/// Every `properties` entry anywhere in `schema` without a non-empty description.
fn undescribed(schema: &Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Object(props)) = map.get("properties") {
        for (key, prop) in props {
            let at = format!("{path}.{key}");
            if prop.get("description").and_then(Value::as_str).is_none_or(|d| d.trim().is_empty()) {
                out.push(at.clone());
            }
            undescribed(prop, &at, out);
        }
    }
    for nested in ["items", "additionalProperties"] {
        if let Some(inner) = map.get(nested) {
            undescribed(inner, &format!("{path}[{nested}]"), out);
        }
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn every_schema_property_has_a_description() {
    let chart = exported("multi-tenant");
    let mut failures = Vec::new();
    for file in chart_files(&chart, "values.schema.json") {
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut missing = Vec::new();
        undescribed(&schema, "", &mut missing);
        if !missing.is_empty() {
            failures.push(format!("{}: {}", file.display(), missing.join(", ")));
        }
    }
    assert!(failures.is_empty(), "properties without a description:\n{}", failures.join("\n"));
    let umbrella: Value =
        serde_json::from_str(&std::fs::read_to_string(chart.join("values.schema.json")).unwrap()).unwrap();
    let crds = umbrella.pointer("/properties/global/properties/crds").unwrap();
    assert_eq!(crds["enum"], serde_json::json!(["", "only", "skip"]));
    let levels = umbrella.pointer("/properties/global/properties/podSecurity/properties/profiles/enum").unwrap();
    assert!(levels.as_array().unwrap().contains(&serde_json::json!("restricted")));
    // One source: the comment above `crds:` is the schema's description.
    let values = std::fs::read_to_string(chart.join("values.yaml")).unwrap();
    let comment = format!("  # -- {}\n  crds:", crds["description"].as_str().unwrap());
    assert!(values.contains(&comment), "values.yaml and values.schema.json describe global.crds alike");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn values_command_prints_the_exported_values_yaml_byte_for_byte() {
    let chart = exported("minimal");
    let umbrella = kfctl(&["values", "--profile", "minimal"]);
    assert!(umbrella.status.success(), "{}", String::from_utf8_lossy(&umbrella.stderr));
    let expected = std::fs::read_to_string(chart.join("values.yaml")).unwrap();
    assert_eq!(String::from_utf8(umbrella.stdout).unwrap(), expected);
    let trainer = kfctl(&["values", "--profile", "minimal", "--component", "trainer"]);
    assert!(trainer.status.success(), "{}", String::from_utf8_lossy(&trainer.stderr));
    let expected = std::fs::read_to_string(chart.join("charts/trainer/values.yaml")).unwrap();
    assert_eq!(String::from_utf8(trainer.stdout).unwrap(), expected);
    let unknown = kfctl(&["values", "--profile", "minimal", "--component", "katib"]);
    assert_eq!(unknown.status.code(), Some(2), "a component outside the profile is a usage error");
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("--component katib: not a component of profile `minimal`"), "{stderr}");
}
