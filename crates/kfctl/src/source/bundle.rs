//! Offline bundles: one `.tar.gz` an air-gapped user carries instead of network access.
//!
//! ```text
//! bundle.json            format, release, and the sha256 of every part below
//! manifests/...          the kubeflow/manifests tree
//! remote/git/<host>/<owner>/<repo>@<ref>/...   every remote repository the tree needs
//! remote/http/<host>/<path>                    every remote plain file
//! ```
//!
//! `remote/` is a mirror ([`super::MirrorResolver`] reads it as is). Of each repository only
//! the top-level folders its kustomizations reach are kept (plus root `LICENSE*`, `NOTICE*` and
//! `COPYING*` files), the same trimming as the shared test mirror: a bundle carries what builds
//! need, not a project's history of examples. Each part's digest is the tree digest of exactly
//! what the bundle holds, so a bundle verifies on its own, before anything is installed.
//!
//! Writing is deterministic (sorted entries, zero timestamps and owners) and goes to a
//! temporary file renamed into place, so a failed write never leaves a partial bundle.

use super::SourceError;
use super::cache::{Cache, Kind};
use super::digest::{EntryKind, TreeEntry, collect_tree, digest_entries, sha256_file, tree_digest};
use super::fsutil::{Staging, checked_key};
use super::pull::Installed;
use super::releases::Release;
use super::walk::{RemoteUnit, remote_closure};
use flate2::Compression;
use flate2::write::GzEncoder;
use kfctl_kustomize::remote::RemoteResolver;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The manifest's file name at the bundle's root.
pub(crate) const MANIFEST_FILE: &str = "bundle.json";
/// The manifest format this version writes and reads.
pub(crate) const FORMAT: &str = "kfctl-rs-bundle/v1";

/// `bundle.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleManifest {
    pub(crate) format: String,
    pub(crate) created_by: String,
    pub(crate) release: Option<BundleRelease>,
    /// sha256 tree digest of `manifests/`.
    pub manifests_sha256: String,
    /// Every remote unit in `remote/`.
    pub remotes: Vec<BundleRemote>,
}

/// The release a bundle holds, when it holds a known one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleRelease {
    pub(crate) version: String,
    pub(crate) commit: String,
}

/// One remote unit in `remote/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleRemote {
    /// The mirror key, e.g. `git/github.com/kubernetes-sigs/lws@v0.7.0`.
    pub key: String,
    pub(crate) kind: Kind,
    /// The unit's sha256 digest (a tree digest for a folder, the file's digest for a file).
    pub sha256: String,
    /// The references that need it.
    pub(crate) urls: Vec<String>,
}

/// What goes into a bundle.
pub struct BundleInput<'a> {
    /// The kubeflow/manifests root to bundle.
    pub manifests_dir: &'a Path,
    /// Resolves the remote units the tree names.
    pub resolver: &'a dyn RemoteResolver,
    /// The release the tree is, when known.
    pub release: Option<&'a Release>,
}

/// What was written.
#[derive(Debug)]
pub struct BundleReport {
    /// The bundle file written.
    pub out: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its sha256 digest.
    pub sha256: String,
    /// The manifest it holds (`bundle.json`).
    pub manifest: BundleManifest,
    /// Problems found while collecting the remote units, that did not stop the bundle.
    pub warnings: Vec<String>,
}

/// Write a bundle of `input` to `out` (replacing it).
pub fn write_bundle(input: &BundleInput<'_>, out: &Path) -> Result<BundleReport, SourceError> {
    let closure = remote_closure(input.manifests_dir, input.resolver)?;
    let manifests = collect_tree(input.manifests_dir)?;
    let mut parts = vec![("manifests".to_string(), manifests.clone())];
    let mut remotes = Vec::new();
    for (key, unit) in &closure.units {
        let (kind, entries) = unit_entries(unit)?;
        let sha256 = match kind {
            Kind::Tree => digest_entries(&entries)?,
            Kind::File => sha256_file(&unit.root)?,
        };
        remotes.push(BundleRemote { key: key.clone(), kind, sha256, urls: unit.urls.iter().cloned().collect() });
        parts.push((format!("remote/{key}"), entries));
    }
    let manifest = BundleManifest {
        format: FORMAT.to_string(),
        created_by: concat!("kfctl-rs ", env!("CARGO_PKG_VERSION")).to_string(),
        release: input.release.map(|r| BundleRelease {
            version: r.version.to_string(),
            commit: r.commit.unwrap_or_default().to_string(),
        }),
        manifests_sha256: digest_entries(&manifests)?,
        remotes,
    };
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let staged = Staging::file(parent, "bundle")?;
    write_tar(staged.path(), &manifest, &parts)?;
    let sha256 = sha256_file(staged.path())?;
    let bytes = std::fs::metadata(staged.path()).map_err(|e| SourceError::io(staged.path(), e))?.len();
    staged.place(out)?;
    Ok(BundleReport { out: out.to_path_buf(), bytes, sha256, manifest, warnings: closure.warnings })
}

/// The entries of one remote unit, relative to the unit's root (`""` for a file).
fn unit_entries(unit: &RemoteUnit) -> Result<(Kind, Vec<TreeEntry>), SourceError> {
    let meta = std::fs::metadata(&unit.root).map_err(|e| SourceError::io(&unit.root, e))?;
    if meta.is_file() {
        return Ok((Kind::File, collect_tree(&unit.root)?));
    }
    let kept = collect_tree(&unit.root)?
        .into_iter()
        .filter(|entry| match entry.rel.split_once('/') {
            Some((top, _)) => unit.top_folders.contains(top),
            None => is_legal_notice(&entry.rel),
        })
        .collect();
    Ok((Kind::Tree, kept))
}

fn is_legal_notice(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["LICENSE", "LICENCE", "NOTICE", "COPYING"].iter().any(|p| upper.starts_with(p))
}

fn write_tar(path: &Path, manifest: &BundleManifest, parts: &[(String, Vec<TreeEntry>)]) -> Result<(), SourceError> {
    let file = std::fs::File::create(path).map_err(|e| SourceError::io(path, e))?;
    let mut tar = tar::Builder::new(GzEncoder::new(file, Compression::default()));
    tar.follow_symlinks(false);
    let io = |e: std::io::Error| SourceError::io(path, e);
    let json = serde_json::to_vec_pretty(manifest).map_err(|e| SourceError::invalid(MANIFEST_FILE, e.to_string()))?;
    tar.append_data(&mut header(json.len() as u64, 0o644), MANIFEST_FILE, json.as_slice()).map_err(io)?;
    for (prefix, entries) in parts {
        for entry in entries {
            let name = if entry.rel.is_empty() { prefix.clone() } else { format!("{prefix}/{}", entry.rel) };
            match &entry.kind {
                EntryKind::File => {
                    let file = std::fs::File::open(&entry.abs).map_err(|e| SourceError::io(&entry.abs, e))?;
                    let meta = file.metadata().map_err(|e| SourceError::io(&entry.abs, e))?;
                    tar.append_data(&mut header(meta.len(), file_mode(&meta)), &name, file).map_err(io)?;
                }
                EntryKind::Symlink(target) => {
                    let mut link = header(0, 0o777);
                    link.set_entry_type(tar::EntryType::Symlink);
                    tar.append_link(&mut link, &name, target).map_err(io)?;
                }
            }
        }
    }
    let gz = tar.into_inner().map_err(io)?;
    let file = gz.finish().map_err(io)?;
    file.sync_all().map_err(io)
}

fn header(size: u64, mode: u32) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(mode);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    header.set_entry_type(tar::EntryType::Regular);
    header
}

#[cfg(unix)]
fn file_mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o111 != 0 { 0o755 } else { 0o644 }
}

#[cfg(not(unix))]
fn file_mode(_meta: &std::fs::Metadata) -> u32 {
    0o644
}

/// Read and check an extracted bundle: the format, and every part's digest.
pub(crate) fn verify_bundle_dir(root: &Path) -> Result<BundleManifest, SourceError> {
    let path = root.join(MANIFEST_FILE);
    let text = std::fs::read(&path).map_err(|e| SourceError::io(&path, e))?;
    let manifest: BundleManifest = serde_json::from_slice(&text)
        .map_err(|e| SourceError::invalid(path.display(), format!("not a kfctl-rs bundle manifest: {e}")))?;
    if manifest.format != FORMAT {
        let message = format!("bundle format `{}` is not supported (expected `{FORMAT}`)", manifest.format);
        return Err(SourceError::invalid(path.display(), message));
    }
    check_part(&root.join("manifests"), Kind::Tree, &manifest.manifests_sha256)?;
    for remote in &manifest.remotes {
        let part = root.join("remote").join(checked_key(&remote.key)?);
        check_part(&part, remote.kind, &remote.sha256)?;
    }
    Ok(manifest)
}

fn check_part(path: &Path, kind: Kind, expected: &str) -> Result<(), SourceError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Err(SourceError::invalid(path.display(), "listed in bundle.json but missing from the bundle"));
    }
    let found = match kind {
        Kind::Tree => tree_digest(path)?,
        Kind::File => sha256_file(path)?,
    };
    if found != expected {
        return Err(SourceError::digest_mismatch(path.display(), expected, &found));
    }
    Ok(())
}

/// Install a verified, extracted bundle into the cache: `manifests/` as `manifests/<label>`,
/// each remote unit unless the cache already holds it (verified). Returns the manifests tree
/// and the cache keys of the remote units it added.
pub(crate) fn import_into_cache(
    cache: &Cache,
    root: &Path,
    manifest: &BundleManifest,
    label: &str,
    origin: &str,
) -> Result<(Installed, Vec<String>), SourceError> {
    let origin = format!("bundle {origin}");
    let mut added = Vec::new();
    for remote in &manifest.remotes {
        let key = format!("remote/{}", checked_key(&remote.key)?);
        if cache.lookup(&key)?.is_none() {
            cache.install(&key, &root.join("remote").join(&remote.key), remote.kind, &origin)?;
            added.push(key);
        }
    }
    let (path, sha256) = cache.install(&format!("manifests/{label}"), &root.join("manifests"), Kind::Tree, &origin)?;
    let installed = Installed { label: label.to_string(), path, sha256, fetched: true, origin, warning: None };
    Ok((installed, added))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MirrorResolver;

    use crate::source::write_fixture as write;

    fn fixture(tmp: &Path) -> (PathBuf, PathBuf) {
        let (tree, mirror) = (tmp.join("tree"), tmp.join("mirror"));
        write(
            &tree,
            "app/kustomization.yaml",
            "resources:\n- https://github.com/o/a//deploy/base?ref=v1\n- https://h.io/f.yaml\n",
        );
        write(&mirror, "git/github.com/o/a@v1/deploy/base/kustomization.yaml", "resources:\n- x.yaml\n");
        write(&mirror, "git/github.com/o/a@v1/deploy/base/x.yaml", "kind: X\n");
        write(&mirror, "git/github.com/o/a@v1/LICENSE", "Apache\n");
        write(&mirror, "git/github.com/o/a@v1/docs/big.md", "not needed\n");
        write(&mirror, "http/h.io/f.yaml", "kind: F\n");
        (tree, mirror)
    }

    fn extract(bundle: &Path, into: &Path) -> PathBuf {
        let dest = into.join("unpacked");
        crate::source::extract::extract_archive(bundle, &dest, false, &Default::default()).unwrap();
        dest
    }

    #[test]
    fn bundle_round_trips_and_verifies() {
        let tmp = tempfile::tempdir().unwrap();
        let (tree, mirror) = fixture(tmp.path());
        let resolver = MirrorResolver { root: mirror };
        let out = tmp.path().join("b.tar.gz");
        let input = BundleInput { manifests_dir: &tree, resolver: &resolver, release: None };
        let report = write_bundle(&input, &out).unwrap();
        assert_eq!(report.manifest.remotes.len(), 2);
        let root = extract(&out, tmp.path());
        assert_eq!(verify_bundle_dir(&root).unwrap(), report.manifest);
        assert!(root.join("remote/git/github.com/o/a@v1/LICENSE").is_file());
        assert!(!root.join("remote/git/github.com/o/a@v1/docs").exists(), "unreached folders are trimmed");
        assert!(root.join("remote/http/h.io/f.yaml").is_file());
    }

    #[test]
    fn bundle_is_deterministic() {
        let tmp = tempfile::tempdir().unwrap();
        let (tree, mirror) = fixture(tmp.path());
        let resolver = MirrorResolver { root: mirror };
        let input = BundleInput { manifests_dir: &tree, resolver: &resolver, release: None };
        let a = write_bundle(&input, &tmp.path().join("a.tar.gz")).unwrap();
        let b = write_bundle(&input, &tmp.path().join("b.tar.gz")).unwrap();
        assert_eq!(a.sha256, b.sha256);
    }

    /// The fixture bundled and unpacked: the unpacked root.
    fn bundled_and_unpacked(tmp: &Path) -> PathBuf {
        let (tree, mirror) = fixture(tmp);
        let resolver = MirrorResolver { root: mirror };
        let out = tmp.join("b.tar.gz");
        write_bundle(&BundleInput { manifests_dir: &tree, resolver: &resolver, release: None }, &out).unwrap();
        extract(&out, tmp)
    }

    #[test]
    fn tampered_bundle_part_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = bundled_and_unpacked(tmp.path());
        std::fs::write(root.join("remote/http/h.io/f.yaml"), "kind: Evil\n").unwrap();
        let err = verify_bundle_dir(&root).unwrap_err().to_string();
        assert!(err.starts_with("security:") && err.contains("f.yaml") && err.contains("sha256 mismatch"), "{err}");
    }

    #[test]
    fn bundle_with_escaping_key_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = bundled_and_unpacked(tmp.path());
        let mut manifest = verify_bundle_dir(&root).unwrap();
        manifest.remotes[0].key = "../../etc".into();
        std::fs::write(root.join(MANIFEST_FILE), serde_json::to_vec(&manifest).unwrap()).unwrap();
        assert!(verify_bundle_dir(&root).unwrap_err().is_security());
    }
}
