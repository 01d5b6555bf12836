//! Where upstream comes from.
//!
//! Upstream (kubeflow/community-distribution, formerly kubeflow/manifests, and the remote
//! bases its kustomizations name) is an input, never part of this repository. This layer
//! resolves it: an offline mirror, a verified cache filled over HTTPS, a local folder or
//! archive, or an offline bundle.
//!
//! The pieces, from the bottom up:
//!
//! | module | role |
//! |--------|------|
//! | `mirror` | the mirror layout of remote references (the engine's [`RemoteRef`]) and [`MirrorResolver`] |
//! | [`releases`] | the committed catalog: the repository, version → commit, supported Kubernetes versions |
//! | [`by_name`] | what `--version` names (a release, an unknown tag, a commit), its archive URL and cache entry |
//! | [`digest`] | sha256 of files and of whole trees (sorted relative paths + contents) |
//! | [`extract`] | safe `.tar.gz` extraction: per-entry checks, size/count/ratio caps, all-or-nothing |
//! | `fetch` | HTTPS downloads: timeouts, retries with backoff and jitter, size cap, no plain-http redirects |
//! | `cache` | the cache folder and its digest file; every entry is verified before use |
//! | `resolver` | `CacheResolver`: a remote resolver over the cache that fetches on demand unless offline |
//! | [`walk`] | finding the remote references of a tree, recursively through remote kustomizations |
//! | [`pull`](mod@pull) | `source pull`: a release (or a folder, archive, URL or bundle) plus every remote base into the cache |
//! | [`bundle`] | one `.tar.gz` with `manifests/`, `remote/` and `bundle.json`, for air-gapped users |
//! | `open` | [`open_source`]: what rendering and installing commands call to get a manifests folder and a resolver |
//!
//! Trust model: HTTPS only, and trust on first use. The sha256 of every archive and file is
//! recorded the first time it is fetched; each extracted tree's digest is recorded before the
//! tree is moved into place and checked every time a process first uses it. A mismatch is a
//! `security:` refusal naming the file and both digests, never a silent refetch. Only a
//! release pinned by commit, or a tree with a digest the catalog knows, is vouched for by the
//! catalog; a tree fetched by another name (a tag, an unknown commit) is trusted on first use
//! with a warning, and `--verify` refuses it.

pub mod bundle;
pub mod by_name;
pub(crate) mod cache;
pub mod digest;
pub mod digest_memo;
pub mod extract;
pub(crate) mod fetch;
mod fsutil;
pub(crate) mod mirror;
pub(crate) mod open;
pub mod pull;
pub(crate) mod readable;
pub mod releases;
pub(crate) mod resolver;
pub(crate) mod version;
pub mod walk;

use std::path::PathBuf;
use std::sync::Arc;

pub use cache::Cache;
pub use fetch::{FetchOptions, FetchReporter, Fetcher};
pub use kfctl_kustomize::remote::{NoRemote, RemoteError, RemoteRef, RemoteResolver};
pub use mirror::{MirrorLayout, MirrorResolver};
pub use open::{OpenedSource, SourceSpec, open_source};
pub use pull::{PullReport, PullRequest, pull};
pub(crate) use resolver::CacheResolver;

/// Whether `KFCTL_NO_CACHE` turns kfctl-rs's caches off (the render cache, remembered digests).
pub(crate) fn caches_turned_off() -> bool {
    std::env::var_os("KFCTL_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Everything that can go wrong while getting upstream.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A refusal for safety: hostile archive, digest mismatch, plain-http redirect, size cap.
    #[error("security: {0}")]
    Security(String),
    /// The requested release is not in the release table.
    #[error("release {requested}: unknown version; known versions: {known}")]
    UnknownVersion {
        /// The version asked for.
        requested: String,
        /// The known versions.
        known: String,
    },
    /// `--version` names a tag the catalog does not know, `--offline` is set and it is not cached.
    #[error(
        "release {tag}: unknown version{suggestion}; known versions: {known}; as a tag of {repository} it is not \
         available offline (--offline is set); fetch it first with `{command}`"
    )]
    OfflineTag {
        /// The tag, as upstream writes it.
        tag: String,
        /// ` (did you mean …?)`, or nothing.
        suggestion: String,
        /// The known versions.
        known: String,
        /// The upstream repository.
        repository: String,
        /// The command that fetches it.
        command: String,
    },
    /// What `--version` names is not in the upstream repository (its archive answered HTTP 404).
    #[error("{what}: not found in {repository} ({url} answered HTTP 404); {hint}")]
    NotUpstream {
        /// The release, tag or commit.
        what: String,
        /// The upstream repository.
        repository: String,
        /// The archive URL asked for.
        url: String,
        /// What to do.
        hint: String,
    },
    /// A download failed.
    #[error("{url}: {message}")]
    Fetch {
        /// The URL that failed.
        url: String,
        /// Why it failed (status, transport error, size cap).
        message: String,
    },
    /// A local file or folder cannot be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// Something fetched or read is malformed.
    #[error("{what}: {message}")]
    Invalid {
        /// What it is.
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// `--offline` is set and what is needed is not in the cache.
    #[error("{what}: not available offline (--offline is set); fetch it first with `{command}`")]
    Offline {
        /// What is needed.
        what: String,
        /// The command that fetches it.
        command: String,
    },
    /// A remote kustomize resource could not be resolved.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// `--source` names a file that is no archive kfctl-rs reads (a usage error: exit 2).
    #[error(
        "{path}: --source: not a gzip-compressed tar archive (.tar.gz); give a kubeflow/manifests folder, a .tar.gz of one, or a kfctl-rs bundle"
    )]
    NotAnArchive {
        /// The file given.
        path: PathBuf,
    },
}

impl From<crate::staging::StageError> for SourceError {
    fn from(e: crate::staging::StageError) -> SourceError {
        SourceError::Io { path: e.path, message: e.message }
    }
}

impl SourceError {
    /// Whether this is a safety refusal (exit code 4) rather than an availability problem (3).
    pub fn is_security(&self) -> bool {
        matches!(self, SourceError::Security(_) | SourceError::Remote(RemoteError::Refused { .. }))
    }

    pub(crate) fn io(path: impl Into<PathBuf>, err: std::io::Error) -> SourceError {
        SourceError::Io { path: path.into(), message: err.to_string() }
    }

    pub(crate) fn invalid(what: impl std::fmt::Display, message: impl Into<String>) -> SourceError {
        SourceError::Invalid { what: what.to_string(), message: message.into() }
    }

    /// A digest mismatch: names the file and both digests.
    pub(crate) fn digest_mismatch(what: impl std::fmt::Display, recorded: &str, found: &str) -> SourceError {
        SourceError::Security(format!(
            "{what}: sha256 mismatch: recorded {recorded}, found {found}; the content changed since it was first \
             fetched (tampering, or upstream replaced it); remove that cache entry only if you trust the new content"
        ))
    }

    /// Convert into the engine-facing error of a remote reference.
    pub(crate) fn into_remote(self, url: &str) -> RemoteError {
        match self {
            SourceError::Remote(err) => err,
            SourceError::Security(reason) => RemoteError::Refused { url: url.to_string(), reason },
            other => RemoteError::Fetch { url: url.to_string(), message: other.to_string() },
        }
    }
}

/// The resolver used when no mirror is given: the user's cache ([`Cache::default_root`]),
/// fetching what is missing (silently, with [`FetchOptions::from_env`]) unless `offline`.
pub fn default_resolver(offline: bool) -> Result<Arc<dyn RemoteResolver>, SourceError> {
    let cache = Cache::open(Cache::default_root()?)?;
    let fetcher = match offline {
        true => None,
        false => Some(Arc::new(Fetcher::new(FetchOptions::from_env()?)?)),
    };
    Ok(Arc::new(CacheResolver::new(Arc::new(cache), fetcher)))
}

/// Install the `ring` crypto provider as rustls' process default. Idempotent and cheap; the
/// fetcher calls it too, so library users need not.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err means another provider is already installed, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Write `body` to `root/rel`, creating folders: the fixtures of the source tests.
#[cfg(test)]
pub(crate) fn write_fixture(root: &std::path::Path, rel: &str, body: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn security_errors_are_classified() {
        assert!(SourceError::Security("x".into()).is_security());
        let refused = RemoteError::Refused { url: "u".into(), reason: "r".into() };
        assert!(SourceError::Remote(refused).is_security());
        assert!(!SourceError::Fetch { url: "u".into(), message: "m".into() }.is_security());
    }

    #[test]
    fn digest_mismatch_names_file_and_both_digests() {
        let msg = SourceError::digest_mismatch("cache/x", "aaa", "bbb").to_string();
        assert!(msg.starts_with("security: cache/x:") && msg.contains("recorded aaa") && msg.contains("found bbb"));
    }

    #[test]
    fn security_reason_becomes_a_refused_remote() {
        let err = SourceError::Security("bad".into()).into_remote("https://h/x.yaml");
        assert_eq!(err.to_string(), "security: remote resource https://h/x.yaml: bad");
    }

    #[test]
    fn crypto_provider_install_is_idempotent() {
        install_crypto_provider();
        install_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
