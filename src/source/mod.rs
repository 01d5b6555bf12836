//! Where upstream comes from.
//!
//! Upstream (kubeflow/manifests and the remote bases its kustomizations name) is an input,
//! never part of this repository. This layer resolves it: an offline mirror, a verified cache
//! filled over HTTPS, a local folder or archive, or an offline bundle.

pub mod remote;

pub use remote::{MirrorResolver, NoRemote, RemoteError, RemoteRef, RemoteResolver};

use std::sync::Arc;

/// The resolver used when no mirror is given: the user's cache, fetching what is missing
/// unless `offline`. (Until the cache lands, remote references need `--remote-mirror`.)
pub fn default_resolver(offline: bool) -> anyhow::Result<Arc<dyn RemoteResolver>> {
    let _ = offline;
    Ok(Arc::new(NoRemote))
}
