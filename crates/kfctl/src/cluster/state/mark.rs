//! The ownership mark: what kfctl-rs creates says so on the object itself.
//!
//! Helm labels what it installs `app.kubernetes.io/managed-by: Helm` and annotates it with
//! `meta.helm.sh/release-name`; kapp labels it `kapp.k14s.io/app`. kfctl-rs puts the label
//! [`MARK_LABEL`] (the install record's name) and the annotation [`MARK_ANNOTATION`] (the record's
//! `namespace/name`) on every object its apply **creates**, and keeps them on every later apply.
//! Upstream's own `app.kubernetes.io/managed-by` labels are left as they are.
//!
//! An object that already existed without the mark when kfctl-rs first applied it is
//! *pre-existing*: it is applied without the mark (so even `--force-conflicts`, which takes over
//! its fields, never makes it kfctl-rs's), the plan and the summaries say so, and prune,
//! uninstall and `--purge` never delete it. `kfctl-rs adopt` is the explicit way to take an
//! object over: it adds the mark.
//!
//! A delete needs the live object's mark *and* the UID the record holds
//! (`ownership`): someone who can only write the record cannot steer a delete onto an
//! object kfctl-rs did not create.
//!
//! The mark also settles a create whose answer was lost: a retry that finds the object with
//! the mark, after this run saw it absent, knows its own earlier request created it.
//!
//! Objects kfctl-rs created before it marked them read as pre-existing: they are kept, never
//! deleted, and named in every report; `kfctl-rs adopt` marks them.

use crate::cluster::record::{RECORD_NAME, RECORD_NAMESPACE};
use serde_json::Value;
use std::borrow::Cow;

/// The label on every object kfctl-rs created; its value is the install record's name.
pub const MARK_LABEL: &str = "kfctl-rs.io/install";
/// The annotation on every object kfctl-rs created: the install record, `namespace/name`.
pub const MARK_ANNOTATION: &str = "kfctl-rs.io/install-record";

/// The annotation's value: the install record this installation keeps.
fn record_reference() -> String {
    format!("{RECORD_NAMESPACE}/{RECORD_NAME}")
}

/// Whether the live object carries kfctl-rs's mark (the label and the annotation, both naming
/// this installation's record).
pub(crate) fn carries_mark(live: &Value) -> bool {
    let label = live.pointer("/metadata/labels").and_then(|l| l.get(MARK_LABEL)).and_then(Value::as_str);
    let annotation = live.pointer("/metadata/annotations").and_then(|a| a.get(MARK_ANNOTATION)).and_then(Value::as_str);
    label == Some(RECORD_NAME) && annotation == Some(record_reference().as_str())
}

/// Who an object of the plan belongs to, from what the cluster holds under its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing there: kfctl-rs's apply creates it, marked.
    Absent,
    /// There, with kfctl-rs's mark.
    Ours,
    /// There without the mark: somebody else's, applied unmarked and never deleted.
    PreExisting,
}

impl Found {
    /// What the live object (if any) says.
    pub(crate) fn of(live: Option<&Value>) -> Found {
        match live {
            None => Found::Absent,
            Some(live) if carries_mark(live) => Found::Ours,
            Some(_) => Found::PreExisting,
        }
    }
}

/// The body to apply: the planned body with the mark, unless the object is pre-existing.
pub(crate) fn body_for(body: &Value, found: Found) -> Cow<'_, Value> {
    match found {
        Found::PreExisting => Cow::Borrowed(body),
        Found::Absent | Found::Ours => Cow::Owned(marked(body)),
    }
}

/// A copy of `body` carrying the mark.
pub(crate) fn marked(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        insert(metadata, "labels", MARK_LABEL, RECORD_NAME.into());
        insert(metadata, "annotations", MARK_ANNOTATION, record_reference());
    }
    body
}

/// Set `metadata.<map>.<key>`, making the map when it is missing or `null` (kustomize writes
/// `annotations: null` where a patch removed the last one).
fn insert(metadata: &mut serde_json::Map<String, Value>, map: &str, key: &str, value: String) {
    let entry = metadata.entry(map).or_insert(Value::Null);
    if !entry.is_object() {
        *entry = Value::Object(Default::default());
    }
    if let Some(map) = entry.as_object_mut() {
        map.insert(key.into(), Value::String(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_marked_body_reads_as_ours_and_keeps_upstream_labels() {
        let body = json!({"metadata": {"name": "a", "labels": {"app.kubernetes.io/managed-by": "kustomize"}}});
        let marked = marked(&body);
        assert!(carries_mark(&marked));
        assert_eq!(marked.pointer("/metadata/labels/app.kubernetes.io~1managed-by"), Some(&json!("kustomize")));
        assert_eq!(
            marked.pointer("/metadata/annotations/kfctl-rs.io~1install-record"),
            Some(&json!("kfctl-system/kfctl-rs-install"))
        );
        assert!(!carries_mark(&body));
    }

    #[test]
    fn found_tells_absent_ours_and_pre_existing_and_only_pre_existing_stays_unmarked() {
        let bare = json!({"metadata": {"name": "a"}});
        assert_eq!(Found::of(None), Found::Absent);
        assert_eq!(Found::of(Some(&marked(&bare))), Found::Ours);
        assert_eq!(Found::of(Some(&bare)), Found::PreExisting);
        assert!(carries_mark(&body_for(&bare, Found::Absent)));
        assert!(carries_mark(&body_for(&bare, Found::Ours)));
        assert!(!carries_mark(&body_for(&bare, Found::PreExisting)));
    }

    #[test]
    fn null_maps_are_made_into_maps_that_carry_the_mark() {
        let body = json!({"metadata": {"name": "a", "labels": null, "annotations": null}});
        assert!(carries_mark(&marked(&body)));
    }

    #[test]
    fn a_label_alone_or_another_record_is_not_the_mark() {
        let label_only = json!({"metadata": {"labels": {MARK_LABEL: RECORD_NAME}}});
        assert!(!carries_mark(&label_only));
        let other = json!({"metadata": {"labels": {MARK_LABEL: "other"}, "annotations": {MARK_ANNOTATION: "x/other"}}});
        assert!(!carries_mark(&other));
    }
}
