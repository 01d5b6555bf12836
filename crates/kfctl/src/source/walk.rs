//! Finding the remote references a tree needs.
//!
//! In the manifests tree every kustomization file is read (a release ships overlays nobody
//! builds by default, and a pull must serve them all). Inside a remote repository only what is
//! reachable counts: the walk starts at the referenced folder and follows local `resources`,
//! `bases` and `components` entries that stay inside the repository, so unrelated examples or
//! tests in a large repository are never fetched. Remote entries found on the way are resolved
//! (which, for the cache resolver, fetches them) and walked in turn, until nothing new appears.
//!
//! Only `resources`, `bases` and `components` can name remote bases in kustomize, so those are
//! the only fields read. A file that is not valid YAML, or an entry that is not a supported
//! remote reference, becomes a warning rather than an error: the pull still serves everything
//! else, and a build that really uses the entry fails there with the engine's own message.

use super::SourceError;
use super::mirror::MirrorLayout;
use kfctl_kustomize::kustomization::FILE_NAMES;
use kfctl_kustomize::remote::{RemoteRef, RemoteResolver, is_remote};
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};

/// A remote entry found in a kustomization file.
#[derive(Debug, Clone)]
pub struct Found {
    /// The remote entry, parsed.
    pub reference: RemoteRef,
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Every remote entry found, in walk order.
    pub found: Vec<Found>,
    /// Files and folders reached by following local entries (remote walks only).
    pub(crate) visited: Vec<PathBuf>,
    pub(crate) warnings: Vec<String>,
}

/// One remote unit (a repository at a ref, or a plain file) and what uses it.
#[derive(Debug, Clone)]
pub struct RemoteUnit {
    /// A reference whose [`RemoteRef::repo_root`] (or itself, for files) is the unit.
    pub(crate) unit: RemoteRef,
    /// The repository root folder or the file, as resolved.
    pub(crate) root: PathBuf,
    /// Every URL that needed this unit.
    pub(crate) urls: BTreeSet<String>,
    /// Top-level folders of a repository that kustomizations reached (empty for files).
    pub(crate) top_folders: BTreeSet<String>,
}

/// Every remote unit a manifests tree needs, keyed by [`MirrorLayout::mirror_key`].
#[derive(Debug, Default)]
pub struct Closure {
    /// The units, by mirror key.
    pub units: BTreeMap<String, RemoteUnit>,
    pub(crate) warnings: Vec<String>,
}

/// The remote entries of every kustomization file under `root`.
pub fn scan_tree(root: &Path) -> Result<Scan, SourceError> {
    let mut scan = Scan::default();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let reader = std::fs::read_dir(&dir).map_err(|e| SourceError::io(&dir, e))?;
        let mut children: Vec<_> = reader.filter_map(Result::ok).collect();
        children.sort_by_key(|c| c.file_name());
        for child in children {
            let name = child.file_name();
            let is_dir = child.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && name != ".git" && !name.to_string_lossy().starts_with(".kfctl-") {
                dirs.push(child.path());
            } else if !is_dir && FILE_NAMES.iter().any(|f| name == *f) {
                read_entries(&child.path(), &mut scan, |_| {});
            }
        }
    }
    Ok(scan)
}

/// The remote entries reachable from the kustomization folder `start`, following local
/// entries that stay inside `boundary` (a repository root).
pub(crate) fn scan_reachable(start: &Path, boundary: &Path) -> Result<Scan, SourceError> {
    let mut scan = Scan::default();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([start.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        scan.visited.push(dir.clone());
        let Some(file) = FILE_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file()) else { continue };
        let mut locals = Vec::new();
        read_entries(&file, &mut scan, |local| locals.push(local.to_string()));
        for local in locals {
            let target = normalize(&dir.join(&local));
            if !target.starts_with(boundary) {
                scan.warnings.push(format!("{}: `{local}` leaves the repository; not followed", file.display()));
            } else if target.is_dir() {
                queue.push_back(target);
            } else {
                scan.visited.push(target);
            }
        }
    }
    Ok(scan)
}

/// Every remote unit `manifests` needs, resolving (and so fetching, for the cache resolver)
/// each one and walking remote kustomizations recursively.
pub fn remote_closure(manifests: &Path, resolver: &dyn RemoteResolver) -> Result<Closure, SourceError> {
    let first = scan_tree(manifests)?;
    let mut closure = Closure { warnings: first.warnings, ..Closure::default() };
    let mut queue: VecDeque<RemoteRef> = first.found.into_iter().map(|f| f.reference).collect();
    let mut seen_urls = HashSet::new();
    while let Some(reference) = queue.pop_front() {
        if !seen_urls.insert(reference.url()) {
            continue;
        }
        let path = resolver.resolve(&reference)?;
        let unit_ref = reference.repo_root().unwrap_or_else(|| reference.clone());
        let key = reference.mirror_key();
        if !closure.units.contains_key(&key) {
            let root = if unit_ref == reference { path.clone() } else { resolver.resolve(&unit_ref)? };
            let unit = RemoteUnit { unit: unit_ref, root, urls: BTreeSet::new(), top_folders: BTreeSet::new() };
            closure.units.insert(key.clone(), unit);
        }
        let unit = closure.units.get_mut(&key).expect("inserted above");
        unit.urls.insert(reference.url());
        if let RemoteRef::Git { .. } = reference {
            let scan = scan_reachable(&path, &unit.root)?;
            for visited in scan.visited.iter().filter_map(|p| p.strip_prefix(&unit.root).ok()) {
                if let Some(Component::Normal(top)) = visited.components().next() {
                    unit.top_folders.insert(top.to_string_lossy().into_owned());
                }
            }
            closure.warnings.extend(scan.warnings);
            queue.extend(scan.found.into_iter().map(|f| f.reference));
        }
    }
    Ok(closure)
}

/// Read a kustomization file's `resources`, `bases` and `components`: remote entries go to
/// `scan.found`, local ones to `local`.
fn read_entries(file: &Path, scan: &mut Scan, mut local: impl FnMut(&str)) {
    let text = match crate::input::read_bounded(file, "kustomization", crate::input::MAX_FILE_BYTES) {
        Ok(text) => text,
        Err(e) => return scan.warnings.push(e.to_string()),
    };
    let docs = match kfctl_yaml::parse_stream(&text, &file.display().to_string()) {
        Ok(docs) => docs,
        Err(e) => return scan.warnings.push(format!("{e}; its remote references (if any) were not fetched")),
    };
    let Some(doc) = docs.first() else { return };
    let entries = ["resources", "bases", "components"]
        .iter()
        .filter_map(|field| doc.get(field).and_then(|v| v.as_array()))
        .flatten()
        .filter_map(|v| v.as_str());
    for entry in entries {
        if !is_remote(entry) {
            local(entry);
            continue;
        }
        match RemoteRef::parse(entry) {
            Ok(reference) => scan.found.push(Found { reference }),
            Err(e) => scan.warnings.push(format!("{}: {e}", file.display())),
        }
    }
}

/// Resolve `.` and `..` lexically (the paths come from kustomization files, not the disk).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MirrorResolver;

    use crate::source::write_fixture as write;

    #[test]
    fn scan_tree_finds_remote_entries_and_warns_on_unsupported() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "a/kustomization.yaml", "resources:\n- https://h.io/x.yaml\n- local.yaml\n");
        write(tmp.path(), "b/Kustomization", "bases:\n- https://github.com/o/r/p\n");
        write(tmp.path(), "c/kustomization.yml", "components:\n- https://github.com/o/r//c?ref=v1\n");
        write(tmp.path(), ".git/kustomization.yaml", "resources:\n- https://h.io/ignored.yaml\n");
        let scan = scan_tree(tmp.path()).unwrap();
        let urls: BTreeSet<_> = scan.found.iter().map(|f| f.reference.url()).collect();
        assert_eq!(
            urls,
            BTreeSet::from(["https://h.io/x.yaml".to_string(), "https://github.com/o/r//c?ref=v1".to_string()])
        );
        assert_eq!(scan.warnings.len(), 1, "{:?}", scan.warnings);
        assert!(scan.warnings[0].contains("needs ?ref="));
    }

    #[test]
    fn scan_reachable_follows_local_entries_inside_the_boundary_only() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        write(&repo, "config/default/kustomization.yaml", "resources:\n- ../crd\n- ../../../outside\n- x.yaml\n");
        write(&repo, "config/crd/kustomization.yaml", "resources:\n- https://h.io/nested.yaml\n");
        write(&repo, "examples/kustomization.yaml", "resources:\n- https://h.io/unreached.yaml\n");
        let scan = scan_reachable(&repo.join("config/default"), &repo).unwrap();
        let urls: Vec<_> = scan.found.iter().map(|f| f.reference.url()).collect();
        assert_eq!(urls, ["https://h.io/nested.yaml"]);
        assert_eq!(scan.warnings.len(), 1);
    }

    #[test]
    fn closure_recurses_through_remote_kustomizations() {
        let tmp = tempfile::tempdir().unwrap();
        let (tree, mirror) = (tmp.path().join("tree"), tmp.path().join("mirror"));
        write(&tree, "app/kustomization.yaml", "resources:\n- https://github.com/o/a//deploy/base?ref=v1\n");
        write(&mirror, "git/github.com/o/a@v1/deploy/base/kustomization.yaml", "resources:\n- ../common\n");
        write(
            &mirror,
            "git/github.com/o/a@v1/deploy/common/kustomization.yaml",
            "resources:\n- https://github.com/o/b//x?ref=v2\n",
        );
        write(&mirror, "git/github.com/o/b@v2/x/kustomization.yaml", "resources:\n- https://h.io/f.yaml\n");
        write(&mirror, "http/h.io/f.yaml", "kind: A\n");
        let closure = remote_closure(&tree, &MirrorResolver { root: mirror.clone() }).unwrap();
        let keys: Vec<_> = closure.units.keys().cloned().collect();
        assert_eq!(keys, ["git/github.com/o/a@v1", "git/github.com/o/b@v2", "http/h.io/f.yaml"]);
        assert_eq!(closure.units["git/github.com/o/a@v1"].top_folders, BTreeSet::from(["deploy".to_string()]));
    }

    #[test]
    fn closure_fails_on_a_missing_remote() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "t/kustomization.yaml", "resources:\n- https://h.io/missing.yaml\n");
        let err = remote_closure(&tmp.path().join("t"), &MirrorResolver { root: tmp.path().join("m") }).unwrap_err();
        assert!(err.to_string().contains("https://h.io/missing.yaml"), "{err}");
    }
}
