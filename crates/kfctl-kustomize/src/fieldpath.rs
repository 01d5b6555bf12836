//! Field paths as kustomize's field specs write them, and walking them through an object.
//!
//! A path is `/`-separated: `spec/template/spec/containers/image`. A segment may be
//! `name[]` (every element of a list), `[name=value]` (the list element whose `name` is
//! `value`), or a plain key. Brackets protect `/` inside them. When a plain key meets a list,
//! the walk goes into every element, as kustomize's field-spec walker does.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// A map key.
    Key(String),
    /// Every element of the list found so far.
    Each,
    /// The list elements whose `key` field equals `value`.
    Match { key: String, value: String },
}

/// Split a kustomize field path on `/`, keeping bracketed text intact.
pub(crate) fn split_path(path: &str, delimiter: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => {
                depth += 1;
                current.push(c);
            }
            ']' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if c == delimiter && depth == 0 => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    parts.push(current);
    parts
}

/// kyaml's `SmarterPathSplitter`: split on `.` (a `\.` is a literal dot, kyaml's
/// `PathSplitter`); an element opening a bracket that a later one closes is joined up to it,
/// kept in brackets when it is a list match (`[name=x.y]`), else unbracketed
/// (`[cert-manager.io/inject-ca-from]`).
pub(crate) fn split_field_path(path: &str) -> Vec<String> {
    let split = escaped_split(path, '.');
    let mut result = Vec::new();
    let mut i = 0;
    while i < split.len() {
        let elem = &split[i];
        if elem.starts_with('[') && !elem.ends_with(']') {
            let mut bracketed = vec![elem.clone()];
            while i < split.len() - 1 {
                i += 1;
                bracketed.push(split[i].clone());
                if split[i].ends_with(']') {
                    break;
                }
            }
            let joined = bracketed.join(".");
            match joined.contains('=') {
                true => result.push(joined),
                false => result.push(joined.trim_matches(|c| c == '[' || c == ']').to_string()),
            }
        } else {
            result.push(elem.clone());
        }
        i += 1;
    }
    result.retain(|s| !s.is_empty());
    result
}

/// kyaml's `PathSplitter`: split on `delimiter`, a part ending in `\` joining the next.
fn escaped_split(path: &str, delimiter: char) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for piece in path.split(delimiter) {
        match parts.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push(delimiter);
                last.push_str(piece);
            }
            _ => parts.push(piece.to_string()),
        }
    }
    parts
}

/// Parse a field-spec path (`/`-separated).
pub(crate) fn parse(path: &str) -> Vec<Segment> {
    parse_with(path, '/')
}

/// Parse a path with the given delimiter (`.` for replacements' field paths).
pub(crate) fn parse_with(path: &str, delimiter: char) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in split_path(path, delimiter) {
        if part.is_empty() {
            continue;
        }
        if let Some(inner) = part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
            match inner.split_once('=') {
                Some((k, v)) => out.push(Segment::Match { key: k.to_string(), value: v.to_string() }),
                None if inner.is_empty() => out.push(Segment::Each),
                None => out.push(Segment::Key(inner.to_string())),
            }
        } else if let Some(key) = part.strip_suffix("[]") {
            out.push(Segment::Key(key.to_string()));
            out.push(Segment::Each);
        } else if let Some((key, rest)) = part.split_once('[').filter(|(_, r)| r.ends_with(']')) {
            out.push(Segment::Key(key.to_string()));
            let inner = &rest[..rest.len() - 1];
            if let Some((k, v)) = inner.split_once('=') {
                out.push(Segment::Match { key: k.to_string(), value: v.to_string() });
            } else {
                out.push(Segment::Each);
            }
        } else {
            out.push(Segment::Key(part));
        }
    }
    out
}

/// Call `visit` on every value found at `path`. With `create`, a missing final key is created
/// as null (and missing intermediate maps as empty maps) before visiting it.
pub(crate) fn visit_mut<E>(
    value: &mut Value,
    path: &[Segment],
    create: bool,
    visit: &mut dyn FnMut(&mut Value) -> Result<(), E>,
) -> Result<(), E> {
    let Some((first, rest)) = path.split_first() else {
        return visit(value);
    };
    match (first, value) {
        (Segment::Key(_), Value::Array(items)) => {
            for item in items.iter_mut() {
                visit_mut(item, path, create, visit)?;
            }
            Ok(())
        }
        (Segment::Key(key), Value::Object(map)) => visit_key(map, key, rest, create, visit),
        (Segment::Key(key), v @ Value::Null) if create => {
            *v = Value::Object(Map::new());
            let Value::Object(map) = v else { unreachable!("just set to a map") };
            visit_key(map, key, rest, create, visit)
        }
        (Segment::Each, Value::Array(items)) => {
            for item in items.iter_mut() {
                visit_mut(item, rest, create, visit)?;
            }
            Ok(())
        }
        (Segment::Match { key, value: want }, Value::Array(items)) => {
            for item in items.iter_mut().filter(|i| scalar_text(i.get(key)).as_deref() == Some(want.as_str())) {
                visit_mut(item, rest, create, visit)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn visit_key<E>(
    map: &mut Map<String, Value>,
    key: &str,
    rest: &[Segment],
    create: bool,
    visit: &mut dyn FnMut(&mut Value) -> Result<(), E>,
) -> Result<(), E> {
    if !map.contains_key(key) {
        if !create {
            return Ok(());
        }
        let fresh = if rest.is_empty() { Value::Null } else { Value::Object(Map::new()) };
        map.insert(key.to_string(), fresh);
    }
    let child = map.get_mut(key).expect("present or just inserted");
    if child.is_null() && !rest.is_empty() {
        if !create {
            return Ok(());
        }
        *child = Value::Object(Map::new());
    }
    visit_mut(child, rest, create, visit)
}

/// A scalar's text as YAML would show it (strings bare, numbers and booleans printed).
pub(crate) fn scalar_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_brackets_and_each() {
        assert_eq!(
            parse("spec/containers[]/image"),
            vec![
                Segment::Key("spec".into()),
                Segment::Key("containers".into()),
                Segment::Each,
                Segment::Key("image".into())
            ]
        );
        assert_eq!(
            parse("spec/containers/[name=app]/image"),
            vec![
                Segment::Key("spec".into()),
                Segment::Key("containers".into()),
                Segment::Match { key: "name".into(), value: "app".into() },
                Segment::Key("image".into())
            ]
        );
        assert_eq!(split_path("metadata/annotations/[a/b]", '/'), vec!["metadata", "annotations", "[a/b]"]);
    }

    #[test]
    fn walks_into_every_list_element_implicitly() {
        let mut v = json!({"spec": {"containers": [{"image": "a"}, {"image": "b"}]}});
        let mut seen = Vec::new();
        visit_mut::<()>(&mut v, &parse("spec/containers/image"), false, &mut |x| {
            seen.push(x.as_str().unwrap().to_string());
            *x = json!("z");
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(v["spec"]["containers"][1]["image"], "z");
    }

    #[test]
    fn creates_missing_fields_only_when_asked() {
        let mut v = json!({"metadata": {}});
        visit_mut::<()>(&mut v, &parse("metadata/labels/app"), false, &mut |_| panic!("must not visit")).unwrap();
        visit_mut::<()>(&mut v, &parse("metadata/labels/app"), true, &mut |x| {
            *x = json!("web");
            Ok(())
        })
        .unwrap();
        assert_eq!(v, json!({"metadata": {"labels": {"app": "web"}}}));
    }
}
