//! The values schema: what keys exist and what type each takes.
//!
//! The schema is derived from the default values themselves (every key a default has is a
//! known key of that type) plus a few declared free-form places (label maps, node selectors,
//! tolerations, affinity, container resources). The same schema is exported as the charts'
//! `values.schema.json`, so Helm checks exactly what kfctl-rs checks.
//!
//! Like Helm, kfctl-rs checks the values coalesced over the defaults
//! ([`super::defaults::check_coalesced`]), never the user's layers alone: a null over a
//! default has deleted it by then, and a null still there stood where no default did (a key
//! the defaults lack, a label inside a map), so the schema meets it as a value, and only a
//! count upstream leaves unset ([`Schema::IntOrNull`]) or a free-form value takes it.

use serde_json::{Map, Value, json};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SchemaError {
    #[error("values: unknown key `{path}`{hint}")]
    UnknownKey { path: String, hint: String },
    #[error("values: `{path}` must be {expected}, got {got}")]
    WrongType { path: String, expected: String, got: String },
    #[error("values: `{path}` must be one of {allowed}, got {got}")]
    NotAllowed { path: String, allowed: String, got: String },
    #[error("values: `{path}` must be {expected}, got {got}")]
    BadFormat { path: String, expected: &'static str, got: String },
    #[error("values: `{path}` is missing; {hint}")]
    Missing { path: String, hint: &'static str },
    #[error(
        "values: `{path}` must be {expected}, got null; no default stands there for a null to delete: leave the key out or give a value"
    )]
    NullWithoutDefault { path: String, expected: &'static str },
}

/// A string format: a JSON Schema `pattern` (ECMA syntax that the `regex` crate reads the
/// same way), a length limit, and how errors name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Format {
    pub(crate) pattern: &'static str,
    pub(crate) max_len: usize,
    pub(crate) expected: &'static str,
}

impl Format {
    pub(crate) fn matches(&self, text: &str) -> bool {
        text.len() <= self.max_len && regex::Regex::new(self.pattern).is_ok_and(|r| r.is_match(text))
    }
}

/// A DNS-1123 subdomain, or empty (a StorageClass name).
pub(crate) const DNS_SUBDOMAIN_OR_EMPTY: Format = Format {
    pattern: r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    max_len: 253,
    expected: "empty or a DNS-1123 subdomain (lowercase letters, digits, `-` and `.`, at most 253 characters, e.g. fast-ssd)",
};
/// A DNS-1123 label, or empty (a namespace name).
pub(crate) const DNS_LABEL_OR_EMPTY: Format = Format {
    pattern: r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    max_len: 63,
    expected: "empty or a DNS-1123 label (lowercase letters, digits and `-`, at most 63 characters, e.g. team-a)",
};
/// An email address, as Dex and the profile controller take it.
pub(crate) const EMAIL: Format = Format {
    pattern: r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
    max_len: 254,
    expected: "an email address (name@domain, e.g. alice@example.com)",
};
/// A bcrypt hash, or empty.
pub(crate) const BCRYPT_OR_EMPTY: Format = Format {
    pattern: r"^$|^\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}$",
    max_len: 60,
    expected: "empty or a bcrypt hash ($2a$, $2b$ or $2y$; make one with `kfctl-rs secrets generate` or htpasswd -bnBC 12)",
};

/// A Kubernetes quantity (`500m`, `1.5Gi`, `2`, `1e3`): the pattern of the API's OpenAPI
/// `Quantity` type.
pub(crate) const QUANTITY: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// A node of the schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Schema {
    Any,
    Bool,
    /// A whole number, 0 or more: the only numbers in the values are counts (replicas).
    Int,
    /// [`Schema::Int`] or `null` (a count upstream leaves unset: the default is `null`, and
    /// Helm keeps a default's null beside the keys a user sets).
    IntOrNull,
    String,
    /// A Kubernetes quantity: a string of [`QUANTITY`], or a number 0 or more.
    Quantity,
    Enum(Vec<&'static str>),
    /// A string of a [`Format`].
    Pattern(Format),
    /// A map (the inner schema) that must have these keys, with what to do when one is missing.
    Required {
        keys: Vec<&'static str>,
        hint: &'static str,
        inner: Box<Schema>,
    },
    List(Box<Schema>),
    /// A [`Schema::List`], or a string holding one as YAML: what `--set-file KEY=FILE` gives
    /// (the file's text), for a list value such as `dex.connectors`.
    ListOrText(Box<Schema>),
    /// A map with known keys; `extra` types the keys it does not list (None: none allowed).
    Map {
        known: Vec<(String, Schema)>,
        extra: Option<Box<Schema>>,
    },
}

/// The list a YAML text holds (`--set-file` of a list value); an empty text is an empty list.
pub(crate) fn list_in_text(text: &str) -> Option<Vec<Value>> {
    if text.trim().is_empty() {
        return Some(Vec::new());
    }
    kfctl_yaml::parse_stream(text, "--set-file").ok()?.into_iter().next()?.as_array().cloned()
}

impl Schema {
    /// A free-form map of strings (labels, annotations, node selectors).
    pub(crate) fn string_map() -> Schema {
        Schema::Map { known: Vec::new(), extra: Some(Box::new(Schema::String)) }
    }
    pub(crate) fn any_map() -> Schema {
        Schema::Map { known: Vec::new(), extra: Some(Box::new(Schema::Any)) }
    }

    /// A container's `resources`: `limits` and `requests` of quantities, `claims` as given.
    pub(crate) fn container_resources() -> Schema {
        let quantities = || Schema::Map { known: Vec::new(), extra: Some(Box::new(Schema::Quantity)) };
        Schema::Map {
            known: vec![
                ("limits".into(), quantities()),
                ("requests".into(), quantities()),
                ("claims".into(), Schema::List(Box::new(Schema::Any))),
            ],
            extra: None,
        }
    }

    /// The schema implied by a default value.
    pub(crate) fn of_default(value: &Value) -> Schema {
        match value {
            Value::Bool(_) => Schema::Bool,
            Value::Number(n) if n.is_i64() || n.is_u64() => Schema::Int,
            Value::String(_) => Schema::String,
            Value::Array(items) => Schema::List(Box::new(items.first().map(Schema::of_default).unwrap_or(Schema::Any))),
            Value::Object(m) => {
                Schema::Map { known: m.iter().map(|(k, v)| (k.clone(), Schema::of_default(v))).collect(), extra: None }
            }
            _ => Schema::Any,
        }
    }

    /// Replace (or add) the schema at a path of known keys.
    pub(crate) fn set(&mut self, path: &[&str], schema: Schema) {
        let Some((first, rest)) = path.split_first() else {
            *self = schema;
            return;
        };
        if let Schema::Map { known, .. } = self {
            match known.iter_mut().find(|(k, _)| k == first) {
                Some((_, child)) => child.set(rest, schema),
                None => {
                    let mut child = Schema::Map { known: Vec::new(), extra: None };
                    child.set(rest, schema);
                    known.push((first.to_string(), child));
                }
            }
        }
    }

    /// Check values against the schema; the first problem found is the error. A null is a
    /// value like any other here (see the module's note on nulls).
    pub(crate) fn check(&self, values: &Value) -> Result<(), SchemaError> {
        self.check_at(values, "")
    }

    fn check_at(&self, value: &Value, path: &str) -> Result<(), SchemaError> {
        if value.is_null() && !matches!(self, Schema::Any | Schema::IntOrNull) {
            return Err(SchemaError::NullWithoutDefault { path: path.into(), expected: self.expected() });
        }
        let wrong = |expected: &str| SchemaError::WrongType {
            path: path.to_string(),
            expected: expected.into(),
            got: describe(value),
        };
        match (self, value) {
            (Schema::Any, _) => Ok(()),
            (Schema::Bool, Value::Bool(_)) | (Schema::String, Value::String(_)) => Ok(()),
            (Schema::Int | Schema::IntOrNull, Value::Number(_)) if whole_count(value).is_some() => Ok(()),
            (Schema::IntOrNull, Value::Null) => Ok(()),
            (Schema::Enum(allowed), Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
            (Schema::Pattern(f), Value::String(s)) if f.matches(s) => Ok(()),
            (Schema::Quantity, Value::String(s)) if quantity_regex().is_match(s) => Ok(()),
            (Schema::Quantity, Value::Number(n)) if n.as_f64().is_some_and(|f| f >= 0.0) => Ok(()),
            (Schema::Quantity, _) => Err(SchemaError::BadFormat {
                path: path.into(),
                expected: "a Kubernetes quantity (e.g. 500m, 1.5Gi, 2)",
                got: describe(value),
            }),
            (Schema::Pattern(f), Value::String(_)) => {
                Err(SchemaError::BadFormat { path: path.into(), expected: f.expected, got: describe(value) })
            }
            (Schema::Required { keys, hint, inner }, Value::Object(map)) => {
                if let Some(key) = keys.iter().find(|k| !map.contains_key(**k)) {
                    return Err(SchemaError::Missing { path: format!("{path}.{key}"), hint });
                }
                inner.check_at(value, path)
            }
            (Schema::Required { .. }, _) => Err(wrong("a map")),
            (Schema::Enum(allowed), _) => Err(SchemaError::NotAllowed {
                path: path.into(),
                allowed: shown_choices(allowed),
                got: describe(value),
            }),
            (Schema::List(item) | Schema::ListOrText(item), Value::Array(items)) => {
                items.iter().enumerate().try_for_each(|(i, v)| item.check_at(v, &format!("{path}[{i}]")))
            }
            (Schema::ListOrText(item), Value::String(text)) => match list_in_text(text) {
                Some(items) => Schema::List(item.clone()).check_at(&Value::Array(items), path),
                None => Err(wrong("a list, or a file's text holding one as YAML (--set-file)")),
            },
            (Schema::Map { known, extra }, Value::Object(map)) => check_map(known, extra.as_deref(), map, path),
            (Schema::Bool, _) => Err(wrong("true or false")),
            (Schema::Int, _) => Err(wrong("a whole number, 0 or more")),
            (Schema::IntOrNull, _) => Err(wrong("a whole number, 0 or more (or null: unset)")),
            (Schema::String | Schema::Pattern(_), _) => Err(wrong("a string")),
            (Schema::List(_), _) => Err(wrong("a list")),
            (Schema::ListOrText(_), _) => Err(wrong("a list, or a file's text holding one as YAML (--set-file)")),
            (Schema::Map { .. }, _) => Err(wrong("a map")),
        }
    }

    /// What a value of this schema is, as an error says it.
    fn expected(&self) -> &'static str {
        match self {
            Schema::Any => "anything",
            Schema::Bool => "true or false",
            Schema::Int => "a whole number, 0 or more",
            Schema::IntOrNull => "a whole number, 0 or more (or null: unset)",
            Schema::String | Schema::Enum(_) | Schema::Pattern(_) => "a string",
            Schema::Quantity => "a Kubernetes quantity (e.g. 500m, 1.5Gi, 2)",
            Schema::List(_) | Schema::ListOrText(_) => "a list",
            Schema::Required { .. } | Schema::Map { .. } => "a map",
        }
    }

    /// JSON Schema (draft 7) for Helm's `values.schema.json`; every property carries the
    /// `description` that `describe` gives its path (see [`super::docs`]).
    pub(crate) fn to_json_schema(&self, describe: &dyn Fn(&[&str]) -> Option<String>) -> Value {
        self.json_at(&mut Vec::new(), describe)
    }

    fn json_at<'a>(&'a self, path: &mut Vec<&'a str>, describe: &dyn Fn(&[&str]) -> Option<String>) -> Value {
        match self {
            Schema::Any => json!({}),
            Schema::Bool => json!({"type": "boolean"}),
            Schema::Int => json!({"type": "integer", "minimum": 0}),
            Schema::IntOrNull => json!({"type": ["integer", "null"], "minimum": 0}),
            Schema::String => json!({"type": "string"}),
            Schema::Quantity => {
                json!({"anyOf": [{"type": "string", "pattern": QUANTITY}, {"type": "number", "minimum": 0}]})
            }
            Schema::Enum(v) => json!({"type": "string", "enum": v}),
            Schema::Pattern(f) => json!({"type": "string", "pattern": f.pattern, "maxLength": f.max_len}),
            Schema::Required { keys, inner, .. } => {
                let mut json = inner.json_at(path, describe);
                json["required"] = json!(keys);
                json
            }
            // A list's items are described by the list's path (`global.users` → `global.users.email`).
            Schema::List(item) => json!({"type": "array", "items": item.json_at(path, describe)}),
            Schema::ListOrText(item) => json!({"anyOf": [
                {"type": "array", "items": item.json_at(path, describe)},
                {"type": "string", "description": "a file's text holding the list as YAML (--set-file)"},
            ]}),
            Schema::Map { known, extra } => {
                let mut props = Map::new();
                for (key, schema) in known {
                    path.push(key);
                    let mut prop = Map::new();
                    if let Some(text) = describe(path) {
                        prop.insert("description".into(), Value::String(text));
                    }
                    if let Value::Object(m) = schema.json_at(path, describe) {
                        prop.extend(m);
                    }
                    path.pop();
                    props.insert(key.clone(), Value::Object(prop));
                }
                let additional = match extra {
                    Some(s) => s.json_at(&mut Vec::new(), &|_| None),
                    None => Value::Bool(false),
                };
                json!({"type": "object", "properties": props, "additionalProperties": additional})
            }
        }
    }
}

fn check_map(
    known: &[(String, Schema)],
    extra: Option<&Schema>,
    map: &Map<String, Value>,
    path: &str,
) -> Result<(), SchemaError> {
    for (key, value) in map {
        let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        match (known.iter().find(|(k, _)| k == key), extra) {
            (Some((_, schema)), _) => schema.check_at(value, &child_path)?,
            (None, Some(schema)) => schema.check_at(value, &child_path)?,
            (None, None) => {
                let hint = suggestion(key, known.iter().map(|(k, _)| k.as_str()))
                    .map(|s| format!("; did you mean `{}`?", if path.is_empty() { s } else { format!("{path}.{s}") }))
                    .unwrap_or_default();
                return Err(SchemaError::UnknownKey { path: child_path, hint });
            }
        }
    }
    Ok(())
}

fn quantity_regex() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(QUANTITY).expect("QUANTITY is a valid pattern"))
}

/// A count: a whole number, 0 or more, written as an integer or as a float with no fraction
/// (`2.0`, which Helm's JSON Schema takes as the integer 2, and `toJson` writes as `2`).
pub(crate) fn whole_count(value: &Value) -> Option<u64> {
    let n = value.as_number()?;
    n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 9.0e15).map(|f| f as u64))
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.len() > 40 => "a string".into(),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a map".into(),
    }
}

/// The closest known name, if close enough to be a likely typo.
pub(crate) fn suggestion<'a>(wrong: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    candidates
        .map(|c| (levenshtein(&wrong.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The allowed values as a message shows them: each quoted, so the empty one is seen (`"", "only", "skip"`).
fn shown_choices(allowed: &[&str]) -> String {
    allowed.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_resources_take_quantities_only() {
        let schema = Schema::container_resources();
        for good in [
            json!({"limits": {"cpu": "500m", "memory": "1.5Gi", "nvidia.com/gpu": 1}}),
            json!({"requests": {"cpu": 0.25, "x": "1e3"}}),
            json!({}),
        ] {
            schema.check(&good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            json!({"limits": {"cpu": "lots"}}),
            json!({"limits": {"cpu": -1}}),
            json!({"limit": {}}),
            json!({"requests": {"cpu": true}}),
        ] {
            assert!(schema.check(&bad).is_err(), "{bad} must be refused");
        }
        let json = schema.to_json_schema(&|_| None);
        assert_eq!(json.pointer("/properties/limits/additionalProperties/anyOf/0/pattern").unwrap(), QUANTITY);
    }

    fn schema() -> Schema {
        let mut s = Schema::of_default(
            &json!({"katib": {"enabled": true, "replicas": {"katib-ui": 1}}, "global": {"imageRegistry": ""}}),
        );
        s.set(&["global", "nodeSelector"], Schema::string_map());
        s
    }

    #[test]
    fn unknown_key_names_the_path_and_suggests() {
        let e = schema().check(&json!({"katib": {"enabeld": false}})).unwrap_err();
        assert_eq!(e.to_string(), "values: unknown key `katib.enabeld`; did you mean `katib.enabled`?");
        let e = schema().check(&json!({"katob": {}})).unwrap_err();
        assert!(e.to_string().contains("did you mean `katib`"), "{e}");
    }

    #[test]
    fn wrong_type_says_what_was_expected() {
        let e = schema().check(&json!({"katib": {"replicas": {"katib-ui": "two"}}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "values: `katib.replicas.katib-ui` must be a whole number, 0 or more, got the string \"two\""
        );
        let e = schema().check(&json!({"katib": {"replicas": {"katib-ui": -1}}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "values: `katib.replicas.katib-ui` must be a whole number, 0 or more, got the number -1"
        );
    }

    #[test]
    fn counts_take_whole_floats_as_helm_does_and_nullable_counts_take_null() {
        assert_eq!(whole_count(&json!(2.0)), Some(2));
        assert_eq!(whole_count(&json!(3)), Some(3));
        for bad in [json!(2.5), json!(-1), json!(-1.0), json!("2")] {
            assert_eq!(whole_count(&bad), None, "{bad}");
        }
        assert!(Schema::Int.check(&json!(2.0)).is_ok() && Schema::Int.check(&json!(2.5)).is_err());
        assert!(Schema::IntOrNull.check(&Value::Null).is_ok() && Schema::Int.check(&Value::Null).is_err());
        let e = Schema::IntOrNull.check(&json!(-1)).unwrap_err().to_string();
        assert!(e.contains("0 or more (or null: unset)"), "{e}");
        assert_eq!(Schema::IntOrNull.to_json_schema(&|_| None), json!({"type": ["integer", "null"], "minimum": 0}));
    }

    #[test]
    fn a_null_is_a_value_the_schema_meets_and_the_error_says_no_default_stood_there() {
        // the values are checked coalesced over the defaults, where a null over a default has
        // deleted it: a null still there stood where no default did
        let e = schema().check(&json!({"katib": {"enabled": null}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "values: `katib.enabled` must be true or false, got null; no default stands there for a null to delete: leave the key out or give a value"
        );
        let e = schema().check(&json!({"global": {"nodeSelector": {"gpu": null}}})).unwrap_err();
        assert!(e.to_string().starts_with("values: `global.nodeSelector.gpu` must be a string, got null"), "{e}");
        assert!(Schema::any_map().check(&json!({"x": null})).is_ok(), "a free-form value takes a null");
        let e = Schema::container_resources().check(&json!({"limits": null})).unwrap_err();
        assert!(e.to_string().starts_with("values: `limits` must be a map, got null"), "{e}");
    }

    #[test]
    fn free_form_maps_accept_any_key_of_the_right_type() {
        assert!(schema().check(&json!({"global": {"nodeSelector": {"gpu": "true"}}})).is_ok());
        assert!(schema().check(&json!({"global": {"nodeSelector": {"gpu": 1}}})).is_err());
    }

    #[test]
    fn json_schema_describes_every_property_by_its_path() {
        let json = schema().to_json_schema(&|p| Some(p.join(".")));
        assert_eq!(
            json.pointer("/properties/katib/properties/replicas/properties/katib-ui/description").unwrap(),
            "katib.replicas.katib-ui"
        );
        assert_eq!(json.pointer("/properties/katib/properties/replicas/properties/katib-ui/minimum").unwrap(), 0);
        assert_eq!(json.pointer("/properties/global/description").unwrap(), "global");
    }

    #[test]
    fn formats_accept_their_kind_and_name_the_value_otherwise() {
        assert!(DNS_SUBDOMAIN_OR_EMPTY.matches("") && DNS_SUBDOMAIN_OR_EMPTY.matches("fast.ssd-1"));
        for bad in ["Fast", "a_b", "-a", "a.", &"a".repeat(254)] {
            assert!(!DNS_SUBDOMAIN_OR_EMPTY.matches(bad), "{bad}");
        }
        assert!(DNS_LABEL_OR_EMPTY.matches("team-a") && !DNS_LABEL_OR_EMPTY.matches("a.b"));
        assert!(!DNS_LABEL_OR_EMPTY.matches(&"a".repeat(64)));
        assert!(EMAIL.matches("a.b@c.io") && !EMAIL.matches("a@b") && !EMAIL.matches("a b@c.io"));
        let hash = "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72";
        assert!(BCRYPT_OR_EMPTY.matches(hash) && BCRYPT_OR_EMPTY.matches(&hash.replace("$2y", "$2b")));
        assert!(!BCRYPT_OR_EMPTY.matches("12341234") && !BCRYPT_OR_EMPTY.matches(&hash.replace("$2y", "$1")));
        let schema = Schema::Pattern(EMAIL);
        let e = schema.check(&json!("nope")).unwrap_err().to_string();
        assert!(e.starts_with("values: `` must be an email address"), "{e}");
        assert_eq!(schema.to_json_schema(&|_| None)["pattern"], EMAIL.pattern);
    }
}
