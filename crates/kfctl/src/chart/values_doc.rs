//! An exported `values.yaml` body: the values as YAML, every key with a helm-docs comment.
//!
//! Each key is preceded by `# -- <description>` at its own indentation, the sentence
//! [`docs::describe`] gives its full value path. Maps are walked key by key (in go-yaml's key
//! order, as [`kfctl_yaml::to_yaml`] writes them); a list, an empty map and a free-form map
//! ([`docs::free_form`]: labels, node selectors, a container's resources) is written whole
//! under its described key. The data is exactly [`kfctl_yaml::to_yaml`]'s: only comments and
//! a blank line between top-level sections are added.

use crate::catalog::{Catalog, docs};
use kfctl_yaml::go_yaml_key_cmp;
use serde_json::{Map, Value};

/// The commented YAML of `values`, the values of the chart of `component` (`None`: the umbrella).
pub(crate) fn commented_yaml(values: &Value, component: Option<&str>, catalog: &Catalog) -> String {
    let mut out = String::new();
    if let Value::Object(map) = values {
        let writer = Writer { component, catalog };
        writer.mapping(map, &mut Vec::new(), &mut out);
    } else {
        out.push_str(&kfctl_yaml::to_yaml(values));
    }
    out
}

struct Writer<'a> {
    component: Option<&'a str>,
    catalog: &'a Catalog,
}

impl Writer<'_> {
    fn mapping<'v>(&self, map: &'v Map<String, Value>, path: &mut Vec<&'v str>, out: &mut String) {
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort_by(|a, b| go_yaml_key_cmp(a, b));
        let indent = " ".repeat(2 * path.len());
        for (i, key) in keys.into_iter().enumerate() {
            if path.is_empty() && i > 0 {
                out.push('\n');
            }
            path.push(key);
            let full = docs::full_path(path, self.component);
            if let Some(text) = docs::describe(&full, self.catalog) {
                out.push_str(&format!("{indent}# -- {}\n", text.replace('\n', " ")));
            }
            let value = &map[key.as_str()];
            match (value, key_line(key)) {
                (Value::Object(inner), Some(line)) if !inner.is_empty() && !docs::free_form(&full) => {
                    out.push_str(&format!("{indent}{line}\n"));
                    self.mapping(inner, path, out);
                }
                _ => push_indented(out, &indent, &entry_yaml(key, value)),
            }
            path.pop();
        }
    }
}

/// `key: value` as go-yaml writes a one-key map.
fn entry_yaml(key: &str, value: &Value) -> String {
    let mut one = Map::new();
    one.insert(key.to_string(), value.clone());
    kfctl_yaml::to_yaml(&Value::Object(one))
}

/// The `key:` line that opens a nested map (the key quoted as go-yaml quotes it); `None` for
/// a key go-yaml writes in the explicit `? key` form.
fn key_line(key: &str) -> Option<String> {
    let text = entry_yaml(key, &Value::Object(Map::new()));
    let line = text.strip_suffix(" {}\n")?;
    (!line.contains('\n') && !line.starts_with('?')).then(|| line.to_string())
}

/// `text` with every non-empty line indented (a block scalar's relative indentation is kept).
fn push_indented(out: &mut String, indent: &str, text: &str) {
    for line in text.lines() {
        if !line.is_empty() {
            out.push_str(indent);
        }
        out.push_str(line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_key_is_commented_and_the_data_is_unchanged() {
        let catalog = Catalog::embedded().unwrap();
        let values = json!({
            "global": {"crds": "", "commonLabels": {"a": "b"}},
            "katib": {"replicas": {"katib-ui": 1}, "resources": {"w": {"c": {"limits": {"cpu": "1"}}}}, "enabled": true},
        });
        let text = commented_yaml(&values, None, &catalog);
        assert!(text.contains("  # -- Labels added to every object.\n  commonLabels:\n    a: b\n"), "{text}");
        assert!(text.contains("    # -- `spec.replicas` of `katib-ui`; `null` leaves it unset"), "{text}");
        assert!(text.contains("sets).\n    katib-ui: 1\n"), "{text}");
        assert!(text.contains("      c:\n        limits:\n          cpu: \"1\"\n"), "{text}");
        assert!(!text.contains("# -- \n"));
        assert_eq!(kfctl_yaml::parse_helm_values(&text, "values.yaml").unwrap(), values);
    }

    #[test]
    fn block_scalars_keep_their_content() {
        let catalog = Catalog::embedded().unwrap();
        let values = json!({"global": {"commonAnnotations": {"note": "line one\n\n  indented\nlast\n"}}});
        let text = commented_yaml(&values, None, &catalog);
        assert_eq!(kfctl_yaml::parse_helm_values(&text, "values.yaml").unwrap(), values);
    }
}
