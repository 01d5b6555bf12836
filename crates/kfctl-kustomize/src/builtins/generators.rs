//! configMapGenerator and secretGenerator, and absorbing their output (behavior create, merge,
//! replace), as kustomize v5.6 does.
//!
//! **Sources.** A generator reads key/value pairs from `envs` (and the legacy `env`), then
//! `literals`, then `files`, in that order; a key seen twice is an error. Env files are
//! `KEY=VALUE` lines: leading blanks are dropped, blank lines and `#` comments skipped, a line
//! without `=` gives an empty value, and nothing else is trimmed or unquoted. A literal is
//! `key=value`, the value losing one pair of matching surrounding quotes. A file source is
//! `path` (the key is the file's base name) or `key=path`; files are read through the
//! [`Loader`], so the load restriction holds.
//!
//! **Objects.** A ConfigMap puts UTF-8 values in `data` and others, base64-encoded, in
//! `binaryData`; a Secret base64-encodes everything into `data` and has a `type` (default
//! `Opaque`). Keys come out sorted. The kustomization-wide `generatorOptions` merge into each
//! generator's own `options` as kustomize's `MergeGlobalOptionsIntoLocal` does: a local label
//! or annotation wins, and a global `true` for `disableNameSuffixHash` or `immutable` wins.
//!
//! **Absorbing.** The generated object is matched against every id an existing object has had.
//! No match: `create` appends it, `merge`/`replace` fail. One match: `create` fails; `replace`
//! and `merge` keep the existing object's name, namespace and bookkeeping, merge labels and
//! annotations (the generator's win), and `merge` also merges `data` and `binaryData`. The
//! result gets a hash suffix only if both the old and the new object asked for one (measured
//! with kustomize v5.6).

use crate::error::{GeneratorError, KustomizeError, Result};
use crate::kustomization::{GeneratorArgs, GeneratorOptions, Kustomization};
use crate::loader::Loader;
use crate::resmap::ResMap;
use crate::resource::{Behavior, Generated, Resource};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Which object a generator makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GeneratedKind {
    ConfigMap,
    Secret,
}

impl GeneratedKind {
    fn name(self) -> &'static str {
        match self {
            GeneratedKind::ConfigMap => "ConfigMap",
            GeneratedKind::Secret => "Secret",
        }
    }
}

/// Run a kustomization's ConfigMap generators, then its Secret generators, absorbing each
/// result into `resources`, giving each generated object the origin annotation `origin_of(generator kind)`
/// first (`buildMetadata`, see [`crate::build_metadata`]).
pub(crate) fn run_with_origin(
    resources: &mut ResMap,
    kustomization: &Kustomization,
    dir: &Path,
    loader: &Loader,
    origin_of: Option<&dyn Fn(&str) -> String>,
) -> Result<()> {
    let global = kustomization.generator_options.as_ref();
    let all = kustomization
        .config_map_generator
        .iter()
        .map(|a| (GeneratedKind::ConfigMap, a))
        .chain(kustomization.secret_generator.iter().map(|a| (GeneratedKind::Secret, a)));
    for (kind, args) in all {
        let pairs = load_pairs(args, dir, loader)?;
        let mut resource = generate(kind, args, global, pairs)?;
        if let Some(origin_of) = origin_of {
            let generator = format!("{}Generator", kind.name());
            crate::build_metadata::add_origin_if_missing(&mut resource, &origin_of(&generator));
        }
        absorb(resources, resource, &dir.display().to_string())?;
    }
    Ok(())
}

/// Build one generated object from its already loaded key/value pairs.
pub(crate) fn generate(
    kind: GeneratedKind,
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    pairs: Vec<(String, Vec<u8>)>,
) -> Result<Resource> {
    let name = args.name.as_deref().filter(|n| !n.is_empty()).ok_or_else(|| {
        KustomizeError::transform(format!("{}Generator", lower_first(kind.name())), "a generator must have a name")
    })?;
    let data = unique_keys(name, pairs)?;
    let options = merged_options(args.options.as_ref(), global);
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), Value::String("v1".into()));
    obj.insert("kind".into(), Value::String(kind.name().into()));
    obj.insert("metadata".into(), metadata(name, args.namespace.as_deref(), &options));
    match kind {
        GeneratedKind::ConfigMap => config_map_data(&mut obj, data),
        GeneratedKind::Secret => {
            let encoded = data.into_iter().map(|(k, v)| (k, Value::String(base64_lines(&v)))).collect();
            obj.insert("data".into(), Value::Object(encoded));
            let secret_type = args.secret_type.as_deref().filter(|t| !t.is_empty()).unwrap_or("Opaque");
            obj.insert("type".into(), Value::String(secret_type.into()));
        }
    }
    if options.immutable == Some(true) {
        obj.insert("immutable".into(), Value::Bool(true));
    }
    let mut resource = Resource::new(Value::Object(obj));
    resource.generated = Some(Generated {
        behavior: parse_behavior(args.behavior.as_deref()),
        needs_hash: options.disable_name_suffix_hash != Some(true),
    });
    Ok(resource)
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// kustomize's behaviors; anything unknown acts as `create`, as in kustomize.
fn parse_behavior(text: Option<&str>) -> Behavior {
    match text {
        Some("merge") => Behavior::Merge,
        Some("replace") => Behavior::Replace,
        _ => Behavior::Create,
    }
}

/// kustomize's `MergeGlobalOptionsIntoLocal`.
pub(crate) fn merged_options(local: Option<&GeneratorOptions>, global: Option<&GeneratorOptions>) -> GeneratorOptions {
    let mut out = local.cloned().unwrap_or_default();
    let Some(global) = global else { return out };
    for (k, v) in &global.labels {
        out.labels.entry(k.clone()).or_insert_with(|| v.clone());
    }
    for (k, v) in &global.annotations {
        out.annotations.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if global.disable_name_suffix_hash == Some(true) {
        out.disable_name_suffix_hash = Some(true);
    }
    if global.immutable == Some(true) {
        out.immutable = Some(true);
    }
    out
}

fn metadata(name: &str, namespace: Option<&str>, options: &GeneratorOptions) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(name.into()));
    if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
        meta.insert("namespace".into(), Value::String(ns.into()));
    }
    let strings = |m: &BTreeMap<String, String>| {
        Value::Object(m.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
    };
    if !options.labels.is_empty() {
        meta.insert("labels".into(), strings(&options.labels));
    }
    if !options.annotations.is_empty() {
        meta.insert("annotations".into(), strings(&options.annotations));
    }
    Value::Object(meta)
}

fn config_map_data(obj: &mut Map<String, Value>, data: BTreeMap<String, Vec<u8>>) {
    let (mut text, mut binary) = (Map::new(), Map::new());
    for (key, bytes) in data {
        match String::from_utf8(bytes) {
            Ok(s) => text.insert(key, Value::String(s)),
            Err(e) => binary.insert(key, Value::String(base64_lines(e.as_bytes()))),
        };
    }
    if !text.is_empty() {
        obj.insert("data".into(), Value::Object(text));
    }
    if !binary.is_empty() {
        obj.insert("binaryData".into(), Value::Object(binary));
    }
}

fn unique_keys(name: &str, pairs: Vec<(String, Vec<u8>)>) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    for (key, value) in pairs {
        if out.contains_key(&key) {
            return Err(KustomizeError::transform(
                format!("generator {name}"),
                format!("illegally repeats the key `{key}`; each key may come from one source only"),
            ));
        }
        out.insert(key, value);
    }
    Ok(out)
}

/// All key/value pairs of a generator, in kustomize's order: env files, literals, files.
pub(crate) fn load_pairs(args: &GeneratorArgs, dir: &Path, loader: &Loader) -> Result<Vec<(String, Vec<u8>)>> {
    let mut pairs = Vec::new();
    for env in args.envs.iter().chain(args.env.as_ref().filter(|e| !e.is_empty())) {
        let (path, bytes) = loader.read_bytes(dir, env)?;
        let parsed = parse_env_file(&bytes)
            .map_err(|source| KustomizeError::Generator { context: path.display().to_string(), source })?;
        pairs.extend(parsed.into_iter().map(|(k, v)| (k, v.into_bytes())));
    }
    for literal in &args.literals {
        let (k, v) = parse_literal(literal)
            .map_err(|source| KustomizeError::Generator { context: "literal source".into(), source })?;
        pairs.push((k, v.into_bytes()));
    }
    for source in &args.files {
        let (key, file) = parse_file_source(source)
            .map_err(|source| KustomizeError::Generator { context: "file source".into(), source })?;
        let (_, bytes) = loader.read_bytes(dir, &file)?;
        pairs.push((key, bytes));
    }
    Ok(pairs)
}

/// Parse an env file into pairs (kustomize's `keyValuesFromLines`).
pub(crate) fn parse_env_file(bytes: &[u8]) -> std::result::Result<Vec<(String, String)>, GeneratorError> {
    let mut pairs = Vec::new();
    for (number, raw) in scan_lines(bytes).into_iter().enumerate() {
        let raw = if number == 0 { raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw) } else { raw };
        let line = std::str::from_utf8(raw).map_err(|_| GeneratorError::InvalidUtf8(number + 1))?;
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        pairs.push((key.to_string(), value.to_string()));
    }
    Ok(pairs)
}

/// Lines as Go's `bufio.ScanLines` gives them: split on `\n`, one trailing `\r` dropped, no
/// empty last line for a final newline.
fn scan_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        lines.pop();
    }
    lines.into_iter().map(|l| l.strip_suffix(b"\r").unwrap_or(l)).collect()
}

/// Parse `key=value`, dropping one pair of matching surrounding quotes from the value.
pub(crate) fn parse_literal(source: &str) -> std::result::Result<(String, String), GeneratorError> {
    match source.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), remove_quotes(value).to_string())),
        _ => Err(GeneratorError::Literal(source.to_string())),
    }
}

fn remove_quotes(value: &str) -> &str {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&a), Some(&b)) if bytes.len() >= 2 && a == b && (a == b'"' || a == b'\'') => &value[1..value.len() - 1],
        _ => value,
    }
}

/// Parse a file source: `path` (key = the base name) or `key=path`.
pub(crate) fn parse_file_source(source: &str) -> std::result::Result<(String, String), GeneratorError> {
    match source.split_once('=') {
        None => {
            let base = source.trim_end_matches('/').rsplit('/').next().unwrap_or(source);
            Ok((base.to_string(), source.to_string()))
        }
        Some(("", path)) => Err(GeneratorError::MissingKey(path.to_string(), source.to_string())),
        Some((_, path)) if path.contains('=') => Err(GeneratorError::ExtraEquals(source.to_string())),
        Some((key, "")) => Err(GeneratorError::MissingPath(key.to_string(), source.to_string())),
        Some((key, path)) => Ok((key.to_string(), path.to_string())),
    }
}

/// base64 as kustomize writes generated values: standard alphabet with padding, and when
/// longer than 70 characters, broken into lines of 70, each ending with a newline.
pub(crate) fn base64_lines(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let encoded = base64(bytes);
    if encoded.len() < LINE {
        return encoded;
    }
    let mut out = String::with_capacity(encoded.len() + encoded.len() / LINE + 1);
    for chunk in encoded.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
        out.push('\n');
    }
    out
}

/// Standard base64 with padding (the `base64` crate's `STANDARD` engine, as Go's
/// `base64.StdEncoding` that kustomize uses).
pub(crate) fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

const ORIGIN_POINTER: &str = "/metadata/annotations/config.kubernetes.io~1origin";

/// kustomize's `appendReplaceOrMerge`: add a generated object, or merge it into / replace the
/// object it names.
pub(crate) fn absorb(resources: &mut ResMap, resource: Resource, origin: &str) -> Result<()> {
    let id = resource.current_id();
    let (behavior, needs_hash) =
        resource.generated.as_ref().map_or((Behavior::Create, false), |g| (g.behavior, g.needs_hash));
    let matches = resources.find_by_any_id(&id);
    let fail = |what: &str| Err(KustomizeError::transform(format!("merging from generator {id}"), what.to_string()));
    match (matches.as_slice(), behavior) {
        ([], Behavior::Create) => resources.append(resource, origin),
        ([], _) => fail("does not exist; cannot merge or replace (use behavior create, or name an object of a base)"),
        ([_], Behavior::Create) => fail("exists; behavior must be merge or replace"),
        ([index], _) => {
            let old = resources.get_mut(*index);
            let old_origin = old.obj.pointer(ORIGIN_POINTER).cloned();
            old.obj = combine(&old.obj, resource.obj, behavior);
            // With `buildMetadata`, a merged object keeps where it came from (a replaced one
            // takes the generator's origin), as kustomize records it.
            if let (Behavior::Merge, Some(origin)) = (behavior, old_origin)
                && let Some(annotations) = old.obj.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut)
            {
                annotations.insert(crate::build_metadata::ORIGIN_KEY.into(), origin);
            }
            if let Some(generated) = old.generated.as_mut() {
                generated.needs_hash = generated.needs_hash && needs_hash;
            }
            Ok(())
        }
        (many, _) => {
            fail(&format!("found {} objects that could accept this merge; give the generator a namespace", many.len()))
        }
    }
}

/// The object that results from merging or replacing `old` with the generated `new`.
fn combine(old: &Value, mut new: Value, behavior: Behavior) -> Value {
    let old_meta = |key: &str| old.get("metadata").and_then(|m| m.get(key));
    let new_map = new.as_object_mut().expect("generated objects are maps");
    let meta = new_map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    let meta = meta.as_object_mut().expect("generated metadata is a map");
    for field in ["labels", "annotations"] {
        set_string_map(meta, field, merge_string_maps(old_meta(field), meta.get(field)));
    }
    for field in ["name", "namespace"] {
        match old_meta(field).and_then(Value::as_str).filter(|s| !s.is_empty()) {
            Some(v) => meta.insert(field.into(), Value::String(v.into())),
            None => meta.shift_remove(field),
        };
    }
    if behavior == Behavior::Merge {
        for field in ["data", "binaryData"] {
            let merged = merge_string_maps(old.get(field), new_map.get(field));
            if merged.is_empty() {
                new_map.shift_remove(field);
            } else {
                new_map.insert(field.into(), string_map_value(&merged));
            }
        }
    }
    new
}

/// Two string maps merged, the second winning; values as text, keys sorted.
fn merge_string_maps(first: Option<&Value>, second: Option<&Value>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for map in [first, second].into_iter().flatten().filter_map(Value::as_object) {
        for (k, v) in map {
            out.insert(k.clone(), crate::fieldpath::scalar_text(Some(v)).unwrap_or_default());
        }
    }
    out
}

fn string_map_value(map: &BTreeMap<String, String>) -> Value {
    Value::Object(map.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
}

fn set_string_map(meta: &mut Map<String, Value>, field: &str, map: BTreeMap<String, String>) {
    if map.is_empty() {
        meta.shift_remove(field);
    } else {
        meta.insert(field.into(), string_map_value(&map));
    }
}

#[cfg(test)]
#[path = "generators_tests.rs"]
mod tests;
