//! patchesStrategicMerge, patches (strategic merge and JSON 6902, with targets) and
//! patchesJson6902, as kustomize v5.6 applies them.
//!
//! **Which kind of patch.** A `patches` entry's text (inline, or the file at `path`) is a
//! strategic merge patch when every document in it is a Kubernetes object (a map with `kind`
//! and `metadata.name`; `List` kinds count as their items), and a JSON 6902 patch when it is a
//! list of operations, written as JSON (text starting with `[`) or YAML. Text that is both or
//! neither is refused.
//!
//! **Where it applies.** A strategic merge patch without a target applies to the object with
//! its own id, matched against every id the object has had (so a patch written against a
//! base's name still finds the prefixed object); no match, or several, is an error in
//! kustomize's words. With a target, a patch (which must then be a single document) applies to
//! every selected object. A JSON 6902 patch needs a target. `patchesStrategicMerge` entries are
//! file paths or inline YAML; `patchesJson6902` entries need a target.
//!
//! **What a strategic merge keeps.** kustomize's `ApplySmPatch`: the object keeps its
//! apiVersion and namespace, and its kind and name unless the entry's `options` allow
//! `allowKindChange` / `allowNameChange`. A patch that deletes the object (`$patch: delete` at
//! the top) removes it from the build. Names changed by a patch are remembered as previous ids.

use crate::error::{KustomizeError, PatchError, Result};
use crate::kustomization::{Patch, Selector};
use crate::loader::Loader;
use crate::merge;
use crate::objects::push_objects;
use crate::resmap::ResMap;
use crate::resource::{ResId, Resource, kid};
use serde_json::{Map, Value};
use std::path::Path;

/// What a patch entry may change about its targets' identity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PatchOptions {
    pub allow_name_change: bool,
    pub allow_kind_change: bool,
}

impl PatchOptions {
    fn from_entry(patch: &Patch) -> Self {
        let flag = |key: &str| patch.options.get(key).copied().unwrap_or(false);
        PatchOptions { allow_name_change: flag("allowNameChange"), allow_kind_change: flag("allowKindChange") }
    }
}

/// A parsed patch entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LoadedPatch {
    /// Strategic merge patches, one per object.
    Strategic(Vec<Value>),
    /// JSON 6902 operations.
    Json6902(Value),
}

/// `patchesStrategicMerge`: each entry is inline YAML or a file path; every patch applies to
/// the object with its id.
pub(crate) fn strategic_merge_files(
    resources: &mut ResMap,
    paths: &[String],
    dir: &Path,
    loader: &Loader,
) -> Result<()> {
    let mut loaded = Vec::new();
    for entry in paths {
        let source = describe("path", entry);
        match strategic_documents(entry, &source) {
            Ok(docs) if !docs.is_empty() => loaded.extend(docs),
            _ => {
                let (path, text) = loader.read_text(dir, entry)?;
                let source = path.display().to_string();
                loaded.extend(
                    strategic_documents(&text, &source)
                        .map_err(|e| KustomizeError::Patch { context: source.clone(), source: e })?,
                );
            }
        }
    }
    if !paths.is_empty() && loaded.is_empty() {
        return Err(KustomizeError::transform(
            format!("patchesStrategicMerge [{}]", paths.join(", ")),
            "patch appears to be empty: expected at least one object in these patches, as kustomize refuses them; \
             remove the entries or write a patch in them",
        ));
    }
    for patch in &loaded {
        let id = object_id(patch);
        let index = unique_target(resources, &id)
            .map_err(|source| KustomizeError::Patch { context: "patchesStrategicMerge".into(), source })?;
        apply_to_index(resources, index, patch, PatchOptions::default(), "patchesStrategicMerge")?;
    }
    Ok(())
}

/// `patches`: strategic merge or JSON 6902, with or without a target.
pub(crate) fn patches(resources: &mut ResMap, patches: &[Patch], dir: &Path, loader: &Loader) -> Result<()> {
    for entry in patches {
        let (text, source) = patch_text(entry, dir, loader)?;
        let options = PatchOptions::from_entry(entry);
        match classify(&text, &source)? {
            LoadedPatch::Strategic(docs) => apply_strategic(resources, &docs, entry.target.as_ref(), options, &source)?,
            LoadedPatch::Json6902(ops) => {
                let target = entry.target.as_ref().ok_or_else(|| {
                    KustomizeError::transform("patches", format!("must specify a target for JSON patch {source}"))
                })?;
                apply_json_to_selected(resources, &ops, target, &source, PreviousId::Always)?;
            }
        }
    }
    Ok(())
}

/// `patches`, stricter than kustomize (kfctl-rs profiles): an entry whose target selects no
/// object is an error, where kustomize silently does nothing; every error of an entry is
/// [`KustomizeError::TopPatch`], naming the entry by position.
pub(crate) fn patches_strict(resources: &mut ResMap, entries: &[Patch], dir: &Path, loader: &Loader) -> Result<()> {
    for (index, entry) in entries.iter().enumerate() {
        let wrap = |e: KustomizeError| KustomizeError::TopPatch { index, message: e.to_string() };
        if let Some(target) = &entry.target
            && resources.select(target).map_err(wrap)?.is_empty()
        {
            let message = format!(
                "its target ({}) selects no object; kustomize would silently do nothing, kfctl-rs refuses: fix the target or remove the patch",
                describe_selector(target)
            );
            return Err(KustomizeError::TopPatch { index, message });
        }
        patches(resources, std::slice::from_ref(entry), dir, loader).map_err(wrap)?;
    }
    Ok(())
}

/// A selector as `kind=Deployment, name=x`, its set fields only.
fn describe_selector(s: &Selector) -> String {
    let fields = [
        ("group", &s.group),
        ("version", &s.version),
        ("kind", &s.kind),
        ("name", &s.name),
        ("namespace", &s.namespace),
        ("labelSelector", &s.label_selector),
        ("annotationSelector", &s.annotation_selector),
    ];
    let set: Vec<String> = fields.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| format!("{k}={v}")).collect();
    if set.is_empty() { "empty: every object".into() } else { set.join(", ") }
}

/// `patchesJson6902`: JSON 6902 operations (JSON or YAML), a target required.
pub(crate) fn json6902(resources: &mut ResMap, patches: &[Patch], dir: &Path, loader: &Loader) -> Result<()> {
    for entry in patches {
        let (text, source) = patch_text(entry, dir, loader)?;
        let target = entry.target.as_ref().ok_or_else(|| {
            KustomizeError::transform("patchesJson6902", format!("must specify a target for patch {source}"))
        })?;
        let ops = json_operations(&text)
            .map_err(|e| KustomizeError::Patch { context: format!("patchesJson6902 {source}"), source: e })?;
        if ops.as_array().is_none_or(Vec::is_empty) {
            return Err(KustomizeError::transform("patchesJson6902", format!("patch appears to be empty: {source}")));
        }
        apply_json_to_selected(resources, &ops, target, &source, PreviousId::IfRenamed)?;
    }
    Ok(())
}

/// kustomize's `[patch: "…"]` / `[path: "…"]` naming of a patch in errors.
fn describe(what: &str, text: &str) -> String {
    format!("[{what}: {}]", serde_json::to_string(text).unwrap_or_default())
}

fn patch_text(entry: &Patch, dir: &Path, loader: &Loader) -> Result<(String, String)> {
    let inline = entry.patch.as_deref().map(str::trim).filter(|p| !p.is_empty());
    let path = entry.path.as_deref().filter(|p| !p.is_empty());
    match (inline, path) {
        (Some(text), None) => Ok((text.to_string(), describe("patch", text))),
        (None, Some(path)) => {
            let (_, text) = loader.read_text(dir, path)?;
            Ok((text, describe("path", path)))
        }
        (Some(_), Some(_)) => {
            Err(KustomizeError::transform("patches", "patch and path can't be set at the same time; keep one"))
        }
        (None, None) => Err(KustomizeError::transform("patches", "must specify one of patch and path")),
    }
}

/// Decide whether patch text is a strategic merge patch or a JSON 6902 patch.
///
/// As in kustomize, an empty file is an empty JSON 6902 patch (a no-op that still needs a
/// target), and text with no documents (only comments) qualifies as both kinds.
pub(crate) fn classify(text: &str, source: &str) -> Result<LoadedPatch> {
    if text.is_empty() {
        return Ok(LoadedPatch::Json6902(Value::Array(Vec::new())));
    }
    let strategic = strategic_documents(text, source);
    let no_documents = strategic.as_ref().is_ok_and(Vec::is_empty);
    let strategic = strategic.ok().filter(|docs| !docs.is_empty()).ok_or(());
    match (strategic, json_operations(text)) {
        (Err(_), Err(_)) if no_documents => Err(KustomizeError::transform(
            "patches",
            format!("illegally qualifies as both an SM and JSON patch: {source}; the patch has no documents"),
        )),
        (Ok(docs), Err(_)) => Ok(LoadedPatch::Strategic(docs)),
        (Err(_), Ok(ops)) => Ok(LoadedPatch::Json6902(ops)),
        (Ok(_), Ok(_)) => Err(KustomizeError::transform(
            "patches",
            format!("illegally qualifies as both an SM and JSON patch: {source}"),
        )),
        (Err(_), Err(_)) => Err(KustomizeError::transform(
            "patches",
            format!(
                "unable to parse SM or JSON patch from {source}; a strategic merge patch needs apiVersion, kind and metadata.name, a JSON patch is a list of operations"
            ),
        )),
    }
}

/// The objects of strategic merge patch text (lists expanded), or why it is not one.
fn strategic_documents(text: &str, source: &str) -> std::result::Result<Vec<Value>, PatchError> {
    let docs = kfctl_yaml::parse_resources(text, source)?;
    let mut objects = Vec::new();
    for (doc, _) in docs {
        push_objects(doc, source, &mut objects).map_err(|e| PatchError::Object(Box::new(e)))?;
    }
    Ok(objects.into_iter().map(|r| r.obj).collect())
}

/// JSON 6902 operations from JSON or YAML text, checked to decode as a patch.
fn json_operations(text: &str) -> std::result::Result<Value, PatchError> {
    let value: Value = if text.trim_start().starts_with('[') {
        serde_json::from_str(text)?
    } else {
        let mut docs = kfctl_yaml::parse_stream(text, "patch")?;
        if docs.len() != 1 {
            return Err(PatchError::NotOneList);
        }
        docs.remove(0)
    };
    serde_json::from_value::<json_patch::Patch>(value.clone())?;
    Ok(value)
}

fn apply_strategic(
    resources: &mut ResMap,
    docs: &[Value],
    target: Option<&Selector>,
    options: PatchOptions,
    source: &str,
) -> Result<()> {
    let Some(selector) = target else {
        for patch in docs {
            let id = object_id(patch);
            let index = unique_target(resources, &id)
                .map_err(|source| KustomizeError::NoPatchTarget { id: kid(&id), source })?;
            apply_to_index(resources, index, patch, options, source)?;
        }
        return Ok(());
    };
    let [patch] = docs else {
        return Err(KustomizeError::transform(
            "patches",
            format!(
                "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {source}"
            ),
        ));
    };
    let selected = resources.select(selector)?;
    let mut deleted = Vec::new();
    for index in selected {
        if apply_strategic_merge(resources.get_mut(index), patch, options, source)? {
            deleted.push(index);
        }
    }
    for index in deleted.into_iter().rev() {
        resources.remove(index);
    }
    Ok(())
}

fn apply_to_index(
    resources: &mut ResMap,
    index: usize,
    patch: &Value,
    options: PatchOptions,
    source: &str,
) -> Result<()> {
    if apply_strategic_merge(resources.get_mut(index), patch, options, source)? {
        resources.remove(index);
    }
    Ok(())
}

/// The one object matching `id` by any id it has had, or kustomize's error text.
fn unique_target(resources: &mut ResMap, id: &ResId) -> std::result::Result<usize, PatchError> {
    match resources.find_by_any_id(id).as_slice() {
        [index] => Ok(*index),
        [] => Err(PatchError::NoMatch(kid(id))),
        _ => Err(PatchError::MultipleMatches(kid(id))),
    }
}

/// Apply one strategic merge patch to one object, as kustomize's `ApplySmPatch` does.
/// Returns whether the patch deleted the object.
pub(crate) fn apply_strategic_merge(
    resource: &mut Resource,
    patch: &Value,
    options: PatchOptions,
    source: &str,
) -> Result<bool> {
    if patch.get("$patch").and_then(Value::as_str) == Some("delete") {
        return Ok(true);
    }
    let before = resource.current_id();
    let kind =
        if options.allow_kind_change { str_at(patch, &["kind"]).unwrap_or(&before.gvk.kind) } else { &before.gvk.kind };
    let name = if options.allow_name_change {
        str_at(patch, &["metadata", "name"]).unwrap_or(&before.name)
    } else {
        &before.name
    };
    let (kind, name) = (kind.to_string(), name.to_string());
    // The object is taken, not copied: on success it is replaced by the merge, and a failed
    // merge fails the build.
    let api_version = resource.api_version().to_string();
    let mut base = std::mem::take(&mut resource.obj);
    merge::drop_bare_nulls(&mut base, &resource.bare_nulls, &before.gvk);
    let mut patch = patch.clone();
    for obj in [&mut base, &mut patch] {
        set_identity(obj, &api_version, &kind, &name, &before.namespace);
    }
    let merged = merge::strategic_merge_with(base, &patch, &before.gvk, merge::SmpOptions::default());
    let merged = merged.map_err(|source_err| KustomizeError::Merge {
        context: format!("{source} on {}", kid(&before)),
        source: source_err,
    })?;
    let mut merged = match merged {
        Value::Object(map) if !map.is_empty() => Value::Object(map),
        _ => return Ok(true),
    };
    set_identity(&mut merged, &api_version, &kind, &name, &before.namespace);
    resource.obj = merged;
    resource.bare_nulls.clear();
    remember_if_renamed(resource, before);
    Ok(false)
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(value, |v, key| v.get(*key))?.as_str().filter(|s| !s.is_empty())
}

/// Set apiVersion, kind, name and namespace (removed when empty) on an object.
fn set_identity(obj: &mut Value, api_version: &str, kind: &str, name: &str, namespace: &str) {
    let Some(map) = obj.as_object_mut() else { return };
    map.insert("apiVersion".into(), Value::String(api_version.into()));
    map.insert("kind".into(), Value::String(kind.into()));
    if !map.get("metadata").is_some_and(Value::is_object) {
        map.insert("metadata".into(), Value::Object(Map::new()));
    }
    let meta = map.get_mut("metadata").and_then(Value::as_object_mut).expect("metadata was just made a map");
    meta.insert("name".into(), Value::String(name.into()));
    if namespace.is_empty() {
        meta.shift_remove("namespace");
    } else {
        meta.insert("namespace".into(), Value::String(namespace.into()));
    }
}

fn remember_if_renamed(resource: &mut Resource, before: ResId) {
    if resource.current_id() != before && resource.previous_ids.last() != Some(&before) {
        resource.previous_ids.push(before);
    }
}

/// When a JSON patch records the object's id as a previous one. kustomize's `patches`
/// (PatchTransformer) records it before every JSON patch with operations, renamed or not (an
/// empty one is a strategic merge patch of nothing there), which makes the
/// object a referral the name-reference fix-up then writes back (a RoleBinding subject gains
/// its ServiceAccount's namespace); `patchesJson6902` records nothing.
#[derive(Clone, Copy, PartialEq)]
enum PreviousId {
    Always,
    IfRenamed,
}

fn apply_json_to_selected(
    resources: &mut ResMap,
    ops: &Value,
    target: &Selector,
    source: &str,
    previous: PreviousId,
) -> Result<()> {
    for index in resources.select(target)? {
        let resource = resources.get_mut(index);
        let before = resource.current_id();
        resource.obj = apply_json6902(&resource.obj, ops).map_err(|e| KustomizeError::Patch {
            context: format!("JSON patch {source} on {}", kid(&before)),
            source: e,
        })?;
        if !resource.obj.is_object() {
            return Err(KustomizeError::transform(
                format!("JSON patch {source}"),
                "the patch must leave a map with apiVersion, kind and metadata",
            ));
        }
        let has_ops = ops.as_array().is_some_and(|o| !o.is_empty());
        if previous == PreviousId::Always && has_ops && resource.previous_ids.last() != Some(&before) {
            // kustomize stores it before applying; after a successful apply it is the same id.
            resource.previous_ids.push(before);
        } else {
            remember_if_renamed(resource, before);
        }
    }
    Ok(())
}

/// Apply JSON 6902 operations to an object as kustomize's library (evanphx/json-patch) does,
/// atomically: on error nothing changes. Unlike RFC 6902, `replace` of a missing key in an
/// existing map adds it.
fn apply_json6902(obj: &Value, ops: &Value) -> std::result::Result<Value, PatchError> {
    let patch: json_patch::Patch = serde_json::from_value(ops.clone()).map_err(PatchError::NotAPatch)?;
    let mut out = obj.clone();
    for op in patch.0 {
        let op = match op {
            json_patch::PatchOperation::Replace(r) if replaces_missing_key(&out, &r.path) => {
                json_patch::PatchOperation::Add(json_patch::AddOperation { path: r.path, value: r.value })
            }
            other => other,
        };
        json_patch::patch(&mut out, std::slice::from_ref(&op))?;
    }
    Ok(out)
}

/// Whether `path` names a key that is missing from a map that exists.
fn replaces_missing_key(doc: &Value, path: &json_patch::jsonptr::Pointer) -> bool {
    let Some((parent, last)) = path.split_back() else { return false };
    doc.pointer(parent.as_str())
        .and_then(Value::as_object)
        .is_some_and(|map| !map.contains_key(last.decoded().as_ref()))
}

/// The id a patch document names.
fn object_id(obj: &Value) -> ResId {
    let r = Resource::new(obj.clone());
    r.current_id()
}

#[cfg(test)]
#[path = "patches_tests.rs"]
mod tests;
