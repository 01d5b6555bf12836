//! Release digests remembered per tree, so a warm `--source DIR` run does not hash upstream.
//!
//! Opening a folder names the release it is by its release digest ([`super::releases`]): a
//! sha256 over every file, ~20 MB for a kubeflow/manifests tree, on every run. The memo keeps,
//! per tree (its real path and what the digest covers), the digest and the `stat`
//! signature of every entry it covered ([`Stat`]: size, mtime, ctime, inode, device; a
//! symlink's target). A later run walks the tree — a `readdir` and an `lstat` per entry, no
//! read — and serves the memo only when the same entries have the same signatures; any added,
//! removed, renamed or touched entry recomputes the digest. As in git's index and the render
//! cache, a signature cannot vouch for a file changed within [`RACY_SECONDS`](kfctl_kustomize::build_cache::RACY_SECONDS) of being taken
//! (its next write may keep size and timestamps), so a tree with such a file is not memoized.
//! Signatures are taken before the files are hashed: a file changed while hashing has a newer
//! signature than the one stored, and is hashed again next time.
//!
//! The memo lives in `digests/` under the kfctl-rs cache folder (one small JSON file per tree,
//! at most `MAX_MEMOS`, least recently written first out), is written atomically (a
//! temporary file renamed), is turned off with the render cache (`KFCTL_NO_CACHE=1`) and
//! removed by `kfctl-rs source clean`. A memo that cannot be read or written never fails a
//! run: the digest is computed as if there were none.

use super::SourceError;
use super::digest::{EntryKind, TreeEntry, sha256_bytes};
use kfctl_kustomize::build_cache::Stat;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The folder of the memos in a kfctl-rs cache folder.
pub const FOLDER: &str = "digests";
/// The most trees remembered.
pub(crate) const MAX_MEMOS: usize = 32;
/// Bumped when the memo's meaning changes.
const FORMAT: u32 = 1;

/// What one entry looked like when the digest was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum Signature {
    File(Stat),
    Link(PathBuf),
}

#[derive(Debug, Serialize, Deserialize)]
struct Memo {
    format: u32,
    root: PathBuf,
    skips: String,
    digest: String,
    entries: Vec<(String, Signature)>,
}

/// The memo folder, or `None` when caching is off or there is no cache folder.
pub(crate) fn folder() -> Option<PathBuf> {
    if super::caches_turned_off() {
        return None;
    }
    Some(super::Cache::default_root().ok()?.join(FOLDER))
}

/// The digest of `entries` under `root`: remembered in `memos` when it holds, else `compute`d
/// (and remembered when no entry is racy). `skips` names the filter `entries` went through.
pub(crate) fn digest(
    memos: Option<&Path>,
    root: &Path,
    skips: &str,
    entries: &[TreeEntry],
    compute: impl FnOnce(&[TreeEntry]) -> Result<String, SourceError>,
) -> Result<String, SourceError> {
    let Some(memos) = memos else { return compute(entries) };
    let now = unix_now();
    digest_at(memos, root, skips, entries, now, compute)
}

fn digest_at(
    memos: &Path,
    root: &Path,
    skips: &str,
    entries: &[TreeEntry],
    now: i64,
    compute: impl FnOnce(&[TreeEntry]) -> Result<String, SourceError>,
) -> Result<String, SourceError> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let file =
        memos.join(format!("{}.json", sha256_bytes(format!("{FORMAT}\0{}\0{skips}", root.display()).as_bytes())));
    // the memo is read while the entries are signed
    let (signed, memo) = rayon::join(|| signatures(entries), || read_memo(&file));
    let Some(signed) = signed else { return compute(entries) };
    if let Some(memo) = memo
        && memo.format == FORMAT
        && memo.root == root
        && memo.skips == skips
        && memo.entries == signed
    {
        return Ok(memo.digest);
    }
    let digest = compute(entries)?;
    if !signed.iter().any(|(_, s)| is_racy(s, now)) {
        let memo = Memo { format: FORMAT, root, skips: skips.to_string(), digest: digest.clone(), entries: signed };
        // Best effort: a memo that cannot be written only costs the next run a hash.
        let _ = write_memo(memos, &file, &memo);
    }
    Ok(digest)
}

/// Every entry's signature, or `None` when one cannot be taken (the digest then reports why).
fn signatures(entries: &[TreeEntry]) -> Option<Vec<(String, Signature)>> {
    use rayon::prelude::*;
    entries
        .par_iter()
        .map(|e| {
            let signature = match &e.kind {
                EntryKind::File => Signature::File(Stat::of(&std::fs::symlink_metadata(&e.abs).ok()?)),
                EntryKind::Symlink(target) => Signature::Link(target.clone()),
            };
            Some((e.rel.clone(), signature))
        })
        .collect()
}

fn is_racy(signature: &Signature, now: i64) -> bool {
    match signature {
        Signature::File(stat) => stat.is_recent_at(now),
        Signature::Link(_) => false,
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

fn read_memo(file: &Path) -> Option<Memo> {
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

fn write_memo(memos: &Path, file: &Path, memo: &Memo) -> std::io::Result<()> {
    std::fs::create_dir_all(memos)?;
    let mut staged = tempfile::NamedTempFile::new_in(memos)?;
    serde_json::to_writer(&mut staged, memo)?;
    staged.persist(file).map_err(|e| e.error)?;
    prune(memos, MAX_MEMOS)
}

/// Keep the `keep` most recently written memos.
fn prune(memos: &Path, keep: usize) -> std::io::Result<()> {
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(memos)?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    for (_, path) in files.into_iter().skip(keep) {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Remove every memo (`source clean`); returns whether there were any.
pub fn clean(cache_root: &Path) -> std::io::Result<bool> {
    match std::fs::remove_dir_all(cache_root.join(FOLDER)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
#[path = "digest_memo_tests.rs"]
mod tests;
