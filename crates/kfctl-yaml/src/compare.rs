//! Semantic comparison of YAML object streams.
//!
//! Objects are matched by identity (apiVersion's group, kind, namespace, name) and compared
//! as data: map key order never matters, a string stays a string and a number a number.
//! Differences are reported by object and field path, so a person can read them. The parity
//! test and `kfctl-rs compare` share this code.

use serde_json::Value;
use std::fmt;

/// One field-level difference inside an object.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDiff {
    /// A path like `.spec.template.spec.containers[0].image`.
    pub path: String,
    /// The expected stream's value there (`None`: absent).
    pub expected: Option<Value>,
    /// The actual stream's value there (`None`: absent).
    pub actual: Option<Value>,
}

impl fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Value>| match v {
            None => "(absent)".to_string(),
            Some(v) => {
                let s = v.to_string();
                if s.len() > 120 { format!("{}…", &s[..s.floor_char_boundary(117)]) } else { s }
            }
        };
        write!(
            f,
            "{}: expected {}, got {}",
            if self.path.is_empty() { "." } else { &self.path },
            show(&self.expected),
            show(&self.actual)
        )
    }
}

/// Field-level differences between two values, in document order (at most `limit`).
pub fn diff_values(expected: &Value, actual: &Value, limit: usize) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    walk(expected, actual, &mut String::new(), &mut out, limit);
    out
}

fn walk(e: &Value, a: &Value, path: &mut String, out: &mut Vec<FieldDiff>, limit: usize) {
    if out.len() >= limit || e == a {
        return;
    }
    match (e, a) {
        (Value::Object(em), Value::Object(am)) => {
            for (k, ev) in em {
                let len = path.len();
                push_key(path, k);
                match am.get(k) {
                    Some(av) => walk(ev, av, path, out, limit),
                    None => out.push(FieldDiff { path: path.clone(), expected: Some(ev.clone()), actual: None }),
                }
                path.truncate(len);
            }
            for (k, av) in am.iter().filter(|(k, _)| !em.contains_key(*k)) {
                let len = path.len();
                push_key(path, k);
                out.push(FieldDiff { path: path.clone(), expected: None, actual: Some(av.clone()) });
                path.truncate(len);
            }
        }
        (Value::Array(ea), Value::Array(aa)) if ea.len() == aa.len() => {
            for (i, (ev, av)) in ea.iter().zip(aa).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(ev, av, path, out, limit);
                path.truncate(len);
            }
        }
        _ => out.push(FieldDiff { path: path.clone(), expected: Some(e.clone()), actual: Some(a.clone()) }),
    }
}

fn push_key(path: &mut String, key: &str) {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{key:?}]"));
    }
}

/// A short identity for messages: `Kind namespace/name`.
pub fn object_label(obj: &Value) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    let ns = s("/metadata/namespace");
    if ns.is_empty() {
        format!("{} {}", s("/kind"), s("/metadata/name"))
    } else {
        format!("{} {}/{}", s("/kind"), ns, s("/metadata/name"))
    }
}

/// Compare two streams in order: `None` when equal, else a readable report of the first
/// differences (at most `limit` lines).
pub fn ordered_report(expected: &[Value], actual: &[Value], limit: usize) -> Option<String> {
    if expected == actual {
        return None;
    }
    let mut lines = Vec::new();
    if expected.len() != actual.len() {
        lines.push(format!("expected {} documents, got {}", expected.len(), actual.len()));
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if lines.len() >= limit {
            break;
        }
        if e == a {
            continue;
        }
        let (el, al) = (object_label(e), object_label(a));
        if el != al {
            lines.push(format!("document {i}: expected {el}, got {al}"));
            continue;
        }
        for d in diff_values(e, a, limit - lines.len()) {
            lines.push(format!("document {i} ({el}): {d}"));
        }
    }
    Some(lines.join("\n"))
}

/// Identity used to pair objects: group, kind, namespace, name.
pub fn identity(obj: &Value) -> (String, String, String, String) {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
    let api = s("/apiVersion");
    let group = api.rsplit_once('/').map(|(g, _)| g.to_string()).unwrap_or_default();
    (group, s("/kind"), s("/metadata/namespace"), s("/metadata/name"))
}

/// Compare two streams as sets of objects paired by identity: `None` when equal.
pub fn unordered_report(expected: &[Value], actual: &[Value], limit: usize) -> Option<String> {
    use std::collections::BTreeMap;
    let index = |objs: &[Value]| -> BTreeMap<(String, String, String, String), Value> {
        objs.iter().map(|o| (identity(o), o.clone())).collect()
    };
    let (e, a) = (index(expected), index(actual));
    let mut lines = Vec::new();
    for (id, eo) in &e {
        match a.get(id) {
            None => lines.push(format!("missing: {}", object_label(eo))),
            Some(ao) => lines.extend(diff_values(eo, ao, limit).iter().map(|d| format!("{}: {d}", object_label(eo)))),
        }
    }
    for (id, ao) in &a {
        if !e.contains_key(id) {
            lines.push(format!("extra: {}", object_label(ao)));
        }
    }
    if expected.len() != e.len() || actual.len() != a.len() {
        lines.push("duplicate object identities in a stream".into());
    }
    if lines.is_empty() {
        return None;
    }
    let total = lines.len();
    lines.truncate(limit);
    if total > limit {
        lines.push(format!("… and {} more differences", total - limit));
    }
    Some(lines.join("\n"))
}

const HELM_LABELS: [&str; 4] =
    ["helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"];
const HELM_ANNOTATIONS: [&str; 2] = ["meta.helm.sh/release-name", "meta.helm.sh/release-namespace"];

/// Drop the labels and annotations Helm's conventions add to objects.
pub fn strip_helm_metadata(obj: &mut Value) {
    for (field, keys) in [("labels", &HELM_LABELS[..]), ("annotations", &HELM_ANNOTATIONS[..])] {
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else { return };
        if let Some(map) = meta.get_mut(field).and_then(Value::as_object_mut) {
            keys.iter().for_each(|k| {
                map.remove(*k);
            });
            if map.is_empty() {
                meta.remove(field);
            }
        }
    }
}

/// kustomize's hash suffix: `-` and 10 characters of its encoded alphabet.
fn hash_base(name: &str) -> Option<&str> {
    let (base, hash) = name.rsplit_once('-')?;
    (hash.len() == 10 && hash.chars().all(|c| "245679bcdfghkmt8".contains(c))).then_some(base)
}

/// Replace `name-<hash>` of generated ConfigMaps and Secrets, and every string equal to
/// such a name, with `name-<hash>`, so builds that differ only in hash suffixes compare equal.
pub fn mask_hash_suffixes(objects: &mut [Value]) {
    let hashed: std::collections::HashMap<String, String> = objects
        .iter()
        .filter(|o| matches!(o.get("kind").and_then(Value::as_str), Some("ConfigMap" | "Secret")))
        .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
        .filter_map(|n| hash_base(n).map(|b| (n.to_string(), format!("{b}-<hash>"))))
        .collect();
    fn walk(v: &mut Value, map: &std::collections::HashMap<String, String>) {
        match v {
            Value::String(s) => {
                if let Some(m) = map.get(s.as_str()) {
                    *s = m.clone();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, map)),
            Value::Object(m) => m.values_mut().for_each(|i| walk(i, map)),
            _ => {}
        }
    }
    objects.iter_mut().for_each(|o| walk(o, &hashed));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_paths_of_changed_missing_and_extra_fields() {
        let e = json!({"spec": {"replicas": 1, "containers": [{"image": "a"}], "gone": true}});
        let a = json!({"spec": {"replicas": "1", "containers": [{"image": "b"}], "extra": 1}});
        let d: Vec<String> = diff_values(&e, &a, 10).iter().map(|d| d.to_string()).collect();
        assert_eq!(
            d,
            [
                ".spec.replicas: expected 1, got \"1\"",
                ".spec.containers[0].image: expected \"a\", got \"b\"",
                ".spec.gone: expected true, got (absent)",
                ".spec.extra: expected (absent), got 1",
            ]
        );
    }

    #[test]
    fn key_order_does_not_matter() {
        let e = json!({"a": 1, "b": 2});
        let a = json!({"b": 2, "a": 1});
        assert!(ordered_report(&[e], &[a], 5).is_none());
    }
}
