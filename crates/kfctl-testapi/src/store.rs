//! The object store: every object the test API server holds, with its bookkeeping.
//!
//! Objects are keyed by [`ObjectKey`] (group, resource, namespace, name). The version is not
//! part of the key: like upstream's storage, one object is served at every version of its
//! resource (here without conversion: the `apiVersion` is rewritten, the body is not).
//!
//! Every write goes through [`Store::write`], which does what the real registry does:
//! stamps `uid`, `creationTimestamp` and `generation` on create, keeps them on update, bumps
//! `generation` only when something outside `metadata` and `status` changed, and bumps
//! `resourceVersion` (one global counter, like an etcd revision) only when the object changed
//! at all, so an identical re-apply is a true no-op. Each change is appended to a bounded event
//! history that watches replay; a watch older than the history gets `410 Gone` as upstream.
//! Deleting an object with finalizers only marks it (`deletionTimestamp`); the write that
//! empties its finalizers removes it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use serde_json::{Value, json};

/// Identity of a stored object (no version: one object serves every version).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// API group, empty for core.
    pub group: String,
    /// Plural resource name.
    pub resource: String,
    /// Namespace for namespaced resources.
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
}

impl ObjectKey {
    /// A key from parts.
    pub fn new(group: &str, resource: &str, namespace: Option<&str>, name: &str) -> Self {
        ObjectKey {
            group: group.into(),
            resource: resource.into(),
            namespace: namespace.map(String::from),
            name: name.into(),
        }
    }
}

/// A stored object with the server-side bookkeeping that is not part of its JSON.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// The object as served.
    pub object: Value,
    /// When it was created.
    pub created: Instant,
    /// When its generation last changed (status rules count delays from here).
    pub generation_changed: Instant,
    /// Which one-shot reconcile steps already ran for it (see `reconcile.rs`).
    pub marks: BTreeSet<String>,
}

/// Kind of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    /// Object created.
    Added,
    /// Object changed.
    Modified,
    /// Object removed.
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, ...).
    pub(crate) fn wire(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as watches replay it.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    /// The revision of the change.
    pub revision: u64,
    /// Added, modified or deleted.
    pub kind: EventType,
    /// Which object.
    pub key: ObjectKey,
    /// The object after the change (before removal for deletes).
    pub object: Value,
}

/// State of a namespace for admission of namespaced writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NamespaceState {
    /// No such namespace.
    Missing,
    /// Exists and accepts content.
    Active,
    /// Being deleted: refuses new content.
    Terminating,
}

/// Result of a write.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Written {
    /// The object as stored (or as it would be, for dry runs; or as removed).
    pub object: Value,
    /// Whether anything changed.
    pub changed: bool,
    /// Whether the object was created by this write.
    pub created: bool,
    /// Whether the write completed a pending deletion (finalizers emptied).
    pub removed: bool,
}

/// The in-memory store.
#[derive(Debug)]
pub(crate) struct Store {
    objects: BTreeMap<ObjectKey, Entry>,
    revision: u64,
    uid_prefix: u32,
    next_uid: u64,
    history: VecDeque<Event>,
    history_limit: usize,
    /// (group, resource, revision): the revision of each resource's last change, so a
    /// controller step can tell whether what it reads changed ([`Store::changed_since`]).
    changed: Vec<(String, String, u64)>,
}

/// The object without `metadata` and `status`: what `generation` tracks.
fn spec_part(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("metadata");
        map.remove("status");
        map.remove("apiVersion");
    }
    copy
}

/// The object without the fields the store itself bumps.
fn comparable(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
        meta.remove("generation");
    }
    copy
}

impl Store {
    /// An empty store; `history_limit` bounds the watch replay buffer.
    pub(crate) fn new(history_limit: usize) -> Self {
        let mut seed = [0u8; 4];
        let _ = getrandom::fill(&mut seed);
        Store {
            objects: BTreeMap::new(),
            revision: 1000,
            uid_prefix: u32::from_le_bytes(seed),
            next_uid: 1,
            history: VecDeque::new(),
            history_limit,
            changed: Vec::new(),
        }
    }

    /// Current global revision (the `resourceVersion` of lists).
    pub(crate) fn revision(&self) -> u64 {
        self.revision
    }

    /// One object.
    pub(crate) fn get(&self, key: &ObjectKey) -> Option<&Entry> {
        self.objects.get(key)
    }

    /// Mutable bookkeeping of one object (marks); never change `object` through this.
    pub(crate) fn entry_mut(&mut self, key: &ObjectKey) -> Option<&mut Entry> {
        self.objects.get_mut(key)
    }

    /// Every object in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &Entry)> {
        self.objects.iter()
    }

    /// Objects of one resource, optionally in one namespace (a range scan of the ordered map).
    pub(crate) fn list(&self, group: &str, resource: &str, namespace: Option<&str>) -> Vec<(&ObjectKey, &Entry)> {
        let start = ObjectKey {
            group: group.into(),
            resource: resource.into(),
            namespace: namespace.map(String::from),
            name: String::new(),
        };
        self.objects
            .range(start..)
            .take_while(|(k, _)| k.group == group && k.resource == resource)
            .take_while(|(k, _)| namespace.is_none() || k.namespace.as_deref() == namespace)
            .collect()
    }

    /// Whether any change after `revision` satisfies `predicate` (true when history is too short to tell).
    pub(crate) fn any_change_after(&self, revision: u64, predicate: impl Fn(&Event) -> bool) -> bool {
        if self.history.front().is_some_and(|e| e.revision > revision + 1) {
            return true;
        }
        self.history.iter().rev().take_while(|e| e.revision > revision).any(predicate)
    }

    /// Whether a namespace exists and accepts content.
    pub(crate) fn namespace_state(&self, namespace: &str) -> NamespaceState {
        match self.objects.get(&ObjectKey::new("", "namespaces", None, namespace)) {
            None => NamespaceState::Missing,
            Some(e) if e.object["metadata"].get("deletionTimestamp").is_some() => NamespaceState::Terminating,
            Some(_) => NamespaceState::Active,
        }
    }

    fn new_uid(&mut self) -> String {
        let n = self.next_uid;
        self.next_uid += 1;
        format!("{:08x}-{:04x}-4000-8000-{:012x}", self.uid_prefix, (n >> 48) & 0xffff, n & 0xffff_ffff_ffff)
    }

    /// Stamp server metadata on a candidate: identity from the key, uid/creation/generation from
    /// the live object (or fresh), generation bumped when the spec part changed.
    fn stamp(&mut self, key: &ObjectKey, candidate: Value, timestamp: &str) -> (Value, bool) {
        let mut object = candidate;
        if !object["metadata"].is_object() {
            object["metadata"] = json!({});
        }
        let live = self.objects.get(key).map(|e| e.object.clone());
        let meta = object["metadata"].as_object_mut().expect("metadata is a map");
        meta.insert("name".into(), json!(key.name));
        match &key.namespace {
            Some(ns) => meta.insert("namespace".into(), json!(ns)),
            None => meta.remove("namespace"),
        };
        let mut generation_bumped = false;
        match &live {
            Some(live) => {
                for field in ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"] {
                    match live["metadata"].get(field) {
                        Some(v) => meta.insert(field.into(), v.clone()),
                        None => meta.remove(field),
                    };
                }
                let generation = live["metadata"]["generation"].as_i64().unwrap_or(1);
                generation_bumped = spec_part(live) != spec_part(&object);
                object["metadata"]["generation"] = json!(generation + i64::from(generation_bumped));
            }
            None => {
                let uid = self.new_uid();
                let meta = object["metadata"].as_object_mut().expect("metadata is a map");
                meta.insert("uid".into(), json!(uid));
                meta.insert("creationTimestamp".into(), json!(timestamp));
                meta.insert("generation".into(), json!(1));
                meta.remove("deletionTimestamp");
            }
        }
        (object, generation_bumped)
    }

    /// Write `candidate` under `key` (create or update). Unchanged objects are not rewritten.
    /// With `dry_run` the store is left as it was and the would-be object is returned.
    pub(crate) fn write(
        &mut self,
        key: &ObjectKey,
        candidate: Value,
        now: Instant,
        timestamp: &str,
        dry_run: bool,
    ) -> Written {
        let live = self.objects.get(key).map(|e| e.object.clone());
        let (mut object, generation_bumped) = self.stamp(key, candidate, timestamp);
        if let Some(live) = &live
            && comparable(live) == comparable(&object)
        {
            return Written { object: live.clone(), changed: false, created: false, removed: false };
        }
        let revision = self.revision + 1;
        object["metadata"]["resourceVersion"] = json!(revision.to_string());
        let unheld = |v: &Value| v.as_array().is_none_or(Vec::is_empty);
        let namespace = key.group.is_empty() && key.resource == "namespaces";
        let finished = object["metadata"].get("deletionTimestamp").is_some()
            && unheld(&object["metadata"]["finalizers"])
            && (!namespace || unheld(&object["spec"]["finalizers"]));
        let created = live.is_none();
        if dry_run {
            return Written { object, changed: true, created, removed: finished };
        }
        if finished {
            if let Some(entry) = self.objects.get_mut(key) {
                entry.object = object.clone();
            }
            let object = self.remove(key).unwrap_or(object);
            return Written { object, changed: true, created, removed: true };
        }
        self.revision = revision;
        let kind = if created { EventType::Added } else { EventType::Modified };
        self.record(kind, key, &object);
        match self.objects.get_mut(key) {
            Some(entry) => {
                entry.object = object.clone();
                if generation_bumped {
                    entry.generation_changed = now;
                }
            }
            None => {
                let entry = self.new_entry(object.clone(), now);
                self.objects.insert(key.clone(), entry);
            }
        }
        Written { object, changed: true, created, removed: false }
    }

    fn new_entry(&self, object: Value, now: Instant) -> Entry {
        Entry { object, created: now, generation_changed: now, marks: BTreeSet::new() }
    }

    /// Whether an object of `group`/`resource` changed (created, updated, deleted) after `revision`.
    pub(crate) fn changed_since(&self, group: &str, resource: &str, revision: u64) -> bool {
        self.changed.iter().any(|(g, r, at)| g == group && r == resource && *at > revision)
    }

    fn record(&mut self, kind: EventType, key: &ObjectKey, object: &Value) {
        match self.changed.iter_mut().find(|(g, r, _)| *g == key.group && *r == key.resource) {
            Some(entry) => entry.2 = self.revision,
            None => self.changed.push((key.group.clone(), key.resource.clone(), self.revision)),
        }
        self.history.push_back(Event { revision: self.revision, kind, key: key.clone(), object: object.clone() });
        while self.history.len() > self.history_limit {
            self.history.pop_front();
        }
    }

    /// Remove an object now (no finalizer check); records a DELETED event.
    pub(crate) fn remove(&mut self, key: &ObjectKey) -> Option<Value> {
        let mut object = self.objects.remove(key)?.object;
        self.revision += 1;
        object["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        self.record(EventType::Deleted, key, &object);
        Some(object)
    }

    /// Delete as upstream does: objects with finalizers (for namespaces, also `spec.finalizers`,
    /// which the namespace controller honors) are only marked with `deletionTimestamp` (a
    /// namespace also turns `Terminating`) and returned with `removed == false`; others are removed.
    pub(crate) fn delete(&mut self, key: &ObjectKey, timestamp: &str, dry_run: bool) -> Option<Written> {
        let live = self.objects.get(key)?.object.clone();
        let pending = |v: &Value| v.as_array().is_some_and(|f| !f.is_empty());
        let namespace = key.group.is_empty() && key.resource == "namespaces";
        let held = pending(&live["metadata"]["finalizers"]) || (namespace && pending(&live["spec"]["finalizers"]));
        if !held {
            if dry_run {
                return Some(Written { object: live, changed: true, created: false, removed: true });
            }
            let object = self.remove(key)?;
            return Some(Written { object, changed: true, created: false, removed: true });
        }
        if live["metadata"].get("deletionTimestamp").is_some() {
            return Some(Written { object: live, changed: false, created: false, removed: false });
        }
        let mut object = live;
        object["metadata"]["deletionTimestamp"] = json!(timestamp);
        object["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        if namespace {
            object["status"]["phase"] = json!("Terminating");
        }
        let revision = self.revision + 1;
        object["metadata"]["resourceVersion"] = json!(revision.to_string());
        if !dry_run {
            self.revision = revision;
            self.record(EventType::Modified, key, &object);
            self.objects.get_mut(key)?.object = object.clone();
        }
        Some(Written { object, changed: true, created: false, removed: false })
    }

    /// Events after `revision`, or `None` when the history no longer reaches back that far.
    pub(crate) fn events_after(&self, revision: u64) -> Option<Vec<Event>> {
        let oldest = self.history.front().map(|e| e.revision).unwrap_or(self.revision + 1);
        if revision + 1 < oldest && revision < self.revision && self.history.len() >= self.history_limit {
            return None;
        }
        Some(self.history.iter().filter(|e| e.revision > revision).cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(data: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": data}})
    }

    fn key() -> ObjectKey {
        ObjectKey::new("", "configmaps", Some("kf"), "c")
    }

    #[test]
    fn create_stamps_identity_and_revision() {
        let mut store = Store::new(100);
        let w = store.write(&key(), cm("a"), Instant::now(), "2025-01-01T00:00:00Z", false);
        assert!(w.created && w.changed);
        assert_eq!(w.object["metadata"]["namespace"], "kf");
        assert_eq!(w.object["metadata"]["generation"], 1);
        assert_eq!(w.object["metadata"]["resourceVersion"], "1001");
        assert!(w.object["metadata"]["uid"].as_str().unwrap().len() == 36);
    }

    #[test]
    fn identical_write_bumps_nothing() {
        let mut store = Store::new(100);
        let first = store.write(&key(), cm("a"), Instant::now(), "t", false).object;
        let again = store.write(&key(), cm("a"), Instant::now(), "t", false);
        assert!(!again.changed);
        assert_eq!(again.object, first);
        assert_eq!(store.revision(), 1001);
    }

    #[test]
    fn spec_change_bumps_generation_metadata_change_does_not() {
        let mut store = Store::new(100);
        store.write(&key(), cm("a"), Instant::now(), "t", false);
        let changed = store.write(&key(), cm("b"), Instant::now(), "t", false).object;
        assert_eq!(changed["metadata"]["generation"], 2);
        let mut labelled = cm("b");
        labelled["metadata"]["labels"] = json!({"x": "y"});
        let labelled = store.write(&key(), labelled, Instant::now(), "t", false).object;
        assert_eq!(labelled["metadata"]["generation"], 2);
        assert_eq!(labelled["metadata"]["resourceVersion"], "1003");
    }

    #[test]
    fn dry_run_leaves_store_untouched() {
        let mut store = Store::new(100);
        let w = store.write(&key(), cm("a"), Instant::now(), "t", true);
        assert!(w.created && store.get(&key()).is_none() && store.revision() == 1000);
    }

    #[test]
    fn finalizers_defer_deletion_until_emptied() {
        let mut store = Store::new(100);
        let mut object = cm("a");
        object["metadata"]["finalizers"] = json!(["example.com/hold"]);
        store.write(&key(), object, Instant::now(), "t", false);
        let marked = store.delete(&key(), "t", false).unwrap();
        assert!(!marked.removed && marked.object["metadata"]["deletionTimestamp"] == "t");
        let mut released = marked.object.clone();
        released["metadata"]["finalizers"] = json!([]);
        let done = store.write(&key(), released, Instant::now(), "t", false);
        assert!(done.removed && store.get(&key()).is_none());
    }

    #[test]
    fn watch_history_replays_and_expires() {
        let mut store = Store::new(2);
        for v in ["a", "b", "c"] {
            store.write(&key(), cm(v), Instant::now(), "t", false);
        }
        assert_eq!(store.events_after(1001).unwrap().len(), 2);
        assert!(store.events_after(1000).is_none());
        assert_eq!(store.events_after(1003).unwrap().len(), 0);
    }

    #[test]
    fn list_is_scoped_to_resource_and_namespace() {
        let mut store = Store::new(100);
        for (ns, name) in [("a", "x"), ("b", "y"), ("b", "z")] {
            store.write(&ObjectKey::new("", "configmaps", Some(ns), name), cm("v"), Instant::now(), "t", false);
        }
        store.write(&ObjectKey::new("", "secrets", Some("b"), "s"), cm("v"), Instant::now(), "t", false);
        assert_eq!(store.list("", "configmaps", None).len(), 3);
        let names: Vec<&str> = store.list("", "configmaps", Some("b")).iter().map(|(k, _)| k.name.as_str()).collect();
        assert_eq!(names, ["y", "z"]);
        assert!(store.any_change_after(1003, |e| e.key.resource == "secrets"));
        assert!(!store.any_change_after(1003, |e| e.key.resource == "configmaps"));
    }

    #[test]
    fn namespace_states() {
        let mut store = Store::new(10);
        assert_eq!(store.namespace_state("kf"), NamespaceState::Missing);
        let ns = ObjectKey::new("", "namespaces", None, "kf");
        let object = json!({"apiVersion": "v1", "kind": "Namespace", "spec": {"finalizers": ["kubernetes"]}});
        store.write(&ns, object, Instant::now(), "t", false);
        assert_eq!(store.namespace_state("kf"), NamespaceState::Active);
        store.delete(&ns, "t", false);
        assert_eq!(store.namespace_state("kf"), NamespaceState::Terminating);
        assert_eq!(store.get(&ns).unwrap().object["status"]["phase"], "Terminating");
    }
}
