//! The render cache: the engine's default render of a profile, kept per input.
//!
//! Rendering a profile is mostly the native kustomize build of upstream, which cannot change
//! while the files it read do not. [`build_kustomization`] serves that build from
//! [`kfctl_kustomize::build_cache`] (keyed by kfctl-rs's version, the executable, the
//! kustomization and the resolver; checked against every file, probe and real path the build
//! read, so a changed input is never served stale); values, parameters and output are applied
//! afresh on every run. The cache lives in `render/` under the kfctl-rs cache folder
//! (`KFCTL_CACHE_DIR`, ...), holds at most `MAX_BYTES` and is removed by
//! `kfctl-rs source clean`. `KFCTL_NO_CACHE=1` turns it off. A cache folder that cannot be
//! used never fails a render: it is built as if uncached.

pub use kfctl_kustomize::build_cache::Outcome;
use kfctl_kustomize::build_cache::{self, CacheSettings, Read};
use kfctl_kustomize::kustomization::Kustomization;
use kfctl_kustomize::{BuildOptions, ResMap};
use std::path::{Path, PathBuf};

/// The most the render cache keeps (least recently used entries go first).
pub(crate) const MAX_BYTES: u64 = 256 << 20;

/// The folder of the render cache in a kfctl-rs cache folder.
pub fn folder(cache_root: &Path) -> PathBuf {
    cache_root.join("render")
}

pub(crate) use crate::source::caches_turned_off as turned_off;

/// The settings, or `None` when the cache is off (`KFCTL_NO_CACHE`) or has no folder.
pub(crate) fn settings() -> Option<CacheSettings> {
    if turned_off() {
        return None;
    }
    let root = crate::source::Cache::default_root().ok()?;
    Some(CacheSettings { dir: folder(&root), version: env!("CARGO_PKG_VERSION").into(), max_bytes: MAX_BYTES })
}

/// [`kfctl_kustomize::build_kustomization`], through the cache when it is on. A hit decodes
/// what `read` asks: with `names`, only the objects so named (and maybe a few others), for a
/// caller after some objects of a build; with `defer_schemas`, CRDs as stubs whose schemas
/// stay in the entry (see [`build_cache::build_kustomization_named`]). Says whether the cache
/// served it ([`Outcome::Hit`]; [`Outcome::NotStored`] when the cache is off).
pub fn build_kustomization(
    dir: &Path,
    k: &Kustomization,
    options: &BuildOptions,
    read: Read,
) -> kfctl_kustomize::Result<(ResMap, Outcome)> {
    match settings() {
        Some(settings) => build_cache::build_kustomization_named(dir, k, options, &settings, read),
        None => kfctl_kustomize::build_kustomization(dir, k, options).map(|r| (r, Outcome::NotStored)),
    }
}

/// Remove the render cache (`source clean`); returns whether there was one.
pub fn clean(cache_root: &Path) -> std::io::Result<bool> {
    match std::fs::remove_dir_all(folder(cache_root)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}
