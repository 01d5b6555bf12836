//! `diff`: what install would change, asked of the server itself, as `kubectl diff` shows it.
//!
//! Each planned object is applied with `dryRun=All` and `force=true` — what `install
//! --force-conflicts` would leave (the server merges, defaults and runs admission exactly as
//! for a real apply, and persists nothing) — and compared with the live object. When that
//! changes something, a second dry run without `force` asks whether plain `install` may: the
//! fields another manager owns come back as conflicts, and are shown marked with that manager
//! (drift by `kubectl edit`, `kubectl patch`, Helm), never turned into an error. Objects whose
//! namespace or CRD does not exist yet cannot be judged by the server: they are shown as
//! "would create" with the planned body.
//!
//! An object whose change the API server refuses to patch (an immutable field, the table of
//! [`crate::cluster::immutable`]) is judged before any dry run and shown as "would replace" (delete,
//! wait until gone, create) with the field that forces it, or "cannot apply" for a PVC or CRD
//! (with what to do); a dry run's 422 saying a field is immutable is turned into the same.
//!
//! Each change prints as a unified YAML diff of the object (`unified`); volatile metadata
//! (`managedFields`, `resourceVersion`, `generation`...) is left out. A Secret's `data` and
//! `stringData` never show a value: each key reads `<redacted>`, and `<redacted, changed>` on
//! the new side when its value changes. Every failure message is scrubbed of secret values.

mod unified;

use crate::catalog::RenderedObject;
use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath, Target};
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::scoped;
use crate::cluster::immutable::{self, Remedy};
use crate::cluster::mark::{Found, body_for};
use crate::cluster::object::{ObjectRef, in_namespace};
use crate::cluster::plan::{Plan, PlannedObject};
use crate::cluster::redact::{REDACTED, Redactor, is_secret, redact_object};
use crate::cluster::retry::{ApiFailure, FieldConflict};
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;
pub(crate) use unified::unified;

/// Metadata the server changes on every write; never part of a diff.
const VOLATILE_METADATA: &[&str] =
    &["managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink"];

/// The note on an object that exists without kfctl-rs's mark.
pub(crate) const PREEXISTING_NOTE: &str = "existed before the install (no kfctl-rs mark): not kfctl-rs's; applied, never deleted; `kfctl-rs adopt` takes it over";

/// A changed Secret value, on the new side of a diff.
const REDACTED_CHANGED: &str = "<redacted, changed>";

/// What install would do to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// The object does not exist: install creates it.
    Create,
    /// The object exists and install changes it.
    Change,
    /// The object exists as rendered.
    Unchanged,
    /// The server cannot judge it and no planned CRD defines its kind.
    Unknown,
    /// An immutable field changes: delete, wait until gone, create ([`crate::cluster::immutable`]).
    Replace,
    /// An immutable field of a kind never replaced (a PVC, a CRD) changes: install stops.
    Blocked,
}

/// One object's diff.
#[derive(Debug, Clone, Serialize)]
pub struct DiffEntry {
    /// The planned object compared.
    #[serde(flatten)]
    pub object: ObjectRef,
    /// What install would do to it.
    pub action: Action,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) changes: Vec<FieldChange>,
    /// Fields another manager owns: plain `install` stops on them, `--force-conflicts` takes them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<Conflict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    /// The object exists without kfctl-rs's mark: somebody else's, which install applies but
    /// never deletes ([`crate::cluster::mark`]); `adopt` takes it over.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub preexisting: bool,
    /// The unified YAML diff (Secret values redacted); empty when unchanged.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) unified: String,
}

/// One changed field (JSON pointer), before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    pub(crate) path: String,
    pub(crate) before: Option<Value>,
    pub(crate) after: Option<Value>,
}

/// A field another field manager owns, with a different value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    pub(crate) field: String,
    pub(crate) manager: String,
}

impl From<FieldConflict> for Conflict {
    fn from(c: FieldConflict) -> Self {
        Conflict { field: c.field, manager: c.manager }
    }
}

/// [`diff_within`] the default `crate::cluster::status::VERB_TIMEOUT`.
pub async fn diff(
    objects: &[RenderedObject],
    target: &Target,
    concurrency: usize,
) -> Result<Vec<DiffEntry>, ClusterError> {
    diff_within(objects, target, concurrency, crate::cluster::status::VERB_TIMEOUT, None).await
}

/// Diff every object of the plan (only those in `namespace` when given:
/// [`ClusterError::NoObjectInNamespace`] when none is) against the cluster; every call over
/// within `timeout` (one deadline for the run), or [`ClusterError::NoAnswer`] saying what it
/// waited for.
pub async fn diff_within(
    objects: &[RenderedObject],
    target: &Target,
    concurrency: usize,
    timeout: std::time::Duration,
    namespace: Option<&str>,
) -> Result<Vec<DiffEntry>, ClusterError> {
    let redactor = Redactor::from_docs(objects.iter().map(|o| &o.obj));
    let plan = Plan::build(objects)?;
    let planned = in_namespace(plan.objects().map(|o| (&o.reference, o)), namespace, "the rendered objects")?;
    let api = ApiClient::connect(target).await?.within(timeout);
    diff_planned(&api.with_redactor(redactor), &plan, planned, concurrency).await
}

/// Diff every object of the plan against the cluster through `api`, a client already bounded
/// by the run's deadline (one connection for a run that also reads the record, as `upgrade --plan`).
pub(crate) async fn diff_with(
    api: &ApiClient,
    objects: &[RenderedObject],
    concurrency: usize,
) -> Result<Vec<DiffEntry>, ClusterError> {
    diff_selected(api, objects, |_| true, concurrency).await
}

/// [`diff_with`] for the objects `keep` selects (the plan is still built of them all, so it
/// knows the CRDs the install brings): the recorded ones, for `check`'s drift item.
pub(crate) async fn diff_selected(
    api: &ApiClient,
    objects: &[RenderedObject],
    keep: impl Fn(&ObjectRef) -> bool,
    concurrency: usize,
) -> Result<Vec<DiffEntry>, ClusterError> {
    let plan = Plan::build(objects)?;
    diff_planned(api, &plan, plan.objects().filter(|o| keep(&o.reference)).collect(), concurrency).await
}

/// Diff `planned`, objects of `plan` (which says which CRDs the install would bring).
async fn diff_planned(
    api: &ApiClient,
    plan: &Plan,
    planned: Vec<&PlannedObject>,
    concurrency: usize,
) -> Result<Vec<DiffEntry>, ClusterError> {
    let api = &api.clone();
    let resolver = Resolver::new(api.clone());
    let results: Vec<Result<DiffEntry, ClusterError>> = futures::stream::iter(planned)
        .map(|o| diff_one(api, &resolver, plan, o))
        .buffered(concurrency.max(1))
        .collect()
        .await;
    results.into_iter().collect()
}

/// A diff entry under construction.
fn entry(object: &PlannedObject, action: Action, note: Option<&str>) -> DiffEntry {
    DiffEntry {
        object: object.reference.clone(),
        action,
        changes: Vec::new(),
        conflicts: Vec::new(),
        note: note.map(str::to_string),
        preexisting: false,
        unified: String::new(),
    }
}

/// An object the server cannot judge yet, shown as created from its planned body.
fn would_create(object: &PlannedObject, why: &str) -> DiffEntry {
    let mut e = entry(object, Action::Create, Some(why));
    e.unified = unified("", &yaml_of(&shown(&object.body)), "/dev/null", &name_of(&object.reference));
    e
}

async fn diff_one(
    api: &ApiClient,
    resolver: &Resolver,
    plan: &Plan,
    object: &PlannedObject,
) -> Result<DiffEntry, ClusterError> {
    let r = &object.reference;
    let refused = |failure: ApiFailure| {
        ClusterError::settle(api, format!("diffing {r}"), failure, |failure| ClusterError::Refused {
            object: r.clone(),
            failure: Box::new(failure),
        })
    };
    let path = match resolver.resolve(&r.api_version, &r.kind).await {
        Ok(path) => path,
        Err(f) if f.is_no_kind_match() && plan.has_crd_for(&r.group_kind()) => {
            return Ok(would_create(object, "its CRD is not installed yet"));
        }
        Err(f) if f.is_no_kind_match() => return Ok(entry(object, Action::Unknown, Some(&f.message))),
        Err(f) => return Err(refused(f)),
    };
    let live = api.get(&path, scoped(&path, r), &r.name).await.map_err(refused)?;
    if let Some(forced) = live.as_ref().and_then(|live| immutable::forced(r, &object.body, live)) {
        return Ok(replaced(object, live.as_ref(), forced.remedy, forced.describe()));
    }
    let found = Found::of(live.as_ref());
    let body = body_for(&object.body, found);
    let merged = match dry_run(api, &path, r, &body, true).await {
        Ok(merged) => merged,
        Err(f) if f.is_missing_namespace() => {
            return Ok(would_create(object, "its namespace is not created yet"));
        }
        // a refusal the table did not foresee: replaced all the same where the kind allows it
        Err(f) if immutable::is_immutable_refusal(&f) => {
            let remedy = immutable::replaceable_kind(r).unwrap_or(Remedy::Stop);
            let field = immutable::refused_field(&f);
            let why = match remedy {
                Remedy::Stop => format!("{field} cannot change in place: {}", f.message),
                _ => format!("{field} is immutable: delete, wait until gone, create"),
            };
            return Ok(replaced(object, live.as_ref(), remedy, why));
        }
        Err(f) => return Err(refused(f)),
    };
    let Some(live) = live else {
        let mut e = entry(object, Action::Create, None);
        e.unified = unified("", &yaml_of(&shown(&normalize(&merged))), "/dev/null", &name_of(r));
        return Ok(e);
    };
    let (before, after) = (normalize(&live), normalize(&merged));
    let mut e = entry(object, Action::Unchanged, (found == Found::PreExisting).then_some(PREEXISTING_NOTE));
    e.preexisting = found == Found::PreExisting;
    compare(&before, &after, String::new(), &mut e.changes);
    if e.changes.is_empty() {
        return Ok(e);
    }
    e.action = Action::Change;
    e.conflicts = match dry_run(api, &path, r, &body, false).await {
        Err(f) if !f.conflicts.is_empty() => f.conflicts.into_iter().map(Conflict::from).collect(),
        _ => Vec::new(),
    };
    let (before, after) = if is_secret(&object.body) { redact_pair(&before, &after) } else { (before, after) };
    if is_secret(&object.body) {
        redact_secret_changes(&mut e.changes);
    }
    e.unified = unified(
        &yaml_of(&before),
        &yaml_of(&after),
        &format!("live/{}", name_of(r)),
        &format!("merged/{}", name_of(r)),
    );
    Ok(e)
}

/// An object that cannot be patched: replaced (or blocked), shown as live → planned body.
fn replaced(object: &PlannedObject, live: Option<&Value>, remedy: Remedy, why: String) -> DiffEntry {
    let action = if remedy == Remedy::Stop { Action::Blocked } else { Action::Replace };
    let mut e = entry(object, action, Some(&why));
    let r = &object.reference;
    let (before, after) = (live.map(normalize).unwrap_or(Value::Null), normalize(&object.body));
    let (before, after) = if is_secret(&object.body) { redact_pair(&before, &after) } else { (before, after) };
    e.unified = unified(
        &yaml_of(&before),
        &yaml_of(&after),
        &format!("live/{}", name_of(r)),
        &format!("replaced/{}", name_of(r)),
    );
    e
}

/// A server-side dry-run apply of `body` (`force`: as `install --force-conflicts`); the merged
/// object.
async fn dry_run(
    api: &ApiClient,
    path: &ResourcePath,
    r: &ObjectRef,
    body: &Value,
    force: bool,
) -> Result<Value, ApiFailure> {
    Ok(api.apply(path, scoped(path, r), &r.name, body, force, true).await?.live)
}

/// `apps.v1.Deployment.kf.web`, as kubectl diff names its files.
fn name_of(r: &ObjectRef) -> String {
    let version = r.api_version.replace('/', ".");
    match &r.namespace {
        Some(ns) => format!("{version}.{}.{ns}.{}", r.kind, r.name),
        None => format!("{version}.{}.{}", r.kind, r.name),
    }
}

fn yaml_of(doc: &Value) -> String {
    kfctl_yaml::to_yaml(doc)
}

/// What may be shown of an object: Secret values redacted.
fn shown(doc: &Value) -> Value {
    redact_object(doc)
}

/// A Secret's two sides with values redacted, changed keys told apart on the new side.
fn redact_pair(before: &Value, after: &Value) -> (Value, Value) {
    let mut after_shown = redact_object(after);
    for field in ["data", "stringData"] {
        let old = before.get(field).and_then(Value::as_object);
        if let Some(map) = after_shown.get_mut(field).and_then(Value::as_object_mut) {
            for (key, value) in map.iter_mut() {
                let unchanged = old.and_then(|o| o.get(key)) == after.get(field).and_then(|m| m.get(key));
                if !unchanged {
                    *value = Value::String(REDACTED_CHANGED.into());
                }
            }
        }
    }
    (redact_object(before), after_shown)
}

/// An object without volatile metadata.
pub(crate) fn normalize(object: &Value) -> Value {
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
pub(crate) fn compare(before: &Value, after: &Value, path: String, out: &mut Vec<FieldChange>) {
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

fn redact_secret_changes(changes: &mut Vec<FieldChange>) {
    let hidden = |v: &mut Option<Value>| {
        if let Some(value) = v {
            *value = Value::String(REDACTED.into());
        }
    };
    changes.retain(|c| !c.path.starts_with("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"));
    for change in changes.iter_mut().filter(|c| c.path.starts_with("/data") || c.path.starts_with("/stringData")) {
        hidden(&mut change.before);
        hidden(&mut change.after);
    }
}

/// A unified YAML diff per changed or created object, its conflicts marked with their
/// manager, then a count; nothing for unchanged objects.
pub fn render_text(entries: &[DiffEntry]) -> String {
    let mut out = String::new();
    for e in entries.iter().filter(|e| e.action != Action::Unchanged) {
        let verb = match e.action {
            Action::Create => "would create",
            Action::Change => "would change",
            Action::Replace => "would replace",
            Action::Blocked => "cannot apply",
            _ => "cannot tell",
        };
        out.push_str(&format!("# {} {verb}", e.object));
        if let Some(note) = &e.note {
            out.push_str(&format!(" ({note})"));
        }
        out.push('\n');
        for c in &e.conflicts {
            out.push_str(&format!(
                "# conflict: {} is owned by field manager \"{}\"; install stops on it, install --force-conflicts takes it over\n",
                c.field, c.manager
            ));
        }
        out.push_str(&e.unified);
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
        let live = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "resourceVersion": "1", "managedFields": []}, "data": {"p": "b2xk", "q": "c2FtZQ=="}});
        let merged = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "resourceVersion": "2"}, "data": {"p": "bmV3", "q": "c2FtZQ=="}});
        let mut out = Vec::new();
        compare(&normalize(&live), &normalize(&merged), String::new(), &mut out);
        redact_secret_changes(&mut out);
        assert_eq!(
            out,
            vec![FieldChange { path: "/data/p".into(), before: Some(json!(REDACTED)), after: Some(json!(REDACTED)) }]
        );
        let (before, after) = redact_pair(&normalize(&live), &normalize(&merged));
        let text = unified(&yaml_of(&before), &yaml_of(&after), "live", "merged");
        assert!(text.contains("-  p: <redacted>\n+  p: <redacted, changed>\n"), "{text}");
        assert!(!text.contains("b2xk") && !text.contains("bmV3") && !text.contains("c2FtZQ"), "{text}");
    }

    #[test]
    fn conflicts_are_marked_with_their_manager() {
        let entry = DiffEntry {
            object: ObjectRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some("kf".into()),
                name: "web".into(),
            },
            action: Action::Change,
            changes: Vec::new(),
            conflicts: vec![Conflict { field: ".spec.replicas".into(), manager: "kubectl-patch".into() }],
            note: None,
            preexisting: false,
            unified: "--- a\n+++ b\n@@ -1,1 +1,1 @@\n-  replicas: 3\n+  replicas: 1\n".into(),
        };
        let text = render_text(&[entry]);
        assert!(text.starts_with("# Deployment kf/web would change\n# conflict: .spec.replicas is owned by field manager \"kubectl-patch\""), "{text}");
        assert!(text.ends_with("1 of 1 objects would change\n"), "{text}");
    }
}
