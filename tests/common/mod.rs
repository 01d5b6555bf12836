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
