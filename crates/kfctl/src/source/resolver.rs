//! [`CacheResolver`]: remote references resolved through the cache, fetched on demand.
//!
//! A git reference is fetched as its GitHub archive
//! (`https://github.com/<owner>/<repo>/archive/<ref>.tar.gz`), extracted safely with its top
//! folder stripped into `remote/git/<host>/<owner>/<repo>@<ref>/`; a plain file is downloaded
//! to `remote/http/<host>/<path>`. Both are recorded in the cache's digest file before they
//! are moved into place and verified on first use in each process. Offline (no fetcher), a
//! missing reference is an error naming it and the command that would fetch it.
//!
//! Downloads are serialized: the engine may resolve in parallel, but each unit is fetched
//! once.

use super::SourceError;
use super::cache::{Cache, Kind};
use super::extract::{ExtractLimits, extract_staged, single_top_folder};
use super::fetch::Fetcher;
use super::fsutil::Staging;
use super::mirror::MirrorLayout;
use kfctl_kustomize::remote::{RemoteError, RemoteRef, RemoteResolver};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A remote unit (a repository at a ref, or a file) present and verified in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ensured {
    /// The cache key, e.g. `remote/git/github.com/kubernetes-sigs/lws@v0.7.0`.
    pub key: String,
    /// The repository root or the file.
    pub path: PathBuf,
    pub sha256: String,
    /// Whether it was downloaded now (false: it was already cached).
    pub fetched: bool,
}

/// Resolves remote references through a cache, fetching what is missing unless offline.
pub(crate) struct CacheResolver {
    cache: Arc<Cache>,
    fetcher: Option<Arc<Fetcher>>,
    limits: ExtractLimits,
    fetching: Mutex<()>,
    fetched: Mutex<Vec<String>>,
}

impl CacheResolver {
    /// `fetcher: None` means offline: only what is already cached resolves.
    pub(crate) fn new(cache: Arc<Cache>, fetcher: Option<Arc<Fetcher>>) -> CacheResolver {
        CacheResolver {
            cache,
            fetcher,
            limits: ExtractLimits::default(),
            fetching: Mutex::new(()),
            fetched: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn with_limits(mut self, limits: ExtractLimits) -> CacheResolver {
        self.limits = limits;
        self
    }

    /// The keys this resolver downloaded (as opposed to found cached), in fetch order.
    pub(crate) fn fetched_keys(&self) -> Vec<String> {
        self.fetched.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Make sure the unit holding `reference` is in the cache, fetching it if needed.
    pub(crate) fn ensure(&self, reference: &RemoteRef) -> Result<Ensured, SourceError> {
        let key = format!("remote/{}", reference.mirror_key());
        if let Some(found) = self.cached(&key)? {
            return Ok(found);
        }
        let Some(fetcher) = &self.fetcher else {
            return Err(SourceError::Remote(RemoteError::Offline { url: reference.url() }));
        };
        let _one_at_a_time = self.fetching.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = self.cached(&key)? {
            return Ok(found);
        }
        let (path, sha256) = match reference {
            RemoteRef::Git { host, owner, repo, git_ref, .. } => {
                if host != "github.com" {
                    return Err(SourceError::Remote(RemoteError::Unsupported {
                        url: reference.url(),
                        reason: "only github.com repositories can be fetched; use --remote-mirror for other hosts"
                            .into(),
                    }));
                }
                let url = format!("https://github.com/{owner}/{repo}/archive/{git_ref}.tar.gz");
                self.fetch_tree(fetcher, &key, &url)?
            }
            RemoteRef::Http { url, .. } => self.fetch_file(fetcher, &key, url)?,
        };
        self.fetched.lock().unwrap_or_else(|p| p.into_inner()).push(key.clone());
        Ok(Ensured { key, path, sha256, fetched: true })
    }

    fn cached(&self, key: &str) -> Result<Option<Ensured>, SourceError> {
        let Some(path) = self.cache.lookup(key)? else { return Ok(None) };
        let sha256 = self.cache.record(key)?.map(|r| r.sha256).unwrap_or_default();
        Ok(Some(Ensured { key: key.to_string(), path, sha256, fetched: false }))
    }

    /// Download a GitHub archive, check it, extract it and install its top folder as `key`.
    fn fetch_tree(&self, fetcher: &Fetcher, key: &str, url: &str) -> Result<(PathBuf, String), SourceError> {
        let archive = download_checked(&self.cache, fetcher, url)?;
        let dest = self.cache.path_of(key)?;
        let parent = dest.parent().unwrap_or(self.cache.root());
        let (staging, _) = extract_staged(archive.path(), parent, &self.limits)?;
        let top = single_top_folder(staging.path(), archive.path())?;
        self.cache.install(key, &top, Kind::Tree, url)
    }

    /// Download a plain file, check it and install it as `key`.
    fn fetch_file(&self, fetcher: &Fetcher, key: &str, url: &str) -> Result<(PathBuf, String), SourceError> {
        let file = download_checked(&self.cache, fetcher, url)?;
        self.cache.install(key, file.path(), Kind::File, url)
    }
}

/// Download `url` into the cache's download folder and check its sha256 against the one
/// recorded the first time (trust on first use). The returned staging file is removed on drop.
pub(crate) fn download_checked(cache: &Cache, fetcher: &Fetcher, url: &str) -> Result<Staging, SourceError> {
    let staged = Staging::file(&cache.downloads_dir(), "download")?;
    let done = fetcher.download(url, staged.path())?;
    cache.check_download(url, &done.sha256)?;
    Ok(staged)
}

impl RemoteResolver for CacheResolver {
    fn resolve(&self, reference: &RemoteRef) -> Result<PathBuf, RemoteError> {
        let url = reference.url();
        self.ensure(reference).map_err(|e| e.into_remote(&url))?;
        let path = reference.mirror_path(&self.cache.mirror_root());
        if std::fs::symlink_metadata(&path).is_ok() { Ok(path) } else { Err(RemoteError::NotInMirror { url, path }) }
    }

    /// Where references resolve: the cache's mirror. (Whether a fetch is allowed does not
    /// change where a reference resolves, only whether a missing one can be.)
    fn cache_identity(&self) -> Option<String> {
        Some(format!("cache {}", self.cache.mirror_root().display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_miss_names_the_reference_and_the_pull_command() {
        let tmp = tempfile::tempdir().unwrap();
        let resolver = CacheResolver::new(Arc::new(Cache::open(tmp.path()).unwrap()), None);
        let reference = RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0").unwrap();
        let err = resolver.resolve(&reference).unwrap_err().to_string();
        assert!(err.contains("kubernetes-sigs/lws") && err.contains("kfctl-rs source pull"), "{err}");
    }

    #[test]
    fn cached_unit_resolves_offline_to_the_mirror_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Arc::new(Cache::open(tmp.path()).unwrap());
        let staged = tmp.path().join("staged");
        std::fs::create_dir_all(staged.join("config/default")).unwrap();
        std::fs::write(staged.join("config/default/kustomization.yaml"), "resources: []\n").unwrap();
        cache.install("remote/git/github.com/kubernetes-sigs/lws@v0.7.0", &staged, Kind::Tree, "test").unwrap();
        let resolver = CacheResolver::new(cache, None);
        let reference = RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0").unwrap();
        let path = resolver.resolve(&reference).unwrap();
        assert_eq!(path, tmp.path().join("remote/git/github.com/kubernetes-sigs/lws@v0.7.0/config/default"));
        let missing = RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/nope?ref=v0.7.0").unwrap();
        assert!(matches!(resolver.resolve(&missing), Err(RemoteError::NotInMirror { .. })));
    }
}
