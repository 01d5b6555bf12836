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
mod tests {
    use super::*;
    use crate::remote::NoRemote;
    use std::sync::Arc;

    fn spec(group: &str, kind: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec { group: group.into(), kind: kind.into(), path: path.into(), create, ..FieldSpec::default() }
    }

    fn paths(specs: &[FieldSpec]) -> Vec<String> {
        specs.iter().map(|s| format!("{}:{}", s.kind, s.path)).collect()
    }

    #[test]
    fn defaults_hold_kustomize_v5_6_tables() {
        let d = TransformConfig::defaults();
        let sizes = [
            d.name_prefix.len(),
            d.name_suffix.len(),
            d.namespace.len(),
            d.common_labels.len(),
            d.template_labels.len(),
            d.common_annotations.len(),
            d.images.len(),
            d.replicas.len(),
            d.var_reference.len(),
            d.name_reference.len(),
        ];
        assert_eq!(sizes, [1, 1, 3, 32, 10, 9, 4, 4, 72, 16]);
        assert!(d.labels.is_empty());
        let secret =
            d.name_reference.iter().find(|n| n.gvk == Gvk::new("", "v1", "Secret")).expect("Secret references");
        assert!(
            secret
                .referrers
                .iter()
                .any(|s| s.kind == "Ingress"
                    && s.path == r"metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret")
        );
    }

    #[test]
    fn defaults_are_sorted_in_kustomize_kind_order() {
        let d = TransformConfig::defaults();
        assert_eq!(
            paths(&d.replicas),
            [
                "Deployment:spec/replicas",
                "StatefulSet:spec/replicas",
                "ReplicaSet:spec/replicas",
                "ReplicationController:spec/replicas"
            ]
        );
        let kinds: Vec<&str> = d.name_reference.iter().map(|n| n.gvk.kind.as_str()).collect();
        assert_eq!(&kinds[..3], ["StorageClass", "ServiceAccount", "Role"]);
    }

    #[test]
    fn file_format_reads_every_key_and_null_lists() {
        let text = "namePrefix: [{path: a}]\nnameSuffix: [{path: b}]\nnamespace: [{path: c}]\ncommonLabels: [{path: d}]\n\
labels: [{path: e}]\ntemplateLabels: [{path: f}]\ncommonAnnotations: [{path: g}]\nvarReference: [{path: h}]\n\
images: [{path: i}]\nreplicas: [{path: j, kind: K, create: true}]\n\
nameReference:\n- {kind: Issuer, group: cert-manager.io, fieldSpecs: [{kind: Certificate, path: spec/issuerRef/name}]}\n";
        let c = TransformConfig::from_yaml(text, "cfg.yaml").unwrap();
        assert_eq!(c.replicas, [spec("", "K", "j", true)]);
        assert_eq!(c.labels[0].path, "e");
        assert_eq!(c.name_reference[0].gvk, Gvk::new("cert-manager.io", "", "Issuer"));
        assert_eq!(c.name_reference[0].referrers[0].path, "spec/issuerRef/name");
        assert_eq!(TransformConfig::from_yaml("commonLabels:\n", "x").unwrap(), TransformConfig::default());
    }

    #[test]
    fn unknown_keys_are_refused() {
        let err = TransformConfig::from_yaml("bogusKey: 1\n", "cfg.yaml").unwrap_err().to_string();
        assert!(err.contains("cfg.yaml") && err.contains("bogusKey"), "{err}");
        assert!(TransformConfig::from_yaml("commonLabels: [{path: a, skip: true}]\n", "cfg.yaml").is_err());
    }

    #[test]
    fn merge_skips_a_spec_already_present() {
        let mut c =
            TransformConfig { common_labels: vec![spec("", "", "metadata/labels", true)], ..Default::default() };
        c.merge(&TransformConfig { common_labels: vec![spec("", "", "metadata/labels", true)], ..Default::default() });
        assert_eq!(c.common_labels.len(), 1);
    }

    #[test]
    fn merge_presence_is_judged_by_the_incoming_gvk_as_selector() {
        let mut c = TransformConfig { images: vec![spec("", "Thing", "spec/image", false)], ..Default::default() };
        c.merge(&TransformConfig { images: vec![spec("", "", "spec/image", false)], ..Default::default() });
        assert_eq!(c.images.len(), 1, "a kindless incoming spec selects the existing Thing spec");
        let mut c = TransformConfig { images: vec![spec("", "", "spec/image", false)], ..Default::default() };
        c.merge(&TransformConfig { images: vec![spec("", "Thing", "spec/image", false)], ..Default::default() });
        assert_eq!(c.images.len(), 2, "a Thing spec does not select the kindless one");
    }

    #[test]
    fn merge_conflict_on_create_fails_when_checked_and_keeps_the_old_spec_otherwise() {
        let old = TransformConfig { common_labels: vec![spec("", "", "metadata/labels", true)], ..Default::default() };
        let new = TransformConfig { common_labels: vec![spec("", "", "metadata/labels", false)], ..Default::default() };
        let err = old.clone().merge_checked(&new).unwrap_err();
        assert!(err.to_string().starts_with("failed to merge CommonLabels fieldSpec: conflicting fieldspecs"), "{err}");
        let mut lenient = old.clone();
        lenient.merge(&new);
        assert_eq!(lenient, old);
    }

    #[test]
    fn merge_unions_name_references_of_the_same_gvk() {
        let issuer = Gvk::new("cert-manager.io", "", "Issuer");
        let entry = |path: &str| NameBackReference {
            gvk: issuer.clone(),
            referrers: vec![spec("", "Certificate", path, false)],
        };
        let mut c = TransformConfig { name_reference: vec![entry("a")], ..Default::default() };
        c.merge(&TransformConfig { name_reference: vec![entry("b"), entry("a")], ..Default::default() });
        assert_eq!(c.name_reference.len(), 1);
        assert_eq!(paths(&c.name_reference[0].referrers), ["Certificate:a", "Certificate:b"]);
    }

    #[test]
    fn merged_lists_are_sorted_by_kind_order() {
        let mut c = TransformConfig { var_reference: vec![spec("", "Pod", "x", false)], ..Default::default() };
        c.merge(&TransformConfig {
            var_reference: vec![
                spec("", "Namespace", "y", false),
                spec("", "ValidatingWebhookConfiguration", "z", false),
            ],
            ..Default::default()
        });
        assert_eq!(paths(&c.var_reference), ["Namespace:y", "Pod:x", "ValidatingWebhookConfiguration:z"]);
    }

    /// Folders under `tests/fixtures/fieldspecs/`, built whole and compared in order with what
    /// real kustomize v5.6 made of them (`expected.yaml`), or with its error (`expected.error`).
    #[test]
    fn fixtures_match_real_kustomize() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fieldspecs");
        let options = crate::BuildOptions::default();
        let cases = ["labels", "images", "replicas", "sort-custom", "replicas-no-match", "config-conflict"];
        for case in cases {
            let dir = root.join(case);
            let built = crate::build(&dir, &options);
            if let Ok(expected) = std::fs::read_to_string(dir.join("expected.error")) {
                let err = built.expect_err(case).to_string();
                let gist = expected.trim().trim_start_matches("error: ");
                assert!(err.contains(gist), "{case}: expected an error containing {gist:?}, got {err}");
                continue;
            }
            let text = std::fs::read_to_string(dir.join("expected.yaml")).unwrap();
            let expected = kfctl_yaml::parse_stream(&text, case).unwrap();
            let actual = crate::objects(&built.unwrap_or_else(|e| panic!("{case}: {e}")));
            if let Some(report) = kfctl_yaml::compare::ordered_report(&expected, &actual, 8) {
                panic!("{case} differs from real kustomize:\n{report}");
            }
        }
    }

    #[test]
    fn for_folder_reads_through_the_loader_and_checks_against_defaults() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.yaml"), "varReference:\n- {kind: Profile, path: spec/owner/name}\n")
            .unwrap();
        std::fs::write(dir.path().join("bad.yaml"), "commonLabels:\n- path: metadata/labels\n").unwrap();
        let loader = Loader::new(Arc::new(NoRemote), crate::LoadRestriction::RootOnly);
        let ok = TransformConfig::for_folder(&["ok.yaml".into()], dir.path(), &loader).unwrap();
        assert!(paths(&ok.var_reference).contains(&"Profile:spec/owner/name".to_string()));
        assert_eq!(ok.common_labels, TransformConfig::defaults().common_labels, "the defaults are kept");
        let err = TransformConfig::for_folder(&["bad.yaml".into()], dir.path(), &loader).unwrap_err().to_string();
        assert!(err.contains("conflicting fieldspecs"), "{err}");
        assert!(TransformConfig::for_folder(&["missing.yaml".into()], dir.path(), &loader).is_err());
        assert_eq!(
            TransformConfig::for_folder(&[], dir.path(), &loader).unwrap().into_owned(),
            TransformConfig::defaults()
        );
    }

    #[test]
    fn a_narrower_name_spec_displaces_the_general_one_once_merged_into_the_accumulator() {
        // kustomize: defaults.Merge(file) keeps both (sorted: kind Host first); merging that into
        // the empty accumulator then drops the general spec, which selects Host's.
        let file =
            TransformConfig { name_prefix: vec![spec("", "Host", "metadata/name", false)], ..Default::default() };
        let mut own = TransformConfig::defaults();
        own.merge_checked(&file).unwrap();
        assert_eq!(paths(&own.name_prefix), ["Host:metadata/name", ":metadata/name"]);
        let mut acc = TransformConfig::default();
        acc.merge_checked(&own).unwrap();
        assert_eq!(paths(&acc.name_prefix), ["Host:metadata/name"]);
    }
}
