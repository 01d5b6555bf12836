//! Transformer configuration: which fields each transformer touches.
//!
//! kustomize ships default field specs for each builtin transformer (namePrefix, nameSuffix,
//! namespace, commonLabels, templateLabels, commonAnnotations, images, replicas, varReference
//! and the nameReference table); they live, in kustomize's own file format, in
//! `config_defaults.yaml`. A kustomization's `configurations:` files use the same format and
//! add to them, and configs merge upward through the accumulation.
//!
//! Merging follows kustomize's `TransformerConfig.Merge`:
//! - a field spec is already present when an existing spec *is selected by* the incoming
//!   spec's gvk (empty parts are wildcards) and the paths are equal. This is asymmetric on
//!   purpose, as in kustomize: an incoming `{path: p}` matches an existing `{kind: K, path: p}`,
//!   but not the other way round;
//! - a present spec that differs only in `create` is a conflict (kustomize fails the build);
//! - nameReference entries with the same referenced gvk merge their referrer lists; a new
//!   entry is appended as it is;
//! - every list is then sorted by gvk in kustomize's legacy kind order (see [`super::sort`]).
//!
//! A level's effective config is built in kustomize's order, which matters because the
//! merge is asymmetric: its accumulator starts empty and takes what its resources accumulated,
//! then [`TransformConfig::for_folder`] (the defaults merged with its configuration files).
//! Merging into the empty accumulator drops a general spec listed after a narrower one for the
//! same path: a `configurations:` file with `namePrefix: [{kind: K, path: metadata/name}]`
//! sorts before the default `{path: metadata/name}`, which is then dropped, so only kind `K`
//! is renamed — as kustomize does.

use super::sort::gvk_order_key;
use crate::error::{ConflictingFieldSpec, KustomizeError, Result};
use crate::gvk::Gvk;
use crate::kustomization::FieldSpec;
use crate::loader::Loader;
use serde::Deserialize;
use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

/// kustomize's builtin field specs, in its configuration file format.
const DEFAULTS_YAML: &str = include_str!("config_defaults.yaml");

/// [`DEFAULTS_YAML`], parsed and merged into an empty config once.
static DEFAULTS: OnceLock<TransformConfig> = OnceLock::new();

/// A referenced kind and the fields in other kinds that name it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NameBackReference {
    pub gvk: Gvk,
    pub referrers: Vec<FieldSpec>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TransformConfig {
    pub name_prefix: Vec<FieldSpec>,
    pub name_suffix: Vec<FieldSpec>,
    pub namespace: Vec<FieldSpec>,
    pub common_labels: Vec<FieldSpec>,
    /// Extra label fields for every `labels:` entry (configuration key `labels`; no defaults).
    pub labels: Vec<FieldSpec>,
    /// Label fields for `labels:` entries with `includeTemplates`.
    pub template_labels: Vec<FieldSpec>,
    pub common_annotations: Vec<FieldSpec>,
    pub name_reference: Vec<NameBackReference>,
    pub var_reference: Vec<FieldSpec>,
    pub images: Vec<FieldSpec>,
    pub replicas: Vec<FieldSpec>,
}

/// A `configurations:` file as written. Unknown keys are an error, as in kustomize.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfigFile {
    name_prefix: Option<Vec<FieldSpec>>,
    name_suffix: Option<Vec<FieldSpec>>,
    namespace: Option<Vec<FieldSpec>>,
    common_labels: Option<Vec<FieldSpec>>,
    labels: Option<Vec<FieldSpec>>,
    template_labels: Option<Vec<FieldSpec>>,
    common_annotations: Option<Vec<FieldSpec>>,
    name_reference: Option<Vec<NameReferenceEntry>>,
    var_reference: Option<Vec<FieldSpec>>,
    images: Option<Vec<FieldSpec>>,
    replicas: Option<Vec<FieldSpec>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NameReferenceEntry {
    #[serde(default)]
    group: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    kind: String,
    field_specs: Option<Vec<FieldSpec>>,
}

impl TransformConfig {
    /// kustomize's builtin defaults (parsed once, then copied).
    pub(crate) fn defaults() -> Self {
        Self::defaults_ref().clone()
    }

    /// kustomize's builtin defaults, parsed once: most folders use them as they are, without
    /// a copy of their few hundred field specs each.
    pub(crate) fn defaults_ref() -> &'static TransformConfig {
        DEFAULTS.get_or_init(|| {
            let file = TransformConfig::from_yaml(DEFAULTS_YAML, "builtin field specs")
                .expect("the builtin field specs are valid kustomize configuration");
            let mut normalized = TransformConfig::default();
            normalized.merge(&file);
            normalized
        })
    }

    /// kustomize's `MakeTransformerConfig`: the defaults merged with the `configurations:`
    /// files (relative to `dir`; merged with each other first, in order). A file that conflicts
    /// with another or with the defaults is an error, as in kustomize.
    pub(crate) fn for_folder(files: &[String], dir: &Path, loader: &Loader) -> Result<Cow<'static, Self>> {
        if files.is_empty() {
            return Ok(Cow::Borrowed(Self::defaults_ref()));
        }
        let mut merged = TransformConfig::default();
        for file in files {
            let (path, text) = loader.read_text(dir, file)?;
            let origin = path.display().to_string();
            let config = Self::from_yaml(&text, &origin)?;
            merged.merge_checked(&config).map_err(|source| KustomizeError::ConflictingFieldSpecs {
                context: origin.clone(),
                source: Box::new(source),
            })?;
        }
        let mut own = Self::defaults();
        let context = format!("{}: configurations", dir.display());
        own.merge_checked(&merged).map_err(|source| KustomizeError::ConflictingFieldSpecs {
            context: context.to_string(),
            source: Box::new(source),
        })?;
        Ok(Cow::Owned(own))
    }

    /// Parse one configuration file (its first YAML document), in kustomize's format.
    pub(crate) fn from_yaml(text: &str, origin: &str) -> Result<Self> {
        let docs = kfctl_yaml::parse_stream(text, origin)?;
        let Some(doc) = docs.into_iter().next() else {
            return Ok(TransformConfig::default());
        };
        let file: ConfigFile = serde_json::from_value(doc).map_err(|e| {
            KustomizeError::transform(
                origin,
                format!("invalid transformer configuration: {e}; expected keys namePrefix, nameSuffix, namespace, commonLabels, labels, templateLabels, commonAnnotations, nameReference, varReference, images, replicas"),
            )
        })?;
        Ok(TransformConfig::from(file))
    }

    /// Merge another config into this one (union of field specs, no duplicates). A conflicting
    /// spec (same field, other `create`) keeps the existing one; use [`Self::merge_checked`] to
    /// fail on it as kustomize does.
    pub(crate) fn merge(&mut self, other: &TransformConfig) {
        self.merge_with(other, false).expect("a lenient merge never fails");
    }

    /// Merge as kustomize does, failing on the first conflicting field spec. On failure this
    /// config is left partly merged; callers abandon the build.
    pub(crate) fn merge_checked(&mut self, other: &TransformConfig) -> std::result::Result<(), ConflictingFieldSpec> {
        self.merge_with(other, true)
    }

    fn merge_with(&mut self, other: &TransformConfig, strict: bool) -> std::result::Result<(), ConflictingFieldSpec> {
        // Most folders only carry the defaults: merging a config into an equal one (or an
        // empty one into anything) changes nothing, so skip the quadratic search.
        if other == &TransformConfig::default() || other == self {
            return Ok(());
        }
        if self == &TransformConfig::default() && DEFAULTS.get().is_some_and(|defaults| other == defaults) {
            // The defaults are stored merged into an empty config already.
            *self = other.clone();
            return Ok(());
        }
        let lists: [(&'static str, &mut Vec<FieldSpec>, &Vec<FieldSpec>); 10] = [
            ("NamePrefix", &mut self.name_prefix, &other.name_prefix),
            ("NameSuffix", &mut self.name_suffix, &other.name_suffix),
            ("NameSpace", &mut self.namespace, &other.namespace),
            ("CommonAnnotations", &mut self.common_annotations, &other.common_annotations),
            ("CommonLabels", &mut self.common_labels, &other.common_labels),
            ("Labels", &mut self.labels, &other.labels),
            ("TemplateLabels", &mut self.template_labels, &other.template_labels),
            ("VarReference", &mut self.var_reference, &other.var_reference),
            ("Images", &mut self.images, &other.images),
            ("Replicas", &mut self.replicas, &other.replicas),
        ];
        // Every list here is sorted already (each merge leaves it sorted): only one that
        // gained a spec needs sorting again.
        for (list, into, incoming) in lists {
            if merge_specs(into, incoming, strict).map_err(|spec| ConflictingFieldSpec { list, spec })? {
                sort_specs(into);
            }
        }
        let added = merge_name_references(&mut self.name_reference, &other.name_reference, strict)
            .map_err(|spec| ConflictingFieldSpec { list: "NameReference", spec })?;
        if added {
            self.name_reference.sort_by_cached_key(|nbr| gvk_order_key(&nbr.gvk));
        }
        Ok(())
    }
}

impl From<ConfigFile> for TransformConfig {
    fn from(file: ConfigFile) -> Self {
        let name_reference = file
            .name_reference
            .unwrap_or_default()
            .into_iter()
            .map(|e| NameBackReference {
                gvk: Gvk::new(&e.group, &e.version, &e.kind),
                referrers: e.field_specs.unwrap_or_default(),
            })
            .collect();
        let mut config = TransformConfig {
            name_prefix: file.name_prefix.unwrap_or_default(),
            name_suffix: file.name_suffix.unwrap_or_default(),
            namespace: file.namespace.unwrap_or_default(),
            common_labels: file.common_labels.unwrap_or_default(),
            labels: file.labels.unwrap_or_default(),
            template_labels: file.template_labels.unwrap_or_default(),
            common_annotations: file.common_annotations.unwrap_or_default(),
            name_reference,
            var_reference: file.var_reference.unwrap_or_default(),
            images: file.images.unwrap_or_default(),
            replicas: file.replicas.unwrap_or_default(),
        };
        config.sort_all();
        config
    }
}

impl TransformConfig {
    /// kustomize sorts every list of a freshly read file (its `sortFields`).
    fn sort_all(&mut self) {
        for list in [
            &mut self.name_prefix,
            &mut self.name_suffix,
            &mut self.namespace,
            &mut self.common_labels,
            &mut self.labels,
            &mut self.template_labels,
            &mut self.common_annotations,
            &mut self.var_reference,
            &mut self.images,
            &mut self.replicas,
        ] {
            sort_specs(list);
        }
        self.name_reference.sort_by_cached_key(|nbr| gvk_order_key(&nbr.gvk));
    }
}

/// The gvk a field spec applies to (empty parts match anything).
pub(crate) fn spec_gvk(spec: &FieldSpec) -> Gvk {
    Gvk::new(&spec.group, &spec.version, &spec.kind)
}

/// kustomize's "effectively equal": `existing` is selected by `incoming`'s gvk
/// ([`Gvk::is_selected_by`], compared in place), same path.
fn effectively_equal(existing: &FieldSpec, incoming: &FieldSpec) -> bool {
    let selects = |selector: &str, value: &str| selector.is_empty() || selector == value;
    existing.path == incoming.path
        && selects(&incoming.group, &existing.group)
        && selects(&incoming.version, &existing.version)
        && selects(&incoming.kind, &existing.kind)
}

/// kustomize's `FsSlice.MergeAll`: add what is not present; a present spec with another
/// `create` is a conflict (reported when `strict`, otherwise the existing spec is kept).
/// Returns whether a spec was added.
pub(crate) fn merge_specs(
    into: &mut Vec<FieldSpec>,
    incoming: &[FieldSpec],
    strict: bool,
) -> std::result::Result<bool, FieldSpec> {
    if !strict && into.as_slice() == incoming {
        // every spec finds itself or an earlier one: nothing to add, and a lenient merge
        // refuses nothing (a strict one may: a spec after one that selects it, once sorted)
        return Ok(false);
    }
    let mut added = false;
    for spec in incoming {
        match into.iter().find(|existing| effectively_equal(existing, spec)) {
            Some(existing) if strict && existing.create != spec.create => return Err(spec.clone()),
            Some(_) => {}
            None => {
                into.push(spec.clone());
                added = true;
            }
        }
    }
    Ok(added)
}

/// Sort field specs by gvk in kustomize's legacy kind order (stable for equal gvks).
pub(crate) fn sort_specs(specs: &mut [FieldSpec]) {
    specs.sort_by_cached_key(|s| gvk_order_key(&spec_gvk(s)));
}

/// Merge name back-references (each gvk's referrers merged as field specs); returns whether a
/// gvk was added.
fn merge_name_references(
    into: &mut Vec<NameBackReference>,
    incoming: &[NameBackReference],
    strict: bool,
) -> std::result::Result<bool, FieldSpec> {
    let mut added = false;
    for nbr in incoming {
        match into.iter_mut().find(|existing| existing.gvk == nbr.gvk) {
            Some(existing) => {
                merge_specs(&mut existing.referrers, &nbr.referrers, strict)?;
            }
            None => {
                into.push(nbr.clone());
                added = true;
            }
        }
    }
    Ok(added)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
