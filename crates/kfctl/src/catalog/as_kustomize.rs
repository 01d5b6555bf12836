//! A render with values, written as kustomize would express it: the profile's kustomization
//! plus patches, so that real `kustomize build` of the folder gives the same objects.
//!
//! Values act after the build (the parameter table, the users' Profiles, the hashed names of
//! generated objects whose content changed). Kustomize can say all of that itself: every object
//! the values change gets a patch with exactly the changed fields — a strategic merge patch of
//! maps (a removed key as `null`) when no list changes, else JSON 6902 (`add`, `remove`,
//! `replace`); a JSON patch under `patches` makes kustomize treat the object as renamed, and the
//! name-reference fix-up would then write a ServiceAccount's namespace into RoleBinding subjects
//! that had none — every object they drop gets a `$patch: delete` patch, and every object they add is
//! listed in `resources` from a file beside the kustomization. Patches run before kustomize
//! computes the hash suffixes of generated ConfigMaps and Secrets and fixes up references to
//! them, so a patched generator gets the very name kfctl-rs's render gives it; the diff is
//! taken with hash suffixes masked (on both sides), and the patch targets a generated object by
//! its name before the hash.
//!
//! `kfctl-rs template --as-kustomization DIR` writes the folder; `tests/as_kustomization.rs`
//! builds it with real kustomize.

use super::CatalogError;
use super::object_id::text;
use kfctl_kustomize::kustomization::{Kustomization, Patch, Selector};
use kfctl_yaml::compare;
use serde_json::{Map, Value, json};

/// The file beside the kustomization holding the objects values add.
pub(crate) const ADDED_FILE: &str = "added-by-values.yaml";

/// The kustomization (and the file of added objects, if any) whose build is `valued`, given
/// `base`, the profile's kustomization, whose build is `defaults`.
pub fn folder(
    base: &Kustomization,
    defaults: &[Value],
    valued: &[Value],
) -> Result<Vec<(String, String)>, CatalogError> {
    let (mut before, mut after) = (defaults.to_vec(), valued.to_vec());
    compare::mask_hash_suffixes(&mut before);
    compare::mask_hash_suffixes(&mut after);
    let mut k = base.clone();
    let mut added = Vec::new();
    for (i, new) in after.iter().enumerate() {
        match before.iter().find(|old| same_id(old, new)) {
            Some(old) if old == new => {}
            Some(old) => k.patches.push(patch_between(old, new, &after)?),
            None => added.push(valued[i].clone()),
        }
    }
    for old in before.iter().filter(|old| !after.iter().any(|new| same_id(old, new))) {
        k.patches.push(deletion(old));
    }
    let mut files = Vec::new();
    if !added.is_empty() {
        k.resources.push(ADDED_FILE.into());
        files.push((ADDED_FILE.to_string(), kfctl_yaml::to_yaml_stream(&added)));
    }
    files.insert(0, ("kustomization.yaml".to_string(), super::profile::kustomization_yaml(&k)));
    Ok(files)
}

/// Same apiVersion, kind, namespace and (masked) name.
fn same_id(a: &Value, b: &Value) -> bool {
    ["/apiVersion", "/kind", "/metadata/namespace", "/metadata/name"].iter().all(|p| a.pointer(p) == b.pointer(p))
}

/// An object's name as its generator names it: the masked hash suffix (`-<hash>`) removed.
fn base_name(obj: &Value) -> &str {
    let name = text(obj, "/metadata/name");
    name.strip_suffix("-<hash>").unwrap_or(name)
}

/// The selector of exactly this object: its name before any hash suffix, anchored literally,
/// and its namespace only when another object of its kind has its name (a cluster-scoped
/// object may carry a `metadata.namespace` that kustomize's ids ignore).
fn target(obj: &Value, others: &[Value]) -> Selector {
    let (group, version) = match text(obj, "/apiVersion").split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), text(obj, "/apiVersion").to_string()),
    };
    let name = base_name(obj);
    Selector {
        group,
        version,
        kind: text(obj, "/kind").to_string(),
        name: regex::escape(name),
        namespace: if shares_name(obj, others) {
            regex::escape(text(obj, "/metadata/namespace"))
        } else {
            String::new()
        },
        ..Selector::default()
    }
}

/// Whether another object of `obj`'s apiVersion and kind has its name.
fn shares_name(obj: &Value, others: &[Value]) -> bool {
    let key = |o: &Value| {
        (text(o, "/apiVersion").to_string(), text(o, "/kind").to_string(), text(o, "/metadata/name").to_string())
    };
    others.iter().filter(|o| key(o) == key(obj)).count() > 1
}

/// The patch taking `old` to `new`: strategic merge when only maps change, else JSON 6902.
fn patch_between(old: &Value, new: &Value, others: &[Value]) -> Result<Patch, CatalogError> {
    match map_merge(old, new) {
        Some(mut doc) => {
            let object = doc.as_object_mut().expect("a map merge of two objects is a map");
            object.insert("apiVersion".into(), new["apiVersion"].clone());
            object.insert("kind".into(), new["kind"].clone());
            let metadata = object.entry("metadata").or_insert_with(|| json!({}));
            metadata["name"] = json!(base_name(new));
            // JSON, as for the JSON patches: texts cross with no YAML scalar style in between.
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            Ok(Patch { patch: Some(text), target: Some(target(new, others)), ..Patch::default() })
        }
        None => json6902(old, new, others),
    }
}

/// The strategic merge patch of two maps when no list is involved (in a changed, added or
/// removed place): changed keys with their new value, removed ones as `null`.
fn map_merge(old: &Value, new: &Value) -> Option<Value> {
    let (Value::Object(o), Value::Object(n)) = (old, new) else { return None };
    let mut out = Map::new();
    for (key, value) in o {
        match n.get(key) {
            None if !value.is_array() => {
                out.insert(key.clone(), Value::Null);
            }
            None => return None,
            Some(new_value) if new_value == value => {}
            Some(new_value) if value.is_object() && new_value.is_object() => {
                out.insert(key.clone(), map_merge(value, new_value)?);
            }
            Some(new_value)
                if !value.is_array()
                    && !new_value.is_array()
                    && !holds_list_or_null(new_value)
                    && !value.is_object()
                    && !new_value.is_object() =>
            {
                out.insert(key.clone(), new_value.clone());
            }
            Some(_) => return None,
        }
    }
    for (key, value) in n.iter().filter(|(k, _)| !o.contains_key(*k)) {
        if holds_list_or_null(value) {
            return None;
        }
        out.insert(key.clone(), value.clone());
    }
    Some(Value::Object(out))
}

/// Whether a value holds a list or a `null` anywhere (a merge would not carry it exactly).
fn holds_list_or_null(value: &Value) -> bool {
    match value {
        Value::Array(_) | Value::Null => true,
        Value::Object(m) => m.values().any(holds_list_or_null),
        _ => false,
    }
}

/// A JSON 6902 patch taking `old` to `new` (`others`: every object, for the target).
fn json6902(old: &Value, new: &Value, others: &[Value]) -> Result<Patch, CatalogError> {
    let mut ops = Vec::new();
    diff(old, new, &mut String::new(), &mut ops);
    if ops.iter().any(|op| op.to_string().contains("-<hash>")) {
        return Err(CatalogError::NotExpressible {
            object: compare::object_label(new),
            message: "the values add a reference to a generated object's hashed name, which a patch cannot name; \
                      build without --as-kustomization"
                .into(),
        });
    }
    // JSON (which kustomize reads as it is): strings such as multi-line configuration files
    // then cross exactly, with no YAML scalar style in between.
    let text = serde_json::to_string_pretty(&Value::Array(ops)).unwrap_or_default();
    Ok(Patch { patch: Some(text), target: Some(target(new, others)), ..Patch::default() })
}

/// `$patch: delete` of `old`.
fn deletion(old: &Value) -> Patch {
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(base_name(old)));
    if let Some(ns) = old.pointer("/metadata/namespace") {
        metadata.insert("namespace".into(), ns.clone());
    }
    let doc = json!({"$patch": "delete", "apiVersion": old["apiVersion"], "kind": old["kind"], "metadata": metadata});
    Patch { patch: Some(kfctl_yaml::to_yaml(&doc)), ..Patch::default() }
}

/// The operations taking `old` to `new` under `path`: maps key by key, lists of equal length
/// item by item, anything else replaced whole.
fn diff(old: &Value, new: &Value, path: &mut String, ops: &mut Vec<Value>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (key, value) in o {
                let len = path.len();
                push_token(path, key);
                match n.get(key) {
                    Some(new_value) => diff(value, new_value, path, ops),
                    None => ops.push(json!({"op": "remove", "path": path.as_str()})),
                }
                path.truncate(len);
            }
            for (key, value) in n.iter().filter(|(k, _)| !o.contains_key(*k)) {
                let len = path.len();
                push_token(path, key);
                ops.push(json!({"op": "add", "path": path.as_str(), "value": value}));
                path.truncate(len);
            }
        }
        (Value::Array(o), Value::Array(n)) if o.len() == n.len() => {
            for (i, (a, b)) in o.iter().zip(n).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                diff(a, b, path, ops);
                path.truncate(len);
            }
        }
        _ => ops.push(json!({"op": "replace", "path": path.as_str(), "value": new})),
    }
}

/// One JSON pointer token (`~` as `~0`, `/` as `~1`).
fn push_token(path: &mut String, key: &str) {
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(replicas: u64, labels: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w.x", "namespace": "kf", "labels": labels},
               "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}}})
    }

    #[test]
    fn changed_objects_become_exact_json6902_patches() {
        let old = deployment(1, json!({"a/b": "1", "gone": "x"}));
        let mut new = deployment(2, json!({"a/b": "2", "new~k": "y"}));
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("b");
        let patch = json6902(&old, &new, std::slice::from_ref(&new)).unwrap();
        let ops: Value = serde_json::from_str(patch.patch.as_deref().unwrap()).unwrap();
        assert_eq!(
            ops,
            json!([
                {"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
                {"op": "remove", "path": "/metadata/labels/gone"},
                {"op": "add", "path": "/metadata/labels/new~0k", "value": "y"},
                {"op": "replace", "path": "/spec/replicas", "value": 2},
                {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "b"},
            ])
        );
        let t = patch.target.unwrap();
        assert_eq!((t.group.as_str(), t.version.as_str(), t.kind.as_str()), ("apps", "v1", "Deployment"));
        assert_eq!((t.name.as_str(), t.namespace.as_str()), (r"w\.x", ""), "unique name: no namespace");
        let mut twin = new.clone();
        twin["metadata"]["namespace"] = json!("other");
        let t = json6902(&old, &new, &[new.clone(), twin]).unwrap().target.unwrap();
        assert_eq!(t.namespace, "kf", "a name two namespaces share: the namespace too");
    }

    #[test]
    fn map_only_changes_become_a_strategic_merge_patch_and_lists_a_json_patch() {
        let sa = |labels: Value| json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "kf", "labels": labels}});
        let patch = patch_between(&sa(json!({"a": "1", "gone": "x"})), &sa(json!({"a": "2", "b": "3"})), &[]).unwrap();
        let doc = kfctl_yaml::parse_stream(patch.patch.as_deref().unwrap(), "p").unwrap().remove(0);
        assert_eq!(
            doc,
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "labels": {"a": "2", "gone": null, "b": "3"}}})
        );
        let old = deployment(1, json!({}));
        let mut new = old.clone();
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("b");
        let patch = patch_between(&old, &new, &[]).unwrap();
        assert!(patch.patch.as_deref().unwrap().starts_with('['), "a list changed: JSON 6902");
    }

    #[test]
    fn dropped_objects_are_deleted_and_added_ones_listed_in_a_file_beside() {
        let base = Kustomization { resources: vec!["../apps/x".into()], ..Kustomization::default() };
        let keep = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}});
        let demo = json!({"apiVersion": "kubeflow.org/v1", "kind": "Profile", "metadata": {"name": "demo"}});
        let alice = json!({"apiVersion": "kubeflow.org/v1", "kind": "Profile", "metadata": {"name": "alice"}});
        let files = folder(&base, &[keep.clone(), demo], &[keep, alice.clone()]).unwrap();
        assert_eq!(files.len(), 2);
        let k = &kfctl_yaml::parse_stream(&files[0].1, "k").unwrap()[0];
        assert_eq!(k["resources"], json!(["../apps/x", ADDED_FILE]));
        let delete = kfctl_yaml::parse_stream(k["patches"][0]["patch"].as_str().unwrap(), "p").unwrap().remove(0);
        assert_eq!(
            delete,
            json!({"$patch": "delete", "apiVersion": "kubeflow.org/v1", "kind": "Profile", "metadata": {"name": "demo"}})
        );
        assert_eq!(kfctl_yaml::parse_stream(&files[1].1, "a").unwrap(), vec![alice]);
    }

    #[test]
    fn a_generated_object_is_targeted_by_its_name_before_the_hash() {
        let cm = |data: &str, name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kf"}, "data": {"k": data}});
        let files =
            folder(&Kustomization::default(), &[cm("1", "cfg-2c5fdk6b9m")], &[cm("2", "cfg-79k7kb6hh6")]).unwrap();
        let k = &kfctl_yaml::parse_stream(&files[0].1, "k").unwrap()[0];
        assert_eq!(k["patches"][0]["target"]["name"], "cfg");
        assert_eq!(files.len(), 1, "no object added");
    }
}
