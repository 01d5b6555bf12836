//! The drift item of `kfctl-rs check`: every recorded object is still the one the install made
//! (its recorded UID), and the fields kfctl-rs applies still hold the values it applied.
//!
//! The record holds references only, never bodies (no Secret value may reach it), so what
//! kfctl-rs applied is rendered again: the command renders the record's profile and release
//! (or what its flags name) and hands the objects here with the meta that rendered them. A render
//! that is not the one installed (another release, profile, upstream digest or values digest)
//! would show its own differences as drift, so then fields are not compared and the item says
//! why and what to pass.
//!
//! The fields are compared by the server itself, as `kfctl-rs diff` does
//! ([`diff::diff_selected`]): each recorded object that exists with its recorded UID is applied
//! as `kfctl-rs` with `dryRun=All` and `force`, and the result compared with the live object.
//! Server-side apply changes only the fields its body sets, so what differs is exactly the set
//! of fields kfctl-rs applies whose live values are not the applied ones — whoever changed them
//! (`kubectl scale`, `kubectl edit`, an apply with another manager and `--force-conflicts`).
//! Defaults, status, and what controllers add (annotations, finalizers, fields kfctl-rs never
//! sets) merge as for a real apply and never show; fields a controller is meant to change on
//! objects kfctl-rs applies are the rows of [`CLUSTER_CHANGES`] (a workload's replicas when an
//! autoscaler scales it). Each drifted field names its path, the applied and the live value (a
//! Secret's redacted), and the managers that own it now ([`owners`]). The first [`SHOWN`]
//! objects are listed, each with its first [`FIELDS_SHOWN`] fields, then counts.

use super::owners::owners;
use super::{CONCURRENCY, Live, item, listed};
use crate::catalog::RenderedObject;
use crate::cluster::ClusterError;
use crate::cluster::api::ApiClient;
use crate::cluster::check::{Checked, Mark};
use crate::cluster::diff::{self, Action, DiffEntry, FieldChange};
use crate::cluster::object::ObjectRef;
use crate::cluster::preflight;
use crate::cluster::prune::identity;
use crate::cluster::record::{InstallMeta, InstallRecord, same_release};
use crate::cluster::redact::Redactor;
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Drifted objects listed before a count.
pub const SHOWN: usize = 10;
/// Drifted fields listed per object before a count.
pub const FIELDS_SHOWN: usize = 5;
/// Characters of a value shown in the text before `…`.
const VALUE_CHARS: usize = 60;

/// The objects the install applies, rendered again for the record's meta
/// ([`super::installed_meta`]), with the meta that rendered them; `Err` says why they could not
/// be (fields are then not compared). Rendered before the check runs: a render may fetch with a
/// blocking client, which must not run inside the async runtime.
pub type Rendered = Result<(Vec<RenderedObject>, InstallMeta), String>;

/// A field of recorded objects that the cluster changes by design: never drift.
struct ClusterChange {
    /// `group/Kind` of the objects.
    kinds: &'static [&'static str],
    /// The JSON pointer of the field.
    path: &'static str,
    /// When the cluster owns it.
    when: When,
}

enum When {
    /// A HorizontalPodAutoscaler targets the object.
    Autoscaled,
}

/// Every field the cluster changes on objects kfctl-rs applies.
const CLUSTER_CHANGES: &[ClusterChange] = &[ClusterChange {
    kinds: &["apps/Deployment", "apps/StatefulSet", "apps/ReplicaSet"],
    path: "/spec/replicas",
    when: When::Autoscaled,
}];

/// The field-level drift `check` found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// Recorded objects compared (present, with their recorded UID).
    pub compared: usize,
    /// How many have fields changed since the install.
    pub drifted: usize,
    /// The first [`SHOWN`] of them.
    pub objects: Vec<DriftedObject>,
}

/// One recorded object whose applied fields changed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftedObject {
    /// The object.
    #[serde(flatten)]
    pub object: ObjectRef,
    /// Its first [`FIELDS_SHOWN`] drifted fields.
    pub fields: Vec<DriftedField>,
    /// How many more drifted fields it has.
    #[serde(skip_serializing_if = "is_zero")]
    pub more_fields: usize,
    /// What the server said instead of fields (an immutable field differs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One field kfctl-rs applies whose live value is not the applied one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftedField {
    /// The field, a JSON pointer (`/spec/replicas`).
    pub path: String,
    /// What kfctl-rs applies (absent: it would remove the field).
    pub applied: Option<Value>,
    /// What the cluster holds (absent: someone removed it).
    pub live: Option<Value>,
    /// Who owns it now, from `managedFields` (empty: removed, or not told).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub managers: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Drift {
    /// The text lines under the item: one per shown field, then counts.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for o in &self.objects {
            if let Some(note) = &o.note {
                out.push(format!("{}: {note}", o.object));
            }
            for f in &o.fields {
                out.push(format!("{}: {}", o.object, f.describe()));
            }
            if o.more_fields > 0 {
                out.push(format!("{}: and {} more field(s)", o.object, o.more_fields));
            }
        }
        if self.drifted > self.objects.len() {
            out.push(format!("and {} more object(s)", self.drifted - self.objects.len()));
        }
        out
    }
}

impl DriftedField {
    fn describe(&self) -> String {
        let owned = match self.managers.as_slice() {
            [] => String::new(),
            managers => format!(" (now owned by {})", managers.join(", ")),
        };
        format!("{} applied {}, live {}{owned}", self.path, shown(self.applied.as_ref()), shown(self.live.as_ref()))
    }
}

fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else { return "absent".into() };
    let text = value.to_string();
    match text.char_indices().nth(VALUE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The drift item: replaced objects, then the fields of the others against the `rendered` objects.
pub(super) async fn drift(
    api: &ApiClient,
    record: &InstallRecord,
    lives: &[Live<'_>],
    rendered: &Rendered,
) -> Result<Checked, ClusterError> {
    let replaced: Vec<String> =
        lives.iter().filter(|l| is_replaced(l)).map(|l| l.entry.reference.to_string()).collect();
    let fields = fields(api, record, lives, rendered).await?;
    let upgrade = format!(
        "kfctl-rs upgrade --profile {} --version {} --force-conflicts",
        record.meta.profile, record.meta.upstream_version
    );
    Ok(judge(&replaced, fields, &upgrade))
}

fn is_replaced(l: &Live<'_>) -> bool {
    let live_uid = l.object.as_ref().and_then(|o| o.pointer("/metadata/uid")).and_then(Value::as_str);
    matches!((l.entry.uid.as_deref(), live_uid), (Some(recorded), Some(live)) if recorded != live)
}

/// `upgrade`: the command that applies the install's render again, taking fields back.
fn judge(replaced: &[String], fields: Result<Drift, String>, upgrade: &str) -> Checked {
    let mut found = Vec::new();
    let mut hints: Vec<String> = Vec::new();
    if !replaced.is_empty() {
        found.push(format!(
            "{} deleted and re-created since the install (another UID): {}",
            replaced.len(),
            listed(replaced)
        ));
        hints.push(
            "kfctl-rs never deletes an object it did not make; `kfctl-rs diff` shows what differs from the render"
                .to_string(),
        );
    }
    let drift = match fields {
        Ok(drift) => Some(drift),
        Err(why) => {
            found.push(format!("fields not compared: {why}"));
            hints.push(
                "give `check` the install's --profile, --version, -f and --set (or --objects) to compare fields".into(),
            );
            None
        }
    };
    if let Some(d) = drift.as_ref().filter(|d| d.drifted > 0) {
        let names: Vec<String> = d.objects.iter().map(|o| o.object.to_string()).collect();
        let more =
            if d.drifted > names.len() { format!(" and {} more", d.drifted - names.len()) } else { String::new() };
        found.push(format!(
            "{} of {} with fields changed since the install: {}{more}",
            d.drifted,
            d.compared,
            names.join(", ")
        ));
        hints.push(format!(
            "`{upgrade}` (with the install's -f and --set) applies the values kfctl-rs applied back over the \
             managers named (`kfctl-rs diff` shows each change); to keep a change, put it in the values \
             (-f/--set) and upgrade"
        ));
    }
    let mut checked = match found.is_empty() {
        true => {
            let compared = drift.as_ref().map_or(0, |d| d.compared);
            item("drift", Mark::Pass, format!("{compared} objects with their recorded UID and applied fields"), None)
        }
        false => item("drift", Mark::Warn, found.join("; "), Some(&hints.join("; "))),
    };
    checked.drift = drift;
    checked
}

/// The field-level drift of the recorded objects that exist with their recorded UID; `Err(why)`
/// when fields cannot be compared; a [`ClusterError`] only when the deadline ended a call.
async fn fields(
    api: &ApiClient,
    record: &InstallRecord,
    lives: &[Live<'_>],
    rendered: &Rendered,
) -> Result<Result<Drift, String>, ClusterError> {
    let (objects, meta) = match rendered {
        Ok(rendered) => rendered,
        Err(why) => return Ok(Err(format!("cannot render what was installed: {why}"))),
    };
    if let Some(why) = another_render(&record.meta, meta) {
        return Ok(Err(why));
    }
    let live: HashMap<_, &Value> = lives
        .iter()
        .filter(|l| !is_replaced(l))
        .filter_map(|l| Some((identity(&l.entry.reference), l.object.as_ref()?)))
        .collect();
    let api = api.clone().with_redactor(Redactor::from_docs(objects.iter().map(|o| &o.obj)));
    let entries = match diff::diff_selected(&api, objects, |r| live.contains_key(&identity(r)), CONCURRENCY).await {
        Ok(entries) => entries,
        Err(e @ ClusterError::NoAnswer { .. }) => return Err(e),
        Err(e) => return Ok(Err(format!("the server's dry run failed: {e}"))),
    };
    let autoscaled = autoscaled(&api, lives).await;
    let drifted: Vec<DriftedObject> = entries
        .iter()
        .filter_map(|e| drifted_object(e, live.get(&identity(&e.object)).copied(), &autoscaled))
        .collect();
    Ok(Ok(Drift {
        compared: entries.len(),
        drifted: drifted.len(),
        objects: drifted.into_iter().take(SHOWN).collect(),
    }))
}

/// Why `rendered` is not what `installed` says was installed, if it is not.
fn another_render(installed: &InstallMeta, rendered: &InstallMeta) -> Option<String> {
    if same_release(installed, rendered) && installed.upstream_digest == rendered.upstream_digest {
        return None;
    }
    let describe = |m: &InstallMeta| {
        format!(
            "{} (profile {}, upstream {}, values {})",
            m.upstream_version, m.profile, m.upstream_digest, m.values_digest
        )
    };
    Some(format!("the render is {}, the install was {}", describe(rendered), describe(installed)))
}

/// One diff entry as a drifted object, its cluster-owned fields left out; `None` when nothing
/// of it drifted.
fn drifted_object(
    e: &DiffEntry,
    live: Option<&Value>,
    autoscaled: &HashSet<(String, Option<String>, String)>,
) -> Option<DriftedObject> {
    let note = match e.action {
        Action::Change => None,
        Action::Replace | Action::Blocked => e.note.clone(),
        _ => return None,
    };
    let scaled = autoscaled.contains(&identity(&e.object));
    let fields: Vec<DriftedField> = e
        .changes
        .iter()
        .flat_map(refined)
        .filter(|c| !cluster_owned(&e.object, &c.path, scaled))
        .map(|c| DriftedField {
            managers: live.map(|l| owners(l, &c.path)).unwrap_or_default(),
            path: c.path,
            applied: c.after,
            live: c.before,
        })
        .collect();
    if fields.is_empty() && note.is_none() {
        return None;
    }
    let more_fields = fields.len().saturating_sub(FIELDS_SHOWN);
    Some(DriftedObject {
        object: e.object.clone(),
        fields: fields.into_iter().take(FIELDS_SHOWN).collect(),
        more_fields,
        note,
    })
}

/// A change of two lists of one length, item by item (`/spec/template/spec/containers/0/image`
/// rather than the whole list); other changes as they are.
fn refined(change: &FieldChange) -> Vec<FieldChange> {
    match (&change.before, &change.after) {
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            let mut items = Vec::new();
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff::compare(x, y, format!("{}/{i}", change.path), &mut items);
            }
            items.iter().flat_map(refined).collect()
        }
        _ => vec![change.clone()],
    }
}

fn cluster_owned(object: &ObjectRef, path: &str, autoscaled: bool) -> bool {
    CLUSTER_CHANGES.iter().any(|c| {
        c.path == path
            && c.kinds.contains(&object.group_kind().as_str())
            && match c.when {
                When::Autoscaled => autoscaled,
            }
    })
}

/// The objects a HorizontalPodAutoscaler targets: every one the cluster lists, or the recorded
/// ones when they cannot be listed.
async fn autoscaled(api: &ApiClient, lives: &[Live<'_>]) -> HashSet<(String, Option<String>, String)> {
    let path = preflight::path("autoscaling", "v2", "horizontalpodautoscalers", true);
    let listed = api.list(&path, None, None).await.ok();
    let items: Vec<Value> = match listed.as_ref().and_then(|l| l.get("items")).and_then(Value::as_array) {
        Some(items) => items.clone(),
        None => lives
            .iter()
            .filter(|l| l.entry.reference.is_kind("autoscaling", "HorizontalPodAutoscaler"))
            .filter_map(|l| l.object.clone())
            .collect(),
    };
    items.iter().filter_map(target_of).collect()
}

fn target_of(hpa: &Value) -> Option<(String, Option<String>, String)> {
    let target = hpa.pointer("/spec/scaleTargetRef")?;
    let r = ObjectRef {
        api_version: target.get("apiVersion").and_then(Value::as_str).unwrap_or("apps/v1").to_string(),
        kind: target.get("kind")?.as_str()?.to_string(),
        namespace: hpa.pointer("/metadata/namespace").and_then(Value::as_str).map(String::from),
        name: target.get("name")?.as_str()?.to_string(),
    };
    Some(identity(&r))
}

#[cfg(test)]
#[path = "drift_tests.rs"]
mod tests;
