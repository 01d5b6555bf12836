//! The engine's error type. Every variant names the file, folder or object at fault.

use super::resource::ResId;
use std::path::PathBuf;

/// Why a build failed. The message names the file, folder, entry or object at fault, and with
/// it how to fix the input where there is one way to.
#[derive(Debug, thiserror::Error)]
pub enum KustomizeError {
    /// A file or folder the build needs could not be read (or its real path resolved).
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The path that failed.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A folder named as a kustomization (or a `resources:` entry) has no kustomization file.
    #[error("{}: no kustomization.yaml, kustomization.yml or Kustomization in this folder", dir.display())]
    NoKustomization {
        /// The folder without one.
        dir: PathBuf,
    },
    /// A folder has more than one of the recognised kustomization file names.
    #[error("{}: found more than one kustomization file ({found}); keep only one, as kustomize requires", dir.display())]
    MultipleKustomizations {
        /// The folder.
        dir: PathBuf,
        /// The file names found, comma-separated.
        found: String,
    },
    /// A kustomization field kustomize knows but kfctl-rs does not implement (the helm fields,
    /// `validators`, `openapi: path:` in a base, `buildMetadata` where it cannot be tracked):
    /// refused rather than ignored, so the output never silently differs from kustomize's.
    #[error("{}: `{field}` is not supported by kfctl-rs; {hint}", path.display())]
    Unsupported {
        /// The kustomization file using it.
        path: PathBuf,
        /// The field, as written in the file (for example `helmCharts`), or what about it is
        /// refused.
        field: String,
        /// What to do instead.
        hint: String,
    },
    /// A `generators:`, `transformers:` or `validators:` entry naming a plugin the engine has no
    /// builtin for (an exec or container plugin, or an unknown kind).
    #[error("{}: `{field}` entry ({what}) is not supported by kfctl-rs; {hint}", path.display())]
    UnsupportedPlugin {
        /// The kustomization file listing it.
        path: PathBuf,
        /// The list it is in (`generators`, `transformers` or `validators`).
        field: String,
        /// The plugin as identified (its kind or file).
        what: String,
        /// What to do instead.
        hint: String,
    },
    /// A kustomization (or a file it names, such as an `openapi:` schema) that does not parse
    /// or fails kustomize's checks: an unknown field, a wrong `kind` or `apiVersion`, a bad value.
    #[error("{}: {message}", path.display())]
    InvalidKustomization {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A manifest or configuration file is not valid YAML, or exceeds the reading bounds.
    #[error(transparent)]
    Yaml(#[from] kfctl_yaml::YamlError),
    /// A remote reference could not be parsed or resolved to a local path.
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    /// A file outside the kustomization's folder, read under [`crate::LoadRestriction::RootOnly`]
    /// (judged on real paths, so a symlink out of the tree counts).
    #[error("security: {} is outside {}; kustomize's load restrictor only allows files in or below the kustomization's folder (move the file, or reference a folder that has its own kustomization)", path.display(), root.display())]
    OutsideRoot {
        /// The real path of the file asked for.
        path: PathBuf,
        /// The real path of the folder it had to stay in.
        root: PathBuf,
    },
    /// A kustomization that includes itself, directly or through other folders.
    #[error("{}: cycle detected: this folder is already being built higher up ({chain})", dir.display())]
    Cycle {
        /// The folder met a second time.
        dir: PathBuf,
        /// The folders being built when it was met, from the top down, joined by ` -> `.
        chain: String,
    },
    /// A document of a resource file that is not a map with `apiVersion`, `kind` and a name.
    #[error("{origin}: a document is not a Kubernetes object: {message}")]
    NotAnObject {
        /// The file (or generator) the document came from.
        origin: String,
        /// What the document lacks.
        message: String,
    },
    /// Two objects with the same id (gvk, name and namespace) in one build.
    #[error(
        "may not add resource with an already registered id: {id} (from {origin}); remove the duplicate or give it another name or namespace"
    )]
    DuplicateId {
        /// The id both objects have.
        id: Box<ResId>,
        /// The entry the second object came from.
        origin: String,
    },
    /// A generator or transformer refused its input (a bad field spec, an unresolvable var, a
    /// replacement with no source, an invalid `sortOptions`, …).
    #[error("{context}: {message}")]
    Transform {
        /// Which step and entry, in kustomize's words (for example `patchesJson6902 ops.yaml`).
        context: String,
        /// What went wrong.
        message: String,
    },
    /// With [`crate::BuildOptions::strict_patches`], a top-level `patches` entry that changed no
    /// object.
    #[error("patches entry {index} (counting from 0): {message}")]
    TopPatch {
        /// The entry's position in the kustomization's `patches` list.
        index: usize,
        /// Why it matched nothing.
        message: String,
    },
    /// A strategic merge patch could not be applied to its target.
    #[error("{context}: {source}")]
    Merge {
        /// The patch and the object it was applied to.
        context: String,
        /// The merge's own error.
        source: super::merge::MergeError,
    },
}

impl KustomizeError {
    pub(crate) fn transform(context: impl Into<String>, message: impl Into<String>) -> Self {
        KustomizeError::Transform { context: context.into(), message: message.into() }
    }
}

/// The engine's result type.
pub type Result<T> = std::result::Result<T, KustomizeError>;
