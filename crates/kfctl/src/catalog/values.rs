//! Helm-style values: a tree of YAML data, merged with Helm's rules.
//!
//! Layers apply in order — defaults, the profile's values, each `-f` file, then each `--set` —
//! and a later layer wins. Maps merge key by key; anything else is replaced; a `null` in a
//! later layer deletes the key (Helm's rule). `--set` uses Helm's syntax: `a.b=c`, several
//! separated by commas, `a[0]=x` for list items, `a={x,y}` for a list, `\.` and `\,` for
//! literal dots and commas; `true`/`false` become booleans, whole numbers integers, `null`
//! deletes.

use serde_json::{Map, Value};

/// A malformed `--set`.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("--set {expression:?}: {problem}; expected key.path=value (e.g. --set katib.enabled=false)")]
pub struct SetError {
    pub expression: String,
    pub problem: String,
}

/// Merge `over` onto `base` with Helm's rules (null deletes).
pub fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (key, value) in o {
                if value.is_null() {
                    b.remove(key);
                } else if let Some(existing) = b.get_mut(key).filter(|e| e.is_object() && value.is_object()) {
                    merge(existing, value);
                } else {
                    b.insert(key.clone(), strip_nulls(value));
                }
            }
        }
        (b, o) => *b = strip_nulls(o),
    }
}

fn strip_nulls(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), strip_nulls(v))).collect())
        }
        other => other.clone(),
    }
}

/// Parse one `--set` argument (which may hold several comma-separated assignments) into a
/// values tree to merge.
pub fn parse_set(expression: &str) -> Result<Value, SetError> {
    let err = |problem: &str| SetError { expression: expression.to_string(), problem: problem.to_string() };
    let mut out = Value::Object(Map::new());
    for assignment in split_unescaped(expression, ',', true) {
        let (key, raw) = split_once_unescaped(&assignment, '=').ok_or_else(|| err("no `=` in the assignment"))?;
        let path = parse_key_path(&key).map_err(|p| err(&p))?;
        let value = if raw.starts_with('{') && raw.ends_with('}') {
            Value::Array(
                split_unescaped(&raw[1..raw.len() - 1], ',', false)
                    .iter()
                    .filter(|s| !s.is_empty())
                    .map(|s| typed(s))
                    .collect(),
            )
        } else {
            typed(&unescape(&raw))
        };
        set_path(&mut out, &path, value).map_err(|p| err(&p))?;
    }
    Ok(out)
}

/// One step of a `--set` key: a map key or a list index.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

fn parse_key_path(key: &str) -> Result<Vec<Step>, String> {
    if key.is_empty() {
        return Err("empty key".into());
    }
    let mut steps = Vec::new();
    for part in split_unescaped(key, '.', false) {
        let part = unescape(&part);
        let (name, mut rest) = match part.find('[') {
            Some(i) => (part[..i].to_string(), &part[i..]),
            None => (part.clone(), ""),
        };
        if name.is_empty() {
            return Err(format!("empty key segment in `{key}`"));
        }
        steps.push(Step::Key(name));
        while let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']').ok_or_else(|| format!("unclosed `[` in `{key}`"))?;
            let index: usize =
                inner[..close].parse().map_err(|_| format!("list index `{}` is not a number", &inner[..close]))?;
            if index > 10_000 {
                return Err(format!("list index {index} is too large"));
            }
            steps.push(Step::Index(index));
            rest = &inner[close + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("unexpected `{rest}` after a list index"));
        }
    }
    Ok(steps)
}

fn set_path(target: &mut Value, path: &[Step], value: Value) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        *target = value;
        return Ok(());
    };
    match first {
        Step::Key(k) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let map = target.as_object_mut().expect("just made a map");
            let child = map.entry(k.clone()).or_insert(Value::Null);
            set_path(child, rest, value)
        }
        Step::Index(i) => {
            if !target.is_array() {
                *target = Value::Array(Vec::new());
            }
            let list = target.as_array_mut().expect("just made a list");
            while list.len() <= *i {
                list.push(Value::Null);
            }
            set_path(&mut list[*i], rest, value)
        }
    }
}

/// Helm's type inference for `--set` values.
fn typed(raw: &str) -> Value {
    match raw {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ if raw == "0" || (!raw.starts_with('0') && !raw.starts_with("-0")) => {
            raw.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::String(raw.to_string()))
        }
        _ => Value::String(raw.to_string()),
    }
}

fn split_unescaped(text: &str, sep: char, respect_braces: bool) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.push('\\');
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            '{' if respect_braces => {
                depth += 1;
                current.push(c);
            }
            '}' if respect_braces => {
                depth -= 1;
                current.push(c);
            }
            c if c == sep && depth == 0 => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    parts.push(current);
    parts
}

fn split_once_unescaped(text: &str, sep: char) -> Option<(String, String)> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            c if c == sep && !escaped => return Some((text[..i].to_string(), text[i + 1..].to_string())),
            _ => escaped = false,
        }
    }
    None
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value at a dotted path, if present.
pub fn get<'a>(values: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(values, |v, k| v.get(*k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_infers_types_like_helm() {
        assert_eq!(parse_set("a.b=true").unwrap(), json!({"a": {"b": true}}));
        assert_eq!(parse_set("n=3,s=03,f=1.5").unwrap(), json!({"n": 3, "s": "03", "f": "1.5"}));
        assert_eq!(parse_set("l={x,y}").unwrap(), json!({"l": ["x", "y"]}));
        assert_eq!(parse_set("l[1]=b").unwrap(), json!({"l": [null, "b"]}));
        assert_eq!(parse_set(r"a.b\.c=v\,w").unwrap(), json!({"a": {"b.c": "v,w"}}));
    }

    #[test]
    fn malformed_set_names_the_expression() {
        let e = parse_set("novalue").unwrap_err();
        assert!(e.to_string().contains("\"novalue\"") && e.to_string().contains("no `=`"), "{e}");
        assert!(parse_set("a[x]=1").is_err());
        assert!(parse_set("=1").is_err());
    }

    #[test]
    fn later_layers_win_and_null_deletes() {
        let mut base = json!({"a": {"x": 1, "y": 2}, "keep": true});
        merge(&mut base, &json!({"a": {"x": 9, "y": null}, "new": [1]}));
        assert_eq!(base, json!({"a": {"x": 9}, "keep": true, "new": [1]}));
    }
}
