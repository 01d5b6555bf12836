//! Parallel warm-up of the parse cache.
//!
//! Accumulation is sequential (its order matters), but parsing is the expensive part. Before
//! accumulating, walk the kustomization tree cheaply — only kustomization files are parsed
//! here (and kept by the loader for the accumulation) — collect every object file it names,
//! in the order the accumulation will consume them, and queue those to be parsed on the
//! rayon pool while the accumulation runs ([`crate::parse_ahead`]). Patch files are left
//! out: patches are read as text and classified where they apply (strategic merge or JSON
//! 6902), never through the parse cache. Errors are ignored here: the sequential pass meets
//! them again and reports them in context.

use super::kustomization::Kustomization;
use super::loader::{Entry, Loader};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Parse, in parallel, every file the tree under `dir` will read.
pub(crate) fn warm(loader: &Loader, dir: &Path) {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    collect(loader, dir, &mut seen, &mut files);
    loader.prefetch(files);
}

/// The same for an in-memory kustomization at `dir`.
pub(crate) fn warm_entries(loader: &Loader, dir: &Path, k: &Kustomization) {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    collect_entries(loader, dir, k, &mut seen, &mut files);
    loader.prefetch(files);
}

fn collect(loader: &Loader, dir: &Path, seen: &mut HashSet<PathBuf>, files: &mut Vec<PathBuf>) {
    let Ok(dir) = loader.real_path(dir) else { return };
    if !seen.insert(dir.clone()) {
        return;
    }
    let Ok((_, k)) = loader.kustomization(&dir) else { return };
    collect_entries(loader, &dir, &k, seen, files);
}

fn collect_entries(
    loader: &Loader,
    dir: &Path,
    k: &Kustomization,
    seen: &mut HashSet<PathBuf>,
    files: &mut Vec<PathBuf>,
) {
    for entry in k.resources.iter().chain(&k.bases).chain(&k.components) {
        match loader.resolve_entry(dir, entry) {
            Ok(Entry::File(path)) => files.push(path),
            Ok(Entry::Folder(path)) => collect(loader, &path, seen, files),
            Err(_) => {}
        }
    }
}
