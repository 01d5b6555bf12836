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
    pub expected: Option<Value>,
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
        write!(f, "{}: expected {}, got {}", if self.path.is_empty() { "." } else { &self.path }, show(&self.expected), show(&self.actual))
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
    if ns.is_empty() { format!("{} {}", s("/kind"), s("/metadata/name")) } else { format!("{} {}/{}", s("/kind"), ns, s("/metadata/name")) }
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
