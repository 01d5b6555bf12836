//! Walks over an object the parameter table and its readers share: every image string, every
//! pod spec, every claim spec. A CRD is skipped: its schema describes pods and images but
//! holds none (and it is most of a render's bytes). Split from [`super::params`], which
//! re-exports them.

use serde_json::{Map, Value};

/// Visit every string under a key named `image`.
pub fn for_each_image(value: &mut Value, f: &mut dyn FnMut(&mut String)) {
    if !is_schema(value) {
        images_in(value, f);
    }
}

fn images_in(value: &mut Value, f: &mut dyn FnMut(&mut String)) {
    match value {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                match v {
                    Value::String(s) if k == "image" => f(s),
                    other => images_in(other, f),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| images_in(i, f)),
        _ => {}
    }
}

/// A CustomResourceDefinition: its schema describes pods and images but holds none, so the
/// walks for images and pod specs skip it (it is most of a render's bytes).
fn is_schema(obj: &Value) -> bool {
    super::object_id::is_crd(obj)
}

/// Read every string under a key named `image` (without copying the object).
pub(crate) fn visit_images<'a>(value: &'a Value, f: &mut dyn FnMut(&'a str)) {
    if !is_schema(value) {
        visit_images_in(value, f);
    }
}

fn visit_images_in<'a>(value: &'a Value, f: &mut dyn FnMut(&'a str)) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                match v {
                    Value::String(s) if k == "image" => f(s),
                    other => visit_images_in(other, f),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| visit_images_in(i, f)),
        _ => {}
    }
}

/// Visit every pod spec: a map with a `containers` list.
pub fn for_each_pod_spec(value: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    if !is_schema(value) {
        pod_specs_in(value, f);
    }
}

fn pod_specs_in(value: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    match value {
        Value::Object(m) => {
            if m.get("containers").is_some_and(Value::is_array) {
                f(m);
            }
            m.values_mut().for_each(|v| pod_specs_in(v, f));
        }
        Value::Array(items) => items.iter_mut().for_each(|i| pod_specs_in(i, f)),
        _ => {}
    }
}

/// Visit the `spec` of every claim `obj` holds: a PersistentVolumeClaim's own, and each of a
/// StatefulSet's `volumeClaimTemplates`.
pub(crate) fn for_each_claim_spec(obj: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    match (api, kind) {
        ("v1", "PersistentVolumeClaim") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                f(spec);
            }
        }
        ("apps/v1", "StatefulSet") => {
            let templates = obj.pointer_mut("/spec/volumeClaimTemplates").and_then(Value::as_array_mut);
            for spec in templates.into_iter().flatten().filter_map(|t| t.get_mut("spec")?.as_object_mut()) {
                f(spec);
            }
        }
        _ => {}
    }
}
