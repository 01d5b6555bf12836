//! sha256 of files and of whole trees.
//!
//! A tree digest is one sha256 over the tree's entries sorted by relative path (`/`-separated,
//! byte order). Each regular file contributes `file\0<path>\0<size as 8 little-endian bytes>`
//! then its bytes; each symlink `link\0<path>\0<target>\0`. Folders contribute nothing by
//! themselves (an empty folder changes no build), and `.git` entries are skipped at every level
//! (version-control metadata is not content). Symlinks are recorded, never followed, so a
//! digest cannot be steered outside the tree. Other file types (fifos, sockets, devices) are an
//! error: nothing the cache or a bundle writes has them.

use super::SourceError;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a tree entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    /// A symlink and its target as stored (not resolved).
    Symlink(PathBuf),
}

/// One entry of a tree: its `/`-separated path relative to the root, where it is, what it is.
#[derive(Debug, Clone)]
pub(crate) struct TreeEntry {
    pub rel: String,
    pub abs: PathBuf,
    pub kind: EntryKind,
}

/// The lowercase hex sha256 of some bytes.
pub(crate) fn sha256_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The lowercase hex sha256 of a file's contents, streamed; a file past
/// [`crate::input::MAX_DOWNLOAD_BYTES`] (the most an archive or download may be) is refused.
pub(crate) fn sha256_file(path: &Path) -> Result<String, SourceError> {
    let limit = crate::input::MAX_DOWNLOAD_BYTES;
    let file = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    let mut hasher = Sha256::new();
    let read = copy_into(&mut file.take(limit + 1), &mut hasher).map_err(|e| SourceError::io(path, e))?;
    if read > limit {
        let message = format!("larger than the {} MiB limit of an archive or download", limit / (1024 * 1024));
        return Err(SourceError::invalid(path.display(), message));
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The digest of every file and symlink under `root`.
pub fn tree_digest(root: &Path) -> Result<String, SourceError> {
    digest_entries(&collect_tree(root)?)
}

/// The digest of a list of entries (sorted by the caller or not: they are sorted here).
pub(crate) fn digest_entries(entries: &[TreeEntry]) -> Result<String, SourceError> {
    let mut sorted: Vec<&TreeEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.rel.as_bytes().cmp(b.rel.as_bytes()));
    let mut hasher = Sha256::new();
    for entry in sorted {
        match &entry.kind {
            EntryKind::File => {
                let mut file = std::fs::File::open(&entry.abs).map_err(|e| SourceError::io(&entry.abs, e))?;
                let size = file.metadata().map_err(|e| SourceError::io(&entry.abs, e))?.len();
                hasher.update(b"file\0");
                hasher.update(entry.rel.as_bytes());
                hasher.update(b"\0");
                hasher.update(size.to_le_bytes());
                let copied = copy_into(&mut file, &mut hasher).map_err(|e| SourceError::io(&entry.abs, e))?;
                if copied != size {
                    return Err(SourceError::invalid(
                        entry.abs.display(),
                        "the file changed while it was being hashed",
                    ));
                }
            }
            EntryKind::Symlink(target) => {
                hasher.update(b"link\0");
                hasher.update(entry.rel.as_bytes());
                hasher.update(b"\0");
                hasher.update(target.to_string_lossy().as_bytes());
                hasher.update(b"\0");
            }
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Every regular file and symlink under `root` (not following symlinks), sorted by path.
/// A `root` that is itself a file yields one entry with an empty relative path.
pub(crate) fn collect_tree(root: &Path) -> Result<Vec<TreeEntry>, SourceError> {
    let mut out = Vec::new();
    let meta = std::fs::symlink_metadata(root).map_err(|e| SourceError::io(root, e))?;
    if meta.is_file() {
        out.push(TreeEntry { rel: String::new(), abs: root.to_path_buf(), kind: EntryKind::File });
        return Ok(out);
    }
    collect_into(root, "", &mut out)?;
    out.sort_by(|a, b| a.rel.as_bytes().cmp(b.rel.as_bytes()));
    Ok(out)
}

/// The entries under `dir` into `out`; its subfolders are walked on all cores (a release tree
/// is thousands of files, and a warm render walks it to know which release it is).
fn collect_into(dir: &Path, prefix: &str, out: &mut Vec<TreeEntry>) -> Result<(), SourceError> {
    use rayon::prelude::*;
    let reader = std::fs::read_dir(dir).map_err(|e| SourceError::io(dir, e))?;
    let mut folders = Vec::new();
    for item in reader {
        let item = item.map_err(|e| SourceError::io(dir, e))?;
        let name = item.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let abs = item.path();
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let file_type = item.file_type().map_err(|e| SourceError::io(&abs, e))?;
        if file_type.is_dir() {
            folders.push((abs, rel));
        } else if file_type.is_file() {
            out.push(TreeEntry { rel, abs, kind: EntryKind::File });
        } else if file_type.is_symlink() {
            let target = std::fs::read_link(&abs).map_err(|e| SourceError::io(&abs, e))?;
            out.push(TreeEntry { rel, abs, kind: EntryKind::Symlink(target) });
        } else {
            return Err(SourceError::invalid(abs.display(), "not a regular file, folder or symlink"));
        }
    }
    let nested: Vec<Result<Vec<TreeEntry>, SourceError>> = folders
        .par_iter()
        .map(|(abs, rel)| {
            let mut entries = Vec::new();
            collect_into(abs, rel, &mut entries).map(|()| entries)
        })
        .collect();
    for entries in nested {
        out.extend(entries?);
    }
    Ok(())
}

fn copy_into(reader: &mut impl Read, hasher: &mut Sha256) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(total);
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, body) in files {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, body).unwrap();
        }
        dir
    }

    #[test]
    fn sha256_of_known_bytes() {
        assert_eq!(sha256_bytes(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn same_content_same_digest_regardless_of_creation_order() {
        let a = tree(&[("x/a.yaml", "1"), ("b.yaml", "2")]);
        let b = tree(&[("b.yaml", "2"), ("x/a.yaml", "1")]);
        assert_eq!(tree_digest(a.path()).unwrap(), tree_digest(b.path()).unwrap());
    }

    #[test]
    fn content_change_changes_digest() {
        let a = tree(&[("a.yaml", "1")]);
        let before = tree_digest(a.path()).unwrap();
        fs::write(a.path().join("a.yaml"), "2").unwrap();
        assert_ne!(before, tree_digest(a.path()).unwrap());
    }

    #[test]
    fn rename_changes_digest_and_boundaries_are_unambiguous() {
        let a = tree(&[("ab", "c")]);
        let b = tree(&[("a", "bc")]);
        assert_ne!(tree_digest(a.path()).unwrap(), tree_digest(b.path()).unwrap());
    }

    #[test]
    fn empty_folders_and_git_metadata_do_not_count() {
        let a = tree(&[("a.yaml", "1")]);
        let b = tree(&[("a.yaml", "1"), (".git/HEAD", "ref"), ("sub/.git", "x")]);
        fs::create_dir_all(b.path().join("empty")).unwrap();
        assert_eq!(tree_digest(a.path()).unwrap(), tree_digest(b.path()).unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_recorded_not_followed() {
        let a = tree(&[("a.yaml", "1")]);
        std::os::unix::fs::symlink("a.yaml", a.path().join("l")).unwrap();
        let entries = collect_tree(a.path()).unwrap();
        assert_eq!(entries[1].kind, EntryKind::Symlink(PathBuf::from("a.yaml")));
        let before = tree_digest(a.path()).unwrap();
        fs::remove_file(a.path().join("l")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", a.path().join("l")).unwrap();
        assert_ne!(before, tree_digest(a.path()).unwrap());
    }
}
