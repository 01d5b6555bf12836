//! `crds:` — legacy OpenAPI definition files that declare transformer fields of custom kinds.
//!
//! Each file (JSON when it starts with `{`, else YAML) maps type names
//! (`github.com/example/pkg/apis/v1beta1.Bee`) to `{Schema: {...}}`. As kustomize v5.6 does
//! (`LoadConfigFromCRDs`), every definition whose properties include `apiVersion`, `kind` and
//! `metadata` is a kind (the part of the type name after its last `.`), and its properties
//! are walked, following `$ref`s to other types of the file, to find:
//! - `x-kubernetes-object-ref-api-version` + `x-kubernetes-object-ref-kind`: the field (its
//!   `x-kubernetes-object-ref-name-key`, default `name`) names an object of that version and
//!   kind, so the name-reference fix-up rewrites it when the object is renamed;
//! - `x-kubernetes-label-selector`: a `commonLabels` field; `x-kubernetes-annotation`: a
//!   `commonAnnotations` field; `x-kubernetes-identity`: a `namePrefix` field.
//!
//! The result is a transformer configuration merged like a `configurations:` file. Field
//! specs name the kind only (no group or version), and never create fields.

use super::config::{NameBackReference, TransformConfig};
use crate::error::{KustomizeError, Result};
use crate::gvk::Gvk;
use crate::kustomization::FieldSpec;
use crate::loader::Loader;
use serde_json::{Map, Value};
use std::path::Path;

/// Deeper `$ref` chains than this are a cycle (kustomize would recurse without end).
const MAX_DEPTH: usize = 32;

/// The configuration declared by a kustomization's `crds:` files (relative to `dir`).
pub(crate) fn load(files: &[String], dir: &Path, loader: &Loader) -> Result<TransformConfig> {
    let mut merged = TransformConfig::default();
    for file in files {
        let (path, text) = loader.read_text(dir, file)?;
        let origin = path.display().to_string();
        let definitions = parse(&text, &origin)?;
        let config = config_of(&definitions);
        merged.merge_checked(&config).map_err(|source| KustomizeError::ConflictingFieldSpecs {
            context: origin.clone(),
            source: Box::new(source),
        })?;
    }
    Ok(merged)
}

/// Type name to its schema (`Schema`, matched without case as Go's JSON decoding does).
fn parse(text: &str, origin: &str) -> Result<Map<String, Value>> {
    let invalid =
        |message: String| KustomizeError::transform(origin, format!("unable to parse open API definition: {message}"));
    let doc: Value = if text.starts_with('{') {
        serde_json::from_str(text).map_err(|source| KustomizeError::CrdSchema { origin: origin.to_string(), source })?
    } else {
        kfctl_yaml::parse_stream(text, origin)?.into_iter().next().unwrap_or(Value::Null)
    };
    let entries = match doc {
        Value::Null => return Ok(Map::new()),
        Value::Object(entries) => entries,
        other => return Err(invalid(format!("expected a map of type names, found {}", kfctl_yaml::type_name(&other)))),
    };
    let mut out = Map::new();
    for (name, definition) in entries {
        let definition = match definition {
            Value::Object(d) => d,
            Value::Null => Map::new(),
            other => return Err(invalid(format!("{name}: expected a map, found {}", kfctl_yaml::type_name(&other)))),
        };
        let schema = definition.iter().find(|(k, _)| k.eq_ignore_ascii_case("schema")).map(|(_, v)| v.clone());
        out.insert(name, schema.unwrap_or(Value::Null));
    }
    Ok(out)
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn config_of(definitions: &Map<String, Value>) -> TransformConfig {
    let mut config = TransformConfig::default();
    for (name, schema) in definitions {
        let is_kind =
            properties(schema).is_some_and(|p| ["kind", "apiVersion", "metadata"].iter().all(|k| p.contains_key(*k)));
        if is_kind {
            let kind = name.rsplit('.').next().unwrap_or(name);
            walk(&mut config, kind, definitions, name, &mut Vec::new());
        }
    }
    config
}

/// kustomize's `loadCrdIntoConfig` for the type `type_name` at `path` in objects of `kind`.
fn walk(
    config: &mut TransformConfig,
    kind: &str,
    definitions: &Map<String, Value>,
    type_name: &str,
    path: &mut Vec<String>,
) {
    let Some(props) = definitions.get(type_name).and_then(properties) else { return };
    if path.len() > MAX_DEPTH {
        return;
    }
    for (prop, property) in props {
        path.push(prop.clone());
        let text = |key: &str| property.get(key).and_then(Value::as_str);
        let spec = |path: &[String]| FieldSpec { kind: kind.to_string(), path: path.join("/"), ..Default::default() };
        if text("x-kubernetes-annotation").is_some() {
            config.common_annotations.push(spec(path));
        }
        if text("x-kubernetes-label-selector").is_some() {
            config.common_labels.push(spec(path));
        }
        if text("x-kubernetes-identity").is_some() {
            config.name_prefix.push(spec(path));
        }
        if let (Some(version), Some(referenced)) =
            (text("x-kubernetes-object-ref-api-version"), text("x-kubernetes-object-ref-kind"))
        {
            let name_key = text("x-kubernetes-object-ref-name-key").unwrap_or("name");
            let mut referrer = path.clone();
            referrer.push(name_key.to_string());
            config
                .name_reference
                .push(NameBackReference { gvk: Gvk::new("", version, referenced), referrers: vec![spec(&referrer)] });
        }
        if let Some(reference) = text("$ref").filter(|r| !r.is_empty()) {
            walk(config, kind, definitions, reference, path);
        }
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{
      "x/v1.Bee": {"Schema": {"properties": {"apiVersion": {}, "kind": {}, "metadata": {}}}},
      "x/v1.Hive": {"schema": {"properties": {"apiVersion": {}, "kind": {}, "metadata": {},
        "spec": {"$ref": "x/v1.HiveSpec"}}}},
      "x/v1.HiveSpec": {"Schema": {"properties": {
        "queen": {"x-kubernetes-object-ref-api-version": "v1", "x-kubernetes-object-ref-kind": "Bee"},
        "loop": {"$ref": "x/v1.HiveSpec"},
        "match": {"x-kubernetes-label-selector": ""}}}}
    }"#;

    #[test]
    fn references_and_label_fields_of_custom_kinds_are_found_through_refs() {
        let config = config_of(&parse(FILE, "crd.json").expect("parses"));
        let queen = config.name_reference.iter().find(|r| r.gvk.kind == "Bee").expect("Bee is referenced");
        assert_eq!(queen.gvk.version, "v1");
        assert!(queen.referrers.iter().any(|s| s.kind == "Hive" && s.path == "spec/queen/name"));
        assert!(config.common_labels.iter().any(|s| s.kind == "Hive" && s.path == "spec/match"));
        assert!(config.common_labels.iter().any(|s| s.path.starts_with("spec/loop/loop")), "bounded, not endless");
    }

    #[test]
    fn a_file_that_is_not_a_map_of_types_is_an_error() {
        let e = parse("[1, 2]\n", "crd.yaml").expect_err("refused").to_string();
        assert!(e.contains("crd.yaml") && e.contains("unable to parse open API definition"), "{e}");
    }
}
