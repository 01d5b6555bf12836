//! Finds the test data the integration tests in `tests/` need, so that a test that cannot run
//! is reported as ignored with its reason instead of passing without doing its job.
//!
//! - the upstream snapshot: `$KFCTL_TEST_UPSTREAM`, else `../shared/kubeflow` beside the
//!   repository. The suites cover every release of `charts/releases.yaml` whose tree the
//!   snapshot holds (`KFCTL_TEST_RELEASES`, newest first); without any, or without the goldens
//!   of one, `cfg(kfctl_no_upstream)` is set;
//! - the oracles (real kustomize and Helm): `$KFCTL_TEST_TOOLS`, else `tools/` beside the
//!   snapshot; without `kustomize-build` in it, `cfg(kfctl_no_oracles)` is set;
//! - GnuPG (`gpg` on `PATH`), to sign charts in the provenance test: without it,
//!   `cfg(kfctl_no_gpg)`; Ruby (`ruby`), to syntax-check the Homebrew formula: without it,
//!   `cfg(kfctl_no_ruby)`;
//! - real kubectl 1.33 (`kubectl.1.33` on `PATH` or beside `gcloud`, as google-cloud-cli
//!   installs it), to check the test API server against: without it, `cfg(kfctl_no_kubectl)`.
//!
//! The resolved paths reach the tests as `KFCTL_TEST_UPSTREAM_DIR`, `KFCTL_TEST_TOOLS_DIR` and
//! `KFCTL_TEST_KUBECTL`.
//! Nothing here affects the binary.

use std::path::{Path, PathBuf};

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    println!("cargo::rerun-if-env-changed=KFCTL_TEST_UPSTREAM");
    println!("cargo::rerun-if-env-changed=KFCTL_TEST_TOOLS");
    println!("cargo::rustc-check-cfg=cfg(kfctl_no_upstream)");
    println!("cargo::rustc-check-cfg=cfg(kfctl_no_oracles)");
    println!("cargo::rustc-check-cfg=cfg(kfctl_no_kubectl)");
    println!("cargo::rustc-check-cfg=cfg(kfctl_no_gpg)");
    println!("cargo::rustc-check-cfg=cfg(kfctl_no_ruby)");
    println!("cargo::rerun-if-env-changed=PATH");
    let upstream =
        std::env::var_os("KFCTL_TEST_UPSTREAM").map(PathBuf::from).unwrap_or_else(|| repo.join("../shared/kubeflow"));
    let tools = std::env::var_os("KFCTL_TEST_TOOLS").map(PathBuf::from).unwrap_or_else(|| upstream.join("../tools"));
    // The releases the suites run on: every release of charts/releases.yaml (the one release
    // list) whose tree the snapshot holds, newest first; each needs its goldens.
    let releases_file = repo.join("charts/releases.yaml");
    println!("cargo::rerun-if-changed={}", releases_file.display());
    println!("cargo::rerun-if-changed={}", upstream.join("manifests").display());
    let text = std::fs::read_to_string(&releases_file).unwrap_or_default();
    let covered: Vec<String> =
        release_versions(&text).into_iter().rev().filter(|r| upstream.join("manifests").join(r).is_dir()).collect();
    if covered.is_empty() {
        println!("cargo::rustc-cfg=kfctl_no_upstream");
    }
    for release in &covered {
        probe(&upstream.join(format!("manifests/{release}/example/kustomization.yaml")), "kfctl_no_upstream");
        probe(&upstream.join(format!("golden/{release}/index.json")), "kfctl_no_upstream");
    }
    println!("cargo::rustc-env=KFCTL_TEST_RELEASES={}", covered.join(","));
    probe(&tools.join("kustomize-build"), "kfctl_no_oracles");
    println!("cargo::rustc-env=KFCTL_TEST_UPSTREAM_DIR={}", upstream.display());
    println!("cargo::rustc-env=KFCTL_TEST_TOOLS_DIR={}", tools.display());
    for (program, cfg) in [("gpg", "kfctl_no_gpg"), ("ruby", "kfctl_no_ruby")] {
        if on_path(program).is_none() {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
    match find_kubectl() {
        Some(kubectl) => println!("cargo::rustc-env=KFCTL_TEST_KUBECTL={}", kubectl.display()),
        None => {
            println!("cargo::rustc-env=KFCTL_TEST_KUBECTL=");
            println!("cargo::rustc-cfg=kfctl_no_kubectl");
        }
    }
}

/// The `version:` of every entry of `charts/releases.yaml`, in the file's order (oldest first,
/// as the file keeps them and `kfctl::source::releases` checks).
fn release_versions(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("- version:"))
        .map(|v| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
        .collect()
}

/// `kubectl.1.33` on `PATH`, or beside the real `gcloud` (google-cloud-cli's layout).
fn find_kubectl() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let beside_gcloud = dirs
        .iter()
        .filter_map(|d| std::fs::canonicalize(d.join("gcloud")).ok())
        .filter_map(|g| g.parent().map(Path::to_path_buf));
    dirs.iter().cloned().chain(beside_gcloud).map(|d| d.join("kubectl.1.33")).find(|k| k.is_file())
}

/// The first `name` on `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// Set `cfg` when the file `path` is missing. Either way cargo watches that one file (a missing
/// one makes cargo re-run this cheap probe on every build, so adding the data is noticed).
fn probe(path: &Path, cfg: &str) {
    println!("cargo::rerun-if-changed={}", path.display());
    if !path.is_file() {
        println!("cargo::rustc-cfg={cfg}");
    }
}
