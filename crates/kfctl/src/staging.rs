//! Stage, then rename: the one way kfctl-rs puts a file or folder in place.
//!
//! Everything written whole — extracted archives, cache entries, bundles, downloads, chart
//! exports, `template --output-dir` — goes first to a staging path that `tempfile` makes in the
//! destination's own folder (same parent, so the final `rename` is atomic on one file system)
//! and is moved into place only when complete. A [`Staging`] guard removes its path when
//! dropped unless it was placed, so an error or a panic leaves no half-written tree behind.
//! Staging paths get the permissions a plain `create_dir` or `File::create` would give (the
//! umask applies), not `tempfile`'s owner-only default.

use std::path::{Path, PathBuf};

/// A file-system step that failed: the path it failed on, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct StageError {
    /// The path it failed on.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl StageError {
    /// A `map_err` adapter for an I/O error at `path`.
    pub(crate) fn at(path: &Path) -> impl FnOnce(std::io::Error) -> StageError + '_ {
        move |e| StageError { path: path.to_path_buf(), message: e.to_string() }
    }
}

#[derive(Debug)]
enum Guard {
    Dir(tempfile::TempDir),
    File(tempfile::TempPath),
}

/// A temporary file or folder next to its destination, removed on drop unless placed.
#[derive(Debug)]
pub struct Staging {
    guard: Guard,
}

impl Staging {
    /// A new, empty staging folder inside `parent` (created if needed).
    pub fn dir(parent: &Path, label: &str) -> Result<Staging, StageError> {
        let dir = create(parent, label, 0o777, |b| b.tempdir_in(parent))?;
        Ok(Staging { guard: Guard::Dir(dir) })
    }

    /// A new, empty staging file inside `parent` (created if needed), for the caller to fill.
    pub(crate) fn file(parent: &Path, label: &str) -> Result<Staging, StageError> {
        let file = create(parent, label, 0o666, |b| b.tempfile_in(parent))?;
        Ok(Staging { guard: Guard::File(file.into_temp_path()) })
    }

    /// The staged file or folder's path.
    pub fn path(&self) -> &Path {
        match &self.guard {
            Guard::Dir(dir) => dir.path(),
            Guard::File(file) => file,
        }
    }

    /// Move the whole staging path to `dest`, replacing what was there (see `place`).
    pub fn place(mut self, dest: &Path) -> Result<(), StageError> {
        place(self.path(), dest)?;
        match &mut self.guard {
            Guard::Dir(dir) => dir.disable_cleanup(true),
            Guard::File(file) => file.disable_cleanup(true),
        }
        Ok(())
    }
}

impl Staging {
    /// Move a staging folder's entries into `dest`, an existing empty folder that cannot be
    /// replaced by a rename (a mount point, or the folder a symlink names; stage inside it
    /// with [`Staging::dir`]`(dest, …)` so every move stays on its file system). If a move
    /// fails, the entries already moved are removed again: `dest` is left as empty as it was.
    pub fn spill_into(self, dest: &Path) -> Result<(), StageError> {
        let entries = std::fs::read_dir(self.path()).map_err(StageError::at(self.path()))?;
        let mut moved = Vec::new();
        for entry in entries {
            let entry = entry.map_err(StageError::at(self.path()))?;
            let target = dest.join(entry.file_name());
            if let Err(e) = std::fs::rename(entry.path(), &target) {
                moved.iter().for_each(|m: &PathBuf| remove_any(m));
                return Err(StageError::at(&target)(e));
            }
            moved.push(target);
        }
        Ok(())
    }
}

/// Whether `path` is an existing folder with nothing in it (following a symlink).
pub fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
}

/// Create `parent`, then a `.kfctl-tmp-<label>-XXXXXX` entry in it with `make`, asking for
/// `mode` (the umask still applies, as for `create_dir` and `File::create`).
fn create<T>(
    parent: &Path,
    label: &str,
    mode: u32,
    make: impl FnOnce(&tempfile::Builder) -> std::io::Result<T>,
) -> Result<T, StageError> {
    std::fs::create_dir_all(parent).map_err(StageError::at(parent))?;
    let safe: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' }).collect();
    let prefix = format!(".kfctl-tmp-{safe}-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(mode));
    #[cfg(not(unix))]
    let _ = mode;
    make(&builder).map_err(StageError::at(parent))
}

/// Rename `src` to `dest`, replacing an existing `dest` (file or folder) as atomically as the
/// platform allows: the old one is moved aside first (into a `tempfile` folder beside it,
/// removed afterwards) and restored if the rename fails.
pub(crate) fn place(src: &Path, dest: &Path) -> Result<(), StageError> {
    let parent = parent_of(dest)
        .ok_or_else(|| StageError { path: dest.to_path_buf(), message: "has no parent folder".into() })?;
    std::fs::create_dir_all(parent).map_err(StageError::at(parent))?;
    if std::fs::symlink_metadata(dest).is_err() {
        return std::fs::rename(src, dest).map_err(StageError::at(dest));
    }
    let mut aside_dir = create(parent, "old", 0o700, |b| b.tempdir_in(parent))?;
    let aside = aside_dir.path().join("old");
    std::fs::rename(dest, &aside).map_err(StageError::at(dest))?;
    if let Err(err) = std::fs::rename(src, dest) {
        if std::fs::rename(&aside, dest).is_err() {
            aside_dir.disable_cleanup(true); // never delete the old one while it is not back
        }
        return Err(StageError::at(dest)(err));
    }
    remove_entries(&aside);
    Ok(())
}

/// Remove what the folder `dir` holds, its entries on all cores (an earlier chart export is a
/// few hundred files in a few dozen folders); best effort, as the folder's removal after it.
fn remove_entries(dir: &Path) {
    use rayon::prelude::*;
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.par_iter().for_each(|entry| match std::fs::symlink_metadata(entry) {
        Ok(meta) if meta.is_dir() => {
            remove_entries(entry);
            let _ = std::fs::remove_dir(entry);
        }
        _ => {
            let _ = std::fs::remove_file(entry);
        }
    });
}

/// The folder `path` sits in, `.` for a bare name; `None` for a root or an empty path.
pub fn parent_of(path: &Path) -> Option<&Path> {
    path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p })
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_staged_file_is_removed_unless_placed_and_replaces_its_destination() {
        let parent = tempfile::tempdir().unwrap();
        let dropped = Staging::file(parent.path(), "f").unwrap().path().to_path_buf();
        assert!(!dropped.exists());
        let dest = parent.path().join("dest.json");
        std::fs::write(&dest, "old").unwrap();
        let staged = Staging::file(parent.path(), "f").unwrap();
        std::fs::write(staged.path(), "new").unwrap();
        staged.place(&dest).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn spilling_fills_an_empty_folder_through_a_symlink_and_leaves_the_link() {
        let parent = tempfile::tempdir().unwrap();
        let real = parent.path().join("mnt");
        std::fs::create_dir(&real).unwrap();
        let link = parent.path().join("out");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(is_empty_dir(&link) && !is_empty_dir(&parent.path().join("missing")));
        let staging = Staging::dir(&link, "output").unwrap();
        std::fs::write(staging.path().join("a.yaml"), "a").unwrap();
        std::fs::write(staging.path().join("b.yaml"), "b").unwrap();
        staging.spill_into(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        let mut names: Vec<String> =
            std::fs::read_dir(&real).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["a.yaml", "b.yaml"], "the staging folder is gone, the files are in place");
    }

    #[cfg(unix)]
    #[test]
    fn staging_paths_get_the_usual_permissions_not_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let plain = parent.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(parent.path().join("plain.txt"), "").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = Staging::dir(parent.path(), "d").unwrap();
        let file = Staging::file(parent.path(), "f").unwrap();
        assert_eq!(mode(dir.path()), mode(&plain));
        assert_eq!(mode(file.path()), mode(&parent.path().join("plain.txt")));
    }
}
