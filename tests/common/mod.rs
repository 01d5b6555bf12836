//! Helpers shared by integration tests: where the read-only upstream snapshot lives.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared` beside the repository (or `KFCTL_SHARED_DIR`).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("KFCTL_SHARED_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

pub fn manifests_dir() -> PathBuf {
    shared_dir().join("kubeflow/manifests/v1.11.0")
}

pub fn mirror_dir() -> PathBuf {
    shared_dir().join("kubeflow/remote")
}

pub fn golden_dir() -> PathBuf {
    shared_dir().join("kubeflow/golden/v1.11.0")
}

/// The kfctl-rs binary under test (`KFCTL_TEST_BIN` overrides the one cargo built).
pub fn binary() -> PathBuf {
    std::env::var_os("KFCTL_TEST_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kfctl-rs")))
}
