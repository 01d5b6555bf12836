//! vars: resolve `$(VAR)` references in the varReference field specs, as kustomize v5.6 does
//! at the very end of a build (after hash suffixes and the name-reference fix-up).
//!
//! **Binding.** Each var names an object (`objRef`: apiVersion or group/version, kind, name and
//! optionally namespace). kustomize binds the var to its object when the kustomization that
//! declares it is accumulated (after its transformers), among that kustomization's objects
//! only, matching every id an object has had: with a namespace (or for a cluster-scoped kind)
//! the namespace must match, without one any namespace does. Several matches are an error
//! then; no match is an error at the end. [`bind`] records the binding on the object itself, as
//! kustomize does (an internal annotation, removed when vars are resolved), so objects of the
//! same name that other kustomizations bring later cannot be confused with it.
//!
//! **Values.** At the end of the build, [`resolve`] reads each var's field
//! (`fieldRef.fieldPath`, default `metadata.name`, `.`-separated, `ports[0]` or `ports.0` for
//! list elements) from its bound object; a missing field is an error. A string, number or
//! boolean is a value; a map or list is not (references to it stay as written).
//!
//! **Expansion.** In every field the varReference specs name (lists are walked through; a
//! scalar in the middle of a path is an error), each string — a string field, the string
//! values of a map, the items of a list of strings — is expanded with Kubernetes' `$(VAR)`
//! syntax: `$$` is a literal `$`, unknown names are left as `$(NAME)`. A string that is exactly
//! one reference takes the var's type (`8080`, `true`); inside text a value is printed as Go's
//! `%v` prints it. Without any var nothing is expanded, not even `$$`.

use super::config::TransformConfig;
use crate::error::{FieldError, KustomizeError, Result};
use crate::fieldpath::split_path;
use crate::gvk::Gvk;
use crate::kustomization::{FieldSpec, Var};
use crate::resmap::ResMap;
use crate::resource::{ResId, kid};
use serde_json::Value;
use std::collections::BTreeMap;

const DEFAULT_FIELD_PATH: &str = "metadata.name";

/// Resolve the build's vars in the varReference field specs of `config`.
pub(crate) fn resolve(resources: &mut ResMap, vars: &[Var], config: &TransformConfig) -> Result<()> {
    resolve_with(resources, vars, &config.var_reference)
}

/// Resolve vars in the given field specs.
pub(crate) fn resolve_with(resources: &mut ResMap, vars: &[Var], field_specs: &[FieldSpec]) -> Result<()> {
    let values = var_values(resources, vars)?;
    if values.is_empty() {
        return Ok(());
    }
    let origins = var_origins(resources, vars);
    let paths: Vec<Vec<String>> = field_specs
        .iter()
        .map(|spec| split_path(&spec.path, '/').into_iter().filter(|p| !p.is_empty()).collect())
        .collect();
    for resource in resources.iter_mut() {
        let gvk = resource.gvk();
        let mut used = Vec::new();
        for (spec, path) in field_specs.iter().zip(&paths).filter(|(s, _)| applies_to(s, &gvk)) {
            let expanded = walk(&mut resource.obj, path, &mut |node| match may_expand(node) {
                true => {
                    used.extend(referenced(node, &values));
                    expand_node(node, &values)
                }
                false => Ok(()),
            });
            expanded.map_err(|source| KustomizeError::VarField {
                object: kid(&resource.current_id()),
                field: spec.path.clone(),
                source,
            })?;
        }
        for name in used {
            resource.influenced_from(origins.get(&name).and_then(Option::as_ref));
        }
    }
    Ok(())
}

/// Bind a var to the one object of `resources` (the declaring kustomization's objects) it
/// names, as kustomize's `MergeVars` does. Several matching objects are an error; with none,
/// nothing is recorded (and [`resolve`] reports the var).
pub(crate) fn bind(resources: &mut ResMap, var: &Var) -> Result<()> {
    let gvk = target_gvk(var);
    match matching(resources, var, &gvk).as_slice() {
        [] => Ok(()),
        [one] => {
            resources.get_mut(*one).var_names.push(var.name.clone());
            Ok(())
        }
        many => {
            let message =
                format!("found {} resId matches for var {} (unable to disambiguate)", many.len(), describe(var, &gvk));
            Err(KustomizeError::transform("vars", message))
        }
    }
}

/// Objects a var names, by any id they have had: with a namespace (or for a cluster-scoped
/// kind) the namespace must match too.
fn matching(resources: &ResMap, var: &Var, gvk: &Gvk) -> Vec<usize> {
    let target = ResId::new(gvk.clone(), &var.obj_ref.name, &var.obj_ref.namespace);
    let with_namespace = !target.namespace.is_empty() || crate::merge::is_cluster_scoped(gvk);
    resources.positions(|r| {
        r.all_ids()
            .any(|id| id.gvk == target.gvk && id.name == target.name && (!with_namespace || id.same_object(&target)))
    })
}

fn applies_to(spec: &FieldSpec, gvk: &Gvk) -> bool {
    (spec.kind.is_empty() || spec.kind == gvk.kind)
        && (spec.group.is_empty() || spec.group == gvk.group)
        && (spec.version.is_empty() || spec.version == gvk.version)
}

/// A var as kustomize prints it in errors: `{NAME Kind.version.group {fieldPath}}`.
fn describe(var: &Var, gvk: &Gvk) -> String {
    let or = |s: &str, d: &'static str| if s.is_empty() { d.to_string() } else { s.to_string() };
    format!(
        "{{{} {}.{}.{} {{{}}}}}",
        var.name,
        gvk.kind,
        or(&gvk.version, "[noVer]"),
        or(&gvk.group, "[noGrp]"),
        field_path(var)
    )
}

fn field_path(var: &Var) -> &str {
    var.field_ref.as_ref().map(|f| f.field_path.as_str()).filter(|p| !p.is_empty()).unwrap_or(DEFAULT_FIELD_PATH)
}

fn target_gvk(var: &Var) -> Gvk {
    let target = &var.obj_ref;
    if target.api_version.is_empty() {
        Gvk::new(&target.group, &target.version, &target.kind)
    } else {
        Gvk::from_api_version(&target.api_version, &target.kind)
    }
}

/// Each var's value, read from the object bound to it (only strings, numbers and booleans;
/// other vars are left out).
pub(crate) fn var_values(resources: &ResMap, vars: &[Var]) -> Result<BTreeMap<String, Value>> {
    let mut values = BTreeMap::new();
    for var in vars {
        let gvk = target_gvk(var);
        let resource = resources.iter().find(|r| r.var_names.contains(&var.name)).ok_or_else(|| {
            let message =
                format!("var '{}' cannot be mapped to a field in the set of known resources", describe(var, &gvk));
            KustomizeError::transform("vars", message)
        })?;
        let value = field_value(&resource.obj, field_path(var)).ok_or_else(|| {
            let message =
                format!("field specified in var '{}' not found in corresponding resource", describe(var, &gvk));
            KustomizeError::transform("vars", message)
        })?;
        if matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
            values.insert(var.name.clone(), value.clone());
        }
    }
    Ok(values)
}

/// The top-level entry of each var's object.
fn var_origins(resources: &ResMap, vars: &[Var]) -> BTreeMap<String, Option<std::sync::Arc<str>>> {
    let origin =
        |name: &str| resources.iter().find(|r| r.var_names.iter().any(|n| n == name)).and_then(|r| r.origin.clone());
    vars.iter().map(|var| (var.name.clone(), origin(&var.name))).collect()
}

/// The known vars a node about to be expanded refers to (`$(NAME)` in its strings).
/// Whether [`expand_node`] could change `node` or refuse it: a string holding a `$`, or a list
/// with an item that is not a string without one. Most fields the var references name hold
/// neither, and are left without a copy.
fn may_expand(node: &Value) -> bool {
    let dollar = |s: &str| memchr::memchr(b'$', s.as_bytes()).is_some();
    match node {
        Value::String(s) => dollar(s),
        Value::Object(map) => map.values().any(|v| matches!(v, Value::String(s) if dollar(s))),
        Value::Array(items) => items.iter().any(|i| !matches!(i, Value::String(s) if !dollar(s))),
        _ => false,
    }
}

fn referenced(node: &Value, values: &BTreeMap<String, Value>) -> Vec<String> {
    let strings: Vec<&str> = match node {
        Value::String(s) => vec![s.as_str()],
        Value::Object(map) => map.values().filter_map(Value::as_str).collect(),
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let refers = |name: &str| strings.iter().any(|s| s.contains(&format!("$({name})")));
    values.keys().filter(|name| refers(name)).cloned().collect()
}

/// kyaml's `GetFieldValue`: `.`-separated, with `name[0]` meaning `name.0`.
fn field_value<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut segments = Vec::new();
    for part in path.split('.') {
        match part.split_once('[').filter(|(_, rest)| rest.ends_with(']')) {
            Some((name, index)) if index[..index.len() - 1].parse::<usize>().is_ok() => {
                segments.push(name.to_string());
                segments.push(index[..index.len() - 1].to_string());
            }
            _ => segments.push(part.to_string()),
        }
    }
    super::replacements::lookup(obj, &segments)
}

/// kustomize's field-spec walk: lists are walked through, a missing or null field ends the
/// walk quietly, a scalar where the path goes on is an error.
fn walk(
    node: &mut Value,
    path: &[String],
    set: &mut dyn FnMut(&mut Value) -> std::result::Result<(), FieldError>,
) -> std::result::Result<(), FieldError> {
    let Some((first, rest)) = path.split_first() else { return set(node) };
    match node {
        Value::Null => Ok(()),
        Value::Array(items) => items.iter_mut().try_for_each(|item| walk(item, path, set)),
        Value::Object(map) => match map.get_mut(first.strip_suffix("[]").unwrap_or(first)) {
            Some(child) => walk(child, rest, set),
            None => Ok(()),
        },
        _ => Err(FieldError::NotAContainer),
    }
}

/// kustomize's refvar `set`: expand a string, the string values of a map, or the items of a
/// list (which must all be strings).
fn expand_node(node: &mut Value, values: &BTreeMap<String, Value>) -> std::result::Result<(), FieldError> {
    match node {
        Value::String(s) => *node = expand(s, values),
        Value::Object(map) => {
            for value in map.values_mut() {
                if let Value::String(s) = value {
                    *value = expand(s, values);
                }
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                let Value::String(s) = item else { return Err(FieldError::NotAString) };
                *item = expand(s, values);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Kubernetes' `$(VAR)` expansion as kustomize's refvar does it: a string that is exactly one
/// known reference becomes the var's value with its type; otherwise text.
pub(crate) fn expand(input: &str, values: &BTreeMap<String, Value>) -> Value {
    let bytes = input.as_bytes();
    let mut out = String::new();
    let (mut checkpoint, mut cursor) = (0usize, 0usize);
    while cursor < bytes.len() {
        if bytes[cursor] == b'$' && cursor + 1 < bytes.len() {
            out.push_str(&input[checkpoint..cursor]);
            let (read, name, advance) = read_variable(&input[cursor + 1..]);
            match name {
                Some(name) => {
                    let mapped = values.get(name);
                    if cursor == 0 && input.len() == name.len() + 3 {
                        return mapped.cloned().unwrap_or_else(|| Value::String(input.to_string()));
                    }
                    match mapped {
                        Some(value) => out.push_str(&go_display(value)),
                        None => out.push_str(&format!("$({name})")),
                    }
                }
                None => out.push_str(&read),
            }
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    out.push_str(&input[checkpoint.min(input.len())..]);
    Value::String(out)
}

/// After a `$`: `$` (an escaped `$`), `(NAME)` (a reference), or anything else (kept as
/// written). Returns the text to keep, the name when it is a reference, and how many bytes
/// after the `$` were consumed.
fn read_variable(after: &str) -> (String, Option<&str>, usize) {
    let first = after.chars().next().expect("the caller checked a byte follows");
    match first {
        '$' => ("$".into(), None, 1),
        '(' => match after[1..].find(')') {
            Some(end) => (String::new(), Some(&after[1..end + 1]), end + 2),
            None => ("$(".into(), None, 1),
        },
        other => (format!("${other}"), None, other.len_utf8()),
    }
}

/// A value as Go's `%v` prints it.
fn go_display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => super::hash::go_number(n),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "vars_tests.rs"]
mod tests;
