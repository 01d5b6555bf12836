//! Who owns a field now: the field managers `metadata.managedFields` names for one JSON pointer
//! of a live object.
//!
//! Each entry of `managedFields` holds its manager's set in the `FieldsV1` encoding: a tree
//! whose map keys are `f:<field>`, list items `k:{"name":"x"}` (a list keyed by its items'
//! fields), `v:<json>` (a set of values) or `i:<n>` (by position), and `.` for the item itself.
//! A leaf `{}` owns its field whole (a scalar, or a list the schema calls atomic). The pointer is
//! walked beside the live object, so a list index finds the key of the item at that index. A
//! manager owns the pointer when its tree reaches it, or stops at a leaf above it (the whole
//! atomic value). A server without schemas (the test API server) keeps every list atomic: the
//! same walk stops at the list's leaf.
//!
//! A field someone removed has no owner: nothing names who removed it.

use serde_json::Value;

/// The field manager kfctl-rs applies as.
pub(crate) const KFCTL_MANAGER: &str = "kfctl-rs";

/// The managers other than kfctl-rs that own `pointer` (or a part of it, or an atomic value
/// above it) in `live`, each once, in `managedFields` order; a write through a subresource says
/// which (`kube-controller-manager (scale)`).
pub(crate) fn owners(live: &Value, pointer: &str) -> Vec<String> {
    let segments: Vec<String> = pointer.split('/').skip(1).map(unescape).collect();
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array).into_iter().flatten();
    let mut out: Vec<String> = Vec::new();
    for entry in entries {
        let Some(manager) = entry.get("manager").and_then(Value::as_str) else { continue };
        if manager == KFCTL_MANAGER || !owns(entry.get("fieldsV1").unwrap_or(&Value::Null), live, &segments) {
            continue;
        }
        let label = match entry.get("subresource").and_then(Value::as_str) {
            Some(sub) => format!("{manager} ({sub})"),
            None => manager.to_string(),
        };
        if !out.contains(&label) {
            out.push(label);
        }
    }
    out
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Whether the `FieldsV1` node `fields` reaches `segments` below `live`.
fn owns(fields: &Value, live: &Value, segments: &[String]) -> bool {
    let Some(map) = fields.as_object() else { return false };
    let Some((first, rest)) = segments.split_first() else { return true };
    if map.is_empty() {
        return true;
    }
    let (child, below) = match live {
        Value::Array(items) => {
            let Some(item) = first.parse::<usize>().ok().and_then(|i| items.get(i).map(|item| (i, item))) else {
                return false;
            };
            (map.iter().find(|(key, _)| item_key_matches(key, item.0, item.1)).map(|(_, v)| v), Some(item.1))
        }
        _ => (map.get(&format!("f:{first}")), live.get(first.as_str())),
    };
    match (child, below) {
        (Some(child), Some(below)) => owns(child, below, rest),
        (Some(child), None) => rest.is_empty() && child.is_object(),
        (None, _) => false,
    }
}

/// Whether a list item's key in `FieldsV1` names `item`, the list's `index`th.
fn item_key_matches(key: &str, index: usize, item: &Value) -> bool {
    if let Some(fields) = key.strip_prefix("k:") {
        let Ok(Value::Object(wanted)) = serde_json::from_str::<Value>(fields) else { return false };
        return wanted.iter().all(|(k, v)| item.get(k) == Some(v));
    }
    if let Some(value) = key.strip_prefix("v:") {
        return serde_json::from_str::<Value>(value).is_ok_and(|v| &v == item);
    }
    key.strip_prefix("i:").and_then(|i| i.parse::<usize>().ok()) == Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live() -> Value {
        json!({
            "metadata": {"managedFields": [
                {"manager": "kfctl-rs", "operation": "Apply",
                 "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:name": {}}}}}}}},
                {"manager": "kubectl-set", "operation": "Update",
                 "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "subresource": "scale",
                 "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                {"manager": "kubectl-patch", "operation": "Update", "fieldsV1": {"f:data": {"f:a/b": {}}, "f:spec": {"f:ports": {}}}}
            ]},
            "spec": {"replicas": 3, "ports": [{"port": 80}],
                     "template": {"spec": {"containers": [{"name": "web", "image": "x:2"}]}}},
            "data": {"a/b": "1"}
        })
    }

    #[test]
    fn a_keyed_list_item_is_found_by_the_live_item_at_its_index() {
        assert_eq!(owners(&live(), "/spec/template/spec/containers/0/image"), ["kubectl-set"]);
        assert!(owners(&live(), "/spec/template/spec/containers/0/name").is_empty(), "kfctl-rs's own field");
        assert_eq!(owners(&live(), "/spec/template/spec/containers"), ["kubectl-set"], "a part of the list");
    }

    #[test]
    fn subresources_escaped_keys_and_atomic_lists_name_their_manager() {
        assert_eq!(owners(&live(), "/spec/replicas"), ["kube-controller-manager (scale)"]);
        assert_eq!(owners(&live(), "/data/a~1b"), ["kubectl-patch"]);
        assert_eq!(owners(&live(), "/spec/ports/0/port"), ["kubectl-patch"], "the whole list is its");
        assert!(owners(&live(), "/data/gone").is_empty(), "a removed field has no owner");
    }

    #[test]
    fn set_and_positional_items_match_by_value_and_index() {
        assert!(item_key_matches("v:\"a\"", 0, &json!("a")));
        assert!(!item_key_matches("v:\"a\"", 0, &json!("b")));
        assert!(item_key_matches("i:2", 2, &json!({})));
        assert!(!item_key_matches("k:{\"name\":\"x\"}", 0, &json!({"name": "y"})));
    }
}
