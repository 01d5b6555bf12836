//! The content hash kustomize appends to generated ConfigMap and Secret names.
//!
//! kustomize (api/hasher) hashes a small canonical JSON document, not the whole object:
//! - a ConfigMap gives `{"binaryData":…,"data":…,"kind":"ConfigMap","name":…}`, with
//!   `binaryData` only when it is a map;
//! - a Secret gives `{"data":…,"kind":"Secret","name":…,"stringData":…,"type":…}`, with
//!   `stringData` only when it is a map.
//!
//! A missing field is the empty string. The name is looked up with the single key
//! `metadata/name` (not the path `metadata` → `name`), which never exists, so it is always `""`:
//! the hash depends on the content only, and a prefix does not change it. The document is
//! written as Go's `encoding/json` writes a `map[string]interface{}`: keys sorted bytewise,
//! no spaces, `<`, `>`, `&`, U+2028 and U+2029 escaped as `\u…`, numbers as Go prints a
//! `float64`. Its SHA-256 in hex is cut to 10 characters and the characters `0 1 3 a e` are
//! replaced by `g h k m t`, so the suffix never reads as a number or a word.
//!
//! The suffix is added once, at the very end of a build (see [`add_hash_suffixes`]), after all
//! transformers, so the hash sees the final data.

use crate::error::Result;
use crate::resmap::ResMap;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Give every generated object that still needs one its hash suffix: `name-<hash>`.
/// The old name is remembered as a previous id, so references to it can be fixed up.
pub(crate) fn add_hash_suffixes(resources: &mut ResMap) -> Result<()> {
    for resource in resources.iter_mut() {
        let Some(generated) = resource.generated.as_mut().filter(|g| g.needs_hash) else {
            continue;
        };
        generated.needs_hash = false;
        let suffix = content_hash(&resource.obj);
        let name = format!("{}-{suffix}", resource.name());
        resource.set_name(&name);
    }
    Ok(())
}

/// kustomize's content hash of an object (10 characters).
pub fn content_hash(obj: &Value) -> String {
    encode_suffix(&hex_sha256(canonical_document(obj).as_bytes()))
}

/// The canonical JSON document kustomize hashes for this object.
pub(crate) fn canonical_document(obj: &Value) -> String {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let mut doc = Map::new();
    let field = |key: &str| node_value(obj.get(key));
    match kind {
        "ConfigMap" => {
            if let Some(binary) = obj.get("binaryData").filter(|v| v.is_object()) {
                doc.insert("binaryData".into(), binary.clone());
            }
            doc.insert("data".into(), field("data"));
        }
        "Secret" => {
            doc.insert("data".into(), field("data"));
            if let Some(string_data) = obj.get("stringData").filter(|v| v.is_object()) {
                doc.insert("stringData".into(), string_data.clone());
            }
            doc.insert("type".into(), field("type"));
        }
        _ => return go_json(obj),
    }
    doc.insert("kind".into(), Value::String(kind.to_string()));
    // kustomize looks the name up under the literal key `metadata/name`: always absent.
    doc.insert("name".into(), Value::String(String::new()));
    go_json(&Value::Object(doc))
}

/// A field as kustomize's hasher reads it: missing → `""`, a scalar → its text, a map or list
/// as it is.
fn node_value(value: Option<&Value>) -> Value {
    match value {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(Value::Bool(b)) => Value::String(b.to_string()),
        Some(Value::Number(n)) => Value::String(n.to_string()),
        Some(other) => other.clone(),
    }
}

fn hex_sha256(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// The first 10 hex characters with `0 1 3 a e` replaced by `g h k m t`.
fn encode_suffix(hex: &str) -> String {
    hex.chars()
        .take(10)
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            other => other,
        })
        .collect()
}

/// JSON as Go's `encoding/json` writes `interface{}` values: sorted keys, HTML-safe escapes.
pub fn go_json(value: &Value) -> String {
    let mut out = String::new();
    write_go_json(value, &mut out);
    out
}

fn write_go_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => write_go_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(key, out);
                out.push(':');
                write_go_json(&map[key], out);
            }
            out.push('}');
        }
    }
}

/// A number as Go prints the `float64` that `json.Unmarshal` makes of it.
pub(super) fn go_number(n: &serde_json::Number) -> String {
    let f = n.as_f64().unwrap_or_default();
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Go switches to exponent form here, with at least two exponent digits and a sign.
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let (sign, digits) = exponent.strip_prefix('-').map_or(("+", exponent), |d| ("-", d));
        return format!("{mantissa}e{sign}{digits:0>2}");
    }
    if f.fract() == 0.0 { format!("{}", f as i64) } else { format!("{f}") }
}

fn write_go_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{Behavior, Generated, Resource};
    use serde_json::json;

    fn generated(obj: Value) -> Resource {
        let mut r = Resource::new(obj);
        r.generated = Some(Generated { behavior: Behavior::Create, needs_hash: true });
        r
    }

    // Expected suffixes below were produced by real kustomize v5.6 on the same data.

    #[test]
    fn config_map_hash_ignores_the_name() {
        let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}});
        let b = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-other"}, "data": {"x": "1"}});
        assert_eq!(content_hash(&a), "hmg6f82fh6");
        assert_eq!(content_hash(&b), "hmg6f82fh6");
    }

    #[test]
    fn config_map_without_data_hashes_data_as_empty_string() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "empty"}});
        assert_eq!(canonical_document(&cm), r#"{"data":"","kind":"ConfigMap","name":""}"#);
        assert_eq!(content_hash(&cm), "6ct58987ht");
    }

    #[test]
    fn binary_data_is_included_when_present() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bin"}, "binaryData": {"b.bin": "//4="}});
        assert_eq!(content_hash(&cm), "9ghc4tgkt6");
    }

    #[test]
    fn strings_are_escaped_as_go_does() {
        let text = "a<b>&c\u{1}\u{8}\u{c}\t\"\\\u{2028}\n";
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "weird"}, "data": {"w.txt": text}});
        assert_eq!(
            canonical_document(&cm),
            r#"{"data":{"w.txt":"a\u003cb\u003e\u0026c\u0001\b\f\t\"\\\u2028\n"},"kind":"ConfigMap","name":""}"#
        );
        assert_eq!(content_hash(&cm), "4f9bdhcffh");
    }

    #[test]
    fn secret_hash_includes_type() {
        let opaque = json!({"kind": "Secret", "metadata": {"name": "a", "namespace": "ns"}, "type": "Opaque", "data": {"x": "MQ=="}, "immutable": true});
        assert_eq!(content_hash(&opaque), "bf2648c599");
        let empty = json!({"kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque", "data": {}});
        assert_eq!(content_hash(&empty), "46f8b28mk5");
    }

    #[test]
    fn numbers_print_as_go_float64() {
        assert_eq!(go_json(&json!([8080, 1.5, 1.0, 1e21, 1e-7])), "[8080,1.5,1,1e+21,1e-07]");
    }

    #[test]
    fn suffix_is_added_once_and_the_old_name_remembered() {
        let mut map = ResMap::new();
        map.append(generated(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-gen"}, "data": {"a": "1", "b": "3", "c": "4"}})), "t").unwrap();
        map.append(Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}})), "t")
            .unwrap();
        add_hash_suffixes(&mut map).unwrap();
        add_hash_suffixes(&mut map).unwrap();
        assert_eq!(map.get(0).name(), "p-gen-fbcmkbc66h");
        assert_eq!(map.get(0).previous_ids.last().unwrap().name, "p-gen");
        assert_eq!(map.get(1).name(), "plain");
    }
}
