//! The render cache serves a warm `template` the same bytes as a cold one: CRDs the values leave
//! unchanged are copied from the texts the cache keeps for them, CRDs the values change are
//! written from their attached schemas, and a cache entry whose texts are damaged is not used
//! for them (`kfctl::catalog::deferred`, `kfctl_kustomize::build_cache`). Every case runs the
//! real binary on each release's snapshot.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

/// `template --profile multi-tenant` of `version` with `values`, offline, its render cache in
/// `cache` (`None`: the cache turned off).
fn template(cache: Option<&Path>, version: &str, values: &[&str]) -> Output {
    let mut command = Command::new(common::binary());
    command.args(["template", "--offline", "--profile", "multi-tenant", "--version", version]);
    command.arg("--source").arg(common::manifests_dir_of(version));
    command.arg("--remote-mirror").arg(common::mirror_dir());
    command.args(values).env_remove("KFCTL_REMOTE_MIRROR");
    let out = with_cache(&mut command, cache).output().expect("kfctl-rs runs");
    assert!(out.status.success(), "{version} {values:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// `command` with its render cache in `cache`, or turned off (`None`).
fn with_cache<'c>(command: &'c mut Command, cache: Option<&Path>) -> &'c mut Command {
    match cache {
        Some(cache) => command.env("KFCTL_CACHE_DIR", cache).env_remove("KFCTL_NO_CACHE"),
        None => command.env("KFCTL_NO_CACHE", "1"),
    }
}

/// The render cache's entries under `cache`.
fn entries(cache: &Path) -> Vec<std::path::PathBuf> {
    let dir = cache.join("render");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "entry")).collect()
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_warm_template_writes_the_cold_bytes_whether_values_change_crds_or_not() {
    // Default values (every CRD from its cached text); labels and the resource policy on every
    // object (every CRD attached and written); a credential (a generated Secret renamed, its
    // references rewritten).
    let value_sets: [&[&str]; 3] = [
        &[],
        &["--set", "global.commonLabels.team=ml", "--set", "global.resourcePolicy=keep"],
        &["--set", "pipelines.objectStore.secretKey=an-other-secret"],
    ];
    for version in common::releases() {
        let cache = tempfile::tempdir().unwrap();
        for values in value_sets {
            let cold = template(None, version, values).stdout;
            let stored = template(Some(cache.path()), version, values).stdout;
            let warm = template(Some(cache.path()), version, values).stdout;
            assert!(stored == cold, "{version} {values:?}: the run that fills the cache differs from the cold one");
            assert!(warm == cold, "{version} {values:?}: the warm render differs from the cold one");
        }
        let golden = std::fs::read(common::golden_dir_of(version).join("example.yaml")).unwrap();
        assert!(template(Some(cache.path()), version, &[]).stdout == golden, "{version}: differs from its golden");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_cache_entry_whose_texts_are_damaged_still_gives_the_cold_bytes() {
    let version = common::release();
    let cache = tempfile::tempdir().unwrap();
    let cold = template(Some(cache.path()), version, &[]).stdout;
    let [entry] = &entries(cache.path())[..] else { panic!("one entry") };
    let mut bytes = std::fs::read(entry).unwrap();
    // The texts region is the entry's end: the last CRD's YAML, edited in place.
    let at = bytes.len() - 10;
    bytes[at] = if bytes[at] == b'x' { b'y' } else { b'x' };
    std::fs::write(entry, &bytes).unwrap();
    assert!(template(Some(cache.path()), version, &[]).stdout == cold, "a damaged text was written");
}

/// `chart export --profile multi-tenant` of `version` into `out`, offline, its render cache in
/// `cache` (`None`: the cache turned off).
fn export(cache: Option<&Path>, version: &str, out: &Path) {
    let mut command = Command::new(common::binary());
    command.args(["chart", "export", "--offline", "--profile", "multi-tenant", "--version", version, "--out"]);
    command.arg(out).arg("--source").arg(common::manifests_dir_of(version));
    command.arg("--remote-mirror").arg(common::mirror_dir()).env_remove("KFCTL_REMOTE_MIRROR");
    let done = with_cache(&mut command, cache).output().expect("kfctl-rs runs");
    assert!(done.status.success(), "{version}: {}", String::from_utf8_lossy(&done.stderr));
}

/// Every file under `dir`, by its path relative to `dir`.
fn files(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            match entry.file_type().unwrap().is_dir() {
                true => pending.push(path),
                false => {
                    out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
                }
            }
        }
    }
    out
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_warm_chart_export_writes_the_cold_files_its_crds_spliced_from_the_cached_texts() {
    for version in common::releases() {
        let (cache, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        export(None, version, &out.path().join("cold"));
        export(Some(cache.path()), version, &out.path().join("stored"));
        export(Some(cache.path()), version, &out.path().join("warm"));
        let cold = files(&out.path().join("cold"));
        assert!(cold.keys().any(|p| p.to_string_lossy().contains("customresourcedefinition")), "{version}: no CRD");
        for run in ["stored", "warm"] {
            let other = files(&out.path().join(run));
            let differ: Vec<_> = cold.iter().filter(|(p, b)| other.get(*p) != Some(*b)).map(|(p, _)| p).collect();
            assert!(differ.is_empty() && other.len() == cold.len(), "{version}, {run}: files differ: {differ:?}");
        }
    }
}
