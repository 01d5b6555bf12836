//! The engine's error type. Every variant names the file, folder or object at fault.

use super::resource::ResId;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum KustomizeError {
    #[error("{}: cannot read: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: no kustomization.yaml, kustomization.yml or Kustomization in this folder", dir.display())]
    NoKustomization { dir: PathBuf },
    #[error("{}: found more than one kustomization file ({found}); keep only one, as kustomize requires", dir.display())]
    MultipleKustomizations { dir: PathBuf, found: String },
    #[error("{}: `{field}` is not supported by kfctl-rs; {hint}", path.display())]
    Unsupported { path: PathBuf, field: String, hint: String },
    #[error("{}: `{field}` entry ({what}) is not supported by kfctl-rs; {hint}", path.display())]
    UnsupportedPlugin { path: PathBuf, field: String, what: String, hint: String },
    #[error("{}: {message}", path.display())]
    InvalidKustomization { path: PathBuf, message: String },
    #[error(transparent)]
    Yaml(#[from] kfctl_yaml::YamlError),
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    #[error("security: {} is outside {}; kustomize's load restrictor only allows files in or below the kustomization's folder (move the file, or reference a folder that has its own kustomization)", path.display(), root.display())]
    OutsideRoot { path: PathBuf, root: PathBuf },
    #[error("{}: cycle detected: this folder is already being built higher up ({chain})", dir.display())]
    Cycle { dir: PathBuf, chain: String },
    #[error("{origin}: a document is not a Kubernetes object: {message}")]
    NotAnObject { origin: String, message: String },
    #[error(
        "may not add resource with an already registered id: {id} (from {origin}); remove the duplicate or give it another name or namespace"
    )]
    DuplicateId { id: Box<ResId>, origin: String },
    #[error("{context}: {message}")]
    Transform { context: String, message: String },
    #[error("patches entry {index} (counting from 0): {message}")]
    TopPatch { index: usize, message: String },
    #[error("{context}: {source}")]
    Merge { context: String, source: super::merge::MergeError },
}

impl KustomizeError {
    pub fn transform(context: impl Into<String>, message: impl Into<String>) -> Self {
        KustomizeError::Transform { context: context.into(), message: message.into() }
    }
}

pub type Result<T> = std::result::Result<T, KustomizeError>;
