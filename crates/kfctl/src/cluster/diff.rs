//! `diff`: what install would change, asked of the server itself.
//!
//! Each planned object is applied with `dryRun=All` (the server merges, defaults and runs
//! admission exactly as for a real apply, and persists nothing) and compared with the live
//! object. Volatile metadata (`managedFields`, `resourceVersion`, `generation`...) is ignored.
//! Values under a Secret's `data`/`stringData` are shown as `<redacted>`: a diff says that a
//! secret changed, never what it holds.

use super::ClusterError;
use super::api::{ApiClient, Target};
use super::discovery::Resolver;
use super::engine::scoped;
use super::object::ObjectRef;
use super::plan::{Plan, PlannedObject};
use super::redact::{REDACTED, Redactor, is_secret};
use crate::catalog::RenderedObject;
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

/// Metadata the server changes on every write; never part of a diff.
const VOLATILE_METADATA: &[&str] =
    &["managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink"];

/// What install would do to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Create,
    Change,
    Unchanged,
    /// The server cannot judge it yet (its CRD is not installed).
    Unknown,
}

/// One object's diff.
#[derive(Debug, Clone, Serialize)]
pub struct DiffEntry {
    #[serde(flatten)]
    pub object: ObjectRef,
    pub action: Action,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One changed field (JSON pointer), before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// Diff every object of the plan against the cluster.
pub async fn diff(
    objects: &[RenderedObject],
    target: &Target,
    concurrency: usize,
) -> Result<Vec<DiffEntry>, ClusterError> {
    let plan = Plan::build(objects)?;
    let api = ApiClient::connect(target).await?;
    let resolver = Resolver::new(api.clone());
    let redactor = Redactor::from_docs(objects.iter().map(|o| &o.obj));
    let results: Vec<Result<DiffEntry, ClusterError>> = futures::stream::iter(plan.objects())
        .map(|o| diff_one(&api, &resolver, &plan, o, &redactor))
        .buffered(concurrency.max(1))
        .collect()
        .await;
    results.into_iter().collect()
}

async fn diff_one(
    api: &ApiClient,
    resolver: &Resolver,
    plan: &Plan,
    object: &PlannedObject,
    redactor: &Redactor,
) -> Result<DiffEntry, ClusterError> {
    let r = &object.reference;
    let entry = |action, changes, note: Option<String>| DiffEntry { object: r.clone(), action, changes, note };
    let fail = |failure: super::retry::ApiFailure| {
        let mut failure = failure;
        failure.message = redactor.scrub(&failure.message);
        ClusterError::Refused { object: r.clone(), failure: Box::new(failure) }
    };
    let path = match resolver.resolve(&r.api_version, &r.kind).await {
        Ok(path) => path,
        Err(f) if f.is_no_kind_match() && plan.has_crd_for(&r.group_kind()) => {
            return Ok(entry(Action::Create, Vec::new(), Some("its CRD is not installed yet".into())));
        }
        Err(f) if f.is_no_kind_match() => {
            return Ok(entry(Action::Unknown, Vec::new(), Some(f.message)));
        }
        Err(f) => return Err(fail(f)),
    };
    let namespace = scoped(&path, r);
    let live = api.get(&path, namespace, &r.name).await.map_err(fail)?;
    let merged = api.apply(&path, namespace, &r.name, &object.body, false, true).await.map_err(fail)?.live;
    let Some(live) = live else {
        return Ok(entry(Action::Create, Vec::new(), None));
    };
    let mut changes = Vec::new();
    compare(&normalize(&live), &normalize(&merged), String::new(), &mut changes);
    if is_secret(&object.body) {
        redact_secret_changes(&mut changes);
    }
    let action = if changes.is_empty() { Action::Unchanged } else { Action::Change };
    Ok(entry(action, changes, None))
}

/// An object without volatile metadata.
pub fn normalize(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in VOLATILE_METADATA {
            meta.remove(*key);
        }
    }
    out
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Collect the leaf differences between `before` and `after` as JSON pointers.
pub fn compare(before: &Value, after: &Value, path: String, out: &mut Vec<FieldChange>) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let sub = format!("{path}/{}", escape(key));
                match b.get(key) {
                    Some(vb) => compare(va, vb, sub, out),
                    None => out.push(FieldChange { path: sub, before: Some(va.clone()), after: None }),
                }
            }
            for (key, vb) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                out.push(FieldChange {
                    path: format!("{path}/{}", escape(key)),
                    before: None,
                    after: Some(vb.clone()),
                });
            }
        }
        _ if before != after => {
            out.push(FieldChange { path, before: Some(before.clone()), after: Some(after.clone()) })
        }
        _ => {}
    }
}

fn redact_secret_changes(changes: &mut [FieldChange]) {
    let hidden = |v: &mut Option<Value>| {
        if let Some(value) = v {
            *value = Value::String(REDACTED.into());
        }
    };
    for change in changes.iter_mut().filter(|c| c.path.starts_with("/data") || c.path.starts_with("/stringData")) {
        hidden(&mut change.before);
        hidden(&mut change.after);
    }
}

/// `+ create`, `~ change` with its fields, nothing for unchanged objects.
pub fn render_text(entries: &[DiffEntry]) -> String {
    let mut out = String::new();
    for e in entries {
        let note = e.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
        match e.action {
            Action::Unchanged => {}
            Action::Create => out.push_str(&format!("+ {}{note}\n", e.object)),
            Action::Unknown => out.push_str(&format!("? {}{note}\n", e.object)),
            Action::Change => {
                out.push_str(&format!("~ {}{note}\n", e.object));
                for c in &e.changes {
                    let show = |v: &Option<Value>| v.as_ref().map_or("(none)".to_string(), Value::to_string);
                    out.push_str(&format!("    {}: {} -> {}\n", c.path, show(&c.before), show(&c.after)));
                }
            }
        }
    }
    let changed = entries.iter().filter(|e| e.action != Action::Unchanged).count();
    out.push_str(&format!("{changed} of {} objects would change\n", entries.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compare_lists_leaf_changes_as_pointers() {
        let before = json!({"metadata": {"labels": {"a/b": "1"}}, "spec": {"replicas": 1, "old": true}});
        let after = json!({"metadata": {"labels": {"a/b": "2"}}, "spec": {"replicas": 1, "new": 3}});
        let mut out = Vec::new();
        compare(&before, &after, String::new(), &mut out);
        let paths: Vec<&str> = out.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["/metadata/labels/a~1b", "/spec/old", "/spec/new"]);
    }

    #[test]
    fn volatile_metadata_is_ignored_and_secret_values_redacted() {
        let live =
            json!({"metadata": {"name": "s", "resourceVersion": "1", "managedFields": []}, "data": {"p": "b2xk"}});
        let merged = json!({"metadata": {"name": "s", "resourceVersion": "2"}, "data": {"p": "bmV3"}});
        let mut out = Vec::new();
        compare(&normalize(&live), &normalize(&merged), String::new(), &mut out);
        redact_secret_changes(&mut out);
        assert_eq!(
            out,
            vec![FieldChange { path: "/data/p".into(), before: Some(json!(REDACTED)), after: Some(json!(REDACTED)) }]
        );
        let entry = DiffEntry {
            object: ObjectRef { api_version: "v1".into(), kind: "Secret".into(), namespace: None, name: "s".into() },
            action: Action::Change,
            changes: out,
            note: None,
        };
        let text = render_text(&[entry]);
        assert!(!text.contains("b2xk") && !text.contains("bmV3") && text.contains("/data/p"), "{text}");
    }
}
