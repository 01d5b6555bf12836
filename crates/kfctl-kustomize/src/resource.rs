//! Resources and their identities.
//!
//! A [`Resource`] is one Kubernetes object as a `serde_json::Value` map plus the bookkeeping
//! kustomize keeps beside it: the names and namespaces it had before prefixes, suffixes,
//! namespaces and hashes changed it (so references to the old name can be fixed up), and, for
//! generated ConfigMaps and Secrets, the generator's behaviour and whether a hash suffix is due.

use crate::gvk::Gvk;
use serde_json::{Map, Value};
use std::fmt;

/// An object's identity: gvk, name and namespace (empty when unset).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResId {
    /// The object's group, version and kind.
    pub gvk: Gvk,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`, empty when unset.
    pub namespace: String,
}

impl ResId {
    pub(crate) fn new(gvk: Gvk, name: &str, namespace: &str) -> Self {
        ResId { gvk, name: name.to_string(), namespace: namespace.to_string() }
    }

    /// The namespace the object lands in: its own, `default` when unset and namespaced, and
    /// empty for cluster-scoped kinds.
    pub(crate) fn effective_namespace(&self) -> &str {
        if super::merge::is_cluster_scoped(&self.gvk) {
            ""
        } else if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    /// Equal as kustomize compares ids: same gvk and name, same effective namespace.
    pub(crate) fn same_object(&self, other: &ResId) -> bool {
        self.gvk == other.gvk && self.name == other.name && self.effective_namespace() == other.effective_namespace()
    }
}

impl fmt::Display for ResId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = if self.namespace.is_empty() { "[noNs]" } else { &self.namespace };
        write!(f, "{}/{}.{}", self.gvk, self.name, ns)
    }
}

/// How a generated object combines with one of the same id from a base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Behavior {
    #[default]
    Create,
    Merge,
    Replace,
}

/// Bookkeeping for generated ConfigMaps and Secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Generated {
    pub behavior: Behavior,
    /// Whether the name still needs its content-hash suffix.
    pub needs_hash: bool,
}

/// One object plus kustomize's bookkeeping.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The object itself: always a JSON map.
    pub obj: Value,
    /// Ids this object had before names or namespaces changed, oldest first.
    pub(crate) previous_ids: Vec<ResId>,
    /// Set on generated ConfigMaps and Secrets.
    pub(crate) generated: Option<Generated>,
    /// Ids of objects that reference this one (filled by the name-reference fix-up).
    pub(crate) referenced_by: Vec<ResId>,
    /// The `resources:` entry of the top-level kustomization this object came from (set as
    /// accumulation returns through each level, so the outermost entry wins).
    pub origin: Option<std::sync::Arc<str>>,
    /// Other top-level entries whose objects decided, or could have decided, some field of
    /// this one: the name-reference fix-up's candidates for a name it holds, and the objects
    /// of the vars it expands. Built without them, this object can come out different (the
    /// chart export renders those variants; see `kfctl::catalog::peers`). Sorted, unique.
    pub influenced_by: Vec<std::sync::Arc<str>>,
    /// Names of the vars bound to this object (kustomize binds a var to its object when the
    /// kustomization declaring it is accumulated, where only that subtree's objects exist).
    pub(crate) var_names: Vec<String>,
    /// JSON pointers of bare nulls (`key:` with no value) as the object was read: kustomize's
    /// strategic merge drops those, while it keeps an explicit `null`.
    pub(crate) bare_nulls: Vec<String>,
    /// Name prefixes and suffixes given so far, innermost first (the name-reference fix-up
    /// prefers referrals renamed in the same kustomization context as the referrer).
    pub(crate) name_prefixes: Vec<String>,
    pub(crate) name_suffixes: Vec<String>,
    /// Set only on a CRD served from the build cache to a reader that deferred its schemas
    /// (`build_cache::Read::defer_schemas`): `obj` is then its stub, each version's `schema`
    /// `null` until [`crate::build_cache::Deferred::attach`] puts it back.
    pub deferred: Option<std::sync::Arc<crate::build_cache::Deferred>>,
}

impl Resource {
    pub(crate) fn new(obj: Value) -> Self {
        Resource {
            obj,
            previous_ids: Vec::new(),
            generated: None,
            referenced_by: Vec::new(),
            name_prefixes: Vec::new(),
            name_suffixes: Vec::new(),
            origin: None,
            influenced_by: Vec::new(),
            var_names: Vec::new(),
            bare_nulls: Vec::new(),
            deferred: None,
        }
    }

    /// Record that `origin`'s objects bear on this object's fields (nothing when it is this
    /// object's own entry, or either is unknown).
    pub(crate) fn influenced_from(&mut self, origin: Option<&std::sync::Arc<str>>) {
        let (Some(own), Some(other)) = (self.origin.as_ref(), origin) else { return };
        if own == other {
            return;
        }
        if let Err(at) = self.influenced_by.binary_search(other) {
            self.influenced_by.insert(at, other.clone());
        }
    }

    pub(crate) fn map_mut(&mut self) -> &mut Map<String, Value> {
        self.obj.as_object_mut().expect("a resource is always a map")
    }

    fn str_at(&self, path: &[&str]) -> &str {
        let mut cur = &self.obj;
        for key in path {
            match cur.get(*key) {
                Some(next) => cur = next,
                None => return "",
            }
        }
        cur.as_str().unwrap_or("")
    }

    pub(crate) fn api_version(&self) -> &str {
        self.str_at(&["apiVersion"])
    }
    pub(crate) fn kind(&self) -> &str {
        self.str_at(&["kind"])
    }
    pub(crate) fn name(&self) -> &str {
        self.str_at(&["metadata", "name"])
    }
    pub(crate) fn namespace(&self) -> &str {
        self.str_at(&["metadata", "namespace"])
    }
    /// The object's group, version and kind, from its `apiVersion` and `kind`.
    pub fn gvk(&self) -> Gvk {
        Gvk::from_api_version(self.api_version(), self.kind())
    }

    /// The id as the object is now.
    pub(crate) fn current_id(&self) -> ResId {
        ResId::new(self.gvk(), self.name(), self.namespace())
    }

    /// The id the object had when it was first loaded or generated.
    pub(crate) fn original_id(&self) -> ResId {
        self.previous_ids.first().cloned().unwrap_or_else(|| self.current_id())
    }

    /// Every id the object has had, the current one last.
    pub(crate) fn all_ids(&self) -> impl Iterator<Item = ResId> + '_ {
        self.previous_ids.iter().cloned().chain(std::iter::once(self.current_id()))
    }

    fn metadata_mut(&mut self) -> &mut Map<String, Value> {
        let map = self.map_mut();
        if !map.get("metadata").is_some_and(Value::is_object) {
            map.insert("metadata".into(), Value::Object(Map::new()));
        }
        map.get_mut("metadata").and_then(Value::as_object_mut).expect("metadata was just made a map")
    }

    /// Record the current id as a previous one (once), before a name or namespace changes.
    pub(crate) fn remember_current_id(&mut self) {
        let id = self.current_id();
        if self.previous_ids.last() != Some(&id) {
            self.previous_ids.push(id);
        }
    }

    pub(crate) fn set_name(&mut self, name: &str) {
        if self.name() != name {
            self.remember_current_id();
            self.metadata_mut().insert("name".into(), Value::String(name.to_string()));
        }
    }

    pub(crate) fn set_namespace(&mut self, namespace: &str) {
        if self.namespace() != namespace {
            self.remember_current_id();
            self.metadata_mut().insert("namespace".into(), Value::String(namespace.to_string()));
        }
    }

    /// `metadata.labels` or `metadata.annotations` as string pairs.
    pub(crate) fn string_map(&self, field: &str) -> Vec<(String, String)> {
        self.obj
            .get("metadata")
            .and_then(|m| m.get(field))
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
            .unwrap_or_default()
    }
}

/// An id as kustomize prints it: `Kind.version.group/name.namespace`, with `[noVer]`,
/// `[noGrp]`, `[noName]` and `[noNs]` for empty parts.
pub(crate) fn kid(id: &ResId) -> String {
    let or = |s: &str, d: &'static str| if s.is_empty() { d.to_string() } else { s.to_string() };
    format!(
        "{}.{}.{}/{}.{}",
        or(&id.gvk.kind, "[noKind]"),
        or(&id.gvk.version, "[noVer]"),
        or(&id.gvk.group, "[noGrp]"),
        or(&id.name, "[noName]"),
        or(&id.namespace, "[noNs]")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gvk_splits_api_version() {
        assert_eq!(Gvk::from_api_version("apps/v1", "Deployment"), Gvk::new("apps", "v1", "Deployment"));
        assert_eq!(Gvk::from_api_version("v1", "Service"), Gvk::new("", "v1", "Service"));
        assert_eq!(Gvk::new("", "v1", "Service").api_version(), "v1");
    }

    #[test]
    fn renaming_remembers_the_original_id() {
        let mut r = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}));
        r.set_name("p-a");
        r.set_namespace("ns");
        assert_eq!(r.original_id().name, "a");
        assert_eq!(r.current_id().to_string(), "ConfigMap.v1/p-a.ns");
        assert_eq!(r.all_ids().count(), 3);
    }
}
