//! Applying field specs to an object, as kustomize's `fieldspec` filter does.
//!
//! A field spec names kinds (group, version, kind; empty parts match anything) and a path.
//! The walk differs from [`crate::fieldpath`] in the ways kustomize's filter does:
//!
//! - the path splits on `/`, and `\/` keeps a slash inside a key
//!   (`metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret`);
//! - `name[]` marks a list field: it is looked up, never created;
//! - a key that meets a list goes into every element, keeping the rest of the path;
//! - with `create: true` (and a transformer that creates, see [`CreateKind`]) a missing or
//!   null field is created: a map on the way, and the transformer's kind at the end;
//! - without creating, a missing or null field ends the walk silently;
//! - a scalar on the way is an error ("expected sequence or mapping node").
//!
//! The group and version an object is matched by come from its `apiVersion`, split at the
//! first `/`; a bare `v1`, `v2`, `v1beta1`... is the core group.

use crate::error::{FieldError, KustomizeError, Result};
use crate::kustomization::FieldSpec;
use crate::resource::Resource;
use serde_json::{Map, Value};

/// What a transformer creates at the end of a `create: true` path that is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CreateKind {
    /// Never create (the image transformer).
    Nothing,
    /// A map (labels, annotations).
    Map,
    /// A scalar (replicas): the setter receives `null` and fills it in.
    Scalar,
}

/// Sets a value found at a field spec's path; errors say what was found instead.
pub(crate) type SetFn<'a> = dyn FnMut(&mut Value) -> std::result::Result<(), FieldError> + 'a;

/// Split a field-spec path on `/`, honouring `\/` escapes.
pub(crate) fn split_path(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for piece in path.split('/') {
        match parts.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('/');
                last.push_str(piece);
            }
            _ => parts.push(piece.to_string()),
        }
    }
    parts
}

/// Group and version of an `apiVersion`, as kustomize's field-spec filter reads them.
pub(crate) fn parse_api_version(api_version: &str) -> (&str, &str) {
    let (group, version) = api_version.split_once('/').unwrap_or((api_version, ""));
    let core = group.len() >= 2 && group.starts_with('v') && matches!(group.as_bytes()[1], b'1' | b'2');
    if version.is_empty() && core { ("", group) } else { (group, version) }
}

/// Does `spec` apply to this object?
pub(crate) fn selects(spec: &FieldSpec, obj: &Value) -> bool {
    let text = |key: &str| obj.get(key).and_then(Value::as_str).unwrap_or("");
    if !spec.kind.is_empty() && spec.kind != text("kind") {
        return false;
    }
    let (group, version) = parse_api_version(text("apiVersion"));
    (spec.group.is_empty() || spec.group == group) && (spec.version.is_empty() || spec.version == version)
}

/// Call `set` at every field the specs select in the resource, creating fields as each
/// spec's `create` and `create_kind` allow.
pub(crate) fn apply(
    resource: &mut Resource,
    specs: &[FieldSpec],
    create_kind: CreateKind,
    set: &mut SetFn,
) -> Result<()> {
    for spec in specs {
        apply_one(resource, spec, create_kind, set)?;
    }
    Ok(())
}

/// Call `set` at every field one spec selects in the resource.
pub(crate) fn apply_one(
    resource: &mut Resource,
    spec: &FieldSpec,
    create_kind: CreateKind,
    set: &mut SetFn,
) -> Result<()> {
    if !selects(spec, &resource.obj) {
        return Ok(());
    }
    let path = split_path(&spec.path);
    let create = if spec.create { create_kind } else { CreateKind::Nothing };
    walk(&mut resource.obj, &path, create, set).map_err(|source| KustomizeError::FieldSpec {
        object: resource.current_id().to_string(),
        field: spec.path.clone(),
        source,
    })
}

fn walk(node: &mut Value, path: &[String], create: CreateKind, set: &mut SetFn) -> std::result::Result<(), FieldError> {
    let Some((first, rest)) = path.split_first() else {
        return set(node);
    };
    match node {
        Value::Array(items) => items.iter_mut().try_for_each(|item| walk(item, path, create, set)),
        Value::Object(map) => field(map, first, rest, create, set),
        other => Err(FieldError::NotAContainerAt(first.clone(), describe(other))),
    }
}

fn field(
    map: &mut Map<String, Value>,
    segment: &str,
    rest: &[String],
    create: CreateKind,
    set: &mut SetFn,
) -> std::result::Result<(), FieldError> {
    let (name, is_list) = match segment.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (segment, false),
    };
    let child = if create != CreateKind::Nothing && !is_list {
        let kind = if rest.is_empty() { create } else { CreateKind::Map };
        let child = map.entry(name.to_string()).or_insert(Value::Null);
        if child.is_null() && kind == CreateKind::Map {
            *child = Value::Object(Map::new());
        }
        child
    } else {
        match map.get_mut(name) {
            Some(child) if !child.is_null() => child,
            _ => return Ok(()),
        }
    };
    walk(child, rest, create, set)
}

/// A short name for a YAML node's type, for error messages.
pub(crate) use kfctl_yaml::type_name as describe;

/// A setter that adds string entries to a map (labels, annotations).
pub(crate) fn set_entries(
    pairs: &[(String, String)],
) -> impl FnMut(&mut Value) -> std::result::Result<(), FieldError> + '_ {
    move |node| {
        if node.is_null() {
            *node = Value::Object(Map::new());
        }
        let Value::Object(map) = node else {
            return Err(FieldError::NotAMap(describe(node)));
        };
        for (key, value) in pairs {
            map.insert(key.clone(), Value::String(value.clone()));
        }
        Ok(())
    }
}

/// Set string pairs (labels or annotations) at every field spec of every object, creating the
/// map where a spec says so. No pairs, no change.
pub(crate) fn add_pairs(
    resources: &mut crate::resmap::ResMap,
    pairs: &std::collections::BTreeMap<String, String>,
    specs: &[crate::kustomization::FieldSpec],
) -> crate::error::Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    // long pairs multiply: the objects are measured as they change ([`crate::growth`])
    let mut growth =
        crate::growth::Growth::watch(resources, pairs.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum());
    let mut set = set_entries(&pairs);
    for resource in resources.iter_mut() {
        apply(resource, specs, CreateKind::Map, &mut set)?;
        if let Some(growth) = growth.as_mut() {
            growth.add(&resource.obj)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(kind: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec { kind: kind.into(), path: path.into(), create, ..FieldSpec::default() }
    }

    fn set_x(node: &mut Value) -> std::result::Result<(), FieldError> {
        *node = json!("x");
        Ok(())
    }

    fn run(obj: Value, s: &FieldSpec, create: CreateKind) -> Result<Value> {
        let mut r = Resource::new(obj);
        apply_one(&mut r, s, create, &mut set_x)?;
        Ok(r.obj)
    }

    #[test]
    fn escaped_slashes_stay_in_the_key() {
        assert_eq!(split_path(r"metadata/annotations/a.io\/b"), ["metadata", "annotations", "a.io/b"]);
        assert_eq!(split_path("spec/containers[]/image"), ["spec", "containers[]", "image"]);
    }

    #[test]
    fn bare_core_versions_have_no_group() {
        assert_eq!(parse_api_version("v1"), ("", "v1"));
        assert_eq!(parse_api_version("v2beta1"), ("", "v2beta1"));
        assert_eq!(parse_api_version("apps/v1"), ("apps", "v1"));
        assert_eq!(parse_api_version("networking.k8s.io/v1/x"), ("networking.k8s.io", "v1/x"));
    }

    #[test]
    fn gvk_parts_select_objects() {
        let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert!(selects(&spec("Deployment", "p", false), &dep));
        assert!(!selects(&spec("StatefulSet", "p", false), &dep));
        assert!(!selects(&FieldSpec { group: "batch".into(), ..spec("", "p", false) }, &dep));
        assert!(selects(&FieldSpec { version: "v1".into(), ..spec("", "p", false) }, &dep));
    }

    #[test]
    fn a_key_meeting_a_list_visits_every_element() {
        let got = run(
            json!({"spec": {"c": [{"image": "a"}, {"image": "b"}, {}]}}),
            &spec("", "spec/c/image", false),
            CreateKind::Nothing,
        )
        .unwrap();
        assert_eq!(got, json!({"spec": {"c": [{"image": "x"}, {"image": "x"}, {}]}}));
    }

    #[test]
    fn create_makes_maps_on_the_way_and_the_kind_at_the_end() {
        let got =
            run(json!({"metadata": {}}), &spec("", "spec/template/metadata/labels", true), CreateKind::Map).unwrap();
        assert_eq!(got, json!({"metadata": {}, "spec": {"template": {"metadata": {"labels": "x"}}}}));
    }

    #[test]
    fn without_create_missing_and_null_fields_end_the_walk() {
        let obj = json!({"spec": {"affinity": null}});
        assert_eq!(run(obj.clone(), &spec("", "spec/affinity/x", false), CreateKind::Map).unwrap(), obj);
        assert_eq!(run(obj.clone(), &spec("", "spec/missing/x", false), CreateKind::Map).unwrap(), obj);
    }

    #[test]
    fn create_replaces_a_null_field() {
        let got =
            run(json!({"metadata": {"labels": null}}), &spec("", "metadata/labels/k", true), CreateKind::Map).unwrap();
        assert_eq!(got, json!({"metadata": {"labels": {"k": "x"}}}));
    }

    #[test]
    fn list_fields_are_never_created() {
        let obj = json!({"spec": {}});
        assert_eq!(
            run(obj.clone(), &spec("", "spec/volumeClaimTemplates[]/metadata/labels", true), CreateKind::Map).unwrap(),
            obj
        );
        let got = run(
            json!({"spec": {"v": [{}, {"metadata": {}}]}}),
            &spec("", "spec/v[]/metadata/labels", true),
            CreateKind::Map,
        )
        .unwrap();
        assert_eq!(got, json!({"spec": {"v": [{"metadata": {"labels": "x"}}, {"metadata": {"labels": "x"}}]}}));
    }

    #[test]
    fn a_transformer_that_never_creates_ignores_create() {
        let obj = json!({"spec": {}});
        assert_eq!(run(obj.clone(), &spec("", "spec/image", true), CreateKind::Nothing).unwrap(), obj);
    }

    #[test]
    fn a_scalar_on_the_way_is_an_error_naming_object_and_path() {
        let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": "x"}});
        let err = run(obj, &spec("", "spec/template/metadata/labels", true), CreateKind::Map).unwrap_err().to_string();
        assert!(
            err.contains("Deployment")
                && err.contains("spec/template/metadata/labels")
                && err.contains("expected sequence or mapping node"),
            "{err}"
        );
    }

    #[test]
    fn set_entries_refuses_a_non_map() {
        let pairs = vec![("a".to_string(), "1".to_string())];
        let mut set = set_entries(&pairs);
        let mut list = json!([1]);
        assert!(set(&mut list).unwrap_err().to_string().contains("a list"));
        let mut map = json!({"b": 2});
        set(&mut map).unwrap();
        assert_eq!(map, json!({"b": 2, "a": "1"}));
    }
}
