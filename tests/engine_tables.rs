//! Facts the engine takes from upstream data, checked against that data in `../shared`:
//! the strategic-merge table generated from kustomize's OpenAPI bundle, and kustomize's name
//! hash on every generated object of the whole-platform golden.

use crate::common;

use kfctl_kustomize::content_hash;
use std::process::Command;

/// The committed table is what the generator writes from kustomize's OpenAPI bundle.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn openapi_table_is_up_to_date() {
    let root = common::repo_root();
    let bundle = common::upstream().join("kustomize-openapi/kubernetes-openapi-union-v1.21.2.bundle-v1.json");
    let generator = root.join("crates/kfctl-kustomize/src/merge/generate_table.py");
    let out = Command::new("python3").arg(&generator).arg(&bundle).output().expect("python3 runs the table generator");
    assert!(out.status.success(), "generator failed: {}", String::from_utf8_lossy(&out.stderr));
    let committed =
        std::fs::read_to_string(root.join("crates/kfctl-kustomize/src/merge/openapi_table.rs")).expect("table");
    assert!(
        String::from_utf8_lossy(&out.stdout) == committed,
        "openapi_table.rs is stale: regenerate it with generate_table.py (see its header)"
    );
}

/// Every ConfigMap and Secret of the whole-platform golden whose name ends in a
/// kustomize-looking suffix (ten characters with a digit) carries the hash of its own data.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn golden_generated_names_carry_their_content_hash() {
    let path = common::golden_dir().join("example.yaml");
    let text = std::fs::read_to_string(&path).expect("golden example.yaml readable");
    let docs = kfctl_yaml::parse_objects(&text, "example.yaml").expect("golden parses");
    let mut checked = 0;
    for doc in docs.iter().filter(|d| matches!(d["kind"].as_str(), Some("ConfigMap" | "Secret"))) {
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        let Some((_, suffix)) = name.rsplit_once('-') else { continue };
        if suffix.len() == 10 && suffix.chars().any(|c| c.is_ascii_digit()) {
            assert_eq!(content_hash(doc), suffix, "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} hashed names found in the golden");
}
