//! The native kustomize engine.
//!
//! One entry point, [`build`], does what `kustomize build DIR` does: accumulate the folder
//! tree (`accumulate.rs`), then the steps kustomize runs once at the top — hash suffixes for
//! generated objects, the name-reference fix-up, vars — drop local-config objects, sort, and
//! add the `managedByLabel` build metadata. [`build_kustomization`] does the same for an
//! in-memory [`kustomization::Kustomization`] (profiles render this way).
//! The builtin generators and transformers live one per file in `builtins/`; strategic merge
//! in `merge/`. Output is written by [`kfctl_yaml`] exactly as kustomize writes it.
//! A custom schema named by `openapi: path:` (`openapi.rs`) is active on the build's thread
//! for the whole build, as kustomize's one global schema is ([`with_schema_of`] makes it
//! active again afterwards); `buildMetadata` annotations are tracked during accumulation
//! (`build_metadata.rs`).
//!
//! The engine reads files only through the [`Loader`]: the load restriction
//! ([`LoadRestriction`]), remote references ([`remote::RemoteResolver`]) and the parse cache
//! all live there. [`build_cache`] keeps results on disk, checked against everything the
//! loader read.
//!
//! Besides the build, callers use a few of the engine's parts directly: kustomize's content
//! hash ([`content_hash`], [`go_json`]), its output order ([`SortOrder`], [`KindRanks`]),
//! object identities ([`Gvk`], [`ResId`]) and kind scope ([`is_cluster_scoped`]).

#![deny(missing_docs, unreachable_pub)]

mod accumulate;
pub mod build_cache;
mod build_metadata;
mod builtins;
mod error;
mod fieldcase;
mod fieldpath;
mod growth;
mod gvk;
pub mod kustomization;
mod loader;
mod merge;
mod name_index;
mod objects;
mod openapi;
mod parse_ahead;
mod prefetch;
mod read;
mod realpath;
pub mod remote;
mod resmap;
mod resource;
mod unsupported;

pub use builtins::hash::{content_hash, go_json};
pub use builtins::sort::{KindRanks, Order as SortOrder};
pub use error::{ConflictingFieldSpec, FieldError, GeneratorError, KustomizeError, PatchError, Result};
pub use growth::json_size;
pub use gvk::Gvk;
pub use loader::{LoadRestriction, Loader};
pub use merge::{MergeError, SchemaError, is_cluster_scoped};
pub use read::MAX_FILE_BYTES;
pub use resmap::ResMap;
pub use resource::{ResId, Resource};

use remote::RemoteResolver;
use std::path::Path;
use std::sync::Arc;

/// How to build: where remote references come from, how far file reads may reach, and whether
/// the top-level `patches` must all apply.
#[derive(Clone)]
pub struct BuildOptions {
    /// Turns remote `resources:` entries into local paths ([`remote::NoRemote`] by default,
    /// which refuses them).
    pub remote: Arc<dyn RemoteResolver>,
    /// kustomize's `--load-restrictor`: [`LoadRestriction::RootOnly`] by default.
    pub restriction: LoadRestriction,
    /// Stricter than kustomize, for kfctl-rs profiles: in the in-memory kustomization of
    /// [`build_kustomization`], a `patches` entry whose target selects no object (or whose
    /// untargeted strategic merge patch finds none) is [`KustomizeError::TopPatch`], naming the
    /// entry. Never changes the output, only refuses. Nested kustomizations are not affected.
    pub strict_patches: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            remote: Arc::new(crate::remote::NoRemote),
            restriction: LoadRestriction::RootOnly,
            strict_patches: false,
        }
    }
}

/// Build a kustomization folder: the equivalent of `kustomize build DIR`.
pub fn build(dir: &Path, options: &BuildOptions) -> Result<ResMap> {
    let loader = Loader::new(options.remote.clone(), options.restriction);
    prefetch::warm(&loader, dir);
    build_folder(&loader, dir)
}

/// Run `f` with the custom schema that the kustomization in `dir` names (`openapi: path:`)
/// active, as it was during the build of `dir`: for callers that ask about scope after the
/// build (`kfctl-rs build -o FOLDER` names files by scope, as kustomize does with its schema).
pub fn with_schema_of<R>(dir: &Path, options: &BuildOptions, f: impl FnOnce() -> R) -> Result<R> {
    let loader = Loader::new(options.remote.clone(), options.restriction);
    let (path, k) = loader.kustomization(dir)?;
    let (schema, _) = openapi::top(&loader, dir, &path, &k)?;
    Ok(merge::custom::with_active(schema, f))
}

/// Accumulate and finish the folder `dir`, with the schema its `openapi:` names active.
pub(crate) fn build_folder(loader: &Loader, dir: &Path) -> Result<ResMap> {
    // A folder without a readable kustomization is reported by the accumulator, as before.
    let (schema, state, tracking) = match loader.kustomization(dir) {
        Ok((path, k)) => {
            let (schema, state) = openapi::top(loader, dir, &path, &k)?;
            (schema, state, build_metadata::tracking(&k))
        }
        Err(_) => (None, openapi::State::default(), None),
    };
    merge::custom::with_active(schema, || {
        let (top, acc) = accumulate::Accumulator::new(loader).openapi(state).tracking(tracking).folder(dir)?;
        finish(top, acc)
    })
}

/// Accumulate and finish an in-memory kustomization, with the schema its `openapi:` names.
pub(crate) fn build_in_memory(
    loader: &Loader,
    dir: &Path,
    kustomization: &kustomization::Kustomization,
    strict_patches: bool,
) -> Result<ResMap> {
    let (schema, state) = openapi::top(loader, dir, dir, kustomization)?;
    merge::custom::with_active(schema, || {
        let acc = accumulate::Accumulator::new(loader)
            .strict_patches(strict_patches)
            .openapi(state)
            .tracking(build_metadata::tracking(kustomization))
            .in_memory(dir, kustomization)?;
        finish(kustomization.clone(), acc)
    })
}

/// Build an in-memory kustomization as if it were the kustomization file of `dir` (a folder
/// that need not exist; its entries resolve relative to it). Profiles render this way.
pub fn build_kustomization(
    dir: &Path,
    kustomization: &kustomization::Kustomization,
    options: &BuildOptions,
) -> Result<ResMap> {
    let loader = Loader::new(options.remote.clone(), options.restriction);
    prefetch::warm_entries(&loader, dir, kustomization);
    build_in_memory(&loader, dir, kustomization, options.strict_patches)
}

pub(crate) fn finish(top: kustomization::Kustomization, acc: accumulate::Accumulated) -> Result<ResMap> {
    let mut resources = acc.resources;
    builtins::hash::add_hash_suffixes(&mut resources)?;
    builtins::nameref::fix_back_references(&mut resources, &acc.config)?;
    builtins::vars::resolve(&mut resources, &acc.vars, &acc.config)?;
    drop_local_config(&mut resources);
    build_metadata::strip_unrequested(&mut resources, &top);
    resources.iter_mut().for_each(rewrite_annotations);
    builtins::sort::apply(&mut resources, top.sort_options.as_ref())?;
    if top.build_metadata.iter().any(|option| option == unsupported::MANAGED_BY_LABEL) {
        add_managed_by_label(&mut resources)?;
    }
    Ok(resources)
}

/// `buildMetadata: [managedByLabel]` of the kustomization being built (kustomize ignores it in
/// bases): every object gets `app.kubernetes.io/managed-by`, with the version the reference
/// kustomize (v5.6.0 as embedded in kubectl 1.33) reports for itself, `(devel)`.
fn add_managed_by_label(resources: &mut ResMap) -> Result<()> {
    let label = std::collections::BTreeMap::from([(MANAGED_BY.to_string(), "kustomize-(devel)".to_string())]);
    let spec = kustomization::FieldSpec { path: "metadata/labels".into(), create: true, ..Default::default() };
    builtins::fieldspec::add_pairs(resources, &label, &[spec])
}

const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// Objects annotated `config.kubernetes.io/local-config: "true"` are not part of the output.
fn drop_local_config(resources: &mut ResMap) {
    let kept: Vec<_> = std::mem::take(resources)
        .into_vec()
        .into_iter()
        .filter(|r| {
            r.obj.pointer("/metadata/annotations/config.kubernetes.io~1local-config").and_then(|v| v.as_str())
                != Some("true")
        })
        .collect();
    resources.replace_all(kept);
}

/// kustomize's last step rewrites every object's annotations (removing its build
/// annotations), as strings: setting an empty set removes the field, so `annotations: {}` or
/// `annotations: null` disappear from the output (empty labels stay), and a value that is not
/// a string is written as one (`true` as `"true"`; values read from files keep their source
/// text already, see [`kfctl_yaml::parse_resources`]).
fn rewrite_annotations(resource: &mut resource::Resource) {
    let Some(meta) = resource.obj.get_mut("metadata").and_then(serde_json::Value::as_object_mut) else { return };
    if meta.get("annotations").is_some_and(|a| a.is_null() || a.as_object().is_some_and(|m| m.is_empty())) {
        meta.remove("annotations");
    }
    if let Some(annotations) = meta.get_mut("annotations").and_then(serde_json::Value::as_object_mut) {
        for value in annotations.values_mut().filter(|v| !v.is_string()) {
            let text = if value.is_null() { "null".to_string() } else { value.to_string() };
            *value = serde_json::Value::String(text);
        }
    }
}

/// The objects of a build, as JSON values in output order.
pub fn objects(resources: &ResMap) -> Vec<serde_json::Value> {
    resources.iter().map(|r| r.obj.clone()).collect()
}

/// The objects of a build, consuming it (no copies).
pub fn into_objects(resources: ResMap) -> Vec<serde_json::Value> {
    resources.into_vec().into_iter().map(|r| r.obj).collect()
}
