//! Finds the test data the fast reader's differential tests read (`src/fast/differential_tests.rs`):
//! the upstream snapshot `$KFCTL_TEST_UPSTREAM`, else `../shared/kubeflow` beside the repository.
//! Without its `manifests/` folder `cfg(kfctl_yaml_no_shared)` is set and those tests are reported
//! as ignored, with the reason. Nothing here affects the library.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-env-changed=KFCTL_TEST_UPSTREAM");
    println!("cargo::rustc-check-cfg=cfg(kfctl_yaml_no_shared)");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let upstream =
        std::env::var_os("KFCTL_TEST_UPSTREAM").map(PathBuf::from).unwrap_or_else(|| repo.join("../shared/kubeflow"));
    println!("cargo::rerun-if-changed={}", upstream.join("manifests").display());
    if !upstream.join("manifests").is_dir() {
        println!("cargo::rustc-cfg=kfctl_yaml_no_shared");
    }
    println!("cargo::rustc-env=KFCTL_YAML_SHARED_DIR={}", upstream.display());
}
