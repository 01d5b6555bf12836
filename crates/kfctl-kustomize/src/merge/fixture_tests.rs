//! Fixtures checked against real kustomize: every folder under `tests/fixtures/merge/cases` is a
//! small kustomization whose build real kustomize v5.6 recorded (`expected.yaml`, or
//! `expected.error` when it refuses). This test applies the same patches with this module and
//! compares the objects as data. `tests/fixtures/merge/record.py` writes and re-records them.
//!
//! The runner understands just what the fixtures use: `resources` files, and `patches` entries
//! with `path`, optional `target` (kind, name) and `options` (allowNameChange, allowKindChange).

use super::*;
use std::path::{Path, PathBuf};

/// The fixture folder; `KFCTL_MERGE_CASES` points at another corpus (exploratory runs).
fn cases_dir() -> PathBuf {
    std::env::var_os("KFCTL_MERGE_CASES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/merge/cases"))
}

fn read_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    kfctl_yaml::parse_stream(&text, &path.display().to_string()).expect("fixture YAML parses")
}

fn gvk_of(obj: &Value) -> Gvk {
    Gvk::from_api_version(obj["apiVersion"].as_str().unwrap_or(""), obj["kind"].as_str().unwrap_or(""))
}

fn str_at<'a>(obj: &'a Value, path: &[&str]) -> &'a str {
    path.iter().fold(obj, |v, k| &v[*k]).as_str().unwrap_or("")
}

/// Whether a patch entry applies to `res`: by its target, else by the patch's kind and name.
fn selected(res: &Value, target: Option<&Value>, patch: &Value) -> bool {
    let wanted = |sel: &Value, key: &str, actual: &str| sel[key].as_str().is_none_or(|w| w == actual);
    match target {
        Some(t) => wanted(t, "kind", str_at(res, &["kind"])) && wanted(t, "name", str_at(res, &["metadata", "name"])),
        None => {
            str_at(res, &["kind"]) == str_at(patch, &["kind"])
                && str_at(res, &["metadata", "name"]) == str_at(patch, &["metadata", "name"])
        }
    }
}

fn apply_entry(resources: &mut Vec<Value>, dir: &Path, entry: &Value) -> Result<(), Box<dyn std::error::Error>> {
    let docs = read_docs(&dir.join(entry["path"].as_str().expect("patch path")));
    let target = entry.get("target");
    let options = SmpOptions {
        allow_name_change: entry["options"]["allowNameChange"].as_bool().unwrap_or(false),
        allow_kind_change: entry["options"]["allowKindChange"].as_bool().unwrap_or(false),
    };
    for patch in &docs {
        let mut kept = Vec::new();
        for res in resources.drain(..) {
            if !selected(&res, target, patch) {
                kept.push(res);
                continue;
            }
            let out = if patch.is_array() {
                apply_json6902(&res, patch)?
            } else {
                strategic_merge_with(res.clone(), patch, &gvk_of(&res), options)?
            };
            if !out.is_null() {
                kept.push(out);
            }
        }
        *resources = kept;
    }
    Ok(())
}

fn build(dir: &Path) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let kustomization = read_docs(&dir.join("kustomization.yaml")).remove(0);
    let mut resources: Vec<Value> = Vec::new();
    for file in kustomization["resources"].as_array().expect("resources") {
        resources.extend(read_docs(&dir.join(file.as_str().expect("resource path"))));
    }
    for entry in kustomization["patches"].as_array().into_iter().flatten() {
        apply_entry(&mut resources, dir, entry)?;
    }
    Ok(resources)
}

fn sorted(mut docs: Vec<Value>) -> Vec<Value> {
    docs.sort_by_key(|d| (str_at(d, &["kind"]).to_string(), str_at(d, &["metadata", "name"]).to_string()));
    docs
}

/// Compare one case: the difference, if any.
fn difference(dir: &Path) -> Option<String> {
    let ours = build(dir);
    let error_file = dir.join("expected.error");
    if error_file.exists() {
        let expected = std::fs::read_to_string(&error_file).expect("expected.error is readable");
        let first = expected.lines().next().unwrap_or("").trim_start_matches("error: ").to_string();
        return match ours {
            Err(e) if e.to_string().contains(&first) => None,
            Err(e) => Some(format!("error differs:\n  ours:   {e}\n  theirs: {first}")),
            Ok(docs) => Some(format!("expected error {first:?}, built {}", Value::Array(docs))),
        };
    }
    let ours = match ours {
        Ok(ours) => ours,
        Err(e) => return Some(format!("failed: {e}")),
    };
    let theirs = sorted(read_docs(&dir.join("expected.yaml")));
    let ours = sorted(ours);
    if ours == theirs {
        return None;
    }
    let ids = |docs: &[Value]| docs.iter().map(|d| str_at(d, &["metadata", "name"]).to_string()).collect::<Vec<_>>();
    let first_diff = ours.iter().zip(&theirs).find(|(a, b)| a != b);
    Some(match first_diff {
        Some((a, b)) if ours.len() == theirs.len() => format!("\n  ours:   {a}\n  theirs: {b}"),
        _ => format!("objects differ: ours {:?}, theirs {:?}", ids(&ours), ids(&theirs)),
    })
}

#[test]
fn fixtures_match_real_kustomize() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("fixtures folder")
        .map(|e| e.expect("fixture entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 12, "expected the fixture cases, found {}", dirs.len());
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| difference(d).map(|e| format!("{}: {e}", d.file_name().unwrap_or_default().to_string_lossy())))
        .collect();
    assert!(failures.is_empty(), "{} of {} fixtures differ:\n{}", failures.len(), dirs.len(), failures.join("\n"));
}
