//! File-system helpers shared by extraction, the cache and bundles.
//!
//! Everything this layer writes goes first to a staging path next to its destination (same
//! parent, so the final `rename` is atomic on one file system) and is moved into place only
//! when complete. A [`Staging`] guard removes its path when dropped unless it was placed, so an
//! error or a panic leaves no half-written tree behind.

use super::SourceError;
use super::digest::{EntryKind, collect_tree};
use std::path::{Component, Path, PathBuf};

/// A temporary file or folder next to its destination, removed on drop unless placed.
#[derive(Debug)]
pub(crate) struct Staging {
    path: PathBuf,
    placed: bool,
}

impl Staging {
    /// A new, empty staging folder inside `parent` (created if needed).
    pub(crate) fn dir(parent: &Path, label: &str) -> Result<Staging, SourceError> {
        let path = Self::fresh_path(parent, label)?;
        std::fs::create_dir(&path).map_err(|e| SourceError::io(&path, e))?;
        Ok(Staging { path, placed: false })
    }

    /// A staging path for a file inside `parent`; the caller creates the file.
    pub(crate) fn file(parent: &Path, label: &str) -> Result<Staging, SourceError> {
        Ok(Staging { path: Self::fresh_path(parent, label)?, placed: false })
    }

    fn fresh_path(parent: &Path, label: &str) -> Result<PathBuf, SourceError> {
        std::fs::create_dir_all(parent).map_err(|e| SourceError::io(parent, e))?;
        let safe: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' }).collect();
        Ok(parent.join(format!(".kfctl-tmp-{safe}-{}", random_hex(6))))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Move the whole staging path to `dest`, replacing what was there.
    pub(crate) fn place(mut self, dest: &Path) -> Result<(), SourceError> {
        place(&self.path, dest)?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.placed {
            remove_any(&self.path);
        }
    }
}

/// Rename `src` to `dest`, replacing an existing `dest` (file or folder) as atomically as the
/// platform allows: the old one is moved aside first and restored if the rename fails.
pub(crate) fn place(src: &Path, dest: &Path) -> Result<(), SourceError> {
    let parent = dest.parent().ok_or_else(|| SourceError::invalid(dest.display(), "has no parent folder"))?;
    std::fs::create_dir_all(parent).map_err(|e| SourceError::io(parent, e))?;
    if std::fs::symlink_metadata(dest).is_err() {
        return std::fs::rename(src, dest).map_err(|e| SourceError::io(dest, e));
    }
    let aside = parent.join(format!(".kfctl-old-{}", random_hex(6)));
    std::fs::rename(dest, &aside).map_err(|e| SourceError::io(dest, e))?;
    if let Err(err) = std::fs::rename(src, dest) {
        let _ = std::fs::rename(&aside, dest);
        return Err(SourceError::io(dest, err));
    }
    remove_any(&aside);
    Ok(())
}

/// Remove a file, symlink or folder, ignoring errors (best-effort cleanup).
pub(crate) fn remove_any(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

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

/// `n` random bytes as hex, for unique temporary names.
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

    #[test]
    fn staging_is_removed_unless_placed() {
        let parent = tempfile::tempdir().unwrap();
        let kept = {
            let staging = Staging::dir(parent.path(), "x").unwrap();
            std::fs::write(staging.path().join("f"), "1").unwrap();
            staging.path().to_path_buf()
        };
        assert!(!kept.exists());
        let staging = Staging::dir(parent.path(), "y").unwrap();
        std::fs::write(staging.path().join("f"), "2").unwrap();
        staging.place(&parent.path().join("dest")).unwrap();
        assert_eq!(std::fs::read_to_string(parent.path().join("dest/f")).unwrap(), "2");
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1);
    }

    #[test]
    fn place_replaces_an_existing_folder() {
        let parent = tempfile::tempdir().unwrap();
        let dest = parent.path().join("dest");
        std::fs::create_dir(&dest).unwrap();
        std::fs::write(dest.join("old"), "o").unwrap();
        let staging = Staging::dir(parent.path(), "n").unwrap();
        std::fs::write(staging.path().join("new"), "n").unwrap();
        staging.place(&dest).unwrap();
        assert!(dest.join("new").exists() && !dest.join("old").exists());
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1);
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
