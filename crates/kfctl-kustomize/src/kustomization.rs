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

/// A kustomization file's fields, as written (camelCase in YAML). Every list and map defaults
/// to empty; the engine applies them in kustomize's order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kustomization {
    /// `apiVersion`: `kustomize.config.k8s.io/v1beta1` when set (`v1alpha1` for a component).
    pub api_version: Option<String>,
    /// `kind`: `Kustomization` or `Component`; unset means `Kustomization`.
    pub kind: Option<String>,
    /// `metadata`, kept as written; the build does not use it.
    pub metadata: Option<Value>,
    /// Files of objects, folders with their own kustomization, and remote references, in order.
    #[serde(default)]
    pub resources: Vec<String>,
    /// `bases`: the legacy form of `resources`, read after them.
    #[serde(default)]
    pub bases: Vec<String>,
    /// Folders of `kind: Component` kustomizations, applied to what is accumulated so far.
    #[serde(default)]
    pub components: Vec<String>,
    /// The namespace set on every namespaced object (and on the `default` subjects of role
    /// bindings).
    pub namespace: Option<String>,
    /// `namePrefix`: prepended to object names, with references updated.
    pub name_prefix: Option<String>,
    /// `nameSuffix`: appended to object names, with references updated.
    pub name_suffix: Option<String>,
    /// `commonLabels`: labels set on every object and in its selectors and templates.
    #[serde(default)]
    pub common_labels: BTreeMap<String, String>,
    /// `labels`: label sets, each choosing whether it also goes into selectors and templates.
    #[serde(default)]
    pub labels: Vec<LabelSet>,
    /// `commonAnnotations`: annotations set on every object (and its pod templates).
    #[serde(default)]
    pub common_annotations: BTreeMap<String, String>,
    /// `images`: image name, tag and digest rewrites.
    #[serde(default)]
    pub images: Vec<Image>,
    /// `replicas`: replica counts set by object name.
    #[serde(default)]
    pub replicas: Vec<Replica>,
    /// `patches`: strategic merge or JSON 6902 patches, each from a file or inline, with an
    /// optional target selector.
    #[serde(default)]
    pub patches: Vec<Patch>,
    /// `patchesStrategicMerge` (legacy): strategic merge patches, as file paths or inline YAML.
    #[serde(default)]
    pub patches_strategic_merge: Vec<String>,
    /// `patchesJson6902` (legacy): JSON 6902 patches, each with a required target.
    #[serde(default)]
    pub patches_json6902: Vec<Patch>,
    /// `configMapGenerator`: ConfigMaps made from literals, files and env files.
    #[serde(default)]
    pub config_map_generator: Vec<GeneratorArgs>,
    /// `secretGenerator`: Secrets made from literals, files and env files.
    #[serde(default)]
    pub secret_generator: Vec<GeneratorArgs>,
    /// `generatorOptions`: labels, annotations, hashing and immutability for every generator here.
    pub generator_options: Option<GeneratorOptions>,
    /// `configurations`: files of transformer configuration (extra field specs, name references).
    #[serde(default)]
    pub configurations: Vec<String>,
    /// `crds`: legacy OpenAPI definition files declaring the fields of custom kinds that
    /// transformers act on (name references, labels, annotations, name prefixes).
    #[serde(default)]
    pub crds: Vec<String>,
    /// `vars` (legacy): values read from objects and substituted for `$(NAME)` in fields.
    #[serde(default)]
    pub vars: Vec<Var>,
    /// `replacements`: values copied from a source object's field to target fields.
    #[serde(default)]
    pub replacements: Vec<ReplacementEntry>,
    /// `openapi`: the schema strategic merge and namespace scoping use (`version:` a built-in
    /// one, or `path:` a custom file), as written.
    pub openapi: Option<Value>,
    /// `sortOptions`: the output order (legacy kind order, or fifo).
    pub sort_options: Option<SortOptions>,
    /// `buildMetadata`: `managedByLabel`, `originAnnotations`, `transformerAnnotations`.
    #[serde(default)]
    pub build_metadata: Vec<String>,
    /// `generators`: builtin generator configs (`apiVersion: builtin`), inline, in files or in
    /// folders.
    #[serde(default)]
    pub generators: Vec<String>,
    /// `transformers`: builtin transformer configs (`apiVersion: builtin`), inline, in files or
    /// in folders.
    #[serde(default)]
    pub transformers: Vec<String>,
    /// `validators`: parsed only to be refused (not supported).
    #[serde(default)]
    pub validators: Vec<String>,
    /// `helmCharts`: parsed only to be refused (not supported).
    pub helm_charts: Option<Value>,
    /// `helmGlobals`: parsed only to be refused (not supported).
    pub helm_globals: Option<Value>,
    /// `helmChartInflationGenerator`: parsed only to be refused (not supported).
    pub helm_chart_inflation_generator: Option<Value>,
}

/// A `labels:` entry: label pairs and where they go.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSet {
    /// The labels to set.
    #[serde(default)]
    pub pairs: BTreeMap<String, String>,
    /// `includeSelectors`: also set them in selectors and pod templates (as `commonLabels` does).
    #[serde(default)]
    pub include_selectors: bool,
    /// `includeTemplates`: also set them in pod templates, not in selectors.
    #[serde(default)]
    pub include_templates: bool,
    /// `fields`: extra field specs to write the labels to.
    #[serde(default)]
    pub fields: Vec<FieldSpec>,
}

/// An `images:` entry: how to rewrite the images named `name`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Image {
    /// The image name to match, without tag or digest.
    pub name: String,
    /// `newName`: the name to use instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    /// `newTag`: the tag to use instead (drops a digest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_tag: Option<String>,
    /// The digest to use instead (drops the tag unless `newTag` is set too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// `tagSuffix`: appended to the existing tag when neither `newTag` nor `digest` is set
    /// (kustomize accepts it in newer versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_suffix: Option<String>,
}

/// A `replicas:` entry: the replica count for the objects named `name`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Replica {
    /// The object name (before `namePrefix`/`nameSuffix`, which still match).
    pub name: String,
    /// The replica count to set.
    pub count: i64,
}

/// A patch: inline (`patch`) or from a file (`path`), with an optional target selector.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Patch {
    /// A file holding the patch, relative to the kustomization.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The patch inline, as YAML or JSON text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// The objects to patch; without it a strategic merge patch patches the object it names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Selector>,
    /// `allowNameChange` and `allowKindChange`: whether the patch may change its target's name
    /// or kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, bool>,
}

/// kustomize's target selector. Name and namespace are anchored regular expressions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Selector {
    /// The API group to match; empty matches any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The API version to match; empty matches any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The kind to match; empty matches any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// An anchored regular expression for the name; empty matches any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// An anchored regular expression for the namespace; empty matches any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// `labelSelector`: a Kubernetes label selector (`app=web,tier!=db`); empty matches any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label_selector: String,
    /// `annotationSelector`: a label selector over annotations; empty matches any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub annotation_selector: String,
}

/// A `configMapGenerator` or `secretGenerator` entry: one ConfigMap or Secret and its data.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorArgs {
    /// The object's name, before its content-hash suffix.
    pub name: Option<String>,
    /// The object's namespace.
    pub namespace: Option<String>,
    /// `create` (the default), `merge` or `replace`: how it combines with an object of the same
    /// id from a base.
    pub behavior: Option<String>,
    /// `KEY=VALUE` data entries.
    #[serde(default)]
    pub literals: Vec<String>,
    /// Files whose contents become data entries: `path` (keyed by file name) or `key=path`.
    #[serde(default)]
    pub files: Vec<String>,
    /// Env files (`KEY=VALUE` lines) whose entries become data entries.
    #[serde(default)]
    pub envs: Vec<String>,
    /// `env`: the legacy single env file.
    pub env: Option<String>,
    /// `options`: this generator's labels, annotations, hashing and immutability, over `generatorOptions`.
    pub options: Option<GeneratorOptions>,
    /// Secrets only: the Secret type (default `Opaque`).
    #[serde(rename = "type")]
    pub secret_type: Option<String>,
}

/// `generatorOptions` (or a generator's `options`): what generated objects get besides their data.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorOptions {
    /// Labels for the generated objects.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Annotations for the generated objects.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// `disableNameSuffixHash`: `true` keeps the name without its content-hash suffix.
    pub disable_name_suffix_hash: Option<bool>,
    /// `immutable`: `true` marks the generated objects immutable.
    pub immutable: Option<bool>,
}

/// A field spec: where in which kinds a transformer acts.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldSpec {
    /// The API group it applies to; empty matches any.
    #[serde(default)]
    pub group: String,
    /// The API version it applies to; empty matches any.
    #[serde(default)]
    pub version: String,
    /// The kind it applies to; empty matches any.
    #[serde(default)]
    pub kind: String,
    /// The field's path, `/`-separated (`spec/template/metadata/labels`).
    pub path: String,
    /// Whether to create the field where it is missing.
    #[serde(default)]
    pub create: bool,
}

impl FieldSpec {
    /// Whether this spec applies to objects of `gvk` (its empty group, version or kind match
    /// anything): [`Gvk::is_selected_by`] without building a selector.
    pub(crate) fn selects(&self, gvk: &crate::gvk::Gvk) -> bool {
        gvk.is_selected_by_parts(&self.group, &self.version, &self.kind)
    }
}

/// A `vars:` entry (legacy): `$(name)` in fields is replaced by a field of one object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Var {
    /// The variable's name, as used in `$(name)`.
    pub name: String,
    /// `objRef`: the object the value is read from.
    pub obj_ref: VarTarget,
    /// `fieldRef`: the field to read; `metadata.name` when unset.
    pub field_ref: Option<VarFieldRef>,
}

/// A var's `objRef`: the one object its value is read from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VarTarget {
    /// The object's API group (used when `apiVersion` is unset).
    #[serde(default)]
    pub group: String,
    /// The object's API version (used when `apiVersion` is unset).
    #[serde(default)]
    pub version: String,
    /// The object's kind.
    #[serde(default)]
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// The object's namespace; empty matches any.
    #[serde(default)]
    pub namespace: String,
    /// `apiVersion`: `group/version`, taking precedence over `group` and `version`.
    #[serde(default)]
    pub api_version: String,
}

/// A var's `fieldRef`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VarFieldRef {
    /// `fieldPath`: the field to read, `.`-separated (`spec.ports[0].port`); empty means
    /// `metadata.name`.
    #[serde(default)]
    pub field_path: String,
}

/// A `replacements:` entry: inline, or `path:` to a file of replacements.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplacementEntry {
    /// A file of replacements, relative to the kustomization.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The inline replacement's `source`: the object and field the value is read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
    /// The inline replacement's `targets`: the objects and fields the value is written to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Value>,
}

/// `sortOptions`: the order of the build's output.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SortOptions {
    /// `legacy` or `fifo`; unset means legacy.
    pub order: Option<String>,
    /// `legacySortOptions`: the kind lists of the legacy order, replacing kustomize's defaults.
    pub legacy_sort_options: Option<LegacySortOptions>,
}

/// `legacySortOptions`: which kinds come first and last in the legacy order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LegacySortOptions {
    /// `orderFirst`: kinds output first, in this order.
    #[serde(default)]
    pub order_first: Vec<String>,
    /// `orderLast`: kinds output last, in this order.
    #[serde(default)]
    pub order_last: Vec<String>,
}
