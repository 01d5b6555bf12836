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

use crate::kustomize::error::{KustomizeError, Result};
use crate::kustomize::kustomization::{GeneratorArgs, GeneratorOptions, Kustomization};
use crate::kustomize::loader::Loader;
use crate::kustomize::resmap::ResMap;
use crate::kustomize::resource::{Behavior, Generated, Resource};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Which object a generator makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratedKind {
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
/// result into `resources`.
pub fn run(resources: &mut ResMap, kustomization: &Kustomization, dir: &Path, loader: &Loader) -> Result<()> {
    let global = kustomization.generator_options.as_ref();
    let all = kustomization
        .config_map_generator
        .iter()
        .map(|a| (GeneratedKind::ConfigMap, a))
        .chain(kustomization.secret_generator.iter().map(|a| (GeneratedKind::Secret, a)));
    for (kind, args) in all {
        let pairs = load_pairs(args, dir, loader)?;
        let resource = generate(kind, args, global, pairs)?;
        absorb(resources, resource, &dir.display().to_string())?;
    }
    Ok(())
}

/// Build one generated object from its already loaded key/value pairs.
pub fn generate(
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
pub fn merged_options(local: Option<&GeneratorOptions>, global: Option<&GeneratorOptions>) -> GeneratorOptions {
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
    let strings = |m: &BTreeMap<String, String>| Value::Object(m.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect());
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
pub fn load_pairs(args: &GeneratorArgs, dir: &Path, loader: &Loader) -> Result<Vec<(String, Vec<u8>)>> {
    let mut pairs = Vec::new();
    for env in args.envs.iter().chain(args.env.as_ref().filter(|e| !e.is_empty())) {
        let (path, bytes) = loader.read_bytes(dir, env)?;
        let parsed = parse_env_file(&bytes).map_err(|m| KustomizeError::transform(path.display().to_string(), m))?;
        pairs.extend(parsed.into_iter().map(|(k, v)| (k, v.into_bytes())));
    }
    for literal in &args.literals {
        let (k, v) = parse_literal(literal).map_err(|m| KustomizeError::transform("literal source", m))?;
        pairs.push((k, v.into_bytes()));
    }
    for source in &args.files {
        let (key, file) = parse_file_source(source).map_err(|m| KustomizeError::transform("file source", m))?;
        let (_, bytes) = loader.read_bytes(dir, &file)?;
        pairs.push((key, bytes));
    }
    Ok(pairs)
}

/// Parse an env file into pairs (kustomize's `keyValuesFromLines`).
pub fn parse_env_file(bytes: &[u8]) -> std::result::Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for (number, raw) in scan_lines(bytes).into_iter().enumerate() {
        let raw = if number == 0 { raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw) } else { raw };
        let line = std::str::from_utf8(raw).map_err(|_| format!("line {} has invalid utf8 bytes", number + 1))?;
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
pub fn parse_literal(source: &str) -> std::result::Result<(String, String), String> {
    match source.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), remove_quotes(value).to_string())),
        _ => Err(format!("invalid literal source {source}, expected key=value")),
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
pub fn parse_file_source(source: &str) -> std::result::Result<(String, String), String> {
    match source.split_once('=') {
        None => {
            let base = source.trim_end_matches('/').rsplit('/').next().unwrap_or(source);
            Ok((base.to_string(), source.to_string()))
        }
        Some(("", path)) => Err(format!("missing key name for file path {path:?} in source {source:?}")),
        Some((_, path)) if path.contains('=') => Err(format!("source {source:?} key name or file path contains '='")),
        Some((key, "")) => Err(format!("missing file path for key name {key:?} in source {source:?}")),
        Some((key, path)) => Ok((key.to_string(), path.to_string())),
    }
}

/// base64 as kustomize writes generated values: standard alphabet with padding, and when
/// longer than 70 characters, broken into lines of 70, each ending with a newline.
pub fn base64_lines(bytes: &[u8]) -> String {
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

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// kustomize's `appendReplaceOrMerge`: add a generated object, or merge it into / replace the
/// object it names.
pub fn absorb(resources: &mut ResMap, resource: Resource, origin: &str) -> Result<()> {
    let id = resource.current_id();
    let (behavior, needs_hash) = resource.generated.as_ref().map_or((Behavior::Create, false), |g| (g.behavior, g.needs_hash));
    let matches = resources.find_by_any_id(&id);
    let fail = |what: &str| Err(KustomizeError::transform(format!("merging from generator {id}"), what.to_string()));
    match (matches.as_slice(), behavior) {
        ([], Behavior::Create) => resources.append(resource, origin),
        ([], _) => fail("does not exist; cannot merge or replace (use behavior create, or name an object of a base)"),
        ([_], Behavior::Create) => fail("exists; behavior must be merge or replace"),
        ([index], _) => {
            let old = resources.get_mut(*index);
            old.obj = combine(&old.obj, resource.obj, behavior);
            if let Some(generated) = old.generated.as_mut() {
                generated.needs_hash = generated.needs_hash && needs_hash;
            }
            Ok(())
        }
        (many, _) => fail(&format!("found {} objects that could accept this merge; give the generator a namespace", many.len())),
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
            out.insert(k.clone(), crate::kustomize::fieldpath::scalar_text(Some(v)).unwrap_or_default());
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
mod tests {
    use super::*;
    use crate::kustomize::loader::LoadRestriction;
    use serde_json::json;
    use std::sync::Arc;

    fn args(yaml: &str) -> GeneratorArgs {
        let value: Value = crate::yaml::parse_stream(yaml, "test").unwrap().remove(0);
        serde_json::from_value(value).unwrap()
    }

    fn literal_pairs(pairs: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect()
    }

    fn loader() -> Loader {
        Loader::new(Arc::new(crate::source::NoRemote), LoadRestriction::RootOnly)
    }

    fn existing(obj: Value) -> ResMap {
        let mut map = ResMap::new();
        map.append(Resource::new(obj), "base").unwrap();
        map
    }

    #[test]
    fn config_map_keys_come_out_sorted() {
        let r = generate(GeneratedKind::ConfigMap, &args("name: cm"), None, literal_pairs(&[("z", "1"), ("a", "2")])).unwrap();
        assert_eq!(r.obj["data"], json!({"a": "2", "z": "1"}));
        assert_eq!(r.obj["data"].as_object().unwrap().keys().collect::<Vec<_>>(), ["a", "z"]);
        assert_eq!(r.generated, Some(Generated { behavior: Behavior::Create, needs_hash: true }));
    }

    #[test]
    fn non_utf8_values_go_to_binary_data() {
        let pairs = vec![("bin.dat".to_string(), vec![0xff, 0xfe, 0x00]), ("t".to_string(), b"x".to_vec())];
        let r = generate(GeneratedKind::ConfigMap, &args("name: cm"), None, pairs).unwrap();
        assert_eq!(r.obj["binaryData"], json!({"bin.dat": "//4A"}));
        assert_eq!(r.obj["data"], json!({"t": "x"}));
    }

    #[test]
    fn secrets_are_base64_with_a_default_type() {
        let r = generate(GeneratedKind::Secret, &args("name: s"), None, literal_pairs(&[("b", "2"), ("a", "1")])).unwrap();
        assert_eq!(r.obj["data"], json!({"a": "MQ==", "b": "Mg=="}));
        assert_eq!(r.obj["type"], "Opaque");
        let tls = generate(GeneratedKind::Secret, &args("{name: s, type: kubernetes.io/tls}"), None, vec![]).unwrap();
        assert_eq!(tls.obj["type"], "kubernetes.io/tls");
        assert_eq!(tls.obj["data"], json!({}));
    }

    #[test]
    fn namespace_and_immutable_come_from_args_and_options() {
        let r = generate(GeneratedKind::Secret, &args("{name: a, namespace: ns, options: {immutable: true}}"), None, vec![]).unwrap();
        assert_eq!(r.namespace(), "ns");
        assert_eq!(r.obj["immutable"], true);
    }

    #[test]
    fn local_options_win_over_global_except_true_booleans() {
        let local = args("{name: a, options: {labels: {l: local, x: local}, disableNameSuffixHash: false}}").options;
        let global: GeneratorOptions =
            serde_json::from_value(json!({"labels": {"l": "global", "g": "global"}, "annotations": {"a": "g"}, "disableNameSuffixHash": true})).unwrap();
        let merged = merged_options(local.as_ref(), Some(&global));
        assert_eq!(merged.labels.get("l").unwrap(), "local");
        assert_eq!(merged.labels.get("g").unwrap(), "global");
        assert_eq!(merged.annotations.get("a").unwrap(), "g");
        assert_eq!(merged.disable_name_suffix_hash, Some(true));
    }

    #[test]
    fn disabled_hash_is_recorded() {
        let r = generate(GeneratedKind::ConfigMap, &args("{name: a, options: {disableNameSuffixHash: true}}"), None, vec![]).unwrap();
        assert!(!r.generated.unwrap().needs_hash);
    }

    #[test]
    fn a_generator_needs_a_name() {
        assert!(generate(GeneratedKind::ConfigMap, &args("literals: [a=1]"), None, vec![]).is_err());
    }

    #[test]
    fn repeated_keys_are_refused() {
        let err = generate(GeneratedKind::ConfigMap, &args("name: a"), None, literal_pairs(&[("x", "1"), ("x", "2")])).unwrap_err();
        assert!(err.to_string().contains("illegally repeats the key `x`"), "{err}");
    }

    #[test]
    fn env_files_skip_comments_and_blanks_and_keep_values_raw() {
        let pairs = parse_env_file(b"\xEF\xBB\xBFB=2\n# c\n\n  A=1 \r\nC\nD=\"q\"\nE=a=b").unwrap();
        let expected = [("B", "2"), ("A", "1 "), ("C", ""), ("D", "\"q\""), ("E", "a=b")];
        assert_eq!(pairs, expected.map(|(k, v)| (k.to_string(), v.to_string())));
    }

    #[test]
    fn env_files_must_be_utf8() {
        assert!(parse_env_file(b"A=\xff\n").is_err());
    }

    #[test]
    fn literals_lose_one_pair_of_matching_quotes() {
        assert_eq!(parse_literal("y='quoted'").unwrap(), ("y".into(), "quoted".into()));
        assert_eq!(parse_literal("x=\"dq\"").unwrap(), ("x".into(), "dq".into()));
        assert_eq!(parse_literal("w=a=b").unwrap(), ("w".into(), "a=b".into()));
        assert_eq!(parse_literal("m='mixed\"").unwrap(), ("m".into(), "'mixed\"".into()));
        assert_eq!(parse_literal("e=").unwrap(), ("e".into(), "".into()));
        assert!(parse_literal("x").is_err());
        assert!(parse_literal("=x").is_err());
    }

    #[test]
    fn file_sources_default_the_key_to_the_base_name() {
        assert_eq!(parse_file_source("dir/z.txt").unwrap(), ("z.txt".into(), "dir/z.txt".into()));
        assert_eq!(parse_file_source("k2=z.txt").unwrap(), ("k2".into(), "z.txt".into()));
        assert!(parse_file_source("=z.txt").is_err());
        assert!(parse_file_source("k=").is_err());
        assert!(parse_file_source("k=a=b").is_err());
    }

    #[test]
    fn long_base64_values_are_broken_into_lines_of_70() {
        let mut bytes = vec![b'a'; 60];
        bytes.push(0xff);
        let expected = "YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYW\nFhYWFhYWFh/w==\n";
        assert_eq!(base64_lines(&bytes), expected);
        assert_eq!(base64_lines(&[b'b'; 51]).len(), 68);
        let cm = generate(GeneratedKind::ConfigMap, &args("name: cm"), None, vec![("long.txt".into(), bytes.clone())]).unwrap();
        assert_eq!(cm.obj["binaryData"]["long.txt"], expected);
        let secret = generate(GeneratedKind::Secret, &args("name: s"), None, vec![("long.txt".into(), bytes)]).unwrap();
        assert_eq!(secret.obj["data"]["long.txt"], expected);
        // Hashes recorded with kustomize v5.6 for these objects.
        assert_eq!(super::super::hash::content_hash(&secret.obj), "6267hmc2c8");
    }

    #[test]
    fn base64_pads_like_the_standard_encoding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"1"), "MQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(&[0xff, 0xfe]), "//4=");
    }

    #[test]
    fn sources_load_in_kustomize_order_through_the_loader() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.env"), "E=1\n").unwrap();
        std::fs::write(dir.path().join("f.txt"), "hello\n").unwrap();
        let a = args("{name: cm, files: [f.txt, k2=f.txt], literals: [L=2], envs: [a.env]}");
        let pairs = load_pairs(&a, dir.path(), &loader()).unwrap();
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["E", "L", "f.txt", "k2"]);
        assert_eq!(pairs[2].1, b"hello\n");
    }

    #[test]
    fn file_sources_obey_the_load_restriction() {
        let outer = tempfile::tempdir().unwrap();
        let inner = outer.path().join("k");
        std::fs::create_dir(&inner).unwrap();
        std::fs::write(outer.path().join("secret.txt"), "x").unwrap();
        let err = load_pairs(&args("{name: cm, files: [../secret.txt]}"), &inner, &loader()).unwrap_err();
        assert!(err.to_string().starts_with("security:"), "{err}");
    }

    #[test]
    fn create_appends_and_refuses_an_existing_id() {
        let mut map = ResMap::new();
        let make = || generate(GeneratedKind::ConfigMap, &args("name: a"), None, literal_pairs(&[("x", "1")])).unwrap();
        absorb(&mut map, make(), "k").unwrap();
        let err = absorb(&mut map, make(), "k").unwrap_err();
        assert!(err.to_string().contains("exists; behavior must be merge or replace"), "{err}");
    }

    #[test]
    fn merge_or_replace_needs_an_existing_object() {
        let r = generate(GeneratedKind::ConfigMap, &args("{name: a, behavior: merge}"), None, vec![]).unwrap();
        let err = absorb(&mut ResMap::new(), r, "k").unwrap_err();
        assert!(err.to_string().contains("does not exist; cannot merge or replace"), "{err}");
    }

    #[test]
    fn merge_keeps_the_old_identity_and_merges_data_and_metadata() {
        let mut base = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"x": "base", "y": "base"}, "annotations": {"ab": "base"}}, "data": {"a": "1", "b": "2"}}));
        base.set_name("p-a");
        base.generated = Some(Generated { behavior: Behavior::Create, needs_hash: true });
        let mut map = ResMap::new();
        map.append(base, "base").unwrap();
        let overlay = args("{name: a, behavior: merge, options: {labels: {x: ov, z: ov}}}");
        let r = generate(GeneratedKind::ConfigMap, &overlay, None, literal_pairs(&[("b", "3"), ("c", "4")])).unwrap();
        absorb(&mut map, r, "ov").unwrap();
        let merged = map.get(0);
        assert_eq!(merged.name(), "p-a");
        assert_eq!(merged.original_id().name, "a");
        assert_eq!(merged.obj["data"], json!({"a": "1", "b": "3", "c": "4"}));
        assert_eq!(merged.obj["metadata"]["labels"], json!({"x": "ov", "y": "base", "z": "ov"}));
        assert_eq!(merged.obj["metadata"]["annotations"], json!({"ab": "base"}));
        assert!(merged.generated.as_ref().unwrap().needs_hash);
    }

    #[test]
    fn replace_drops_the_old_data() {
        let mut map = existing(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}, "data": {"old": "1"}}));
        let r = generate(GeneratedKind::ConfigMap, &args("{name: a, namespace: ns, behavior: replace}"), None, literal_pairs(&[("new", "2")])).unwrap();
        absorb(&mut map, r, "ov").unwrap();
        assert_eq!(map.get(0).obj["data"], json!({"new": "2"}));
        assert_eq!(map.get(0).namespace(), "ns");
    }

    #[test]
    fn merging_into_a_plain_object_adds_no_hash() {
        let mut map = existing(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}, "data": {"zz": "1"}}));
        let r = generate(GeneratedKind::ConfigMap, &args("{name: plain, behavior: merge}"), None, literal_pairs(&[("mm", "3")])).unwrap();
        absorb(&mut map, r, "ov").unwrap();
        assert!(map.get(0).generated.is_none());
        assert_eq!(map.get(0).obj["data"], json!({"mm": "3", "zz": "1"}));
    }

    #[test]
    fn hash_survives_a_merge_only_if_both_sides_want_it() {
        for (old_hash, new_disabled, expected) in [(true, false, true), (true, true, false), (false, false, false)] {
            let mut base = generate(GeneratedKind::ConfigMap, &args("name: a"), None, vec![]).unwrap();
            base.generated.as_mut().unwrap().needs_hash = old_hash;
            let mut map = ResMap::new();
            map.append(base, "base").unwrap();
            let text = format!("{{name: a, behavior: replace, options: {{disableNameSuffixHash: {new_disabled}}}}}");
            absorb(&mut map, generate(GeneratedKind::ConfigMap, &args(&text), None, vec![]).unwrap(), "ov").unwrap();
            assert_eq!(map.get(0).generated.as_ref().unwrap().needs_hash, expected, "{old_hash} {new_disabled}");
        }
    }
}
