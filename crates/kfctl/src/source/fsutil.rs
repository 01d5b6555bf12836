//! File-system helpers shared by extraction, the cache and bundles: tree copies, symlink
//! rules, cache keys.
//!
//! Everything this layer writes goes first to a staging path next to its destination and is
//! moved into place only when complete, with the crate's one implementation of that,
//! [`crate::staging`] (re-exported here as [`Staging`] and [`place`]); its errors become
//! [`SourceError::Io`] naming the path.

use super::SourceError;
use super::digest::{EntryKind, collect_tree};
use std::path::{Component, Path};

pub(crate) use crate::staging::{Staging, place};

/// Copy the files and symlinks of `src` into `dest` (which must not exist yet). Symlinks are
/// copied as links and must stay inside the tree; `.git` is skipped.
pub(crate) fn copy_tree(src: &Path, dest: &Path) -> Result<(), SourceError> {
    std::fs::create_dir(dest).map_err(|e| SourceError::io(dest, e))?;
    for entry in collect_tree(src)? {
        let target = dest.join(&entry.rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SourceError::io(parent, e))?;
        }
        match &entry.kind {
            EntryKind::File => {
                std::fs::copy(&entry.abs, &target).map_err(|e| SourceError::io(&entry.abs, e))?;
            }
            EntryKind::Symlink(link) => {
                let rel_parent = Path::new(&entry.rel).parent().unwrap_or(Path::new(""));
                if !symlink_stays_inside(rel_parent, link) {
                    return Err(SourceError::Security(format!(
                        "{}: symlink to {} points outside the tree",
                        entry.abs.display(),
                        link.display()
                    )));
                }
                make_symlink(link, &target)?;
            }
        }
    }
    Ok(())
}

/// Whether a relative symlink target, read from the folder `link_parent` (relative to the
/// tree's root), stays inside the root lexically. Absolute targets and drive prefixes never do.
pub(crate) fn symlink_stays_inside(link_parent: &Path, target: &Path) -> bool {
    let mut depth: i64 = 0;
    for component in link_parent.components().chain(target.components()) {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

#[cfg(unix)]
pub(crate) fn make_symlink(target: &Path, link: &Path) -> Result<(), SourceError> {
    std::os::unix::fs::symlink(target, link).map_err(|e| SourceError::io(link, e))
}

#[cfg(not(unix))]
pub(crate) fn make_symlink(_target: &Path, link: &Path) -> Result<(), SourceError> {
    Err(SourceError::invalid(link.display(), "symlinks are only supported on unix"))
}

/// A `/`-separated relative key (cache entry, bundle part) that cannot climb out of its root.
pub(crate) fn checked_key(key: &str) -> Result<&str, SourceError> {
    let bad = key.is_empty()
        || key.starts_with('/')
        || key.contains('\\')
        || key.contains('\0')
        || key.split('/').any(|seg| seg.is_empty() || seg == "." || seg == "..");
    if bad {
        return Err(SourceError::Security(format!("key `{key}` is not a plain relative path")));
    }
    Ok(key)
}

/// `n` random bytes as hex, for unique names in tests.
#[cfg(test)]
pub(crate) fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    if getrandom::fill(&mut buf).is_err() {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        return format!("{:x}{:x}", std::process::id(), nanos);
    }
    hex::encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlink_inside_rules() {
        assert!(symlink_stays_inside(Path::new("a/b"), Path::new("../c")));
        assert!(symlink_stays_inside(Path::new("a"), Path::new("./x/../y")));
        assert!(!symlink_stays_inside(Path::new("a"), Path::new("../../x")));
        assert!(!symlink_stays_inside(Path::new(""), Path::new("..")));
        assert!(!symlink_stays_inside(Path::new("a"), Path::new("/etc/passwd")));
    }

    #[cfg(unix)]
    #[test]
    fn copy_tree_refuses_escaping_symlinks() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a"), "1").unwrap();
        std::os::unix::fs::symlink("../outside", src.path().join("l")).unwrap();
        let out = tempfile::tempdir().unwrap();
        let err = copy_tree(src.path(), &out.path().join("copy")).unwrap_err();
        assert!(err.to_string().starts_with("security:"), "{err}");
    }
}
