//! Go's `encoding/json`, which kustomize decodes kustomization files with, matches field names
//! case-insensitively: upstream files say `fieldref:` for `fieldRef:` and kustomize accepts it.
//! Before serde sees a kustomization, this module rewrites each *field name* to its canonical
//! spelling, walking only the struct-shaped parts (so user data such as label keys is never
//! touched). Unknown names are left alone for serde to refuse. A field set to `null`
//! (`resources:` with nothing after it) is dropped, as Go decodes it to the zero value.

use serde_json::{Map, Value};

/// A struct-shaped node: its fields, and for each the shape of its value.
type Shape = &'static [(&'static str, Child)];

#[derive(Clone, Copy)]
enum Child {
    /// A scalar or a free-form map: not walked.
    Leaf,
    /// A struct.
    One(Shape),
    /// A list of structs.
    Many(Shape),
}

const SELECTOR: Shape = &[
    ("group", Child::Leaf),
    ("version", Child::Leaf),
    ("kind", Child::Leaf),
    ("name", Child::Leaf),
    ("namespace", Child::Leaf),
    ("labelSelector", Child::Leaf),
    ("annotationSelector", Child::Leaf),
];
const FIELD_SPEC: Shape = &[
    ("group", Child::Leaf),
    ("version", Child::Leaf),
    ("kind", Child::Leaf),
    ("path", Child::Leaf),
    ("create", Child::Leaf),
];
const PATCH: Shape =
    &[("path", Child::Leaf), ("patch", Child::Leaf), ("target", Child::One(SELECTOR)), ("options", Child::Leaf)];
const GEN_OPTIONS: Shape = &[
    ("labels", Child::Leaf),
    ("annotations", Child::Leaf),
    ("disableNameSuffixHash", Child::Leaf),
    ("immutable", Child::Leaf),
];
const GENERATOR: Shape = &[
    ("name", Child::Leaf),
    ("namespace", Child::Leaf),
    ("behavior", Child::Leaf),
    ("literals", Child::Leaf),
    ("files", Child::Leaf),
    ("envs", Child::Leaf),
    ("env", Child::Leaf),
    ("options", Child::One(GEN_OPTIONS)),
    ("type", Child::Leaf),
];
const VAR_TARGET: Shape = &[
    ("group", Child::Leaf),
    ("version", Child::Leaf),
    ("kind", Child::Leaf),
    ("name", Child::Leaf),
    ("namespace", Child::Leaf),
    ("apiVersion", Child::Leaf),
];
const VAR: Shape = &[
    ("name", Child::Leaf),
    ("objRef", Child::One(VAR_TARGET)),
    ("fieldRef", Child::One(&[("fieldPath", Child::Leaf)])),
];
const LABELS: Shape = &[
    ("pairs", Child::Leaf),
    ("includeSelectors", Child::Leaf),
    ("includeTemplates", Child::Leaf),
    ("fields", Child::Many(FIELD_SPEC)),
];
const IMAGE: Shape = &[
    ("name", Child::Leaf),
    ("newName", Child::Leaf),
    ("newTag", Child::Leaf),
    ("digest", Child::Leaf),
    ("tagSuffix", Child::Leaf),
];
const SORT: Shape = &[
    ("order", Child::Leaf),
    ("legacySortOptions", Child::One(&[("orderFirst", Child::Leaf), ("orderLast", Child::Leaf)])),
];
const KUSTOMIZATION: Shape = &[
    ("apiVersion", Child::Leaf),
    ("kind", Child::Leaf),
    ("metadata", Child::Leaf),
    ("resources", Child::Leaf),
    ("bases", Child::Leaf),
    ("components", Child::Leaf),
    ("namespace", Child::Leaf),
    ("namePrefix", Child::Leaf),
    ("nameSuffix", Child::Leaf),
    ("commonLabels", Child::Leaf),
    ("labels", Child::Many(LABELS)),
    ("commonAnnotations", Child::Leaf),
    ("images", Child::Many(IMAGE)),
    ("replicas", Child::Many(&[("name", Child::Leaf), ("count", Child::Leaf)])),
    ("patches", Child::Many(PATCH)),
    ("patchesStrategicMerge", Child::Leaf),
    ("patchesJson6902", Child::Many(PATCH)),
    ("configMapGenerator", Child::Many(GENERATOR)),
    ("secretGenerator", Child::Many(GENERATOR)),
    ("generatorOptions", Child::One(GEN_OPTIONS)),
    ("configurations", Child::Leaf),
    ("crds", Child::Leaf),
    ("vars", Child::Many(VAR)),
    ("replacements", Child::Leaf),
    ("openapi", Child::Leaf),
    ("sortOptions", Child::One(SORT)),
    ("buildMetadata", Child::Leaf),
    ("generators", Child::Leaf),
    ("transformers", Child::Leaf),
    ("validators", Child::Leaf),
    ("helmCharts", Child::Leaf),
    ("helmGlobals", Child::Leaf),
    ("helmChartInflationGenerator", Child::Leaf),
];

/// Rewrite field names of a kustomization document to their canonical spelling.
pub(crate) fn canonicalize_kustomization(doc: &mut Value) {
    canonicalize(doc, KUSTOMIZATION);
}

fn canonicalize(value: &mut Value, shape: Shape) {
    let Value::Object(map) = value else { return };
    let renamed: Map<String, Value> = std::mem::take(map)
        .into_iter()
        .filter(|(_, child)| !child.is_null())
        .map(|(key, mut child)| match shape.iter().find(|(name, _)| name.eq_ignore_ascii_case(&key)) {
            Some((name, kind)) => {
                walk(&mut child, *kind);
                (name.to_string(), child)
            }
            None => (key, child),
        })
        .collect();
    *map = renamed;
}

fn walk(value: &mut Value, kind: Child) {
    match (kind, value) {
        (Child::One(shape), v) => canonicalize(v, shape),
        (Child::Many(shape), Value::Array(items)) => items.iter_mut().for_each(|i| canonicalize(i, shape)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_names_match_case_insensitively_but_data_keys_do_not_change() {
        let mut doc = json!({
            "vars": [{"name": "X", "objref": {"kind": "Service", "name": "s"}, "fieldref": {"fieldpath": "metadata.name"}}],
            "commonLabels": {"fieldref": "kept"}
        });
        canonicalize_kustomization(&mut doc);
        assert_eq!(doc["vars"][0]["fieldRef"]["fieldPath"], "metadata.name");
        assert_eq!(doc["vars"][0]["objRef"]["kind"], "Service");
        assert_eq!(doc["commonLabels"]["fieldref"], "kept");
    }

    #[test]
    fn null_fields_are_dropped_like_go_zero_values() {
        let mut doc = json!({"resources": null, "patches": [{"path": "p.yaml", "target": null}]});
        canonicalize_kustomization(&mut doc);
        assert_eq!(doc, json!({"patches": [{"path": "p.yaml"}]}));
    }
}
