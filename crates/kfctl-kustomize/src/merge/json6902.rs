//! JSON 6902 patches as kustomize applies them (github.com/evanphx/json-patch/v5).
//!
//! kustomize's library departs from RFC 6902 in ways visible in builds, and this module keeps
//! them: `replace` on a missing object key adds it; array indices may be negative (counting from
//! the end); `add` with index `-` appends; an empty path segment stands for the container itself;
//! `copy` from a missing object key copies `null`. Error texts are the library's, naming the
//! operation and the path (for example `error in remove for path: '/spec/x': Unable to remove
//! nonexistent key: x: missing value`).
//!
//! The `json-patch` crate is not used for applying: it follows the RFC (its `replace` fails on a
//! missing key, it has no negative indices) and its errors are worded differently.

use serde_json::Value;

/// Why an operation could not be applied, in the library's words.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Json6902Error {
    #[error("json: cannot unmarshal {0} into Go value of type jsonpatch.Patch")]
    NotAList(&'static str),
    #[error("Unexpected kind: {0}")]
    UnknownOp(String),
    #[error("strconv.Atoi: parsing {0:?}: invalid syntax")]
    NotAnIndex(String),
    #[error("value was not a proper array index: '{0}': strconv.Atoi: parsing {0:?}: invalid syntax")]
    NotAnArrayIndex(String),
    #[error("Unable to access invalid index: {0}: invalid index referenced")]
    InvalidIndex(i64),
    #[error("Unable to remove nonexistent key: {0}: missing value")]
    NoKey(String),
    #[error("invalid state detected")]
    InvalidState,
    #[error("replace operation value must be object or array")]
    ReplaceRoot,
    #[error("unable to move entire document to another path: invalid state detected")]
    MoveRoot,
    /// The operation and path the library names, with `missing value`.
    #[error("{0}: missing value")]
    Missing(String),
    #[error("testing value {0} failed: test failed")]
    TestFailed(String),
    /// An error of a step, after the operation and path the library names.
    #[error("{0}: {1}")]
    In(String, Box<Json6902Error>),
}

use Json6902Error as E;
type Result<T> = std::result::Result<T, Json6902Error>;

/// Apply `ops` (a list of operations) to `doc`, returning the patched copy or kustomize's error.
pub(super) fn apply(doc: &Value, ops: &Value) -> Result<Value> {
    let Value::Array(ops) = ops else {
        return Err(E::NotAList(json_kind(ops)));
    };
    let mut doc = doc.clone();
    for op in ops {
        apply_one(&mut doc, op)?;
    }
    Ok(doc)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

fn apply_one(doc: &mut Value, op: &Value) -> Result<()> {
    let field = |name: &str| op.get(name).and_then(Value::as_str);
    let kind = field("op").unwrap_or("unknown");
    let path = field("path");
    let value = op.get("value").cloned().unwrap_or(Value::Null);
    match kind {
        "add" => add(doc, path.ok_or_else(|| missing("add operation failed to decode path"))?, value),
        "remove" => remove(doc, path.ok_or_else(|| missing("remove operation failed to decode path"))?),
        "replace" => replace(doc, path.unwrap_or("unknown"), value),
        "move" => move_op(doc, field("from").unwrap_or("unknown"), path.unwrap_or("unknown")),
        "copy" => copy_op(doc, field("from").unwrap_or("unknown"), path.unwrap_or("unknown")),
        "test" => test(doc, path.unwrap_or("unknown"), &value),
        other => Err(E::UnknownOp(other.to_string())),
    }
}

fn missing(context: &str) -> Json6902Error {
    E::Missing(context.to_string())
}

fn wrap(context: &str, cause: Json6902Error) -> Json6902Error {
    E::In(context.to_string(), Box::new(cause))
}

/// RFC 6901 unescaping, in one pass as the library does.
fn decode_key(key: &str) -> String {
    key.replace("~1", "/").replace("~0", "~")
}

/// The container holding the last path segment, and that segment (the library's `findObject`).
fn find_container<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let mut cur = doc;
    for part in &split[1..split.len() - 1] {
        let key = decode_key(part);
        if key.is_empty() {
            continue;
        }
        let next = match cur {
            Value::Object(map) => map.get_mut(&key)?,
            Value::Array(items) => {
                let idx = resolve_index(&key, items.len()).ok()?;
                items.get_mut(idx)?
            }
            _ => return None,
        };
        if !next.is_object() && !next.is_array() {
            return None;
        }
        cur = next;
    }
    Some((cur, decode_key(split[split.len() - 1])))
}

/// An existing-element index: negative counts from the end.
fn resolve_index(key: &str, len: usize) -> Result<usize> {
    let idx: i64 = key.parse().map_err(|_| E::NotAnIndex(key.to_string()))?;
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let resolved = if idx < 0 { idx + len } else { idx };
    if resolved < 0 || resolved >= len {
        return Err(E::InvalidIndex(idx));
    }
    usize::try_from(resolved).map_err(|_| E::InvalidIndex(idx))
}

/// Read `key` of a container: `Ok(None)` for a missing object key.
fn get<'a>(container: &'a Value, key: &str) -> Result<Option<&'a Value>> {
    match container {
        _ if key.is_empty() => Ok(Some(container)),
        Value::Object(map) => Ok(map.get(key)),
        Value::Array(items) => resolve_index(key, items.len()).map(|i| items.get(i)),
        _ => Ok(None),
    }
}

fn container_add(container: &mut Value, key: &str, value: Value) -> Result<()> {
    match container {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) if key == "-" => {
            items.push(value);
            Ok(())
        }
        Value::Array(items) => {
            let idx: i64 = key.parse().map_err(|_| E::NotAnArrayIndex(key.to_string()))?;
            let size = i64::try_from(items.len()).unwrap_or(i64::MAX) + 1;
            let resolved = if idx < 0 { idx + size } else { idx };
            if idx >= size || resolved < 0 {
                return Err(E::InvalidIndex(idx));
            }
            items.insert(usize::try_from(resolved).unwrap_or(items.len()), value);
            Ok(())
        }
        _ => Err(E::InvalidState),
    }
}

fn container_remove(container: &mut Value, key: &str) -> Result<Value> {
    match container {
        Value::Object(map) => map.shift_remove(key).ok_or_else(|| E::NoKey(key.to_string())),
        Value::Array(items) => resolve_index(key, items.len()).map(|i| items.remove(i)),
        _ => Err(E::InvalidState),
    }
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<()> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (container, key) = find_container(doc, path)
        .ok_or_else(|| missing(&format!("add operation does not apply: doc is missing path: \"{path}\"")))?;
    container_add(container, &key, value).map_err(|e| wrap(&format!("error in add for path: '{path}'"), e))
}

fn remove(doc: &mut Value, path: &str) -> Result<()> {
    let (container, key) = find_container(doc, path)
        .ok_or_else(|| missing(&format!("remove operation does not apply: doc is missing path: \"{path}\"")))?;
    container_remove(container, &key).map(drop).map_err(|e| wrap(&format!("error in remove for path: '{path}'"), e))
}

fn replace(doc: &mut Value, path: &str, value: Value) -> Result<()> {
    if path.is_empty() {
        if !value.is_object() && !value.is_array() {
            return Err(E::ReplaceRoot);
        }
        *doc = value;
        return Ok(());
    }
    let (container, key) = find_container(doc, path)
        .ok_or_else(|| missing(&format!("replace operation does not apply: doc is missing path: {path}")))?;
    if get(container, &key).is_err() {
        return Err(missing(&format!("replace operation does not apply: doc is missing key: {path}")));
    }
    let context = format!("error in remove for path: '{path}'");
    match container {
        Value::Object(map) => {
            map.insert(key, value);
            Ok(())
        }
        Value::Array(items) => {
            let idx = resolve_index(&key, items.len()).map_err(|e| wrap(&context, e))?;
            items[idx] = value;
            Ok(())
        }
        _ => Err(wrap(&context, E::InvalidState)),
    }
}

fn move_op(doc: &mut Value, from: &str, path: &str) -> Result<()> {
    if from.is_empty() {
        return Err(E::MoveRoot);
    }
    let (container, key) = find_container(doc, from)
        .ok_or_else(|| missing(&format!("move operation does not apply: doc is missing from path: {from}")))?;
    let context = format!("error in move for path: '{key}'");
    get(container, &key).map_err(|e| wrap(&context, e))?;
    let value = container_remove(container, &key).map_err(|e| wrap(&context, e))?;
    let (container, key) = find_container(doc, path)
        .ok_or_else(|| missing(&format!("move operation does not apply: doc is missing destination path: {path}")))?;
    container_add(container, &key, value).map_err(|e| wrap(&format!("error in move for path: '{path}'"), e))
}

fn copy_op(doc: &mut Value, from: &str, path: &str) -> Result<()> {
    let (container, key) = find_container(doc, from)
        .ok_or_else(|| missing(&format!("copy operation does not apply: doc is missing from path: \"{from}\"")))?;
    let value = get(container, &key)
        .map_err(|e| wrap(&format!("error in copy for from: '{from}'"), e))?
        .cloned()
        .unwrap_or(Value::Null);
    let (container, key) = find_container(doc, path)
        .ok_or_else(|| missing(&format!("copy operation does not apply: doc is missing destination path: {path}")))?;
    container_add(container, &key, value).map_err(|e| wrap("error while adding value during copy", e))
}

fn test(doc: &mut Value, path: &str, expected: &Value) -> Result<()> {
    let failed = || E::TestFailed(path.to_string());
    if path.is_empty() {
        return if doc == expected { Ok(()) } else { Err(failed()) };
    }
    let (container, key) = find_container(doc, path)
        .ok_or_else(|| missing(&format!("test operation does not apply: is missing path: {path}")))?;
    let actual = get(container, &key).map_err(|e| wrap(&format!("error in test for path: '{path}'"), e))?;
    match actual {
        None if expected.is_null() => Ok(()),
        Some(actual) if !expected.is_null() && actual == expected => Ok(()),
        _ => Err(failed()),
    }
}
