//! Label and field selectors, as `?labelSelector=` and `?fieldSelector=` carry them.
//!
//! Label selectors support the whole upstream grammar: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
//! `k notin (a,b)`, `k` (exists) and `!k` (does not exist), joined by commas. Field selectors
//! support `metadata.name` and `metadata.namespace` with `=`, `==` and `!=`, which is what
//! kube's watcher (`await_condition`) and kubectl send; other fields are rejected with 400
//! as the real server rejects fields it does not index.

use serde_json::Value;

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

/// A parsed field selector over `metadata.name` / `metadata.namespace`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

/// Split on commas that are not inside parentheses.
fn split_top_level(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

fn parse_set(key: &str, rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
    (!key.is_empty()).then_some(values)
}

fn parse_requirement(term: &str) -> Result<Requirement, String> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::NotExists(key.trim().to_string()));
    }
    if let Some((key, value)) = term.split_once("!=") {
        return Ok(Requirement::NotEquals(key.trim().into(), value.trim().into()));
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(Requirement::Equals(key.trim().into(), value.trim().into()));
    }
    let words: Vec<&str> = term.splitn(2, char::is_whitespace).collect();
    if let [key, rest] = words.as_slice() {
        let rest = rest.trim();
        if let Some(set) = rest.strip_prefix("notin").and_then(|r| parse_set(key, r)) {
            return Ok(Requirement::NotIn(key.to_string(), set));
        }
        if let Some(set) = rest.strip_prefix("in").and_then(|r| parse_set(key, r)) {
            return Ok(Requirement::In(key.to_string(), set));
        }
        return Err(format!("unable to parse requirement: {term:?}"));
    }
    Ok(Requirement::Exists(term.to_string()))
}

impl LabelSelector {
    /// Parse `?labelSelector=` text; errors are worded for a 400 response.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        split_top_level(text).iter().map(|t| parse_requirement(t)).collect::<Result<_, _>>().map(LabelSelector)
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let label = |k: &str| labels.get(k).and_then(Value::as_str);
        self.0.iter().all(|req| match req {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, set) => label(k).is_some_and(|l| set.iter().any(|v| v == l)),
            Requirement::NotIn(k, set) => label(k).is_none_or(|l| set.iter().all(|v| v != l)),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::NotExists(k) => label(k).is_none(),
        })
    }
}

impl FieldSelector {
    /// Parse `?fieldSelector=` text over `metadata.name` and `metadata.namespace`.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut terms = Vec::new();
        for term in split_top_level(text) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!("invalid selector: {term:?}; can't understand {term:?}"));
            };
            let field = field.trim();
            if field != "metadata.name" && field != "metadata.namespace" {
                return Err(format!("field label not supported: {field}"));
            }
            terms.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector(terms))
    }

    /// Whether the object satisfies every term.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let key = field.trim_start_matches("metadata.");
            let actual = object["metadata"][key].as_str().unwrap_or("");
            (actual == value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj() -> Value {
        json!({"metadata": {"name": "web", "namespace": "kf", "labels": {"app": "web", "tier": "front"}}})
    }

    #[test]
    fn equality_requirements() {
        assert!(LabelSelector::parse("app=web").unwrap().matches(&obj()));
        assert!(LabelSelector::parse("app==web,tier=front").unwrap().matches(&obj()));
        assert!(!LabelSelector::parse("app!=web").unwrap().matches(&obj()));
        assert!(!LabelSelector::parse("app=db").unwrap().matches(&obj()));
    }

    #[test]
    fn set_requirements() {
        assert!(LabelSelector::parse("app in (db, web)").unwrap().matches(&obj()));
        assert!(!LabelSelector::parse("app notin (db,web)").unwrap().matches(&obj()));
        assert!(LabelSelector::parse("missing notin (x)").unwrap().matches(&obj()));
        assert!(LabelSelector::parse("tier,!missing").unwrap().matches(&obj()));
        assert!(!LabelSelector::parse("!tier").unwrap().matches(&obj()));
    }

    #[test]
    fn empty_selector_matches_all_and_garbage_is_rejected() {
        assert!(LabelSelector::parse("").unwrap().matches(&json!({})));
        assert!(LabelSelector::parse("app oops (x)").is_err());
    }

    #[test]
    fn field_selector_name_and_namespace() {
        assert!(FieldSelector::parse("metadata.name=web").unwrap().matches(&obj()));
        assert!(!FieldSelector::parse("metadata.namespace!=kf").unwrap().matches(&obj()));
        assert!(FieldSelector::parse("spec.nodeName=x").is_err());
    }
}
