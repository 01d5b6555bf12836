//! `generators:` and `transformers:` with builtin plugin configs (`apiVersion: builtin`).
//!
//! Each entry is a file of configs or an inline config (text with a line break). A config is
//! run by the builtin that the matching kustomization field uses, with the config's own
//! `fieldSpecs` in place of the defaults — so no builtin is written twice:
//! - generators: `ConfigMapGenerator`, `SecretGenerator` (without the kustomization's
//!   `generatorOptions`, as kustomize runs them);
//! - transformers: `PrefixSuffixTransformer`, `LabelTransformer`, `AnnotationsTransformer`,
//!   `NamespaceTransformer`, `ImageTagTransformer`, `ReplicaCountTransformer`,
//!   `PatchTransformer`, `PatchJson6902Transformer`, `PatchStrategicMergeTransformer` (`paths`),
//!   `ReplacementTransformer`.
//!
//! Anything else is refused by name, never skipped: other builtin kinds, config fields the
//! engine does not act on, folder entries, and exec or KRM-function plugins (any apiVersion
//! but `builtin`).

use super::config::TransformConfig;
use super::{generators, images, namespace, patches, prefix_suffix, replacements, replicas};
use crate::build_metadata;
use crate::error::{KustomizeError, Result};
use crate::kustomization::{self as k, FieldSpec, Kustomization};
use crate::loader::{Entry, Loader};
use crate::resmap::ResMap;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::path::Path;

/// Which list an entry is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Generators,
    Transformers,
}

impl List {
    fn field(self) -> &'static str {
        match self {
            List::Generators => "generators",
            List::Transformers => "transformers",
        }
    }
}

/// Where the configs run: the folder, its kustomization file (for errors) and the loader;
/// with `buildMetadata` tracking, where the folder sits (see [`crate::build_metadata`]).
pub struct Context<'a> {
    pub dir: &'a Path,
    pub origin: &'a Path,
    pub loader: &'a Loader,
    pub tracking: Option<&'a build_metadata::Origin>,
    /// The kustomization file's name in `dir` (where inline configs are written).
    pub file: &'a str,
}

/// Run every config of `entries` (one list of a kustomization) on `resources`.
/// With tracking, each config is the origin of what it generates, and a transformation of
/// every object after it runs, as kustomize records plugin configs.
pub fn run(resources: &mut ResMap, list: List, entries: &[String], cfg: &TransformConfig, cx: &Context) -> Result<()> {
    for entry in entries {
        let inline = entry.contains('\n');
        let source = cx.tracking.map(|o| o.append(if inline { cx.file } else { entry }));
        for config in configs(list, entry, cx)? {
            let origin = source.as_ref().map(|s| s.of_plugin(&config));
            run_config(resources, list, &config, cfg, cx, origin.as_deref())?;
            if let (List::Transformers, Some(origin)) = (list, origin) {
                build_metadata::add_transformations(resources, &[origin]);
            }
        }
    }
    Ok(())
}

fn configs(list: List, entry: &str, cx: &Context) -> Result<Vec<Value>> {
    if entry.contains('\n') {
        return Ok(kfctl_yaml::parse_stream(entry, &cx.origin.display().to_string())?);
    }
    match cx.loader.resolve_entry(cx.dir, entry)? {
        Entry::File(path) => Ok(cx.loader.documents(&path)?.to_vec()),
        Entry::Folder(path) => Err(refuse(cx, list, &format!("folder {}", path.display()), "list the config files")),
    }
}

fn refuse(cx: &Context, list: List, what: &str, hint: &str) -> KustomizeError {
    KustomizeError::UnsupportedPlugin {
        path: cx.origin.to_path_buf(),
        field: list.field().to_string(),
        what: what.to_string(),
        hint: hint.to_string(),
    }
}

fn run_config(
    resources: &mut ResMap,
    list: List,
    config: &Value,
    cfg: &TransformConfig,
    cx: &Context,
    origin: Option<&str>,
) -> Result<()> {
    let api_version = config.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or_default();
    let function = config.pointer("/metadata/annotations/config.kubernetes.io~1function").is_some();
    if api_version != "builtin" || function {
        let hint = "exec and KRM-function plugins are not run; use a builtin config (apiVersion: builtin)";
        return Err(refuse(cx, list, &format!("plugin {api_version}/{kind}"), hint));
    }
    let Some(allowed) = known_fields(list, kind) else {
        return Err(refuse(cx, list, &format!("builtin kind {kind}"), "use the matching kustomization field instead"));
    };
    let fields = config.as_object().cloned().unwrap_or_default();
    if let Some(field) = fields
        .keys()
        .find(|f| !["apiVersion", "kind", "metadata"].contains(&f.as_str()) && !allowed.contains(&f.as_str()))
    {
        return Err(refuse(cx, list, &format!("field `{field}` of {kind}"), "remove it, or build with kustomize"));
    }
    let invalid = |message: String| KustomizeError::transform(format!("{}: {kind}", cx.origin.display()), message);
    apply(resources, kind, &fields, cfg, cx, origin).map_err(|e| match e {
        KustomizeError::Transform { context, message } if context.is_empty() => invalid(message),
        other => other,
    })
}

/// The config fields each supported kind has (besides apiVersion, kind and metadata).
fn known_fields(list: List, kind: &str) -> Option<&'static [&'static str]> {
    let generator: &[&str] = &["behavior", "literals", "files", "envs", "env", "options", "type"];
    let fields: &[&str] = match (list, kind) {
        (List::Generators, "ConfigMapGenerator" | "SecretGenerator") => generator,
        (List::Transformers, "PrefixSuffixTransformer") => &["prefix", "suffix", "fieldSpecs"],
        (List::Transformers, "LabelTransformer") => &["labels", "fieldSpecs"],
        (List::Transformers, "AnnotationsTransformer") => &["annotations", "fieldSpecs"],
        (List::Transformers, "NamespaceTransformer") => &["fieldSpecs", "unsetOnly", "setRoleBindingSubjects"],
        (List::Transformers, "ImageTagTransformer") => &["imageTag", "fieldSpecs"],
        (List::Transformers, "ReplicaCountTransformer") => &["replica", "fieldSpecs"],
        (List::Transformers, "PatchTransformer") => &["patch", "path", "target", "options"],
        (List::Transformers, "PatchJson6902Transformer") => &["path", "jsonOp", "target"],
        (List::Transformers, "PatchStrategicMergeTransformer") => &["paths"],
        (List::Transformers, "ReplacementTransformer") => &["replacements"],
        _ => return None,
    };
    Some(fields)
}

fn field<T: DeserializeOwned + Default>(fields: &Map<String, Value>, name: &str) -> Result<T> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|e| KustomizeError::transform("", format!("invalid `{name}`: {e}"))),
    }
}

fn meta(fields: &Map<String, Value>, name: &str) -> Option<String> {
    fields.get("metadata").and_then(|m| m.get(name)).and_then(Value::as_str).map(str::to_string)
}

fn apply(
    resources: &mut ResMap,
    kind: &str,
    f: &Map<String, Value>,
    cfg: &TransformConfig,
    cx: &Context,
    origin: Option<&str>,
) -> Result<()> {
    let specs: Vec<FieldSpec> = field(f, "fieldSpecs")?;
    let with = |set: fn(&mut TransformConfig, Vec<FieldSpec>)| {
        let mut c = cfg.clone();
        set(&mut c, specs.clone());
        c
    };
    match kind {
        "ConfigMapGenerator" | "SecretGenerator" => generate(resources, kind, f, cx, origin),
        "PrefixSuffixTransformer" => {
            let c = with(|c, s| {
                c.name_prefix = s.clone();
                c.name_suffix = s;
            });
            prefix_suffix::apply(resources, &field::<String>(f, "prefix")?, &field::<String>(f, "suffix")?, &c)
        }
        "LabelTransformer" => super::fieldspec::add_pairs(resources, &field(f, "labels")?, &specs),
        "AnnotationsTransformer" => super::fieldspec::add_pairs(resources, &field(f, "annotations")?, &specs),
        "NamespaceTransformer" => namespace_config(resources, f, &with(|c, s| c.namespace = s)),
        "ImageTagTransformer" => {
            images::apply(resources, &field::<k::Image>(f, "imageTag")?, &with(|c, s| c.images = s))
        }
        "ReplicaCountTransformer" => {
            replicas::apply(resources, &field::<k::Replica>(f, "replica")?, &with(|c, s| c.replicas = s))
        }
        "PatchTransformer" => {
            patches::patches(resources, &[field::<k::Patch>(&patch_fields(f), "p")?], cx.dir, cx.loader)
        }
        "PatchJson6902Transformer" => {
            let mut p = f.clone();
            if let Some(op) = p.remove("jsonOp") {
                p.insert("patch".into(), op);
            }
            patches::json6902(resources, &[field::<k::Patch>(&patch_fields(&p), "p")?], cx.dir, cx.loader)
        }
        "PatchStrategicMergeTransformer" => {
            patches::strategic_merge_files(resources, &field::<Vec<String>>(f, "paths")?, cx.dir, cx.loader)
        }
        _ => replacements::apply(resources, &field::<Vec<k::ReplacementEntry>>(f, "replacements")?, cx.dir, cx.loader),
    }
}

/// A patch config as a kustomization `patches` entry, under the key `p`.
fn patch_fields(f: &Map<String, Value>) -> Map<String, Value> {
    let patch: Map<String, Value> = f
        .iter()
        .filter(|(key, _)| ["patch", "path", "target", "options"].contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Map::from_iter([("p".to_string(), Value::Object(patch))])
}

fn namespace_config(resources: &mut ResMap, f: &Map<String, Value>, cfg: &TransformConfig) -> Result<()> {
    let unset_only: bool = field(f, "unsetOnly")?;
    let subjects: String = field(f, "setRoleBindingSubjects")?;
    if unset_only || !matches!(subjects.as_str(), "" | "defaultOnly") {
        return Err(KustomizeError::transform(
            "",
            "only `unsetOnly: false` and `setRoleBindingSubjects: defaultOnly` are supported by kfctl-rs",
        ));
    }
    match meta(f, "namespace").filter(|ns| !ns.is_empty()) {
        Some(ns) => namespace::apply(resources, &ns, cfg),
        None => Ok(()),
    }
}

fn generate(
    resources: &mut ResMap,
    kind: &str,
    f: &Map<String, Value>,
    cx: &Context,
    origin: Option<&str>,
) -> Result<()> {
    let mut args: Map<String, Value> = f
        .iter()
        .filter(|(key, _)| !["apiVersion", "kind", "metadata"].contains(&key.as_str()))
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    for name in ["name", "namespace"] {
        if let Some(value) = meta(f, name) {
            args.insert(name.into(), Value::String(value));
        }
    }
    let args: k::GeneratorArgs = serde_json::from_value(Value::Object(args))
        .map_err(|e| KustomizeError::transform("", format!("invalid generator config: {e}")))?;
    let mut kustomization = Kustomization::default();
    match kind {
        "ConfigMapGenerator" => kustomization.config_map_generator.push(args),
        _ => kustomization.secret_generator.push(args),
    }
    let origin_of = |_: &str| origin.unwrap_or_default().to_string();
    let origin_of = origin.map(|_| &origin_of as &dyn Fn(&str) -> String);
    generators::run_with_origin(resources, &kustomization, cx.dir, cx.loader, origin_of)
}
