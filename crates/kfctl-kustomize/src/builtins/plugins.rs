//! `generators:` and `transformers:` with builtin plugin configs (`apiVersion: builtin`).
//!
//! Each entry is an inline config (text with a line break), a file of configs, or a folder
//! whose kustomization is accumulated (as a `resources` folder is, without the build's last
//! steps) and whose objects are the configs. As in kustomize, the inline entries run first,
//! then the files and folders, each in list order; two configs with the same id are an error.
//! Files a config names are relative to the kustomization that lists the entry, even for a
//! config from a folder. A config is run by the builtin that the matching kustomization field
//! uses, with the config's own `fieldSpecs` in place of the defaults — so no builtin is
//! written twice:
//! - generators: `ConfigMapGenerator`, `SecretGenerator` (without the kustomization's
//!   `generatorOptions`, as kustomize runs them; a top-level `name` or `namespace` wins over
//!   the config's metadata), `IAMPolicyGenerator` ([`super::iam_policy`]);
//! - transformers: `PrefixSuffixTransformer`, `LabelTransformer`, `AnnotationsTransformer`,
//!   `NamespaceTransformer`, `ImageTagTransformer`, `ReplicaCountTransformer`,
//!   `PatchTransformer`, `PatchJson6902Transformer`, `PatchStrategicMergeTransformer` (`paths`),
//!   `ReplacementTransformer`.
//!
//! kustomize reads a config leniently: a top-level field its builtin does not have is ignored,
//! and so it is here. Anything else is refused by name, never skipped: other builtin kinds,
//! fields kustomize acts on that the engine does not (or a known field in other letter case,
//! which Go's decoder would take), folder entries under `buildMetadata` tracking, and exec or
//! KRM-function plugins (any apiVersion but `builtin`).

use super::config::TransformConfig;
use super::{generators, iam_policy, images, namespace, patches, prefix_suffix, replacements, replicas};
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
pub(crate) enum List {
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
pub(crate) struct Context<'a> {
    pub dir: &'a Path,
    pub origin: &'a Path,
    pub loader: &'a Loader,
    pub tracking: Option<&'a build_metadata::Origin>,
    /// The kustomization file's name in `dir` (where inline configs are written).
    pub file: &'a str,
}

/// Accumulates a folder entry and returns its objects (the accumulator's job, see
/// [`crate::accumulate`]).
pub(crate) type FolderConfigs<'f> = dyn FnMut(&Path) -> Result<Vec<Value>> + 'f;

/// Run every config of `entries` (one list of a kustomization) on `resources`.
/// With tracking, each config is the origin of what it generates, and a transformation of
/// every object after it runs, as kustomize records plugin configs.
pub(crate) fn run(
    resources: &mut ResMap,
    list: List,
    entries: &[String],
    cfg: &TransformConfig,
    cx: &Context,
    folder: &mut FolderConfigs,
) -> Result<()> {
    let mut loaded = Vec::new();
    let (inline, paths): (Vec<&String>, Vec<&String>) = entries.iter().partition(|e| e.contains('\n'));
    for entry in inline.into_iter().chain(paths) {
        let source = cx.tracking.map(|o| o.append(if entry.contains('\n') { cx.file } else { entry }));
        for config in configs(list, entry, cx, folder)? {
            loaded.push((config, source.clone()));
        }
    }
    check_unique(loaded.iter().map(|(config, _)| config), list, cx)?;
    for (config, source) in &loaded {
        let origin = source.as_ref().map(|s| s.of_plugin(config));
        run_config(resources, list, config, cfg, cx, origin.as_deref())?;
        if let (List::Transformers, Some(origin)) = (list, origin) {
            build_metadata::add_transformations(resources, &[origin]);
        }
    }
    Ok(())
}

fn configs(list: List, entry: &str, cx: &Context, folder: &mut FolderConfigs) -> Result<Vec<Value>> {
    if entry.contains('\n') {
        return Ok(kfctl_yaml::parse_stream(entry, &cx.origin.display().to_string())?);
    }
    match cx.loader.resolve_entry(cx.dir, entry)? {
        Entry::File(path) => Ok(cx.loader.documents(&path)?.to_vec()),
        Entry::Folder(_) if cx.tracking.is_some() => Err(refuse(
            cx,
            list,
            &format!("folder {entry} with `buildMetadata` origin or transformer annotations"),
            "list the folder's config files instead, or build without those options",
        )),
        Entry::Folder(path) => folder(&path),
    }
}

/// kustomize gathers every config of a list in one resource map: two with the same id fail.
fn check_unique<'v>(configs: impl Iterator<Item = &'v Value>, list: List, cx: &Context) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for config in configs {
        let text = |pointer: &str| config.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
        let id = [text("/apiVersion"), text("/kind"), text("/metadata/namespace"), text("/metadata/name")];
        if !seen.insert(id.clone()) {
            let [api_version, kind, namespace, name] = id;
            return Err(KustomizeError::transform(
                format!("{}: {}", cx.origin.display(), list.field()),
                format!(
                    "may not add resource with an already registered id: {api_version}/{kind} `{name}` (namespace `{namespace}`); give each config its own metadata.name"
                ),
            ));
        }
    }
    Ok(())
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
    let Some((known, refused)) = known_fields(list, kind) else {
        return Err(refuse(cx, list, &format!("builtin kind {kind}"), "use the matching kustomization field instead"));
    };
    let all = config.as_object().cloned().unwrap_or_default();
    if let Some(field) = refused_field(&all, known, refused) {
        return Err(refuse(cx, list, &format!("field `{field}` of {kind}"), "remove it, or build with kustomize"));
    }
    // Fields kustomize's builtin does not have are ignored, as kustomize ignores them.
    let keep =
        |key: &String| known.contains(&key.as_str()) || ["apiVersion", "kind", "metadata"].contains(&key.as_str());
    let fields: Map<String, Value> = all.into_iter().filter(|(key, _)| keep(key)).collect();
    let invalid = |message: String| KustomizeError::transform(format!("{}: {kind}", cx.origin.display()), message);
    apply(resources, kind, &fields, cfg, cx, origin).map_err(|e| match e {
        KustomizeError::Transform { context, message } if context.is_empty() => invalid(message),
        other => other,
    })
}

/// The config fields kustomize's builtin of each supported kind reads (besides apiVersion,
/// kind and metadata), and those of them the engine refuses.
fn known_fields(list: List, kind: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    const CONFIG_MAP: &[&str] = &["name", "namespace", "behavior", "literals", "files", "envs", "env", "options"];
    const SECRET: &[&str] = &["name", "namespace", "behavior", "literals", "files", "envs", "env", "options", "type"];
    let fields: (&[&str], &[&str]) = match (list, kind) {
        (List::Generators, "ConfigMapGenerator") => (CONFIG_MAP, &[]),
        (List::Generators, "SecretGenerator") => (SECRET, &[]),
        (List::Generators, "IAMPolicyGenerator") => (&iam_policy::FIELDS, &[]),
        (List::Transformers, "PrefixSuffixTransformer") => (&["prefix", "suffix", "fieldSpecs"], &[]),
        (List::Transformers, "LabelTransformer") => (&["labels", "fieldSpecs"], &[]),
        (List::Transformers, "AnnotationsTransformer") => (&["annotations", "fieldSpecs"], &[]),
        (List::Transformers, "NamespaceTransformer") => (&["fieldSpecs", "unsetOnly", "setRoleBindingSubjects"], &[]),
        (List::Transformers, "ImageTagTransformer") => (&["imageTag", "fieldSpecs"], &[]),
        (List::Transformers, "ReplicaCountTransformer") => (&["replica", "fieldSpecs"], &[]),
        (List::Transformers, "PatchTransformer") => (&["patch", "path", "target", "options"], &[]),
        (List::Transformers, "PatchJson6902Transformer") => (&["path", "jsonOp", "target"], &[]),
        (List::Transformers, "PatchStrategicMergeTransformer") => (&["paths", "patches"], &["patches"]),
        (List::Transformers, "ReplacementTransformer") => (&["replacements"], &[]),
        _ => return None,
    };
    Some(fields)
}

/// The first field of a config the engine must refuse: one kustomize reads but the engine
/// does not act on, or a known field in other letter case (Go's decoder matches names without
/// regard to case; the engine does not guess). Other unknown fields are ignored, as kustomize
/// ignores them.
fn refused_field<'c>(fields: &'c Map<String, Value>, known: &[&str], refused: &[&str]) -> Option<&'c str> {
    let all = known.iter().chain(&["apiVersion", "kind", "metadata"]);
    fields
        .keys()
        .map(String::as_str)
        .find(|field| refused.contains(field) || all.clone().any(|k| k.eq_ignore_ascii_case(field) && k != field))
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
        "IAMPolicyGenerator" => iam_policy::run(resources, f, &cx.origin.display().to_string()),
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
    // kustomize: a top-level `name` (`namespace`) wins; the metadata's is the fallback.
    for name in ["name", "namespace"] {
        let top_level_set = args.get(name).and_then(Value::as_str).is_some_and(|v| !v.is_empty());
        if let (false, Some(value)) = (top_level_set, meta(f, name)) {
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

#[cfg(test)]
#[path = "plugins_tests.rs"]
mod tests;
