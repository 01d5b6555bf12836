//! The mirror layout: where a remote reference lives inside an offline mirror, a cache or a
//! bundle (they share it), and [`MirrorResolver`], which reads a mirror and never touches the
//! network.
//!
//! ```text
//! git/<host>/<owner>/<repo>@<ref>/<path inside the repo>/...
//! http/<host>/<url path>
//! ```

use kfctl_kustomize::remote::{RemoteError, RemoteRef, RemoteResolver};
use std::path::{Path, PathBuf};

/// A remote reference's place in the mirror layout.
pub trait MirrorLayout {
    /// The unit a cache or bundle stores: `git/<host>/<owner>/<repo>@<ref>` (the whole repository
    /// at that ref) or `http/<host>/<path>` (the file), relative to the mirror root, `/`-separated.
    fn mirror_key(&self) -> String;
    /// Where this reference lives inside a mirror (or a cache, which has the same layout).
    fn mirror_path(&self, mirror: &Path) -> PathBuf;
}

impl MirrorLayout for RemoteRef {
    fn mirror_key(&self) -> String {
        match self {
            RemoteRef::Http { host, path, .. } => format!("http/{host}/{path}"),
            RemoteRef::Git { host, owner, repo, git_ref, .. } => format!("git/{host}/{owner}/{repo}@{git_ref}"),
        }
    }

    fn mirror_path(&self, mirror: &Path) -> PathBuf {
        match self {
            RemoteRef::Http { host, path, .. } => mirror.join("http").join(host).join(path),
            RemoteRef::Git { host, owner, repo, git_ref, path } => {
                let base = mirror.join("git").join(host).join(owner).join(format!("{repo}@{git_ref}"));
                if path.is_empty() { base } else { base.join(path) }
            }
        }
    }
}

/// Resolves through an offline mirror and never touches the network.
#[derive(Debug, Clone)]
pub struct MirrorResolver {
    /// The mirror's root folder.
    pub root: PathBuf,
}

impl RemoteResolver for MirrorResolver {
    fn resolve(&self, reference: &RemoteRef) -> Result<PathBuf, RemoteError> {
        let path = reference.mirror_path(&self.root);
        if !stays_inside(&path, &self.root) {
            let reason = format!("it would resolve to {}, outside the mirror {}", path.display(), self.root.display());
            return Err(RemoteError::Refused { url: reference.url(), reason });
        }
        if path.exists() { Ok(path) } else { Err(RemoteError::NotInMirror { url: reference.url(), path }) }
    }

    fn cache_identity(&self) -> Option<String> {
        Some(format!("mirror {}", self.root.display()))
    }
}

/// Whether `path` (a join onto `root`) stays lexically inside `root`: no root, prefix or `..`
/// component after it. [`RemoteRef::parse`] refuses such URLs already; this is the second lock.
pub(crate) fn stays_inside(path: &Path, root: &Path) -> bool {
    use std::path::Component;
    path.strip_prefix(root)
        .is_ok_and(|rest| rest.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_refs_and_files_have_their_places() {
        let r = RemoteRef::parse("https://github.com/argoproj/argo-workflows/manifests/base/crds/minimal?ref=v3.7.3")
            .unwrap();
        assert_eq!(
            r.mirror_path(Path::new("/m")),
            PathBuf::from("/m/git/github.com/argoproj/argo-workflows@v3.7.3/manifests/base/crds/minimal")
        );
        let r = RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0").unwrap();
        assert_eq!(
            r.mirror_path(Path::new("/m")),
            PathBuf::from("/m/git/github.com/kubernetes-sigs/lws@v0.7.0/config/default")
        );
        let r = RemoteRef::parse("https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml")
            .unwrap();
        assert_eq!(
            r.mirror_path(Path::new("/m")),
            PathBuf::from("/m/http/github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml")
        );
    }

    #[test]
    fn repo_root_and_mirror_key() {
        let r = RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0").unwrap();
        let root = r.repo_root().unwrap();
        assert_eq!(root.mirror_path(Path::new("/m")), PathBuf::from("/m/git/github.com/kubernetes-sigs/lws@v0.7.0"));
        assert_eq!(r.mirror_key(), "git/github.com/kubernetes-sigs/lws@v0.7.0");
        let f = RemoteRef::parse("https://h.io/a/b.yaml").unwrap();
        assert_eq!((f.mirror_key(), f.repo_root()), ("http/h.io/a/b.yaml".to_string(), None));
    }

    #[test]
    fn a_reference_outside_the_mirror_is_refused() {
        assert!(stays_inside(Path::new("/m/http/h/a.yaml"), Path::new("/m")));
        assert!(!stays_inside(Path::new("/etc/passwd.yaml"), Path::new("/m")));
        assert!(!stays_inside(Path::new("/m/git/../../etc"), Path::new("/m")));
        let sneaky = RemoteRef::Http { host: "h".into(), path: "/etc/passwd.yaml".into(), url: "u".into() };
        let err = MirrorResolver { root: PathBuf::from("/m") }.resolve(&sneaky).unwrap_err();
        assert!(matches!(err, RemoteError::Refused { .. }) && err.to_string().starts_with("security:"), "{err}");
    }

    #[test]
    fn mirror_miss_names_url_and_path() {
        let m = MirrorResolver { root: PathBuf::from("/nonexistent-mirror") };
        let err = m.resolve(&RemoteRef::parse("https://h.io/a/b.yaml").unwrap()).unwrap_err().to_string();
        assert!(
            err.contains("https://h.io/a/b.yaml") && err.contains("/nonexistent-mirror/http/h.io/a/b.yaml"),
            "{err}"
        );
    }
}
