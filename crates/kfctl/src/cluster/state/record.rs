//! The install record: what kfctl-rs installed, kept in the cluster itself.
//!
//! A labelled ConfigMap `kfctl-system/kfctl-rs-install` holds one JSON document: the upstream
//! version and digest, the profile, the values digest, the plan digest, the last wave reached
//! and the inventory of every object applied (its catalog component, as the render tagged it,
//! and whether kfctl-rs created it, found it already there, or adopted it: `kfctl-rs adopt` took
//! it over as part of a release another tool installed). A record written before the
//! inventory held components reads with `UNKNOWN_COMPONENT` for each entry. It is rewritten after each wave, so an interrupted install leaves an
//! accurate record; `status` reports from it and `uninstall` deletes its inventory.
//!
//! Objects a later render dropped but that hold data (CRDs, PVCs, Namespaces) move to `kept`;
//! `lastRun` says how the last run ended (operation, stage reached, error, when), so `status`
//! tells a failed or partial run from a healthy one.
//!
//! The record holds references only, never object bodies, so no Secret value reaches it. Its
//! content is deterministic (its one timestamp, `lastRun.at`, changes only with the outcome): an
//! unchanged re-run produces the same record and writes nothing.

use crate::cluster::object::ObjectRef;
use crate::cluster::prune::identity;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The namespace of the install record.
pub const RECORD_NAMESPACE: &str = "kfctl-system";
/// The name of the install record's ConfigMap.
pub const RECORD_NAME: &str = "kfctl-rs-install";
/// The ConfigMap key that holds the record's JSON.
pub const RECORD_KEY: &str = "record.json";
/// Labels on the record (and its namespace), for `kubectl get -l`.
pub(crate) const RECORD_LABELS: &[(&str, &str)] =
    &[("app.kubernetes.io/managed-by", "kfctl-rs"), ("kfctl-rs.io/record", "install")];

/// What was rendered: carried from the renderer into the record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallMeta {
    /// The profile rendered.
    pub profile: String,
    /// The upstream release the objects come from.
    pub upstream_version: String,
    /// The digest of the upstream tree the objects were rendered from.
    pub upstream_digest: String,
    /// The digest of the values the objects were rendered with (empty when none were known).
    pub values_digest: String,
    /// Upstream's notes on arriving at this release that a render cannot express (data to
    /// migrate by hand), from the release catalog; kept so `status` and a later reader see them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upgrade_notes: Vec<String>,
    /// Dependencies the cluster provides (`<name>.provided=true`): not installed by kfctl-rs,
    /// listed by `status`, their objects never pruned (see `cluster::provided`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provided: Vec<String>,
}

/// The record itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallRecord {
    /// What was rendered and installed.
    #[serde(flatten)]
    pub meta: InstallMeta,
    pub(crate) plan_digest: String,
    pub(crate) waves_total: usize,
    /// The last wave completed (0: none); `waves_total` means the install finished.
    pub(crate) waves_done: usize,
    pub(crate) last_wave: String,
    /// Every object of the install, in apply order.
    pub inventory: Vec<InventoryEntry>,
    /// Guarded objects (CRDs, PVCs, Namespaces) a later render dropped: kept, not part of the
    /// install any more, still deleted by `uninstall --purge`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<InventoryEntry>,
    /// How the last run that changed the record ended (install, upgrade, uninstall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    /// The release installed before the current one, when that install completed: what
    /// `kfctl-rs rollback` returns to. Set when a run starts from a completed, successful
    /// record of another release, profile or values; a retried failed run keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<InstallMeta>,
    /// Entries whose digest did not match when the record was read (added or changed by hand):
    /// left out of `inventory` and `kept`, reported, never acted on, not written back.
    #[serde(skip)]
    pub(crate) hand_edited: Vec<InventoryEntry>,
}

/// The outcome of a run: what `status` needs to tell a failed or partial run from a healthy one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastRun {
    /// `install`, `upgrade` or `uninstall`.
    pub operation: String,
    /// Whether it ended without error.
    pub succeeded: bool,
    /// The stage reached: the wave (or `preflight`, `prune`) it was in when it stopped.
    pub stage: String,
    /// The error it ended with, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The release the run started from, when it was another one (`upgrade from 26.03`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// How many objects the run applied (0 in older records).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub applied: usize,
    /// How many objects the run's plan holds (0 in older records).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub planned: usize,
    /// When this outcome was first recorded (RFC 3339); an identical outcome later keeps it, so
    /// an unchanged re-run writes nothing.
    pub(crate) at: String,
}

/// One applied object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InventoryEntry {
    /// Where the applied object lives.
    #[serde(flatten)]
    pub reference: ObjectRef,
    /// The catalog component the render tagged it with (`UNKNOWN_COMPONENT` in older records).
    #[serde(default = "unknown_component")]
    pub component: String,
    pub(crate) wave: usize,
    /// Whether kfctl-rs created the object (false: it existed before the install).
    pub created: bool,
    /// The object's UID when kfctl-rs last applied it (absent in older records): a live object
    /// with another UID was re-created by someone else and is not deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Whether `adopt` took it over: installed by another tool as part of the adopted release.
    /// Adopted objects are kfctl-rs's own for prune and uninstall, as created ones are.
    #[serde(default, skip_serializing_if = "is_false")]
    pub adopted: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl InventoryEntry {
    /// Whether the object belongs to the install (created by kfctl-rs, or adopted): a later
    /// render that drops it prunes it; otherwise it existed before and is only released.
    pub(crate) fn owned(&self) -> bool {
        self.created || self.adopted
    }
}

/// What an apply tells the record about one object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Noted<'a> {
    /// This run's request created it.
    pub created: bool,
    /// The live object carries kfctl-rs's mark ([`crate::cluster::mark`]).
    pub marked: bool,
    /// Its live UID.
    pub uid: Option<&'a str>,
}

/// The component of an inventory entry from a record that did not store one.
pub(crate) const UNKNOWN_COMPONENT: &str = "unknown";

fn unknown_component() -> String {
    UNKNOWN_COMPONENT.to_string()
}

/// The install record cannot be read or is invalid: the text says why.
#[derive(Debug, thiserror::Error)]
#[error(
    "configmap {RECORD_NAMESPACE}/{RECORD_NAME}: unreadable install record: {0}; kfctl-rs cannot tell what it installed from it: \
     move it aside (`kubectl -n {RECORD_NAMESPACE} get configmap {RECORD_NAME} -o yaml > record-backup.yaml && kubectl -n {RECORD_NAMESPACE} delete configmap {RECORD_NAME}`), \
     then take the platform over again with `kfctl-rs adopt --profile PROFILE --version VERSION`"
)]
pub struct RecordError(String);

impl InstallRecord {
    /// The record this run starts from: the previous one when it describes the same plan
    /// (waves reached stay reached), a fresh one otherwise; the inventory always carries over,
    /// so uninstall still finds objects an earlier plan applied.
    pub(crate) fn resume(
        previous: Option<InstallRecord>,
        meta: InstallMeta,
        plan_digest: &str,
        waves_total: usize,
    ) -> Self {
        let same_plan = previous.as_ref().is_some_and(|p| p.plan_digest == plan_digest);
        let (waves_done, last_wave) = match (&previous, same_plan) {
            (Some(p), true) => (p.waves_done, p.last_wave.clone()),
            _ => (0, String::new()),
        };
        let previous_release = previous.as_ref().and_then(|p| p.previous_for(&meta));
        InstallRecord {
            previous: previous_release,
            meta,
            plan_digest: plan_digest.to_string(),
            waves_total,
            waves_done,
            last_wave,
            kept: previous.as_ref().map(|p| p.kept.clone()).unwrap_or_default(),
            last_run: previous.as_ref().and_then(|p| p.last_run.clone()),
            hand_edited: previous.as_ref().map(|p| p.hand_edited.clone()).unwrap_or_default(),
            inventory: previous.map(|p| p.inventory).unwrap_or_default(),
        }
    }

    /// What a run of `next` starting from this record keeps as the release before it: this
    /// record's release when its last run completed and succeeded and `next` is another
    /// release, profile or values; else the one it kept already (a retried failed run), unless
    /// that is `next` itself (a rollback done).
    fn previous_for(&self, next: &InstallMeta) -> Option<InstallMeta> {
        let succeeded = self.last_run.as_ref().is_none_or(|r| r.succeeded);
        if self.is_complete() && succeeded && !same_release(&self.meta, next) {
            return Some(self.meta.clone());
        }
        self.previous.clone().filter(|p| !same_release(p, next))
    }

    /// Record how this run ended; an outcome equal to the recorded one (but for its time, and
    /// the release it started from when this run started from its own) keeps the recorded one,
    /// so a re-run that changed nothing writes nothing.
    pub(crate) fn finish(&mut self, outcome: LastRun) {
        let same = self.last_run.as_ref().is_some_and(|l| {
            let from = if outcome.from.is_none() { None } else { l.from.clone() };
            LastRun { at: outcome.at.clone(), from, ..l.clone() } == outcome
        });
        if !same {
            self.last_run = Some(outcome);
        }
    }

    /// Apply a prune: deleted and released entries leave the inventory, kept ones move to `kept`.
    pub(crate) fn pruned(&mut self, deleted: &[InventoryEntry], kept: &[InventoryEntry], released: &[InventoryEntry]) {
        let gone: Vec<_> = deleted.iter().chain(kept).chain(released).map(|e| identity(&e.reference)).collect();
        self.inventory.retain(|e| !gone.contains(&identity(&e.reference)));
        for entry in kept {
            if !self.kept.iter().any(|k| identity(&k.reference) == identity(&entry.reference)) {
                self.kept.push(entry.clone());
            }
        }
    }

    /// Note an applied object (with its live UID and whether it carries kfctl-rs's mark): the
    /// mark says kfctl-rs created it (in this run or an earlier one, whose record may be gone);
    /// an object without it is pre-existing, whatever an earlier entry said.
    pub(crate) fn note_applied(&mut self, reference: &ObjectRef, component: &str, wave: usize, applied: Noted<'_>) {
        let Noted { created, marked, uid } = applied;
        let id = identity(reference);
        let was_kept = self.kept.iter().position(|e| identity(&e.reference) == id).map(|i| self.kept.remove(i));
        if let Some(entry) = was_kept.filter(|_| !self.inventory.iter().any(|e| identity(&e.reference) == id)) {
            self.inventory.push(entry);
        }
        match self.inventory.iter_mut().find(|e| identity(&e.reference) == id) {
            Some(entry) => {
                entry.reference = reference.clone();
                entry.created = created || (marked && !entry.adopted);
                entry.wave = wave;
                entry.component = component.to_string();
                if uid.is_some() {
                    entry.uid = uid.map(String::from);
                }
            }
            None => self.inventory.push(InventoryEntry {
                reference: reference.clone(),
                component: component.to_string(),
                wave,
                created: created || marked,
                uid: uid.map(String::from),
                adopted: false,
            }),
        }
    }

    /// Note an object `adopt` took over (present, installed by another tool), with its live UID.
    pub(crate) fn note_adopted(&mut self, reference: &ObjectRef, component: &str, wave: usize, uid: Option<&str>) {
        self.note_applied(reference, component, wave, Noted { created: false, marked: false, uid });
        let id = identity(reference);
        if let Some(entry) = self.inventory.iter_mut().find(|e| identity(&e.reference) == id) {
            entry.adopted = !entry.created;
        }
    }

    /// Note a completed wave.
    pub(crate) fn reach(&mut self, wave: usize, name: &str) {
        if wave >= self.waves_done {
            self.waves_done = wave;
            self.last_wave = name.to_string();
        }
    }

    /// Whether every wave of the plan was applied.
    pub fn is_complete(&self) -> bool {
        self.waves_total > 0 && self.waves_done >= self.waves_total
    }

    /// The inventory in deletion order: latest wave first, reverse apply order within a wave.
    pub(crate) fn deletion_order(&self) -> Vec<&InventoryEntry> {
        let mut entries: Vec<(usize, &InventoryEntry)> = self.inventory.iter().enumerate().collect();
        entries.sort_by(|(ia, a), (ib, b)| b.wave.cmp(&a.wave).then(ib.cmp(ia)));
        entries.into_iter().map(|(_, e)| e).collect()
    }

    /// The ConfigMap that stores the record, each entry sealed with its digest.
    pub(crate) fn to_configmap(&self) -> Value {
        let mut doc = serde_json::to_value(self).unwrap_or_default();
        for list in ["inventory", "kept"] {
            for entry in doc.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                let digest = entry_digest(entry);
                entry[DIGEST_KEY] = json!(digest);
            }
        }
        doc[SEALED_KEY] = json!(true);
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": RECORD_NAME, "namespace": RECORD_NAMESPACE, "labels": labels()},
            "data": {RECORD_KEY: text},
        })
    }

    /// Read the record from its ConfigMap; entries of a sealed record whose digest does not
    /// match go to `InstallRecord::hand_edited`.
    pub fn from_configmap(configmap: &Value) -> Result<Self, RecordError> {
        let text = configmap
            .pointer(&format!("/data/{RECORD_KEY}"))
            .and_then(Value::as_str)
            .ok_or_else(|| RecordError(format!("no data key {RECORD_KEY}")))?;
        let limit = crate::input::MAX_INPUT_BYTES;
        if text.len() as u64 > limit {
            return Err(RecordError(format!(
                "{RECORD_KEY} is {} bytes, larger than the {} MiB limit; it was not written by kfctl-rs",
                text.len(),
                limit / (1024 * 1024)
            )));
        }
        let mut doc: Value = serde_json::from_str(text).map_err(|e| RecordError(e.to_string()))?;
        let sealed = doc.get(SEALED_KEY) == Some(&json!(true));
        let mut hand_edited = Vec::new();
        for list in ["inventory", "kept"] {
            let Some(entries) = doc.get_mut(list).and_then(Value::as_array_mut) else { continue };
            let (kept, edited): (Vec<Value>, Vec<Value>) = std::mem::take(entries).into_iter().partition(|entry| {
                let mut bare = entry.clone();
                let digest = bare.as_object_mut().and_then(|o| o.remove(DIGEST_KEY));
                !sealed || digest.as_ref().and_then(Value::as_str) == Some(entry_digest(&bare).as_str())
            });
            *entries = kept;
            hand_edited.extend(edited);
        }
        let mut record: InstallRecord = serde_json::from_value(doc).map_err(|e| RecordError(e.to_string()))?;
        if !sealed {
            // records before seals had no UIDs: any there were written by hand, and are not trusted
            record.inventory.iter_mut().chain(record.kept.iter_mut()).for_each(|e| e.uid = None);
        }
        record.hand_edited = hand_edited.into_iter().filter_map(|e| serde_json::from_value(e).ok()).collect();
        Ok(record)
    }
}

/// Whether two metas name the same release, profile and values.
pub(crate) fn same_release(a: &InstallMeta, b: &InstallMeta) -> bool {
    a.upstream_version == b.upstream_version && a.profile == b.profile && a.values_digest == b.values_digest
}

const SEALED_KEY: &str = "sealed";
const DIGEST_KEY: &str = "digest";

/// The digest that seals an entry: sha256 of its JSON without the digest, 16 hex digits. An
/// integrity check against hand edits, not a secret (see [`crate::cluster::ownership`]).
fn entry_digest(entry: &Value) -> String {
    use sha2::Digest as _;
    let mut bare = entry.clone();
    if let Some(o) = bare.as_object_mut() {
        o.remove(DIGEST_KEY);
    }
    let hash = sha2::Sha256::digest(format!("kfctl-rs record entry\n{bare}").as_bytes());
    hex::encode(&hash[..8])
}

/// The record labels as a JSON object.
pub(crate) fn labels() -> Value {
    Value::Object(RECORD_LABELS.iter().map(|(k, v)| ((*k).to_string(), json!(v))).collect())
}

/// The namespace that holds the record.
pub(crate) fn record_namespace() -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": RECORD_NAMESPACE, "labels": labels()}})
}

#[cfg(test)]
mod tests;
