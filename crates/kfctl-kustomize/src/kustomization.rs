//! The `kustomization.yaml` file as data.
//!
//! Unknown fields are an error (kustomize refuses them too), so a typo never silently drops a
//! transformation. Legacy fields (`bases`, `patchesStrategicMerge`, `patchesJson6902`,
//! `commonLabels`, `vars`) are kept as written; the engine gives them kustomize's meaning.
//! Fields kustomize knows but kfctl-rs does not implement are parsed so that the engine can
//! refuse them by name ([`crate::KustomizeError::Unsupported`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The file names kustomize recognises, in its order of preference.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kustomization {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub metadata: Option<Value>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub bases: Vec<String>,
    #[serde(default)]
    pub components: Vec<String>,
    pub namespace: Option<String>,
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    #[serde(default)]
    pub common_labels: BTreeMap<String, String>,
    #[serde(default)]
    pub labels: Vec<LabelSet>,
    #[serde(default)]
    pub common_annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub images: Vec<Image>,
    #[serde(default)]
    pub replicas: Vec<Replica>,
    #[serde(default)]
    pub patches: Vec<Patch>,
    #[serde(default)]
    pub patches_strategic_merge: Vec<String>,
    #[serde(default)]
    pub patches_json6902: Vec<Patch>,
    #[serde(default)]
    pub config_map_generator: Vec<GeneratorArgs>,
    #[serde(default)]
    pub secret_generator: Vec<GeneratorArgs>,
    pub generator_options: Option<GeneratorOptions>,
    #[serde(default)]
    pub configurations: Vec<String>,
    #[serde(default)]
    pub crds: Vec<String>,
    #[serde(default)]
    pub vars: Vec<Var>,
    #[serde(default)]
    pub replacements: Vec<ReplacementEntry>,
    pub openapi: Option<Value>,
    pub sort_options: Option<SortOptions>,
    #[serde(default)]
    pub build_metadata: Vec<String>,
    #[serde(default)]
    pub generators: Vec<String>,
    #[serde(default)]
    pub transformers: Vec<String>,
    #[serde(default)]
    pub validators: Vec<String>,
    pub helm_charts: Option<Value>,
    pub helm_globals: Option<Value>,
    pub helm_chart_inflation_generator: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSet {
    #[serde(default)]
    pub pairs: BTreeMap<String, String>,
    #[serde(default)]
    pub include_selectors: bool,
    #[serde(default)]
    pub include_templates: bool,
    #[serde(default)]
    pub fields: Vec<FieldSpec>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Image {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// kustomize accepts `tagSuffix` in newer versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_suffix: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Replica {
    pub name: String,
    pub count: i64,
}

/// A patch: inline (`patch`) or from a file (`path`), with an optional target selector.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Patch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Selector>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, bool>,
}

/// kustomize's target selector. Name and namespace are anchored regular expressions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Selector {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label_selector: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub annotation_selector: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorArgs {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub behavior: Option<String>,
    #[serde(default)]
    pub literals: Vec<String>,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub envs: Vec<String>,
    pub env: Option<String>,
    pub options: Option<GeneratorOptions>,
    /// Secrets only: the Secret type (default `Opaque`).
    #[serde(rename = "type")]
    pub secret_type: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorOptions {
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    pub disable_name_suffix_hash: Option<bool>,
    pub immutable: Option<bool>,
}

/// A field spec: where in which kinds a transformer acts.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    pub path: String,
    #[serde(default)]
    pub create: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Var {
    pub name: String,
    pub obj_ref: VarTarget,
    pub field_ref: Option<VarFieldRef>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VarTarget {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub api_version: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VarFieldRef {
    #[serde(default)]
    pub field_path: String,
}

/// A `replacements:` entry: inline, or `path:` to a file of replacements.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplacementEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SortOptions {
    pub order: Option<String>,
    pub legacy_sort_options: Option<LegacySortOptions>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LegacySortOptions {
    #[serde(default)]
    pub order_first: Vec<String>,
    #[serde(default)]
    pub order_last: Vec<String>,
}
