//! Patching objects as kustomize v5.6 does: strategic merge patches, JSON 6902 patches, and the
//! facts about built-in kinds that both need.
//!
//! # Strategic merge
//!
//! kustomize applies a strategic merge patch with kyaml's `merge2` walker, not with Kubernetes'
//! apimachinery. The two differ, and builds show kyaml's behaviour, so [`strategic_merge`] is a
//! port of kyaml's walk (see `walk.rs`) over a node arena (`tree.rs`) that keeps kyaml's node
//! identity and text-based matching:
//!
//! - maps merge recursively, a `null` in the patch deletes the key, `$patch: delete|replace`
//!   apply to maps and list elements, and `- $patch: replace|delete` to whole lists;
//! - lists of built-in kinds whose OpenAPI strategy names `merge` merge element-wise by their
//!   merge keys (`x-kubernetes-list-map-keys` when the schema has them, so container ports match
//!   on `containerPort` *and* `protocol`), patch elements first, then the target's others; lists
//!   of scalars with `merge` merge as a set; every other list is replaced, and so is every list
//!   of a custom resource (no schema);
//! - `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…` mean nothing to kyaml:
//!   they are merged as ordinary fields and stay in the output, as in kustomize.
//!
//! Around the walk, kustomize's `Resource.ApplySmPatch` keeps the target's identity: the name
//! and kind come back unless the patch was allowed to change them, the namespace always comes
//! back, and an object the patch empties (`$patch: delete` at the top) is deleted.
//!
//! # Tables
//!
//! Merge keys, strategies, built-in kinds and their scope come from a table generated from the
//! OpenAPI data kustomize embeds (`openapi_table.rs`, written by `generate_table.py`).
//! Namespace scope follows kustomize's `IsNamespaceableKind`: a kind the data lists as
//! cluster-scoped is cluster-scoped; every other kind, custom resources included, is namespaced.

pub(crate) mod custom;
mod directive;
#[cfg(test)]
mod json6902;
// Generated: rustfmt leaves it as the generator writes it (tests/engine_tables.rs compares them).
#[rustfmt::skip]
mod openapi_table;
pub(crate) mod schema;
mod schema_types;
mod tree;
mod walk;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod tests;

use crate::gvk::Gvk;
use serde_json::{Map, Value};
use tree::Tree;

pub use custom::SchemaError;
pub(crate) use schema::merge_keys_at;

/// Why a patch could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The patch or its target is not a map at the top.
    #[error("strategic merge patch: the {what} must be a map, found {found}")]
    NotAMap {
        /// Which one: `patch` or `target`.
        what: &'static str,
        /// The offending value, as JSON.
        found: String,
    },
    /// A node of the patch or the target has another YAML kind (map, sequence, scalar) than the
    /// merge needs there, as kyaml reports it.
    #[error("strategic merge patch: wrong node kind: expected {expected} but got {found}: node contents:\n{value}")]
    WrongKind {
        /// The kind needed (`MappingNode`, `SequenceNode`, `ScalarNode`).
        expected: &'static str,
        /// The kind found.
        found: &'static str,
        /// The node, as JSON.
        value: String,
    },
    /// A `$patch` directive other than `merge`, `replace` or `delete`; holds the directive.
    #[error("strategic merge patch: unknown patch strategy '{0}' (expected delete, replace or merge)")]
    UnknownStrategy(String),
    /// A patch node kustomize has no merge strategy for: a null, or a scalar where the walk
    /// needs a map or a list.
    #[error("strategic merge patch: no implemented strategic merge patch strategy for {value}")]
    NoStrategy {
        /// The node's text (`null` for a null).
        value: String,
    },
}

/// What a strategic merge patch may change about its target's identity (kustomize's patch
/// `options`, carried by the patch as build annotations).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SmpOptions {
    pub allow_name_change: bool,
    pub allow_kind_change: bool,
}

/// Apply a strategic merge patch to `base`, an object of kind `gvk`, as kustomize does.
/// Returns `Value::Null` when the patch deletes the object.
#[cfg(test)]
pub(crate) fn strategic_merge(base: &Value, patch: &Value, gvk: &Gvk) -> Result<Value, MergeError> {
    strategic_merge_with(base.clone(), patch, gvk, SmpOptions::default())
}

/// [`strategic_merge`] of a target given by value, with the patch's options.
pub(crate) fn strategic_merge_with(
    base: Value,
    patch: &Value,
    gvk: &Gvk,
    options: SmpOptions,
) -> Result<Value, MergeError> {
    let (Value::Object(base_map), Value::Object(patch_map)) = (&base, patch) else {
        let (what, found) = if base.is_object() { ("patch", patch) } else { ("target", &base) };
        return Err(MergeError::NotAMap { what, found: found.to_string() });
    };
    let identity = Identity::of(base_map);
    let mut patch_map = patch_map.clone();
    if !gvk.version.is_empty() {
        // As kustomize does for the patch copy it applies to each target.
        patch_map.insert("apiVersion".into(), Value::String(gvk.api_version()));
    }
    let mut tree = Tree::default();
    let dest = tree.add_target(base);
    let origin = tree.add(&Value::Object(patch_map));
    let schema = schema::schema_for_gvk(gvk);
    let merged = walk::Merger { tree: &mut tree }.walk([Some(dest), Some(origin)], schema)?;
    let mut result = match merged.map(|id| tree.into_value(id)) {
        Some(Value::Object(map)) if !map.is_empty() => map,
        _ => return Ok(Value::Null),
    };
    identity.restore(&mut result, options);
    Ok(Value::Object(result))
}

/// The target's kind, name and namespace, which kustomize puts back after a merge.
struct Identity {
    kind: String,
    name: String,
    namespace: String,
}

impl Identity {
    fn of(base: &Map<String, Value>) -> Self {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
        let meta = |key: &str| text(base.get("metadata").and_then(|m| m.get(key)));
        Identity { kind: text(base.get("kind")), name: meta("name"), namespace: meta("namespace") }
    }

    /// kustomize's `ApplySmPatch` epilogue: kind and name come back unless allowed to change,
    /// the namespace always comes back (and goes away when the target had none).
    fn restore(self, result: &mut Map<String, Value>, options: SmpOptions) {
        if !options.allow_kind_change {
            result.insert("kind".into(), Value::String(self.kind));
        }
        if !options.allow_name_change {
            metadata_mut(result).insert("name".into(), Value::String(self.name));
        }
        if self.namespace.is_empty() {
            if let Some(Value::Object(meta)) = result.get_mut("metadata") {
                meta.shift_remove("namespace");
            }
        } else {
            metadata_mut(result).insert("namespace".into(), Value::String(self.namespace));
        }
    }
}

fn metadata_mut(obj: &mut Map<String, Value>) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj.insert("metadata".into(), Value::Object(Map::new()));
    }
    obj.get_mut("metadata").and_then(Value::as_object_mut).expect("metadata was just made a map")
}

/// A JSON 6902 patch that could not be applied, naming the operation and path.
#[cfg(test)]
#[derive(Debug, thiserror::Error)]
#[error("json patch: {0}")]
pub(crate) struct Json6902Failed(#[from] json6902::Json6902Error);

/// Apply a JSON 6902 patch (`ops`: the list of operations) to `obj`, as kustomize does.
#[cfg(test)]
pub(crate) fn apply_json6902(obj: &Value, ops: &Value) -> Result<Value, Json6902Failed> {
    Ok(json6902::apply(obj, ops)?)
}

pub use schema::is_cluster_scoped;

/// Whether kustomize's OpenAPI data has a schema for this kind (a built-in kind); other kinds
/// are custom resources, whose lists patches replace.
#[cfg(test)]
pub(crate) fn is_builtin_kind(gvk: &Gvk) -> bool {
    schema::resource_for_gvk(gvk).is_some_and(|r| r.schema.is_some())
}

/// Before a strategic merge, remove the bare nulls (`key:` with no value) that kyaml's walker
/// would clear: merge2 keeps a null the patch does not mention only when it was written out
/// (`null`, `~`). The walker reaches every map field and the elements of lists merged by key,
/// but not into lists it replaces, so bare nulls inside those stay.
pub(crate) fn drop_bare_nulls(obj: &mut Value, pointers: &[String], gvk: &Gvk) {
    for pointer in pointers {
        let steps: Vec<String> = pointer.split('/').skip(1).map(|s| s.replace("~1", "/").replace("~0", "~")).collect();
        let mut path: Vec<&str> = Vec::new();
        let mut cur = &*obj;
        let mut walked = true;
        for step in &steps {
            match cur {
                Value::Array(items) => {
                    if merge_keys_at(gvk, &path).is_none() {
                        walked = false;
                        break;
                    }
                    path.push("[]");
                    match step.parse::<usize>().ok().and_then(|i| items.get(i)) {
                        Some(next) => cur = next,
                        None => break,
                    }
                }
                Value::Object(map) => {
                    path.push(step);
                    match map.get(step.as_str()) {
                        Some(next) => cur = next,
                        None => break,
                    }
                }
                _ => break,
            }
        }
        if walked && obj.pointer(pointer).is_some_and(Value::is_null) {
            remove_at(obj, pointer);
        }
    }
}

fn remove_at(obj: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else { return };
    let key = last.replace("~1", "/").replace("~0", "~");
    match obj.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.shift_remove(&key);
        }
        Some(Value::Array(items)) => {
            if let Ok(i) = key.parse::<usize>()
                && i < items.len()
            {
                items.remove(i);
            }
        }
        _ => {}
    }
}
