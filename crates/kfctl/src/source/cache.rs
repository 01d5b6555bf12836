//! The cache folder and its digest file.
//!
//! Layout (under `KFCTL_CACHE_DIR`, else the platform cache folder + `kfctl-rs`):
//!
//! ```text
//! digests.json                      every entry's digest and origin, and every fetched URL's sha256
//! manifests/<version>/              a release pinned by commit, or an import (`local-…`, `unverified-…`)
//! manifests/tag-<tag>/              a release or upstream tag fetched by its tag (not pinned)
//! manifests/commit-<sha>/           a commit no release has (see `super::by_name`)
//! remote/git/<host>/<owner>/<repo>@<ref>/...   a remote repository at a ref (a mirror, see remote.rs)
//! remote/http/<host>/<path>                    a remote plain file
//! imports/<sha256>/                 an archive given as --source, extracted once, keyed by its digest
//! ```
//!
//! so `remote/` is a mirror and [`super::MirrorResolver`] works on it unchanged.
//!
//! Every entry (a tree or a file) has its sha256 recorded in `digests.json` *before* it is
//! moved into place, and is verified the first time a process uses it. A present entry with no
//! record, or whose content no longer matches, is refused with a `security:` error. The sha256
//! of every downloaded URL is recorded too (trust on first use): if the same URL later serves
//! different bytes, that is refused as well. `digests.json` is rewritten whole (temp + rename)
//! under an advisory file lock, so concurrent processes do not lose each other's records.

use super::SourceError;
use super::digest::{sha256_file, tree_digest};
use super::fsutil::place;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The digest file's name inside the cache.
pub(crate) const DIGEST_FILE: &str = "digests.json";

/// Whether a cache entry is a folder or a single file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Tree,
    File,
}

/// One recorded cache entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub(crate) kind: Kind,
    pub(crate) sha256: String,
    /// Where it came from: a URL, a local path, or `bundle <file>`.
    pub(crate) origin: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct DigestFile {
    format: u32,
    /// URL → sha256 of the bytes it served the first time.
    #[serde(default)]
    downloads: BTreeMap<String, String>,
    /// Cache-relative key → record.
    #[serde(default)]
    entries: BTreeMap<String, Record>,
}

/// A cache folder.
#[derive(Debug)]
pub struct Cache {
    root: PathBuf,
    writer: Mutex<()>,
    verified: Mutex<HashSet<String>>,
}

impl Cache {
    /// Open (creating if needed) the cache at `root`.
    pub fn open(root: impl Into<PathBuf>) -> Result<Cache, SourceError> {
        let root = root.into();
        std::fs::create_dir_all(&root).map_err(|e| SourceError::io(&root, e))?;
        Ok(Cache { root, writer: Mutex::new(()), verified: Mutex::new(HashSet::new()) })
    }

    /// `KFCTL_CACHE_DIR`, else `$XDG_CACHE_HOME/kfctl-rs`, else the platform's cache folder.
    pub fn default_root() -> Result<PathBuf, SourceError> {
        root_from_env(|name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The cache's mirror of remote references (`remote/`).
    pub(crate) fn mirror_root(&self) -> PathBuf {
        self.root.join("remote")
    }

    /// Where downloads are written before they are checked.
    pub(crate) fn downloads_dir(&self) -> PathBuf {
        self.root.join(".downloads")
    }

    /// The path of a `/`-separated cache key, refusing keys that could climb out of the cache.
    pub(crate) fn path_of(&self, key: &str) -> Result<PathBuf, SourceError> {
        Ok(self.root.join(super::fsutil::checked_key(key)?))
    }

    /// The record of `key`, if any.
    pub fn record(&self, key: &str) -> Result<Option<Record>, SourceError> {
        Ok(self.load()?.entries.get(key).cloned())
    }

    /// The last parts of the recorded keys under `folder/` (e.g. `manifests` → `v1.11.0`, …), sorted.
    pub fn labels_under(&self, folder: &str) -> Result<Vec<String>, SourceError> {
        let prefix = format!("{folder}/");
        let entries = self.load()?.entries;
        let mut labels: Vec<String> = entries
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix).filter(|rest| !rest.contains('/')).map(str::to_string))
            .collect();
        labels.sort();
        Ok(labels)
    }

    /// The verified path of `key`: `None` when absent, a `security:` error when present but
    /// unrecorded or changed. Verified once per process.
    pub(crate) fn lookup(&self, key: &str) -> Result<Option<PathBuf>, SourceError> {
        let path = self.path_of(key)?;
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(None);
        }
        if self.verified.lock().unwrap_or_else(|p| p.into_inner()).contains(key) {
            return Ok(Some(path));
        }
        let record = self.record(key)?.ok_or_else(|| {
            SourceError::Security(format!(
                "{}: in the cache without a recorded digest; refusing to use it (remove it and pull again)",
                path.display()
            ))
        })?;
        let found = match record.kind {
            Kind::Tree => tree_digest(&path)?,
            Kind::File => sha256_file(&path)?,
        };
        if found != record.sha256 {
            return Err(SourceError::digest_mismatch(path.display(), &record.sha256, &found));
        }
        self.mark_verified(key);
        Ok(Some(path))
    }

    /// Record `staged` (a folder or file) under `key`, then move it into place.
    pub(crate) fn install(
        &self,
        key: &str,
        staged: &Path,
        kind: Kind,
        origin: &str,
    ) -> Result<(PathBuf, String), SourceError> {
        let dest = self.path_of(key)?;
        let sha256 = match kind {
            Kind::Tree => tree_digest(staged)?,
            Kind::File => sha256_file(staged)?,
        };
        let record = Record { kind, sha256: sha256.clone(), origin: origin.to_string() };
        self.update(|file| {
            file.entries.insert(key.to_string(), record);
        })?;
        place(staged, &dest)?;
        self.mark_verified(key);
        Ok((dest, sha256))
    }

    /// Trust on first use for downloads: record the sha256 `url` served, or check it against
    /// the one recorded before.
    pub(crate) fn check_download(&self, url: &str, sha256: &str) -> Result<(), SourceError> {
        let mut mismatch = None;
        self.update(|file| match file.downloads.get(url) {
            Some(recorded) if recorded != sha256 => mismatch = Some(recorded.clone()),
            Some(_) => {}
            None => {
                file.downloads.insert(url.to_string(), sha256.to_string());
            }
        })?;
        match mismatch {
            Some(recorded) => Err(SourceError::digest_mismatch(format!("download {url}"), &recorded, sha256)),
            None => Ok(()),
        }
    }

    fn mark_verified(&self, key: &str) {
        self.verified.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_string());
    }

    fn digest_path(&self) -> PathBuf {
        self.root.join(DIGEST_FILE)
    }

    fn load(&self) -> Result<DigestFile, SourceError> {
        let path = self.digest_path();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                SourceError::invalid(
                    path.display(),
                    format!("unreadable digest file ({e}); remove the cache folder to start over"),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DigestFile { format: 1, ..DigestFile::default() }),
            Err(e) => Err(SourceError::io(&path, e)),
        }
    }

    /// Read-modify-write the digest file under the process mutex and a file lock.
    fn update(&self, change: impl FnOnce(&mut DigestFile)) -> Result<(), SourceError> {
        let _guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let lock_path = self.root.join("digests.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| SourceError::io(&lock_path, e))?;
        lock.lock().map_err(|e| SourceError::io(&lock_path, e))?;
        let mut file = self.load()?;
        file.format = 1;
        change(&mut file);
        let text = serde_json::to_vec_pretty(&file).map_err(|e| SourceError::invalid(DIGEST_FILE, e.to_string()))?;
        let staged = super::fsutil::Staging::file(&self.root, "digests")?;
        std::fs::write(staged.path(), text).map_err(|e| SourceError::io(staged.path(), e))?;
        Ok(staged.place(&self.digest_path())?)
    }
}

/// The cache root chosen from environment variables (`env` returns a non-empty value or None).
fn root_from_env(env: impl Fn(&str) -> Option<PathBuf>) -> Result<PathBuf, SourceError> {
    if let Some(dir) = env("KFCTL_CACHE_DIR") {
        return Ok(dir);
    }
    if let Some(dir) = env("XDG_CACHE_HOME") {
        return Ok(dir.join("kfctl-rs"));
    }
    if cfg!(windows)
        && let Some(dir) = env("LOCALAPPDATA")
    {
        return Ok(dir.join("kfctl-rs"));
    }
    let home = env("HOME").ok_or_else(|| {
        SourceError::invalid(
            "cache folder",
            "neither KFCTL_CACHE_DIR, XDG_CACHE_HOME nor HOME is set; set KFCTL_CACHE_DIR",
        )
    })?;
    if cfg!(target_os = "macos") {
        return Ok(home.join("Library/Caches/kfctl-rs"));
    }
    Ok(home.join(".cache/kfctl-rs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged_tree(cache: &Cache, body: &str) -> PathBuf {
        let dir = cache.root().join(format!(".stage-{}", super::super::fsutil::random_hex(4)));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/a.yaml"), body).unwrap();
        dir
    }

    #[test]
    fn installed_tree_is_found_and_verified() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        let staged = staged_tree(&cache, "1");
        let (path, digest) = cache.install("manifests/v1", &staged, Kind::Tree, "test").unwrap();
        assert_eq!(cache.record("manifests/v1").unwrap().unwrap().sha256, digest);
        let fresh = Cache::open(tmp.path()).unwrap();
        assert_eq!(fresh.lookup("manifests/v1").unwrap(), Some(path));
        assert_eq!(fresh.lookup("manifests/v2").unwrap(), None);
    }

    #[test]
    fn tampered_tree_is_refused_naming_both_digests() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        let staged = staged_tree(&cache, "1");
        let (path, digest) = cache.install("manifests/v1", &staged, Kind::Tree, "test").unwrap();
        std::fs::write(path.join("sub/a.yaml"), "tampered").unwrap();
        let err = Cache::open(tmp.path()).unwrap().lookup("manifests/v1").unwrap_err().to_string();
        assert!(
            err.starts_with("security:") && err.contains(&digest) && err.contains(&path.display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn unrecorded_entry_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("remote/http/h.io")).unwrap();
        std::fs::write(tmp.path().join("remote/http/h.io/x.yaml"), "planted").unwrap();
        let err = Cache::open(tmp.path()).unwrap().lookup("remote/http/h.io/x.yaml").unwrap_err();
        assert!(err.is_security() && err.to_string().contains("without a recorded digest"), "{err}");
    }

    #[test]
    fn download_digest_is_trusted_on_first_use() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        cache.check_download("https://h/a.tar.gz", "aaa").unwrap();
        cache.check_download("https://h/a.tar.gz", "aaa").unwrap();
        let err = cache.check_download("https://h/a.tar.gz", "bbb").unwrap_err().to_string();
        assert!(
            err.starts_with("security: download https://h/a.tar.gz") && err.contains("recorded aaa, found bbb"),
            "{err}"
        );
    }

    #[test]
    fn keys_cannot_climb_out() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        for key in ["../x", "a/../../x", "/etc", "a//b", "a\\b", ""] {
            assert!(cache.path_of(key).unwrap_err().is_security(), "{key}");
        }
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<PathBuf> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| PathBuf::from(v))
    }

    #[test]
    fn cache_root_rule_kfctl_cache_dir_wins() {
        let env = env_of(&[("KFCTL_CACHE_DIR", "/c"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(root_from_env(env).unwrap(), PathBuf::from("/c"));
    }

    #[test]
    fn cache_root_rule_xdg_cache_home_next() {
        let env = env_of(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(root_from_env(env).unwrap(), PathBuf::from("/x/kfctl-rs"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn cache_root_rule_home_dot_cache_last() {
        assert_eq!(root_from_env(env_of(&[("HOME", "/h")])).unwrap(), PathBuf::from("/h/.cache/kfctl-rs"));
        assert!(root_from_env(env_of(&[])).is_err());
    }
}
