//! `source pull`: a release and every remote base it references, into the cache.
//!
//! The manifests tree comes from what `--version` names (`super::by_name`: a release of the
//! catalog, fetched by its commit or, when it has none, by its tag; an unknown upstream tag; a
//! commit) or from `--from`: a local checkout (copied, `.git` left out), a `.tar.gz` (a
//! GitHub-style archive with one top folder, or a bundle written by `source bundle`) or an
//! HTTPS URL of such an archive. An import lands in `manifests/<version>` (the version given,
//! the bundle's own, or `local-<digest prefix>` when nothing names one). An import is recorded
//! as a pinned release only when its release digest is the catalog's; one named as a release
//! that does not match lands in `manifests/unverified-<version>-<digest>`, which `--version`
//! never selects. Then every remote reference of the tree is resolved through the cache,
//! recursively, fetching only what is missing; a second pull of a complete cache sends no
//! request at all.

use super::SourceError;
use super::bundle::{self, BundleManifest};
use super::by_name::{self, Named};
use super::cache::{Cache, Kind};
use super::digest::{sha256_file, tree_digest};
use super::extract::{ExtractLimits, extract_staged, single_top_folder};
use super::fetch::Fetcher;
use super::fsutil::Staging;
use super::releases::{self, Release};
use super::resolver::{CacheResolver, Ensured, download_checked};
use super::walk::remote_closure;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to pull.
#[derive(Debug, Clone, Default)]
pub struct PullRequest {
    /// A version spec (`v1.11.0`, `1.11`, `latest`, an upstream tag, a full commit SHA); with
    /// `from`, a release that names the imported tree.
    pub version: Option<String>,
    /// A folder, a `.tar.gz` file or an `https://` URL of one.
    pub from: Option<String>,
}

/// The manifests tree as installed in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The cache label: the release version, or what an import was named as.
    pub label: String,
    /// Where it is in the cache.
    pub path: PathBuf,
    /// Its tree digest.
    pub sha256: String,
    /// Whether it was fetched or imported now (false: already cached and verified).
    pub fetched: bool,
    /// Where it came from: the URL it was fetched from, or the file or folder imported.
    pub origin: String,
    /// What to say about it: fetched by a name that is not pinned by commit (`super::by_name`).
    pub warning: Option<String>,
}

/// What a pull did.
#[derive(Debug)]
pub struct PullReport {
    /// The cache folder.
    pub cache_root: PathBuf,
    /// The release pulled, when known.
    pub release: Option<Release>,
    /// The manifests tree.
    pub manifests: Installed,
    /// Every remote unit the tree needs, in key order.
    pub remotes: Vec<Ensured>,
    /// Whether `--from` was a bundle (so `fetched` means "imported from it").
    pub from_bundle: bool,
    /// Problems that did not stop the pull.
    pub warnings: Vec<String>,
}

/// A `--from` input installed as a manifests tree.
struct Imported {
    manifests: Installed,
    release: Option<Release>,
    /// Remote units a bundle added to the cache.
    bundle_keys: Option<Vec<String>>,
}

/// Pull into `cache`. `fetcher: None` means offline: only local `--from` inputs and what is
/// already cached can be used.
pub fn pull(
    request: &PullRequest,
    cache: &Arc<Cache>,
    fetcher: Option<Arc<Fetcher>>,
) -> Result<PullReport, SourceError> {
    let limits = ExtractLimits::default();
    let imported = match request.from.as_deref() {
        None => {
            let named = Named::parse(request.version.as_deref())?;
            let manifests = by_name::ensure(cache, fetcher.as_deref(), &named, &limits)?;
            Imported { manifests, release: named.release().copied(), bundle_keys: None }
        }
        Some(from) => {
            let named = request.version.as_deref().map(|v| releases::select(Some(v))).transpose()?;
            import(cache, fetcher.as_deref(), from, named, &limits)?
        }
    };
    let Imported { manifests, release, bundle_keys } = imported;
    let resolver = CacheResolver::new(cache.clone(), fetcher).with_limits(limits);
    let closure = remote_closure(&manifests.path, &resolver)?;
    let mut remotes = Vec::new();
    for unit in closure.units.values() {
        remotes.push(resolver.ensure(&unit.unit)?);
    }
    let mut fetched: Vec<String> = resolver.fetched_keys();
    let from_bundle = bundle_keys.is_some();
    fetched.extend(bundle_keys.unwrap_or_default());
    fetched.sort();
    for remote in &mut remotes {
        remote.fetched = fetched.binary_search(&remote.key).is_ok();
    }
    let cache_root = cache.root().to_path_buf();
    let warnings = manifests.warning.iter().cloned().chain(closure.warnings).collect();
    Ok(PullReport { cache_root, release, manifests, remotes, from_bundle, warnings })
}

/// Import `--from` (folder, archive or URL) as a manifests tree.
fn import(
    cache: &Cache,
    fetcher: Option<&Fetcher>,
    from: &str,
    named: Option<&Release>,
    limits: &ExtractLimits,
) -> Result<Imported, SourceError> {
    if from.starts_with("http://") {
        return Err(SourceError::Security(format!("--from {from}: plain http is not allowed; use https")));
    }
    if from.starts_with("https://") {
        let fetcher = fetcher.ok_or_else(|| SourceError::Offline {
            what: format!("--from {from}"),
            command: format!("kfctl-rs source pull --from {from}"),
        })?;
        let archive = download_checked(cache, fetcher, from)?;
        return import_archive(cache, archive.path(), from, named, limits);
    }
    let path = Path::new(from);
    let meta = std::fs::metadata(path).map_err(|e| SourceError::io(path, e))?;
    if meta.is_dir() {
        import_dir(cache, path, named)
    } else {
        import_archive(cache, path, &path.display().to_string(), named, limits)
    }
}

fn import_dir(cache: &Cache, dir: &Path, named: Option<&Release>) -> Result<Imported, SourceError> {
    let parent = cache.path_of("manifests")?;
    let staging = Staging::dir(&parent, "import")?;
    let copy = staging.path().join("tree");
    super::fsutil::copy_tree(dir, &copy)?;
    let (label, release) = import_label(&copy, named)?;
    let origin = dir.display().to_string();
    let (path, sha256) = cache.install(&format!("manifests/{label}"), &copy, Kind::Tree, &origin)?;
    let manifests = Installed { label, path, sha256, fetched: true, origin, warning: None };
    Ok(Imported { manifests, release, bundle_keys: None })
}

/// The prefix of the cache label of an import whose digest is not the release it was named as.
pub const UNVERIFIED_PREFIX: &str = "unverified-";

/// Where an imported tree is recorded: as the pinned release only when its release digest is
/// the catalog's (the one named, or any when none is named); a named tree that does not match
/// is an unverified import (`unverified-<version>-<digest>`) that `--version` never selects;
/// anything else `local-<digest>`.
fn import_label(tree: &Path, named: Option<&Release>) -> Result<(String, Option<Release>), SourceError> {
    let (digest, found) = releases::identify(tree)?;
    let short = &tree_digest(tree)?[..12];
    Ok(match (named, found) {
        (Some(n), Some(f)) if n == f => (f.version.to_string(), Some(*f)),
        (None, Some(f)) => (f.version.to_string(), Some(*f)),
        (Some(n), _) => (format!("{UNVERIFIED_PREFIX}{}-{}", n.version, &digest[..12]), None),
        (None, None) => (format!("local-{short}"), None),
    })
}

/// A GitHub-style archive (one top folder) or a bundle.
fn import_archive(
    cache: &Cache,
    archive: &Path,
    origin: &str,
    named: Option<&Release>,
    limits: &ExtractLimits,
) -> Result<Imported, SourceError> {
    let parent = cache.path_of("manifests")?;
    let (staging, _) = extract_staged(archive, &parent, limits)?;
    if staging.path().join(bundle::MANIFEST_FILE).is_file() {
        let manifest = bundle::verify_bundle_dir(staging.path())?;
        let claimed = named.copied().or_else(|| bundle_release(&manifest));
        let (label, release) = match import_label(&staging.path().join("manifests"), claimed.as_ref())? {
            (label, release) if claimed.is_some() || release.is_some() => (label, release),
            _ => (format!("bundle-{}", &sha256_file(archive)?[..12]), None),
        };
        let (manifests, added) = bundle::import_into_cache(cache, staging.path(), &manifest, &label, origin)?;
        return Ok(Imported { manifests, release, bundle_keys: Some(added) });
    }
    let top = single_top_folder(staging.path(), archive)?;
    let (label, release) = import_label(&top, named)?;
    let (path, sha256) = cache.install(&format!("manifests/{label}"), &top, Kind::Tree, origin)?;
    let manifests = Installed { label, path, sha256, fetched: true, origin: origin.to_string(), warning: None };
    Ok(Imported { manifests, release, bundle_keys: None })
}

/// The catalog entry a bundle names, when it is a known release.
fn bundle_release(manifest: &BundleManifest) -> Option<Release> {
    let version = manifest.release.as_ref()?.version.as_str();
    releases::known().iter().find(|r| r.version == version).copied()
}
