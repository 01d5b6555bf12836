//! Remote kustomize references and their resolution to local paths.
//!
//! kubeflow/manifests names two kinds of remote resources:
//! - a git repository at a ref: `https://github.com/OWNER/REPO/PATH?ref=REF` or with `//` between
//!   the repository and the path inside it;
//! - a plain file over HTTPS: `https://HOST/any/path.yaml`.
//!
//! The engine asks a [`RemoteResolver`] to turn either into a local path; where that path comes
//! from (an offline mirror, a verified cache, the network) is the caller's business, so the
//! engine knows nothing of sources. [`NoRemote`] refuses every reference.

use std::path::PathBuf;

/// A parsed remote reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RemoteRef {
    /// A folder inside a git repository at a ref.
    Git {
        /// The git host (`github.com`).
        host: String,
        /// The repository's owner (user or organisation).
        owner: String,
        /// The repository's name, without `.git`.
        repo: String,
        /// The tag, branch or commit of `?ref=` (or `?version=`).
        git_ref: String,
        /// The folder inside the repository, without leading or trailing `/`; empty for its root.
        path: String,
    },
    /// A single file fetched over HTTPS.
    Http {
        /// The host of the URL.
        host: String,
        /// The path after the host, without the query.
        path: String,
        /// The URL as written.
        url: String,
    },
}

/// Why a remote reference could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// A URL in none of the forms kfctl-rs accepts (not `https://`, no path, a git reference
    /// without a pinned `?ref=`).
    #[error("remote resource {url}: not a supported reference: {reason}")]
    Unsupported {
        /// The reference as written.
        url: String,
        /// Which form it misses.
        reason: String,
    },
    /// A mirror resolver found no copy of the reference where the mirror keeps it.
    #[error(
        "remote resource {url}: not in the mirror (looked for {path}); pull it with `kfctl-rs source pull` or point --remote-mirror at a mirror that has it"
    )]
    NotInMirror {
        /// The reference.
        url: String,
        /// Where the mirror would have it.
        path: PathBuf,
    },
    /// Fetching the reference failed (network, verification, unpacking).
    #[error("remote resource {url}: {message}")]
    Fetch {
        /// The reference.
        url: String,
        /// What failed, in the resolver's words.
        message: String,
    },
    /// The reference is not available locally and the resolver may not fetch it ([`NoRemote`],
    /// or an offline run).
    #[error("remote resource {url}: offline mode and not in the cache; run `kfctl-rs source pull` first")]
    Offline {
        /// The reference.
        url: String,
    },
    /// A reference refused for safety: plain `http://`, or a part that could climb out of the
    /// mirror folder (`..`, a backslash, a NUL, an absolute path).
    #[error("security: remote resource {url}: {reason}")]
    Refused {
        /// The reference as written.
        url: String,
        /// What makes it unsafe.
        reason: String,
    },
}

/// Whether a `resources:` entry names a remote resource rather than a local path.
pub fn is_remote(entry: &str) -> bool {
    entry.starts_with("https://")
        || entry.starts_with("http://")
        || entry.starts_with("git@")
        || entry.starts_with("github.com/")
}

impl RemoteRef {
    /// Parse a URL as kustomize accepts it for kubeflow's forms. Plain `http://` is refused.
    pub fn parse(url: &str) -> Result<RemoteRef, RemoteError> {
        let unsupported = |reason: &str| RemoteError::Unsupported { url: url.to_string(), reason: reason.to_string() };
        if url.starts_with("http://") {
            return Err(RemoteError::Refused {
                url: url.into(),
                reason: "plain http is not allowed; use https".into(),
            });
        }
        let rest = url.strip_prefix("https://").ok_or_else(|| unsupported("only https:// URLs are supported"))?;
        let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
        let git_ref = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("ref=").or_else(|| kv.strip_prefix("version=")))
            .map(str::to_string);
        let (host, path) = before_query.split_once('/').ok_or_else(|| unsupported("no path after the host"))?;
        if host.is_empty() || is_unsafe_component(host) || is_unsafe_component(path) {
            return Err(RemoteError::Refused {
                url: url.into(),
                reason: "the URL has an empty host, a `..` segment, a backslash or a NUL".into(),
            });
        }
        if path.starts_with('/') {
            return Err(RemoteError::Refused {
                url: url.into(),
                reason: "the path after the host is absolute (`//` right after the host)".into(),
            });
        }
        let looks_like_file = path.ends_with(".yaml") || path.ends_with(".yml") || path.ends_with(".json");
        match git_ref {
            None if looks_like_file => {
                Ok(RemoteRef::Http { host: host.to_string(), path: path.to_string(), url: url.to_string() })
            }
            None => Err(unsupported("a git reference needs ?ref=<tag or commit>; kfctl-rs only uses pinned refs")),
            Some(git_ref) => {
                let (repo_part, inner) = match path.split_once("//") {
                    Some((repo, inner)) => (repo.to_string(), inner.to_string()),
                    None => {
                        let mut segs = path.splitn(3, '/');
                        let owner = segs.next().unwrap_or_default();
                        let repo = segs.next().unwrap_or_default();
                        (format!("{owner}/{repo}"), segs.next().unwrap_or_default().to_string())
                    }
                };
                let (owner, repo) =
                    repo_part.split_once('/').ok_or_else(|| unsupported("expected OWNER/REPO after the host"))?;
                let repo = repo.trim_end_matches(".git");
                if owner.is_empty() || repo.is_empty() || repo.contains('/') {
                    return Err(unsupported("expected OWNER/REPO after the host"));
                }
                if inner.starts_with('/') {
                    return Err(RemoteError::Refused {
                        url: url.into(),
                        reason: "the path inside the repository is absolute (`///`)".into(),
                    });
                }
                if [host, owner, repo, git_ref.as_str()].into_iter().any(is_unsafe_component) {
                    return Err(RemoteError::Refused {
                        url: url.into(),
                        reason: "the host, owner, repository or ref has a `..` segment, a backslash or a NUL".into(),
                    });
                }
                Ok(RemoteRef::Git {
                    host: host.to_string(),
                    owner: owner.to_string(),
                    repo: repo.to_string(),
                    git_ref,
                    path: inner.trim_matches('/').to_string(),
                })
            }
        }
    }

    /// The original URL, for messages.
    pub fn url(&self) -> String {
        match self {
            RemoteRef::Http { url, .. } => url.clone(),
            RemoteRef::Git { host, owner, repo, git_ref, path } => {
                format!("https://{host}/{owner}/{repo}//{path}?ref={git_ref}")
            }
        }
    }

    /// The same repository at the same ref, pointing at its root folder (`None` for plain files).
    pub fn repo_root(&self) -> Option<RemoteRef> {
        match self {
            RemoteRef::Http { .. } => None,
            RemoteRef::Git { host, owner, repo, git_ref, .. } => Some(RemoteRef::Git {
                host: host.clone(),
                owner: owner.clone(),
                repo: repo.clone(),
                git_ref: git_ref.clone(),
                path: String::new(),
            }),
        }
    }
}

/// Whether a URL part could climb out of a mirror folder once joined into a path.
fn is_unsafe_component(part: &str) -> bool {
    part.split('/').any(|seg| seg == "..") || part.contains('\\') || part.contains('\0')
}

/// Turns remote references into local paths (a folder for git refs, a file for plain files).
pub trait RemoteResolver: Send + Sync {
    /// The local path of `reference`: a folder for [`RemoteRef::Git`], a file for
    /// [`RemoteRef::Http`].
    fn resolve(&self, reference: &RemoteRef) -> Result<PathBuf, RemoteError>;

    /// What decides where references resolve (e.g. the mirror's root), for the build cache's
    /// key: two resolvers with one identity must resolve each reference to the same path.
    /// `None` (the default): builds that resolve a remote reference are not cached.
    fn cache_identity(&self) -> Option<String> {
        None
    }
}

/// Refuses every remote reference: for builds that must stay local.
#[derive(Debug, Clone, Default)]
pub struct NoRemote;

impl RemoteResolver for NoRemote {
    fn resolve(&self, reference: &RemoteRef) -> Result<PathBuf, RemoteError> {
        Err(RemoteError::Offline { url: reference.url() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(host: &str, owner: &str, repo: &str, git_ref: &str, path: &str) -> RemoteRef {
        RemoteRef::Git {
            host: host.into(),
            owner: owner.into(),
            repo: repo.into(),
            git_ref: git_ref.into(),
            path: path.into(),
        }
    }

    #[test]
    fn parses_git_ref_without_double_slash() {
        let r = RemoteRef::parse("https://github.com/argoproj/argo-workflows/manifests/base/crds/minimal?ref=v3.7.3")
            .unwrap();
        assert_eq!(r, git("github.com", "argoproj", "argo-workflows", "v3.7.3", "manifests/base/crds/minimal"));
    }

    #[test]
    fn parses_git_ref_with_double_slash() {
        let r = RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0").unwrap();
        assert_eq!(r, git("github.com", "kubernetes-sigs", "lws", "v0.7.0", "config/default"));
        assert_eq!(r.url(), "https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0");
    }

    #[test]
    fn parses_plain_file() {
        let url = "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml";
        let r = RemoteRef::parse(url).unwrap();
        let path = "kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml";
        assert_eq!(r, RemoteRef::Http { host: "github.com".into(), path: path.into(), url: url.into() });
    }

    #[test]
    fn refuses_plain_http_and_dotdot() {
        assert!(matches!(RemoteRef::parse("http://x.io/a.yaml"), Err(RemoteError::Refused { .. })));
        assert!(matches!(RemoteRef::parse("https://x.io/../a.yaml"), Err(RemoteError::Refused { .. })));
        assert!(matches!(RemoteRef::parse("https://github.com/o/r/p"), Err(RemoteError::Unsupported { .. })));
    }

    #[test]
    fn refuses_dotdot_in_ref_owner_or_host() {
        for url in [
            "https://github.com/o/r//config?ref=../../../etc",
            "https://github.com/../r/config?ref=v1",
            "https://github.com/o/r//config?ref=a\\b",
            "https://github.com/x/y//../../../../etc?ref=v1",
            "https://github.com/x/y///etc?ref=v1",
            "https://github.com//etc/passwd.yaml",
        ] {
            assert!(matches!(RemoteRef::parse(url), Err(RemoteError::Refused { .. })), "{url}");
        }
    }

    #[test]
    fn repo_root_drops_the_path() {
        let r = RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0").unwrap();
        assert_eq!(r.repo_root(), Some(git("github.com", "kubernetes-sigs", "lws", "v0.7.0", "")));
        assert_eq!(RemoteRef::parse("https://h.io/a/b.yaml").unwrap().repo_root(), None);
    }

    #[test]
    fn no_remote_refuses_everything() {
        let err = NoRemote.resolve(&RemoteRef::parse("https://h.io/a/b.yaml").unwrap()).unwrap_err();
        assert!(matches!(err, RemoteError::Offline { .. }), "{err}");
    }
}
