//! Generated ConfigMaps and Secrets keep kustomize's content-hash names after values change them.
//!
//! kustomize names a generated ConfigMap or Secret `<name>-<hash>`, where the hash is taken
//! from the object's final content (see `kfctl_kustomize::content_hash`), and rewrites every
//! reference to it (volumes, `envFrom`, `secretKeyRef`…) to the hashed name. That is what makes
//! pods roll when a configuration or a credential changes. Values are applied after the
//! engine's build, so a value that changes such an object's data (a credential, the profile
//! controller's Pod Security label, an image inside a configuration file) must also do what
//! kustomize would have done had the same edit been made to the generator's input:
//!
//! 1. [`HashedName::of`] recognises a hashed object in the default render: a ConfigMap or
//!    Secret whose name is `<base>-<h>` with `h` exactly the content hash of the object. No
//!    other name can match by accident, so no list of generated objects is needed.
//! 2. [`rename_changed`] recomputes the hash of each such object after values; when it changed,
//!    the object is renamed `<base>-<new hash>` and every string equal to the old name in an
//!    object of the same namespace (or a cluster-scoped one) becomes the new name. In
//!    kustomize's output the hashed name only appears where its name-reference fix-up wrote it,
//!    so an exact match is exactly those fields.
//! 3. Renamed objects move to their place in kustomize's legacy order (within a run of the
//!    same apiVersion and kind, by `namespace|name`), as the catalog's profiles sort that way.
//!
//! The Helm export computes the same names in the templates (`chart::hashed`).

use super::CatalogError;
use super::render::RenderedObject;
use kfctl_kustomize::content_hash;
use serde_json::Value;

/// The length of kustomize's hash suffix.
pub(crate) const HASH_LEN: usize = 10;

/// A generated object's name, split into its base and kustomize's content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashedName {
    /// The name without the hash suffix.
    pub base: String,
    pub(crate) hash: String,
}

impl HashedName {
    /// The hashed name of `obj`, when it carries kustomize's hash of its own content.
    pub fn of(obj: &Value) -> Option<HashedName> {
        let kind = obj.get("kind").and_then(Value::as_str)?;
        if kind != "ConfigMap" && kind != "Secret" {
            return None;
        }
        let name = obj.pointer("/metadata/name").and_then(Value::as_str)?;
        let (base, hash) = name.rsplit_once('-')?;
        let hashed = hash.len() == HASH_LEN && !base.is_empty() && content_hash(obj) == hash;
        hashed.then(|| HashedName { base: base.to_string(), hash: hash.to_string() })
    }

    /// The full name, `<base>-<hash>`.
    pub(crate) fn name(&self) -> String {
        format!("{}-{}", self.base, self.hash)
    }
}

/// One rename made by [`rename_changed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    pub(crate) namespace: String,
    pub(crate) old: String,
    pub(crate) new: String,
}

/// Rename every object whose content hash changed (`hashed[i]` is what [`HashedName::of`] said
/// of `objects[i]` before values were applied), fix the references, and restore the order.
pub fn rename_changed(
    objects: &mut [RenderedObject],
    hashed: &[Option<HashedName>],
) -> Result<Vec<Rename>, CatalogError> {
    let mut renames = Vec::new();
    for (o, before) in objects.iter_mut().zip(hashed) {
        let Some(before) = before else { continue };
        let now = content_hash(&o.obj);
        if now == before.hash {
            continue;
        }
        let new = format!("{}-{now}", before.base);
        o.obj["metadata"]["name"] = Value::String(new.clone());
        renames.push(Rename { namespace: namespace_of(&o.obj).to_string(), old: before.name(), new });
    }
    if renames.is_empty() {
        return Ok(renames);
    }
    rename_references(objects, &renames)?;
    restore_legacy_order(objects, &renames);
    Ok(renames)
}

/// Make every string equal to a renamed object's old name, in an object of its namespace or a
/// cluster-scoped one, its new name (what kustomize's name-reference fix-up wrote: see above).
/// A CRD whose deferred schemas may hold an old name gets them back first.
pub(crate) fn rename_references(objects: &mut [RenderedObject], renames: &[Rename]) -> Result<(), CatalogError> {
    for o in objects.iter_mut() {
        let namespace = namespace_of(&o.obj).to_string();
        for rename in renames.iter().filter(|r| namespace.is_empty() || r.namespace == namespace) {
            if o.deferred.as_ref().is_some_and(|d| d.may_hold(&rename.old)) {
                super::deferred::attach(o)?;
            }
            replace_exact(&mut o.obj, &rename.old, &rename.new);
        }
    }
    Ok(())
}

fn namespace_of(obj: &Value) -> &str {
    obj.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default()
}

/// Replace every string exactly equal to `old` (never a part of a longer text).
fn replace_exact(value: &mut Value, old: &str, new: &str) {
    match value {
        Value::String(s) if s == old => *s = new.to_string(),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_exact(v, old, new)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_exact(v, old, new)),
        _ => {}
    }
}

/// Within each run of objects of one apiVersion and kind that holds a renamed object, sort by
/// kustomize's legacy key (`namespace|name`, an empty namespace as `~X`). The run was in that
/// order before the rename, so a stable sort moves only the renamed objects.
fn restore_legacy_order(objects: &mut [RenderedObject], renames: &[Rename]) {
    let renamed = |o: &RenderedObject| {
        let name = o.obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        renames.iter().any(|r| r.new == name && r.namespace == namespace_of(&o.obj))
    };
    let mut start = 0;
    while start < objects.len() {
        let gvk = type_of(&objects[start].obj);
        let end = start + objects[start..].iter().take_while(|o| type_of(&o.obj) == gvk).count();
        if objects[start..end].iter().any(renamed) {
            objects[start..end].sort_by_cached_key(|o| legacy_name_key(&o.obj));
        }
        start = end;
    }
}

fn type_of(obj: &Value) -> (String, String) {
    let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    (s("apiVersion"), s("kind"))
}

fn legacy_name_key(obj: &Value) -> String {
    let namespace = namespace_of(obj);
    let namespace = if namespace.is_empty() { "~X" } else { namespace };
    let name = obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    format!("{namespace}|{name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret(name: &str, value: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "ns"},
               "type": "Opaque", "data": {"key": value}})
    }

    fn hashed_secret(base: &str, value: &str) -> Value {
        let mut obj = secret(base, value);
        obj["metadata"]["name"] = json!(format!("{base}-{}", content_hash(&obj)));
        obj
    }

    fn tagged(obj: Value) -> RenderedObject {
        RenderedObject::new("c", obj)
    }

    #[test]
    fn only_a_name_carrying_the_content_hash_counts_as_hashed() {
        let obj = hashed_secret("app", "YQ==");
        let hashed = HashedName::of(&obj).unwrap();
        assert_eq!(hashed.base, "app");
        assert_eq!(hashed.name(), obj["metadata"]["name"]);
        assert_eq!(HashedName::of(&secret("app-abcdefghij", "YQ==")), None, "a ten-letter suffix alone is not a hash");
        let mut cm = obj.clone();
        cm["kind"] = json!("Deployment");
        assert_eq!(HashedName::of(&cm), None);
    }

    #[test]
    fn a_changed_secret_is_renamed_and_its_references_follow() {
        let obj = hashed_secret("app", "YQ==");
        let old = obj["metadata"]["name"].as_str().unwrap().to_string();
        let hashed = vec![HashedName::of(&obj), None, None];
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "ns", "annotations": {"note": format!("uses {old}")}},
            "spec": {"template": {"spec": {"volumes": [{"name": "v", "secret": {"secretName": old}}]}}}});
        let elsewhere = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "other"},
            "data": {"ref": old}});
        let mut objects = vec![tagged(obj), tagged(deployment), tagged(elsewhere)];
        objects[0].obj["data"]["key"] = json!("Yg==");
        let renames = rename_changed(&mut objects, &hashed).expect("renames");
        let new = format!("app-{}", content_hash(&objects[0].obj));
        assert_eq!(renames, vec![Rename { namespace: "ns".into(), old: old.clone(), new: new.clone() }]);
        assert_eq!(objects[0].obj["metadata"]["name"], json!(new));
        assert_eq!(objects[1].obj.pointer("/spec/template/spec/volumes/0/secret/secretName").unwrap(), &json!(new));
        assert_eq!(objects[1].obj["metadata"]["annotations"]["note"], json!(format!("uses {old}")), "texts untouched");
        assert_eq!(objects[2].obj["data"]["ref"], json!(old), "another namespace is untouched");
    }

    #[test]
    fn an_unchanged_object_keeps_its_name() {
        let obj = hashed_secret("app", "YQ==");
        let hashed = vec![HashedName::of(&obj)];
        let mut objects = vec![tagged(obj.clone())];
        assert!(rename_changed(&mut objects, &hashed).expect("renames").is_empty());
        assert_eq!(objects[0].obj, obj);
    }

    #[test]
    fn a_renamed_object_moves_to_its_place_in_the_legacy_order() {
        let before = hashed_secret("s", "YQ==");
        let old = HashedName::of(&before).unwrap().hash;
        let mut after = before.clone();
        after["data"]["key"] = json!("Yg==");
        let new = content_hash(&after);
        // A sibling whose name sorts between the old and the new hashed name.
        let sibling = tagged(secret(&format!("s-{}~", old.clone().min(new.clone())), "x"));
        let (mut objects, hashed) = if old < new {
            (vec![tagged(before.clone()), sibling], vec![HashedName::of(&before), None])
        } else {
            (vec![sibling, tagged(before.clone())], vec![None, HashedName::of(&before)])
        };
        let at = usize::from(old > new);
        objects[at].obj["data"]["key"] = json!("Yg==");
        rename_changed(&mut objects, &hashed).expect("renames");
        let names: Vec<&str> = objects.iter().map(|o| o.obj["metadata"]["name"].as_str().unwrap()).collect();
        assert_eq!(names[1 - at], format!("s-{new}"), "{names:?}");
        assert!(names[0] < names[1], "{names:?}");
    }
}
