//! replacements: copy a field from a source object into target fields, as kustomize v5.6 does.
//!
//! Entries are inline, or `path:` files holding one replacement or a list of them. For each
//! replacement, in order:
//!
//! 1. **Source.** Exactly one object must be selected (group, version, kind, name, namespace;
//!    empty parts match anything, the name exactly), by its current id or any id it had before.
//!    Its `fieldPath` (default `metadata.name`, `.`-separated, `[key=value]` picks a list
//!    element, a number indexes a list) must hold a value; with `options.delimiter` the value is
//!    split and the `index`-th part taken.
//! 2. **Targets.** Each target `select`s objects by id (any id the object has had) and by label
//!    and annotation selectors, minus those a `reject` selector matches on any id. In each
//!    object, each `fieldPaths` entry (default `metadata.name`) is found with kyaml's path
//!    matcher: `*` is every list element, `[key=regex]` every list element whose field matches
//!    the (unanchored) regex, a number one list element. A path that finds nothing is an error,
//!    unless `options.create` makes the missing fields (not with `*`).
//! 3. **Setting.** A scalar target keeps its type and takes the source's text (so `replicas: 1`
//!    stays a number); a map or list target is replaced by the source value; with
//!    `options.delimiter` the target's text is split and the `index`-th part replaced (a
//!    negative index prepends, an index past the end appends). A field made by `create` takes
//!    the type its text reads as in YAML.

use crate::error::{FieldError, KustomizeError, Result};
use crate::fieldpath::{scalar_text, split_field_path};
use crate::gvk::Gvk;
use crate::kustomization::{ReplacementEntry, Selector};
use crate::loader::Loader;
use crate::resmap::{LabelSelector, ResMap};
use crate::resource::{ResId, Resource, kid};
use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

const DEFAULT_FIELD_PATH: &str = "metadata.name";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Replacement {
    pub source: Option<SourceSelector>,
    pub targets: Option<Vec<TargetSelector>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SourceSelector {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub field_path: String,
    pub options: Option<FieldOptions>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TargetSelector {
    pub select: Option<Selector>,
    #[serde(default)]
    pub reject: Vec<Selector>,
    #[serde(default)]
    pub field_paths: Vec<String>,
    pub options: Option<FieldOptions>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FieldOptions {
    #[serde(default)]
    pub delimiter: String,
    #[serde(default)]
    pub index: i64,
    #[serde(default)]
    pub create: bool,
}

fn error(message: impl Into<String>) -> KustomizeError {
    KustomizeError::transform("replacements", message)
}

/// Run a kustomization's replacements in order.
pub(crate) fn apply(resources: &mut ResMap, entries: &[ReplacementEntry], dir: &Path, loader: &Loader) -> Result<()> {
    for replacement in load(entries, dir, loader)? {
        apply_one(resources, &replacement)?;
    }
    Ok(())
}

/// Expand `path:` entries into the replacements their files hold.
pub(crate) fn load(entries: &[ReplacementEntry], dir: &Path, loader: &Loader) -> Result<Vec<Replacement>> {
    let mut out = Vec::new();
    for entry in entries {
        let Some(path) = entry.path.as_deref().filter(|p| !p.is_empty()) else {
            let inline = serde_json::json!({"source": entry.source, "targets": entry.targets});
            out.push(serde_json::from_value(inline).map_err(|e| error(format!("invalid replacement: {e}")))?);
            continue;
        };
        if entry.source.is_some() || !entry.targets.is_empty() {
            return Err(error(format!("{path}: cannot specify both path and inline replacement")));
        }
        let (real, text) = loader.read_text(dir, path)?;
        let origin = real.display().to_string();
        let invalid =
            |e: serde_json::Error| KustomizeError::transform(origin.clone(), format!("invalid replacement: {e}"));
        match kfctl_yaml::parse_stream(&text, &origin)?.into_iter().next() {
            Some(list @ Value::Array(_)) => {
                out.extend(serde_json::from_value::<Vec<Replacement>>(list).map_err(invalid)?)
            }
            Some(one @ Value::Object(_)) => out.push(serde_json::from_value(one).map_err(invalid)?),
            _ => {
                return Err(KustomizeError::transform(
                    origin.clone(),
                    "unsupported replacement type: expected a replacement or a list of them",
                ));
            }
        }
    }
    Ok(out)
}

/// Apply one replacement to the whole build.
pub(crate) fn apply_one(resources: &mut ResMap, replacement: &Replacement) -> Result<()> {
    let (Some(source), Some(targets)) = (&replacement.source, &replacement.targets) else {
        return Err(error("replacements must specify a source and at least one target"));
    };
    let value = source_value(resources, source)?;
    for target in targets {
        let select = target.select.as_ref().ok_or_else(|| error("target must specify resources to select"))?;
        let matcher = TargetMatcher::new(select, &target.reject)?;
        let paths: Vec<&str> = if target.field_paths.is_empty() {
            vec![DEFAULT_FIELD_PATH]
        } else {
            target.field_paths.iter().map(String::as_str).collect()
        };
        for resource in resources.iter_mut().filter(|r| matcher.matches(r)) {
            for path in &paths {
                set_field(&mut resource.obj, path, &value, target.options.as_ref())?;
            }
        }
    }
    Ok(())
}

fn selector_id(group: &str, version: &str, kind: &str, name: &str, namespace: &str) -> ResId {
    ResId::new(Gvk::new(group, version, kind), name, namespace)
}

/// kustomize's `ResId.IsSelectedBy`: empty selector parts match anything, names exactly.
fn is_selected_by(id: &ResId, selector: &ResId) -> bool {
    (selector.name.is_empty() || selector.name == id.name)
        && (selector.namespace.is_empty() || selector.effective_namespace() == id.effective_namespace())
        && id.gvk.is_selected_by(&selector.gvk)
}

fn source_value(resources: &ResMap, source: &SourceSelector) -> Result<Value> {
    let id = selector_id(&source.group, &source.version, &source.kind, &source.name, &source.namespace);
    let field_path = if source.field_path.is_empty() { DEFAULT_FIELD_PATH } else { &source.field_path };
    let matches: Vec<&Resource> =
        resources.iter().filter(|r| r.all_ids().any(|rid| is_selected_by(&rid, &id))).collect();
    let object = match matches.as_slice() {
        [one] => *one,
        [] => return Err(error(format!("nothing selected by {}:{field_path}", kid(&id)))),
        _ => return Err(error(format!("multiple matches for selector {}:{field_path}", kid(&id)))),
    };
    let value = lookup(&object.obj, &split_field_path(field_path))
        .filter(|v| !is_nil_or_empty(v))
        .ok_or_else(|| error(format!("fieldPath `{field_path}` is missing for replacement source {}", kid(&id))))?;
    refine(value, source.options.as_ref())
}

fn is_nil_or_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// kyaml's `Lookup`: keys, `[key=value]` (exact) and list indexes.
pub(super) fn lookup<'a>(value: &'a Value, segments: &[String]) -> Option<&'a Value> {
    segments.iter().filter(|s| !s.is_empty()).try_fold(value, |node, segment| match (node, list_match(segment)) {
        (Value::Array(items), Some((key, want))) => {
            items.iter().find(|i| scalar_text(i.get(key)).as_deref() == Some(want))
        }
        (Value::Array(items), None) => items.get(segment.parse::<usize>().ok()?),
        (Value::Object(map), None) => map.get(segment.as_str()),
        _ => None,
    })
}

/// `[key=value]` split into its parts.
fn list_match(segment: &str) -> Option<(&str, &str)> {
    segment.strip_prefix('[')?.strip_suffix(']')?.split_once('=')
}

fn refine(value: &Value, options: Option<&FieldOptions>) -> Result<Value> {
    let Some(options) = options.filter(|o| !o.delimiter.is_empty()) else { return Ok(value.clone()) };
    let text = scalar_text(Some(value)).ok_or_else(|| error("delimiter option can only be used with scalar nodes"))?;
    let parts: Vec<&str> = text.split(options.delimiter.as_str()).collect();
    let part = usize::try_from(options.index)
        .ok()
        .and_then(|i| parts.get(i))
        .ok_or_else(|| error(format!("options.index {} is out of bounds for value {text}", options.index)))?;
    Ok(Value::String(part.to_string()))
}

/// Which objects a target selects.
struct TargetMatcher {
    select: ResId,
    labels: Option<LabelSelector>,
    annotations: Option<LabelSelector>,
    reject_ids: Vec<ResId>,
    reject_meta: Vec<(Option<LabelSelector>, Option<LabelSelector>)>,
}

fn label_selector(text: &str) -> Result<Option<LabelSelector>> {
    if text.trim().is_empty() { Ok(None) } else { LabelSelector::parse(text).map(Some) }
}

fn id_of(s: &Selector) -> ResId {
    selector_id(&s.group, &s.version, &s.kind, &s.name, &s.namespace)
}

impl TargetMatcher {
    fn new(select: &Selector, reject: &[Selector]) -> Result<Self> {
        let mut reject_ids = Vec::new();
        let mut reject_meta = Vec::new();
        for r in reject {
            let id = id_of(r);
            if id != ResId::new(Gvk::default(), "", "") {
                reject_ids.push(id);
            }
            if !r.label_selector.is_empty() || !r.annotation_selector.is_empty() {
                reject_meta.push((label_selector(&r.label_selector)?, label_selector(&r.annotation_selector)?));
            }
        }
        Ok(TargetMatcher {
            select: id_of(select),
            labels: label_selector(&select.label_selector)?,
            annotations: label_selector(&select.annotation_selector)?,
            reject_ids,
            reject_meta,
        })
    }

    fn matches(&self, r: &Resource) -> bool {
        let meta_ok = |labels: &Option<LabelSelector>, annotations: &Option<LabelSelector>| {
            labels.as_ref().is_none_or(|s| s.matches(&r.string_map("labels")))
                && annotations.as_ref().is_none_or(|s| s.matches(&r.string_map("annotations")))
        };
        if !meta_ok(&self.labels, &self.annotations) || self.reject_meta.iter().any(|(l, a)| meta_ok(l, a)) {
            return false;
        }
        let ids: Vec<ResId> = r.all_ids().collect();
        ids.iter().any(|id| is_selected_by(id, &self.select))
            && !ids.iter().any(|id| self.reject_ids.iter().any(|rej| is_selected_by(id, rej)))
    }
}

/// Set one target field path of one object.
fn set_field(obj: &mut Value, path: &str, value: &Value, options: Option<&FieldOptions>) -> Result<()> {
    let segments = split_field_path(path);
    let in_target = |source| KustomizeError::ReplacementTarget { field: path.to_string(), source };
    if options.is_some_and(|o| o.create) {
        if segments.iter().any(|s| s == "*") {
            return Err(error("cannot support create option in a multi-value target"));
        }
        let node = lookup_create(obj, &segments, value).map_err(in_target)?;
        return match node {
            Value::Array(items) if !items.is_empty() => {
                items.iter_mut().try_for_each(|item| set_value(item, value, options))
            }
            node => set_value(node, value, options),
        };
    }
    let mut found = 0usize;
    let mut result = Ok(());
    path_match(obj, &segments, &mut |node| {
        found += 1;
        if result.is_ok() {
            result = set_value(node, value, options);
        }
    })
    .map_err(in_target)?;
    if found == 0 {
        return Err(error(format!("unable to find field \"{path}\" in replacement target")));
    }
    result
}

fn wrong_kind(expected: &'static str, node: &Value) -> FieldError {
    let found = match node {
        Value::Array(_) => "SequenceNode",
        Value::Object(_) => "MappingNode",
        _ => "ScalarNode",
    };
    FieldError::WrongKind(expected, found)
}

/// kyaml's `PathMatcher`: visit every node the path matches.
fn path_match(
    node: &mut Value,
    segments: &[String],
    visit: &mut dyn FnMut(&mut Value),
) -> std::result::Result<(), FieldError> {
    let Some((first, rest)) = segments.split_first() else {
        visit(node);
        return Ok(());
    };
    if let Ok(index) = first.parse::<usize>() {
        let Value::Array(items) = node else { return Err(wrong_kind("SequenceNode", node)) };
        let len = items.len();
        let item = items.get_mut(index).ok_or(FieldError::OutOfRange(index, len))?;
        return path_match(item, rest, visit);
    }
    if first == "*" || list_match(first).is_some() {
        let Value::Array(items) = node else { return Err(wrong_kind("SequenceNode", node)) };
        let wanted = list_match(first).map(|(key, pattern)| (key, Regex::new(pattern)));
        for item in items.iter_mut() {
            let selected = match &wanted {
                None => true,
                Some((_, Err(e))) => return Err(FieldError::BadRegex(first.clone(), e.clone())),
                Some(("", Ok(re))) => scalar_text(Some(item)).is_some_and(|t| re.is_match(t.trim())),
                Some((key, Ok(re))) => scalar_text(item.get(*key)).is_some_and(|t| re.is_match(t.trim())),
            };
            if selected {
                path_match(item, rest, visit)?;
            }
        }
        return Ok(());
    }
    match node {
        Value::Object(map) => match map.get_mut(first.as_str()) {
            Some(child) => path_match(child, rest, visit),
            None => Ok(()),
        },
        other => Err(wrong_kind("MappingNode", other)),
    }
}

/// kyaml's `LookupCreate`: find the field, making missing maps, list elements and the final
/// field (a placeholder of the value's kind) on the way.
fn lookup_create<'a>(
    node: &'a mut Value,
    segments: &[String],
    value: &Value,
) -> std::result::Result<&'a mut Value, FieldError> {
    let Some((first, rest)) = segments.split_first() else { return Ok(node) };
    let fresh = || match rest.first() {
        None => empty_like(value),
        Some(next) if list_match(next).is_some() || next.parse::<usize>().is_ok() => Value::Array(Vec::new()),
        Some(_) => Value::Object(Map::new()),
    };
    if node.is_null() {
        *node = if list_match(first).is_some() || first.parse::<usize>().is_ok() {
            Value::Array(Vec::new())
        } else {
            Value::Object(Map::new())
        };
    }
    let child = match (node, list_match(first)) {
        (Value::Array(items), Some((key, want))) => {
            let position = items.iter().position(|i| scalar_text(i.get(key)).as_deref() == Some(want));
            let index = position.unwrap_or_else(|| {
                let mut element = Map::new();
                element.insert(key.to_string(), Value::String(want.to_string()));
                items.push(Value::Object(element));
                items.len() - 1
            });
            &mut items[index]
        }
        (Value::Array(items), None) => {
            let index: usize = first.parse().map_err(|_| wrong_kind("MappingNode", &Value::Array(Vec::new())))?;
            if index == items.len() {
                items.push(fresh());
            }
            let len = items.len();
            items.get_mut(index).ok_or(FieldError::OutOfRange(index, len))?
        }
        (Value::Object(map), None) => {
            let child = map.entry(first.clone()).or_insert_with(fresh);
            if child.is_null() && !rest.is_empty() {
                *child = fresh();
            }
            child
        }
        (other, _) => {
            return Err(wrong_kind(if list_match(first).is_some() { "SequenceNode" } else { "MappingNode" }, other));
        }
    };
    lookup_create(child, rest, value)
}

/// A new, empty node of the same kind as `value`; `Null` stands for an untyped scalar.
fn empty_like(value: &Value) -> Value {
    match value {
        Value::Object(_) => Value::Object(Map::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        _ => Value::Null,
    }
}

/// kustomize's `setTargetValue`.
fn set_value(target: &mut Value, value: &Value, options: Option<&FieldOptions>) -> Result<()> {
    let mut value = value.clone();
    if let Some(options) = options.filter(|o| !o.delimiter.is_empty()) {
        let current = match &*target {
            Value::Null => String::new(),
            other => {
                scalar_text(Some(other)).ok_or_else(|| error("delimiter option can only be used with scalar nodes"))?
            }
        };
        let mut parts: Vec<String> = current.split(options.delimiter.as_str()).map(str::to_string).collect();
        let text = scalar_text(Some(&value)).unwrap_or_default();
        match usize::try_from(options.index) {
            Err(_) => parts.insert(0, text),
            Ok(i) if i >= parts.len() => parts.push(text),
            Ok(i) => parts[i] = text,
        }
        value = Value::String(parts.join(&options.delimiter));
    }
    match target {
        Value::Object(_) | Value::Array(_) => *target = value,
        scalar => *scalar = retyped(scalar, scalar_text(Some(&value)).unwrap_or_default())?,
    }
    Ok(())
}

/// A scalar target keeps its type and takes new text; an untyped (new) scalar reads its text
/// as YAML would.
fn retyped(target: &Value, text: String) -> Result<Value> {
    let cannot = |tag: &str| error(format!("yaml: cannot decode !!str `{text}` as a {tag}"));
    match target {
        Value::String(_) => Ok(Value::String(text)),
        Value::Number(_) => yaml_number(&text).ok_or_else(|| cannot("!!int")),
        Value::Bool(_) => yaml_bool(&text).map(Value::Bool).ok_or_else(|| cannot("!!bool")),
        _ => Ok(resolve_plain(text)),
    }
}

fn yaml_number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::from(i));
    }
    let looks_numeric = text.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && text.chars().any(|c| c.is_ascii_digit());
    looks_numeric.then(|| text.parse::<f64>().ok()).flatten().and_then(serde_json::Number::from_f64).map(Value::Number)
}

fn yaml_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// The type a plain YAML scalar with this text reads as.
fn resolve_plain(text: String) -> Value {
    if let Some(b) = yaml_bool(&text) {
        return Value::Bool(b);
    }
    if matches!(text.as_str(), "null" | "Null" | "NULL" | "~") {
        return Value::Null;
    }
    yaml_number(&text).unwrap_or(Value::String(text))
}

#[cfg(test)]
#[path = "replacements_tests.rs"]
mod tests;
