//! [`open_source`]: the one call rendering and installing commands make to get upstream.
//!
//! `--source` decides where the manifests tree comes from:
//!
//! | `--source` | manifests | remote references |
//! |------------|-----------|-------------------|
//! | (none) | what `--version` names (`super::by_name`: a release, an upstream tag, a commit), from the cache (pulled first if missing, unless `--offline`) | the cache |
//! | a folder with `bundle.json` (an unpacked bundle) | its `manifests/`, after checking every digest | its `remote/` |
//! | any other folder | the folder itself | the cache |
//! | a `.tar.gz` file | extracted once into `imports/<sha256>/` (verified on later uses); a bundle's `manifests/` or a GitHub archive's top folder | a bundle's `remote/`, else the cache |
//!
//! `--remote-mirror DIR` overrides the remote column with that mirror. With `--offline` nothing
//! touches the network: the cache resolver only serves what is cached, and a missing piece is
//! an error naming it and the command that fetches it.
//!
//! A tree that did not come from the catalog (every `--source`) is recognised by its release
//! digest ([`releases::identify`]): a match is that release; anything else is an *unknown
//! upstream*, rendered with the catalog of the closest release layout and its own `example/`
//! ([`Layout::Unknown`]),
//! said once in [`OpenedSource::warnings`]. A `--version` the digest disagrees with is a
//! warning (the named release's catalog data is used), or with `--verify` a `security:`
//! refusal. A bundle's own claim to be a release counts only when its digest agrees too. A tag
//! or commit the catalog does not know is fetched by that name and classified the same way (by
//! its digest); it, and a release the catalog pins no commit for, are said in a warning as not
//! pinned, and refused with `--verify`.

use super::SourceError;
use super::bundle::{MANIFEST_FILE, verify_bundle_dir};
use super::by_name::{self, Named};
use super::cache::{Cache, Kind};
use super::digest::sha256_file;
use super::extract::{ExtractLimits, extract_staged, single_top_folder};
use super::fetch::{FetchOptions, Fetcher};
use super::mirror::MirrorResolver;
use super::releases::{self, Release};
use super::resolver::CacheResolver;
use kfctl_kustomize::remote::RemoteResolver;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where upstream should come from (the `--source`, `--version`, `--remote-mirror` and
/// `--offline` flags of every rendering command).
#[derive(Debug, Clone, Default)]
pub struct SourceSpec {
    /// A folder, an unpacked bundle, or a `.tar.gz` (GitHub archive or bundle).
    pub source: Option<PathBuf>,
    /// A version spec, used when `source` is not given (a release, an upstream tag or a full
    /// commit SHA, `super::by_name`). `None` means `latest`.
    pub version: Option<String>,
    /// Resolve remote references through this mirror instead.
    pub remote_mirror: Option<PathBuf>,
    /// Never use the network: what is not cached is an error.
    pub offline: bool,
    /// The cache folder; `None` means [`Cache::default_root`].
    pub cache_dir: Option<PathBuf>,
    /// How downloads behave.
    pub fetch: FetchOptions,
    /// Refuse a `--source` tree whose digest is not the `--version` named (or, without one,
    /// not any pinned release's), and a `--version` that names no release pinned by commit.
    pub verify: bool,
}

/// An opened source: a manifests folder and how to resolve its remote references.
#[derive(Clone)]
pub struct OpenedSource {
    /// The kubeflow/manifests root.
    pub manifests_dir: PathBuf,
    /// Resolves the tree's remote references.
    pub resolver: Arc<dyn RemoteResolver>,
    /// A human description of where the tree came from, for messages.
    pub origin: String,
    /// The catalog release, when the tree is one (fetched by its commit, or its digest matches).
    pub release: Option<Release>,
    /// Which catalog data describes the tree's layout.
    pub layout: Layout,
    /// What the caller should say once (an unknown upstream, a `--version` mismatch).
    pub warnings: Vec<String>,
}

/// Which catalog data describes an upstream tree's layout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Layout {
    /// The newest catalog, as written.
    #[default]
    Newest,
    /// The catalog as this release has it (`Catalog::for_release`).
    Release(String),
    /// A tree that is no pinned release: the catalog of the release whose layout it is
    /// closest to (`Catalog::closest_to`) and the tree's own `example/`.
    Unknown,
}

impl std::fmt::Debug for OpenedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedSource")
            .field("manifests_dir", &self.manifests_dir)
            .field("origin", &self.origin)
            .field("release", &self.release.map(|r| r.version))
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

/// Open the source `spec` describes (see the module docs for the rules).
pub fn open_source(spec: &SourceSpec) -> Result<OpenedSource, SourceError> {
    let ctx = Context::new(spec)?;
    match &spec.source {
        None => ctx.open_release(),
        Some(path) => {
            let meta = std::fs::metadata(path).map_err(|e| SourceError::io(path, e))?;
            if meta.is_dir() { ctx.open_dir(path) } else { ctx.open_archive(path) }
        }
    }
}

struct Context<'a> {
    spec: &'a SourceSpec,
    fetcher: Option<Arc<Fetcher>>,
}

impl Context<'_> {
    fn new(spec: &SourceSpec) -> Result<Context<'_>, SourceError> {
        let fetcher = if spec.offline { None } else { Some(Arc::new(Fetcher::new(spec.fetch.clone())?)) };
        Ok(Context { spec, fetcher })
    }

    fn cache(&self) -> Result<Arc<Cache>, SourceError> {
        let root = match &self.spec.cache_dir {
            Some(dir) => dir.clone(),
            None => Cache::default_root()?,
        };
        Ok(Arc::new(Cache::open(root)?))
    }

    /// The mirror if one was given, else `fallback`, else the cache resolver.
    fn resolver(&self, fallback: Option<PathBuf>) -> Result<Arc<dyn RemoteResolver>, SourceError> {
        if let Some(root) = self.spec.remote_mirror.clone().or(fallback) {
            return Ok(Arc::new(MirrorResolver { root }));
        }
        Ok(Arc::new(CacheResolver::new(self.cache()?, self.fetcher.clone())))
    }

    fn open_release(&self) -> Result<OpenedSource, SourceError> {
        let named = Named::parse(self.spec.version.as_deref())?;
        if self.spec.verify && !named.is_pinned() {
            return Err(named.refused_by_verify());
        }
        let cache = self.cache()?;
        let installed = by_name::ensure(&cache, self.fetcher.as_deref(), &named, &ExtractLimits::default())?;
        let mut warnings: Vec<String> = installed.warning.into_iter().collect();
        let (origin, release, layout) = match named.release() {
            Some(r) => {
                let pin = match r.commit {
                    Some(commit) => format!("commit {commit}"),
                    None => format!("tag {}, not pinned by commit", r.version),
                };
                (format!("{} ({pin})", named.describe()), Some(*r), Layout::Release(r.version.to_string()))
            }
            None => {
                let origin = named.describe();
                match releases::identify(&installed.path)? {
                    // Its digest is the catalog's: the release itself, vouched for.
                    (_, Some(r)) => {
                        warnings.clear();
                        (origin, Some(*r), Layout::Release(r.version.to_string()))
                    }
                    (digest, None) => {
                        warnings.push(unknown_upstream(&origin, &digest));
                        (origin, None, Layout::Unknown)
                    }
                }
            }
        };
        Ok(OpenedSource {
            manifests_dir: installed.path,
            resolver: self.resolver(None)?,
            origin,
            release,
            layout,
            warnings,
        })
    }

    /// What a tree that did not come from the catalog is: the release its digest names, the
    /// `--version` it was said to be (warned, or refused with `--verify`), or an unknown upstream.
    fn classify(
        &self,
        manifests: &Path,
        claimed: Option<&str>,
        origin: &str,
    ) -> Result<(Option<Release>, Layout, Vec<String>), SourceError> {
        let (digest, found) = releases::identify(manifests)?;
        let named = match claimed.or(self.spec.version.as_deref()).filter(|v| !v.eq_ignore_ascii_case("latest")) {
            Some(v) => Some(releases::select(Some(v))?),
            None => None,
        };
        let what = |r: Option<&Release>| match r {
            Some(r) => format!("the digest of {}", r.version),
            None => "no pinned release's digest".to_string(),
        };
        match (named, found) {
            (Some(n), Some(f)) if n == f => Ok((Some(*f), Layout::Release(f.version.to_string()), Vec::new())),
            (None, Some(f)) => Ok((Some(*f), Layout::Release(f.version.to_string()), Vec::new())),
            (Some(n), found) => {
                let message = format!(
                    "{origin}: --version {} was given, but the tree's release digest sha256:{digest} is {}; \
                     using the {} catalog data for an unverified tree",
                    n.version,
                    what(found),
                    n.version
                );
                if self.spec.verify {
                    return Err(SourceError::Security(format!("{message} (refused: --verify is set)")));
                }
                Ok((None, Layout::Release(n.version.to_string()), vec![message]))
            }
            (None, None) => {
                let message = unknown_upstream(origin, &digest);
                if self.spec.verify {
                    return Err(SourceError::Security(format!("{message} (refused: --verify is set)")));
                }
                Ok((None, Layout::Unknown, vec![message]))
            }
        }
    }

    fn open_dir(&self, dir: &Path) -> Result<OpenedSource, SourceError> {
        if dir.join(MANIFEST_FILE).is_file() {
            let manifest = verify_bundle_dir(dir)?;
            return self.opened_bundle(
                dir,
                manifest.release.map(|r| r.version),
                format!("bundle folder {}", dir.display()),
            );
        }
        let origin = format!("folder {}", dir.display());
        let (release, layout, warnings) = self.classify(dir, None, &origin)?;
        Ok(OpenedSource {
            manifests_dir: dir.to_path_buf(),
            resolver: self.resolver(None)?,
            origin,
            release,
            layout,
            warnings,
        })
    }

    /// Extract once into `imports/<sha256>/`, then open what it holds.
    fn open_archive(&self, archive: &Path) -> Result<OpenedSource, SourceError> {
        let cache = self.cache()?;
        super::extract::check_gzip(archive)?;
        let sha256 = sha256_file(archive)?;
        let key = format!("imports/{sha256}");
        let root = match cache.lookup(&key)? {
            Some(root) => root,
            None => {
                let (staging, _) = extract_staged(archive, &cache.path_of("imports")?, &ExtractLimits::default())?;
                if staging.path().join(MANIFEST_FILE).is_file() {
                    verify_bundle_dir(staging.path())?;
                } else {
                    single_top_folder(staging.path(), archive)?;
                }
                let origin = archive.display().to_string();
                cache.install(&key, staging.path(), Kind::Tree, &origin)?.0
            }
        };
        let origin = format!("archive {} (sha256 {sha256})", archive.display());
        if root.join(MANIFEST_FILE).is_file() {
            let manifest = verify_manifest_only(&root)?;
            return self.opened_bundle(&root, manifest, origin);
        }
        let manifests_dir = single_top_folder(&root, archive)?;
        let (release, layout, warnings) = self.classify(&manifests_dir, None, &origin)?;
        Ok(OpenedSource { manifests_dir, resolver: self.resolver(None)?, origin, release, layout, warnings })
    }

    fn opened_bundle(&self, root: &Path, version: Option<String>, origin: String) -> Result<OpenedSource, SourceError> {
        let manifests_dir = root.join("manifests");
        let known = version.filter(|v| releases::known().iter().any(|r| r.version == v.as_str()));
        let (release, layout, warnings) = self.classify(&manifests_dir, known.as_deref(), &origin)?;
        Ok(OpenedSource {
            manifests_dir,
            resolver: self.resolver(Some(root.join("remote")))?,
            origin,
            release,
            layout,
            warnings,
        })
    }
}

/// What a tree no release describes is said as: rendered by content.
fn unknown_upstream(origin: &str, digest: &str) -> String {
    format!(
        "{origin}: matches no pinned release (release digest sha256:{digest}); an unknown upstream: using the \
         catalog data of the release whose layout it is closest to, and the tree's own example/ as profile \
         multi-tenant (`kfctl-rs source inspect` shows how each entry is read)"
    )
}

/// The release version a cached (already verified) bundle names.
fn verify_manifest_only(root: &Path) -> Result<Option<String>, SourceError> {
    let path = root.join(MANIFEST_FILE);
    let text = std::fs::read(&path).map_err(|e| SourceError::io(&path, e))?;
    let manifest: super::bundle::BundleManifest =
        serde_json::from_slice(&text).map_err(|e| SourceError::invalid(path.display(), e.to_string()))?;
    Ok(manifest.release.map(|r| r.version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_folder_opens_with_a_given_mirror() {
        let tmp = tempfile::tempdir().unwrap();
        let spec = SourceSpec {
            source: Some(tmp.path().to_path_buf()),
            remote_mirror: Some(PathBuf::from("/mirror")),
            offline: true,
            ..SourceSpec::default()
        };
        let opened = open_source(&spec).unwrap();
        assert_eq!(opened.manifests_dir, tmp.path());
        let reference = crate::source::RemoteRef::parse("https://h.io/x.yaml").unwrap();
        let err = opened.resolver.resolve(&reference).unwrap_err().to_string();
        assert!(err.contains("/mirror/http/h.io/x.yaml"), "{err}");
    }

    #[test]
    fn offline_release_missing_from_the_cache_names_the_pull_command() {
        let tmp = tempfile::tempdir().unwrap();
        let spec = SourceSpec { offline: true, cache_dir: Some(tmp.path().to_path_buf()), ..SourceSpec::default() };
        let err = open_source(&spec).unwrap_err().to_string();
        assert!(
            err.contains("kubeflow/community-distribution 26.03.1: not available offline")
                && err.contains("kfctl-rs source pull --version 26.03.1"),
            "{err}"
        );
    }

    #[test]
    fn verify_refuses_what_is_not_pinned_before_any_request() {
        let tmp = tempfile::tempdir().unwrap();
        for version in ["26.03.1", "26.10", "0123456789abcdef0123456789abcdef01234567"] {
            let spec = SourceSpec {
                version: Some(version.into()),
                verify: true,
                cache_dir: Some(tmp.path().to_path_buf()),
                fetch: FetchOptions { github_base: "https://127.0.0.1:1".into(), ..FetchOptions::default() },
                ..SourceSpec::default()
            };
            let err = open_source(&spec).unwrap_err();
            assert!(err.is_security() && err.to_string().contains(version), "{err}");
        }
    }

    #[test]
    fn missing_source_path_is_an_error_naming_it() {
        let spec =
            SourceSpec { source: Some(PathBuf::from("/no/such/source")), offline: true, ..SourceSpec::default() };
        assert!(open_source(&spec).unwrap_err().to_string().contains("/no/such/source"));
    }
}
