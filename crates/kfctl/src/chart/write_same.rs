//! Whether an earlier export already holds exactly the files of a new one.
//!
//! `chart export --force` over an earlier export whose files would all be the same leaves the
//! folder as it is (`Written::Unchanged`): re-exporting an unchanged chart, as a CI job does
//! to check that the committed chart is current, keeps every file's timestamps and costs no
//! file system writes. Replacing the folder would give the same files: [`super::write`] links
//! each unchanged file into the new folder, so the folder a replacement leaves differs only in
//! its folders' own inodes.
//!
//! The earlier folder counts as holding exactly the files only when:
//!
//! - each folder the files go in (and `--out` itself) is a real folder (not a symlink), owned
//!   by the user writing, not writable by group or others (as a new one would be, 0755 under
//!   the usual umask), and holds exactly the files and folders of the export, nothing else;
//! - each file is a plain file whose bytes are the new file's, that a new file could stand for
//!   ([`super::write::linkable`]: no other link, owned by the user writing, no wider mode).
//!
//! Anything else (a file changed, added or gone, a mode widened, a link) and the export is
//! written as before.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// Whether `out` holds exactly `files` (relative path → contents) as an export written by
/// `owner` (the metadata of a folder the user writing just made) would hold them.
pub(super) fn holds_exactly(out: &Path, files: &[(&str, &str)], owner: &Metadata) -> bool {
    use rayon::prelude::*;
    let folders = expected_folders(files);
    let folders: Vec<(&PathBuf, &BTreeSet<OsString>)> = folders.iter().collect();
    folders.par_iter().all(|(dir, names)| folder_holds(&out.join(dir), names, owner))
        && files.par_iter().all(|(rel, text)| file_holds(&out.join(rel), text, super::write::mode_for(rel), owner))
}

/// Each folder of the export (`""` for `--out`), with the names it holds.
fn expected_folders(files: &[(&str, &str)]) -> BTreeMap<PathBuf, BTreeSet<OsString>> {
    let mut folders: BTreeMap<PathBuf, BTreeSet<OsString>> = BTreeMap::new();
    folders.entry(PathBuf::new()).or_default();
    for (rel, _) in files {
        let mut path = Path::new(rel);
        while let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
            folders.entry(parent.to_path_buf()).or_default().insert(name.to_os_string());
            path = parent;
        }
    }
    folders
}

/// A real folder, owned by `owner`'s user, writable by nobody else, holding exactly `names`.
fn folder_holds(dir: &Path, names: &BTreeSet<OsString>, owner: &Metadata) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else { return false };
    if !meta.is_dir() || !ours_and_closed(&meta, owner) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    let mut found = BTreeSet::new();
    for entry in entries {
        let Ok(entry) = entry else { return false };
        if !names.contains(&entry.file_name()) {
            return false;
        }
        found.insert(entry.file_name());
    }
    found.len() == names.len()
}

#[cfg(unix)]
fn ours_and_closed(meta: &Metadata, owner: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.uid() == owner.uid() && meta.mode() & 0o022 == 0
}

#[cfg(not(unix))]
fn ours_and_closed(_: &Metadata, _: &Metadata) -> bool {
    false
}

/// A plain file holding `text` that a new file of `mode` could stand for ([`super::write`]
/// links such a file of an earlier export instead of writing it again).
pub(super) fn file_holds(path: &Path, text: &str, mode: u32, owner: &Metadata) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return false };
    meta.is_file()
        && meta.len() == text.len() as u64
        && super::write::linkable(&meta, mode, owner)
        && std::fs::read(path).is_ok_and(|bytes| bytes == text.as_bytes())
}

#[cfg(all(test, unix))]
mod tests {
    use super::super::write::{Written, write_folder};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::{Path, PathBuf};

    const CHART: &str = "# Written by kfctl-rs\n";

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kfctl-write-same-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("out")
    }

    fn files() -> Vec<(&'static str, &'static str)> {
        vec![
            ("Chart.yaml", CHART),
            ("charts/a/values.yaml", "x: 1\n"),
            ("charts/a/templates/cm.yaml", "kind: ConfigMap\n"),
        ]
    }

    fn inode(out: &Path) -> u64 {
        std::fs::metadata(out).unwrap().ino()
    }

    #[test]
    fn the_same_files_leave_the_earlier_export_as_it_was() {
        let out = scratch("same");
        assert_eq!(write_folder(&out, files(), false).unwrap(), Written::Written);
        let before = (inode(&out), std::fs::metadata(out.join("charts/a/values.yaml")).unwrap().modified().unwrap());
        assert_eq!(write_folder(&out, files(), true).unwrap(), Written::Unchanged);
        let after = (inode(&out), std::fs::metadata(out.join("charts/a/values.yaml")).unwrap().modified().unwrap());
        assert_eq!(before, after, "the folder and its files are untouched");
        let beside: Vec<_> =
            std::fs::read_dir(out.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(beside, ["out"], "no staging folder is left");
    }

    #[test]
    fn any_difference_writes_the_export_again() {
        type Change = fn(&Path);
        let changes: [(&str, Change); 6] = [
            ("a changed file", |out| std::fs::write(out.join("charts/a/values.yaml"), "x: 2\n").unwrap()),
            ("an extra file", |out| std::fs::write(out.join("charts/a/extra.yaml"), "").unwrap()),
            ("an extra folder", |out| std::fs::create_dir(out.join("charts/b")).unwrap()),
            ("a missing file", |out| std::fs::remove_file(out.join("charts/a/templates/cm.yaml")).unwrap()),
            ("a widened file", |out| {
                std::fs::set_permissions(out.join("Chart.yaml"), std::fs::Permissions::from_mode(0o666)).unwrap();
            }),
            ("a folder others may write", |out| {
                std::fs::set_permissions(out.join("charts"), std::fs::Permissions::from_mode(0o777)).unwrap();
            }),
        ];
        for (what, change) in changes {
            let out = scratch("differs");
            write_folder(&out, files(), false).unwrap();
            change(&out);
            assert_eq!(write_folder(&out, files(), true).unwrap(), Written::Written, "{what}");
            for (rel, text) in files() {
                assert_eq!(std::fs::read_to_string(out.join(rel)).unwrap(), text, "{what}: {rel}");
            }
            assert!(!out.join("charts/a/extra.yaml").exists() && !out.join("charts/b").exists(), "{what}");
        }
    }

    #[test]
    fn a_file_linked_elsewhere_is_not_taken_as_the_same() {
        let out = scratch("linked");
        write_folder(&out, files(), false).unwrap();
        std::fs::hard_link(out.join("Chart.yaml"), out.parent().unwrap().join("other-name")).unwrap();
        assert_eq!(write_folder(&out, files(), true).unwrap(), Written::Written);
    }
}
