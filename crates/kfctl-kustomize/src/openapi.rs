//! The `openapi:` field: which schema strategic merge and namespace scoping use.
//!
//! kustomize v5.6 holds one schema for the whole build, set by the first kustomization that
//! names one, in load order:
//! - the kustomization being built sets it first (`version:` a built-in version, or `path:` a
//!   custom schema file, see [`crate::merge::custom`]; both at once is an error);
//! - a base or component sets it only when nothing set it before; once set, later ones are
//!   ignored, though a `path:` they name must still be readable.
//!
//! A `path:` in a base or component that would set the schema is refused by name, as a
//! kustomize bug the engine does not reproduce: kyaml's `SetSchema` swaps the one global
//! schema in the middle of the build, and its lazy `initSchema` then either parses the file
//! alone (the built-in kinds lose their merge keys) or adds its definitions to the built-in
//! schema already parsed — depending on whether any lookup (a strategic merge, the scope of
//! a kind kyaml has not precomputed, even reading such an object) happened before the folder
//! was loaded. Put `openapi: path:` in the kustomization being built instead.

use super::error::{KustomizeError, Result};
use super::kustomization::Kustomization;
use super::loader::Loader;
use super::merge::custom::{self, CustomSchema};
use serde_json::Value;
use std::path::Path;

/// The one OpenAPI version kustomize v5.6 has built in, the schema the engine's tables hold.
pub(crate) const BUILTIN_VERSION: &str = "v1.21.2";

/// What the kustomizations loaded so far have set.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct State {
    set: bool,
}

/// The top kustomization's `openapi:` (in folder `dir`; `origin` names it in errors): the
/// custom schema to activate for the build, and the state nested kustomizations see.
pub(crate) fn top(
    loader: &Loader,
    dir: &Path,
    origin: &Path,
    k: &Kustomization,
) -> Result<(Option<&'static CustomSchema>, State)> {
    let (path, version) = fields(k, origin)?;
    check_both(path, version, origin)?;
    let version = version.filter(|v| !v.is_empty());
    if let Some(version) = version {
        check_version(version, origin)?;
    }
    let schema = match path {
        Some(path) => Some(load(loader, dir, path)?),
        None => None,
    };
    Ok((schema, State { set: schema.is_some() || version.is_some() }))
}

/// A base's or component's `openapi:`, in load order.
pub(crate) fn nested(loader: &Loader, dir: &Path, origin: &Path, k: &Kustomization, state: &mut State) -> Result<()> {
    let (path, version) = fields(k, origin)?;
    if let Some(path) = path {
        loader.read_bytes(dir, path)?;
    }
    if state.set {
        return Ok(());
    }
    check_both(path, version, origin)?;
    if path.is_some() {
        return Err(crate::unsupported::refusal(origin, "openapi.path"));
    }
    if let Some(version) = version.filter(|v| !v.is_empty()) {
        check_version(version, origin)?;
        state.set = true;
    }
    Ok(())
}

/// `path` and `version`, each when present (an empty `version` sets nothing, but still
/// conflicts with a `path`, as in kustomize).
fn fields<'k>(k: &'k Kustomization, origin: &Path) -> Result<(Option<&'k str>, Option<&'k str>)> {
    let Some(openapi) = k.openapi.as_ref().filter(|v| !v.is_null()) else { return Ok((None, None)) };
    let map = openapi.as_object().ok_or_else(|| invalid(origin, "`openapi` must be a map of `path` or `version`"))?;
    let text = |key: &str| -> Result<Option<&'k str>> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(invalid(origin, &format!("`openapi.{key}` must be a string"))),
        }
    };
    // Other keys mean nothing to kustomize either.
    Ok((text("path")?, text("version")?))
}

fn check_both(path: Option<&str>, version: Option<&str>, origin: &Path) -> Result<()> {
    match (path, version) {
        (Some(_), Some(_)) => Err(invalid(
            origin,
            "builtin version and custom schema provided, cannot use both (keep `openapi.path` or `openapi.version`)",
        )),
        _ => Ok(()),
    }
}

/// Like kustomize, an `openapi.version` that is not built in is an error.
fn check_version(version: &str, origin: &Path) -> Result<()> {
    if version == BUILTIN_VERSION {
        return Ok(());
    }
    Err(invalid(
        origin,
        &format!(
            "the specified OpenAPI version `{version}` is not built in; kustomize has {BUILTIN_VERSION} only (remove `openapi`)"
        ),
    ))
}

/// Read and parse a custom schema file named relative to `dir`.
fn load(loader: &Loader, dir: &Path, relative: &str) -> Result<&'static CustomSchema> {
    let (real, text) = loader.read_text(dir, relative)?;
    custom::parse(&text, &real.display().to_string()).map_err(|source| KustomizeError::Schema { path: real, source })
}

fn invalid(origin: &Path, message: &str) -> KustomizeError {
    KustomizeError::InvalidKustomization { path: origin.to_path_buf(), message: message.to_string() }
}
