//! Server-side apply and field ownership (`metadata.managedFields`).
//!
//! Upstream tracks ownership with structured-merge-diff, which knows every schema: which lists
//! are maps keyed by `name`, which are sets, which are atomic. The test API server has no schemas,
//! so it keeps a simplified but honest model:
//!
//! * a *field path* is a chain of map keys (`spec.template.metadata.labels.app`); maps are
//!   descended to their leaves, while scalars, lists and empty maps are leaves. **Lists are
//!   atomic**: applying a list owns and replaces the whole list (upstream merges `containers` by
//!   name; here two managers each owning one container would conflict);
//! * each manager entry (`manager`, `operation` Apply/Update, `subresource`) owns a set of paths,
//!   stored in `managedFields` in the real `FieldsV1` encoding (`{"f:spec":{"f:replicas":{}}}`);
//! * an apply conflicts when a path it sets is owned by another entry and the live value differs;
//!   without `force` that is a 409 whose message is worded exactly like upstream's
//!   (`Apply failed with 1 conflict: conflict with "other": .spec.replicas`); with `force` the
//!   other entries lose those paths;
//! * paths the applier owned before but no longer sends are removed, unless another entry owns them;
//! * an update (PUT, merge/JSON patch, controller writes) moves the paths whose values changed to
//!   the updater, never conflicting, as upstream does; an update that sets `managedFields`
//!   itself replaces them (`[{}]` clears them), as upstream allows;
//! * when an apply changes nothing, the entry keeps its old `time`, so the object stays byte-equal
//!   and the store does not bump `resourceVersion`.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::errors::{ApiError, object_details};

/// A chain of map keys from the object root.
pub(crate) type FieldPath = Vec<String>;
/// A set of owned paths.
pub(crate) type FieldSet = BTreeSet<FieldPath>;

/// Metadata fields the server owns; they never appear in field sets and applies never write them.
const SERVER_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
];

fn untracked(path: &[String]) -> bool {
    match path {
        [top] => top == "apiVersion" || top == "kind",
        [meta, key, ..] => meta == "metadata" && SERVER_METADATA.contains(&key.as_str()),
        _ => false,
    }
}

fn walk(value: &Value, prefix: &mut FieldPath, out: &mut FieldSet) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                prefix.push(key.clone());
                if !untracked(prefix) {
                    walk(child, prefix, out);
                }
                prefix.pop();
            }
        }
        _ if !prefix.is_empty() => {
            out.insert(prefix.clone());
        }
        _ => {}
    }
}

/// Every leaf path of a value (maps descended, lists atomic), minus server-owned metadata.
pub(crate) fn leaf_paths(value: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

/// Encode a field set as `FieldsV1`.
pub(crate) fn fields_v1(set: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut node = &mut root;
        for key in path {
            let entry = node.entry(format!("f:{key}")).or_insert_with(|| json!({}));
            node = entry.as_object_mut().expect("fieldsV1 nodes are maps");
        }
    }
    Value::Object(root)
}

fn parse_node(node: &Value, prefix: &mut FieldPath, out: &mut FieldSet) {
    let Some(map) = node.as_object().filter(|m| !m.is_empty()) else {
        if !prefix.is_empty() {
            out.insert(prefix.clone());
        }
        return;
    };
    for (key, child) in map {
        match key.strip_prefix("f:") {
            Some(field) => {
                prefix.push(field.to_string());
                parse_node(child, prefix, out);
                prefix.pop();
            }
            // `.`, `k:{..}`, `v:..`: list-item ownership from a schema-aware server; the list is atomic here
            None if !prefix.is_empty() => {
                out.insert(prefix.clone());
            }
            None => {}
        }
    }
}

/// Decode `FieldsV1` into a field set.
pub(crate) fn parse_fields_v1(fields: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    parse_node(fields, &mut Vec::new(), &mut out);
    out
}

/// The value at a path, if present.
pub(crate) fn get_path<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.as_object()?.get(key))
}

/// Remove the value at a path, then any parent maps the removal left empty.
pub(crate) fn remove_path(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut node = &mut *value;
    for key in parents {
        let Some(next) = node.as_object_mut().and_then(|m| m.get_mut(key)) else { return };
        node = next;
    }
    if let Some(map) = node.as_object_mut() {
        map.remove(last);
        if map.is_empty() && !parents.is_empty() {
            remove_path(value, parents);
        }
    }
}

/// Merge an applied configuration into a live object: maps key by key, everything else replaced;
/// a `null` in the configuration removes the field.
pub(crate) fn merge_into(live: &mut Value, config: &Value) {
    match (live.as_object_mut(), config.as_object()) {
        (Some(live_map), Some(config_map)) => {
            for (key, value) in config_map {
                if value.is_null() {
                    live_map.remove(key);
                } else if let Some(existing) = live_map.get_mut(key) {
                    merge_into(existing, value);
                } else {
                    let mut fresh = json!({});
                    merge_into(&mut fresh, value);
                    live_map.insert(key.clone(), if value.is_object() { fresh } else { value.clone() });
                }
            }
        }
        _ => *live = config.clone(),
    }
}

/// One entry of `managedFields`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ManagerEntry {
    /// Field manager name (`kubectl`, `kfctl-rs`, ...).
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// The API version the fields were written at.
    pub api_version: String,
    /// RFC 3339 time of the last change of this entry.
    pub time: String,
    /// `status` for writes through the status subresource.
    pub subresource: Option<String>,
    /// Owned paths.
    pub fields: FieldSet,
}

impl ManagerEntry {
    fn same_owner(&self, manager: &str, operation: &str, subresource: Option<&str>) -> bool {
        self.manager == manager && self.operation == operation && self.subresource.as_deref() == subresource
    }

    /// The manager as upstream prints it in conflict messages.
    pub(crate) fn label(&self) -> String {
        let mut label = format!("{:?}", self.manager);
        if let Some(sub) = &self.subresource {
            label.push_str(&format!(" with subresource {sub:?}"));
        }
        if self.operation == "Update" {
            label.push_str(&format!(" using {} at {}", self.api_version, self.time));
        }
        label
    }

    /// Whether this entry owns the path, an ancestor or a descendant of it.
    fn overlapping(&self, path: &FieldPath) -> Vec<FieldPath> {
        let mut hits: Vec<FieldPath> =
            (1..=path.len()).map(|n| path[..n].to_vec()).filter(|p| self.fields.contains(p)).collect();
        hits.extend(
            self.fields.range(path.clone()..).take_while(|q| q.starts_with(path)).filter(|q| *q != path).cloned(),
        );
        hits
    }
}

/// Read `metadata.managedFields`.
pub(crate) fn read_managers(object: &Value) -> Vec<ManagerEntry> {
    let entries = object["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
    entries
        .iter()
        .map(|e| ManagerEntry {
            manager: e["manager"].as_str().unwrap_or("").to_string(),
            operation: e["operation"].as_str().unwrap_or("Update").to_string(),
            api_version: e["apiVersion"].as_str().unwrap_or("").to_string(),
            time: e["time"].as_str().unwrap_or("").to_string(),
            subresource: e["subresource"].as_str().map(String::from),
            fields: parse_fields_v1(&e["fieldsV1"]),
        })
        .collect()
}

/// Write `metadata.managedFields`, dropping entries that own nothing (as upstream does).
pub(crate) fn write_managers(object: &mut Value, managers: &[ManagerEntry]) {
    let entries: Vec<Value> = managers
        .iter()
        .filter(|m| !m.fields.is_empty())
        .map(|m| {
            let mut e = json!({"manager": m.manager, "operation": m.operation, "apiVersion": m.api_version, "time": m.time,
                "fieldsType": "FieldsV1", "fieldsV1": fields_v1(&m.fields)});
            if let Some(sub) = &m.subresource {
                e["subresource"] = json!(sub);
            }
            e
        })
        .collect();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(entries));
        }
    }
}

/// Who writes, and how.
#[derive(Clone, Debug)]
pub(crate) struct Writer<'a> {
    /// Field manager.
    pub manager: &'a str,
    /// Subresource written through (`Some("status")`).
    pub subresource: Option<&'a str>,
    /// API version of the request.
    pub api_version: &'a str,
    /// Current time, RFC 3339.
    pub now: &'a str,
}

/// One apply conflict: the other entry (as printed) and the path.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Conflict {
    /// The other manager, printed like upstream (`"other"` or `"kubectl" using apps/v1 at ...`).
    pub manager: String,
    /// The path, printed like upstream (`.spec.replicas`).
    pub path: String,
}

fn dotted(path: &[String]) -> String {
    path.iter().map(|k| format!(".{k}")).collect()
}

/// The 409 upstream returns for apply conflicts, with one cause per conflict.
pub(crate) fn conflict_error(conflicts: &[Conflict], group: &str, resource: &str, name: &str) -> ApiError {
    let message = if let [only] = conflicts {
        format!("Apply failed with 1 conflict: conflict with {}: {}", only.manager, only.path)
    } else {
        let mut managers: Vec<&String> = conflicts.iter().map(|c| &c.manager).collect();
        managers.sort();
        managers.dedup();
        let mut lines = Vec::new();
        for manager in managers {
            lines.push(format!("conflicts with {manager}:"));
            lines.extend(conflicts.iter().filter(|c| &c.manager == manager).map(|c| format!("- {}", c.path)));
        }
        format!("Apply failed with {} conflicts: {}", conflicts.len(), lines.join("\n"))
    };
    let mut details = object_details(group, resource, name);
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {}", c.manager), "field": c.path}))
        .collect();
    details["causes"] = json!(causes);
    ApiError { details: Some(Box::new(details)), ..ApiError::new(409, "Conflict", message) }
}

fn find_conflicts(live: &Value, config: &Value, applied: &FieldSet, others: &[&ManagerEntry]) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    for path in applied {
        for other in others {
            for owned in other.overlapping(path) {
                let shorter = if owned.len() < path.len() { &owned } else { path };
                if get_path(live, shorter) != get_path(config, shorter) {
                    let conflict = Conflict {
                        manager: other.label(),
                        path: dotted(if owned.len() > path.len() { &owned } else { path }),
                    };
                    if !conflicts.contains(&conflict) {
                        conflicts.push(conflict);
                    }
                }
            }
        }
    }
    conflicts
}

/// Strip server-owned metadata (but the identifying name and namespace) from an applied configuration.
fn clean_config(config: &Value) -> Value {
    let mut config = config.clone();
    if let Some(meta) = config.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.retain(|k, _| k == "name" || k == "namespace" || !SERVER_METADATA.contains(&k.as_str()));
    }
    config
}

/// Server-side apply of `config` by `writer` onto `live` (None when creating). Returns the new
/// object (managedFields updated) or the conflicts when `force` is false.
pub(crate) fn apply(
    live: Option<&Value>,
    config: &Value,
    writer: &Writer,
    force: bool,
) -> Result<Value, Vec<Conflict>> {
    let empty = json!({});
    let live_value = live.unwrap_or(&empty);
    let config = clean_config(config);
    let applied = leaf_paths(&config);
    let mut managers = read_managers(live_value);
    let mine = managers.iter().position(|m| m.same_owner(writer.manager, "Apply", writer.subresource));
    let others: Vec<&ManagerEntry> =
        managers.iter().enumerate().filter(|(i, _)| Some(*i) != mine).map(|(_, m)| m).collect();
    let conflicts = find_conflicts(live_value, &config, &applied, &others);
    if !conflicts.is_empty() && !force {
        return Err(conflicts);
    }
    for (i, m) in managers.iter_mut().enumerate() {
        if Some(i) != mine {
            for path in &applied {
                for owned in m.overlapping(path) {
                    if get_path(live_value, &owned) != get_path(&config, &owned) {
                        m.fields.remove(&owned);
                    }
                }
            }
        }
    }
    let mut result = live.cloned().unwrap_or_else(|| json!({}));
    let previous = mine.map(|i| managers[i].fields.clone()).unwrap_or_default();
    for dropped in previous.difference(&applied) {
        let still_owned =
            managers.iter().enumerate().any(|(i, m)| Some(i) != mine && !m.overlapping(dropped).is_empty());
        if !still_owned {
            remove_path(&mut result, dropped);
        }
    }
    merge_into(&mut result, &config);
    let api_version = config["apiVersion"].as_str().unwrap_or(writer.api_version).to_string();
    match mine {
        Some(i) if managers[i].fields == applied && managers[i].api_version == api_version => {}
        Some(i) => {
            managers[i].fields = applied;
            managers[i].api_version = api_version;
            managers[i].time = writer.now.to_string();
        }
        None => managers.push(ManagerEntry {
            manager: writer.manager.to_string(),
            operation: "Apply".into(),
            api_version,
            time: writer.now.to_string(),
            subresource: writer.subresource.map(String::from),
            fields: applied,
        }),
    }
    write_managers(&mut result, &managers);
    Ok(result)
}

/// Record an update (non-apply write) from `old` to `new`: changed paths move to the writer's
/// Update entry, removed paths leave every entry. `new` gets the resulting `managedFields`.
pub(crate) fn record_update(old: Option<&Value>, new: &mut Value, writer: &Writer) {
    let empty = json!({});
    let old = old.unwrap_or(&empty);
    // A write that sets `managedFields` itself (non-empty, different from the live ones) is
    // taken as the new base, as upstream's field manager does (`[{}]` clears them all); this is
    // how kubectl's client-side → server-side apply migration rewrites ownership.
    let requested = new["metadata"]["managedFields"].as_array().is_some_and(|a| !a.is_empty())
        && new["metadata"]["managedFields"] != old["metadata"]["managedFields"];
    let mut managers = read_managers(if requested { new } else { old });
    let new_paths = leaf_paths(new);
    let changed: FieldSet = new_paths.iter().filter(|p| get_path(old, p) != get_path(new, p)).cloned().collect();
    let removed: FieldSet = leaf_paths(old).difference(&new_paths).cloned().collect();
    for m in &mut managers {
        m.fields.retain(|owned| !removed.contains(owned));
        for path in &changed {
            for owned in m.overlapping(path) {
                m.fields.remove(&owned);
            }
        }
    }
    if !changed.is_empty() {
        match managers.iter().position(|m| m.same_owner(writer.manager, "Update", writer.subresource)) {
            Some(i) => {
                managers[i].fields.extend(changed);
                managers[i].time = writer.now.to_string();
                managers[i].api_version = writer.api_version.to_string();
            }
            None => managers.push(ManagerEntry {
                manager: writer.manager.to_string(),
                operation: "Update".into(),
                api_version: writer.api_version.to_string(),
                time: writer.now.to_string(),
                subresource: writer.subresource.map(String::from),
                fields: changed,
            }),
        }
    }
    write_managers(new, &managers);
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
