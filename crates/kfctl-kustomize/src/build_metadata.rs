//! `buildMetadata: [originAnnotations, transformerAnnotations]`: where each object came from
//! and which transformers ran over it, as kustomize v5.6 records them.
//!
//! The options of the kustomization being built count (a base's are replaced by them). When
//! either is set, the build tracks, like kustomize:
//! - `config.kubernetes.io/origin` on every object: `path:` of the file it was read from,
//!   relative to the folder being built (`base/deploy.yaml`, `../shared/cm.yaml`), or, for a
//!   generated ConfigMap or Secret, `configuredIn:` (the generator's kustomization file) and
//!   `configuredBy:` (`apiVersion: builtin`, `kind: ConfigMapGenerator`);
//! - `alpha.config.kubernetes.io/transformations`: a list with one such origin per builtin
//!   transformer each kustomization ran, appended to *every* object in the accumulator at that
//!   point, whether or not the transformer changed it (one `PatchTransformer` per `patches`
//!   entry, one `ImageTagTransformer` per image, and so on: [`transformer_runs`]).
//!
//! At the end of every build both annotations are removed unless asked for, even ones written
//! in the input files (kustomize does the same).
//!
//! `generators:`/`transformers:` configs are origins too: `configuredIn:` their file (the
//! kustomization file for an inline config), `configuredBy:` the config object.
//!
//! Refused by name while either option is on: remote (git URL) resources (kustomize writes
//! `repo:` and `ref:` from its own parse of the URL, which the engine does not reproduce).

use super::error::KustomizeError;
use super::kustomization::Kustomization;
use super::resmap::ResMap;
use super::resource::Resource;
use serde_json::{Map, Value};
use std::path::Path;

pub(crate) const ORIGIN_ANNOTATIONS: &str = "originAnnotations";
pub(crate) const TRANSFORMER_ANNOTATIONS: &str = "transformerAnnotations";
pub(crate) const ORIGIN_KEY: &str = "config.kubernetes.io/origin";
pub(crate) const TRANSFORMATIONS_KEY: &str = "alpha.config.kubernetes.io/transformations";

/// Where the kustomization being accumulated sits, relative to the folder being built.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Origin {
    path: String,
}

/// Whether the top kustomization's options ask for tracking.
pub(crate) fn tracking(top: &Kustomization) -> Option<Origin> {
    let on = top.build_metadata.iter().any(|o| o == ORIGIN_ANNOTATIONS || o == TRANSFORMER_ANNOTATIONS);
    on.then(Origin::default)
}

impl Origin {
    /// The origin of `entry` (a file or folder named by this kustomization).
    pub(crate) fn append(&self, entry: &str) -> Origin {
        Origin { path: clean_join(&self.path, entry) }
    }

    /// The annotation of an object read from the file `entry`.
    pub(crate) fn of_file(&self, entry: &str) -> String {
        format!("path: {}\n", scalar(&clean_join(&self.path, entry)))
    }

    /// The origin of a builtin generator or transformer configured in kustomization file
    /// `file` (its name in this folder).
    pub(crate) fn configured(&self, file: &str, kind: &str) -> String {
        format!(
            "configuredIn: {}\nconfiguredBy:\n  apiVersion: builtin\n  kind: {}\n",
            scalar(&clean_join(&self.path, file)),
            scalar(kind)
        )
    }
}

impl Origin {
    /// The origin of a `generators:`/`transformers:` config read from here (`self` is the
    /// config's file, or the kustomization file for an inline config): kustomize's
    /// `OriginFromCustomPlugin`, naming the config object.
    pub(crate) fn of_plugin(&self, config: &Value) -> String {
        let text = |pointer: &str| config.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
        let mut out = format!("configuredIn: {}\nconfiguredBy:\n", scalar(&self.path));
        for (key, value) in [
            ("apiVersion", text("/apiVersion")),
            ("kind", text("/kind")),
            ("name", text("/metadata/name")),
            ("namespace", text("/metadata/namespace")),
        ] {
            if !value.is_empty() {
                out.push_str(&format!("  {key}: {}\n", scalar(value)));
            }
        }
        out
    }
}

/// The builtin transformer runs of a kustomization, in kustomize's order, one per instance.
pub(crate) fn transformer_runs(k: &Kustomization) -> Vec<&'static str> {
    let mut runs = Vec::new();
    let mut add = |kind: &'static str, times: usize| runs.extend(std::iter::repeat_n(kind, times));
    add("PatchStrategicMergeTransformer", usize::from(!k.patches_strategic_merge.is_empty()));
    add("PatchTransformer", k.patches.len());
    add("NamespaceTransformer", usize::from(k.namespace.as_deref().is_some_and(|n| !n.is_empty())));
    add("PrefixTransformer", usize::from(k.name_prefix.as_deref().is_some_and(|p| !p.is_empty())));
    add("SuffixTransformer", usize::from(k.name_suffix.as_deref().is_some_and(|s| !s.is_empty())));
    // One per `labels` entry, plus one for `commonLabels` (even empty) when either is set.
    let labels = if k.labels.is_empty() && k.common_labels.is_empty() { 0 } else { k.labels.len() + 1 };
    add("LabelTransformer", labels);
    add("AnnotationsTransformer", usize::from(!k.common_annotations.is_empty()));
    add("PatchJson6902Transformer", k.patches_json6902.len());
    add("ReplicaCountTransformer", k.replicas.len());
    add("ImageTagTransformer", k.images.len());
    add("ReplacementTransformer", usize::from(!k.replacements.is_empty()));
    runs
}

/// The refusal of a remote entry while tracking.
pub(crate) fn refuse_remote(origin: &Path, entry: &str) -> KustomizeError {
    refusal(origin, &format!("with the remote resource `{entry}`"))
}

fn refusal(origin: &Path, what: &str) -> KustomizeError {
    KustomizeError::Unsupported {
        path: origin.to_path_buf(),
        field: "buildMetadata".to_string(),
        hint: format!(
            "`originAnnotations` and `transformerAnnotations` {what} are not implemented; remove those options, or build with kustomize"
        ),
    }
}

/// Set the origin annotation of `resource` (replacing one it had).
pub(crate) fn set_origin(resource: &mut Resource, text: &str) {
    annotations_mut(resource).insert(ORIGIN_KEY.into(), Value::String(text.to_string()));
}

/// kustomize's `AddOriginAnnotation`: only objects without an origin get this one.
pub(crate) fn add_origin_if_missing(resource: &mut Resource, text: &str) {
    if annotation(resource, ORIGIN_KEY).is_none() {
        set_origin(resource, text);
    }
}

/// kustomize's `AddTransformerAnnotation`, once per run: an object without an origin gets the
/// transformer as its origin, every other object a transformation appended.
pub(crate) fn add_transformations(resources: &mut ResMap, origins: &[String]) {
    for resource in resources.iter_mut() {
        for origin in origins {
            if annotation(resource, ORIGIN_KEY).is_none() {
                set_origin(resource, origin);
                continue;
            }
            let mut list = annotation(resource, TRANSFORMATIONS_KEY).unwrap_or_default();
            list.push_str(&list_item(origin));
            annotations_mut(resource).insert(TRANSFORMATIONS_KEY.into(), Value::String(list));
        }
    }
}

/// At the end of the build: drop the annotations the top kustomization did not ask for.
pub(crate) fn strip_unrequested(resources: &mut ResMap, top: &Kustomization) {
    let wants = |option: &str| top.build_metadata.iter().any(|o| o == option);
    let drop: Vec<&str> = [(ORIGIN_ANNOTATIONS, ORIGIN_KEY), (TRANSFORMER_ANNOTATIONS, TRANSFORMATIONS_KEY)]
        .into_iter()
        .filter(|(option, _)| !wants(option))
        .map(|(_, key)| key)
        .collect();
    for resource in resources.iter_mut() {
        let Some(annotations) = resource.obj.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) else {
            continue;
        };
        for key in &drop {
            annotations.shift_remove(*key);
        }
    }
}

/// An origin as an item of the transformations list (go-yaml's block sequence indent).
fn list_item(origin: &str) -> String {
    let mut out = String::new();
    for (i, line) in origin.lines().enumerate() {
        out.push_str(if i == 0 { "- " } else { "  " });
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn annotation(resource: &Resource, key: &str) -> Option<String> {
    resource.obj.get("metadata")?.get("annotations")?.get(key)?.as_str().map(str::to_string)
}

fn annotations_mut(resource: &mut Resource) -> &mut Map<String, Value> {
    let obj = resource.obj.as_object_mut().expect("objects are maps");
    let meta = obj.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let meta = meta.as_object_mut().expect("metadata was just made a map");
    let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    annotations.as_object_mut().expect("annotations were just made a map")
}

/// A string as go-yaml writes it as a map value (plain unless it must be quoted).
fn scalar(text: &str) -> String {
    let doc = kfctl_yaml::to_yaml(&Value::Object(Map::from_iter([("k".to_string(), Value::String(text.into()))])));
    doc.strip_prefix("k: ").unwrap_or(&doc).trim_end_matches('\n').to_string()
}

/// Go's `filepath.Join`: join, then clean `.` and `..` lexically (a leading `..` stays).
fn clean_join(base: &str, entry: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let absolute = base.starts_with('/') || (base.is_empty() && entry.starts_with('/'));
    for part in base.split('/').chain(entry.split('/')) {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_clean_as_go_does() {
        assert_eq!(clean_join("", "cm.yaml"), "cm.yaml");
        assert_eq!(clean_join("", "./cm.yaml"), "cm.yaml");
        assert_eq!(clean_join("base", "deploy.yaml"), "base/deploy.yaml");
        assert_eq!(clean_join("", "../base"), "../base");
        assert_eq!(clean_join("../base", "../shared/x.yaml"), "../shared/x.yaml");
        assert_eq!(clean_join("a/b", "../../.."), "..");
    }

    #[test]
    fn origins_are_written_as_kustomize_marshals_them() {
        let origin = Origin::default().append("base");
        assert_eq!(origin.of_file("deploy.yaml"), "path: base/deploy.yaml\n");
        let generated = origin.configured("kustomization.yaml", "ConfigMapGenerator");
        assert_eq!(
            generated,
            "configuredIn: base/kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n"
        );
        assert_eq!(list_item(&generated).lines().nth(1), Some("  configuredBy:"));
    }
}
