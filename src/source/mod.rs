//! Where upstream comes from.
//!
//! Upstream (kubeflow/manifests and the remote bases its kustomizations name) is an input,
//! never part of this repository. This layer resolves it: an offline mirror, a verified cache
//! filled over HTTPS, a local folder or archive, or an offline bundle.

pub mod remote;

pub use remote::{MirrorResolver, NoRemote, RemoteError, RemoteRef, RemoteResolver};
