//! Schema lookups over the generated OpenAPI table.
//!
//! kyaml walks a patch and its target together with an OpenAPI schema cursor: `Field(name)` for a
//! map key, `Elements()` for list items, and `PatchStrategyAndKeyList()` on a list's own schema.
//! The generated table (`openapi_table.rs`) holds exactly what those three calls read, so this
//! module answers them with the same results kyaml computes from the full OpenAPI document.
//!
//! A `None` schema and a [`Schema::Leaf`] differ: with `None` kyaml looks for a schema by the
//! value's own `apiVersion` and `kind`; with a leaf (a known field of opaque type) it does not.

use super::custom;
use super::openapi_table::{DEFINITIONS, RESOURCES};
use super::schema_types::{Resource, Schema, Scope, resolve};
use crate::gvk::Gvk;

/// The table row for `apiVersion` + `kind`, if kustomize's OpenAPI data lists it.
pub(crate) fn resource(api_version: &str, kind: &str) -> Option<&'static Resource> {
    by_kind(kind)?.iter().copied().find(|r| r.api_version == api_version)
}

/// The table row for a gvk. This runs for every scope check (every namespace decision), so
/// it looks up by kind in an index and compares group and version without allocating.
pub(crate) fn resource_for_gvk(gvk: &Gvk) -> Option<&'static Resource> {
    by_kind(&gvk.kind)?.iter().copied().find(|r| match r.api_version.rsplit_once('/') {
        Some((group, version)) => group == gvk.group && version == gvk.version,
        None => gvk.group.is_empty() && r.api_version == gvk.version,
    })
}

/// The table's rows grouped by kind, built once.
fn by_kind(kind: &str) -> Option<&'static Vec<&'static Resource>> {
    static INDEX: std::sync::OnceLock<std::collections::HashMap<&'static str, Vec<&'static Resource>>> =
        std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| {
            let mut index: std::collections::HashMap<&'static str, Vec<&'static Resource>> =
                std::collections::HashMap::new();
            for r in RESOURCES {
                index.entry(r.kind).or_default().push(r);
            }
            index
        })
        .get(kind)
}

/// The schema of a whole object of this type (kyaml's `SchemaForResourceType`): from the
/// build's custom schema when it has one, else from the built-in table.
pub(crate) fn resource_schema(api_version: &str, kind: &str) -> Option<&'static Schema> {
    match custom::active() {
        Some(schema) => schema.resource(api_version, kind),
        None => resource(api_version, kind).and_then(|r| r.schema.as_ref()),
    }
}

/// [`resource_schema`] for a gvk.
pub(crate) fn schema_for_gvk(gvk: &Gvk) -> Option<&'static Schema> {
    match custom::active() {
        Some(schema) => schema.resource(&gvk.api_version(), &gvk.kind),
        None => resource_for_gvk(gvk).and_then(|r| r.schema.as_ref()),
    }
}

/// Whether objects of this kind live outside namespaces (kyaml's `IsCertainlyClusterScoped`).
pub fn is_cluster_scoped(gvk: &Gvk) -> bool {
    let builtin = || resource_for_gvk(gvk).is_some_and(|r| r.scope == Scope::Cluster);
    match custom::active() {
        None => builtin(),
        Some(schema) => {
            let api_version = gvk.api_version();
            match custom::is_precomputed(&api_version, &gvk.kind) {
                true => builtin(),
                false => schema.is_cluster_scoped(&api_version, &gvk.kind),
            }
        }
    }
}

impl Schema {
    /// The schema of map key `name` (kyaml's `Field`): a property, else the map's value schema.
    pub(crate) fn field(&'static self, name: &str) -> Option<&'static Schema> {
        match self {
            Schema::Def(index) => {
                let props = DEFINITIONS[usize::from(*index)];
                props.binary_search_by(|(key, _)| (*key).cmp(name)).ok().map(|i| &props[i].1)
            }
            Schema::Map(value) => Some(value),
            Schema::Custom(node) => node.field(name).and_then(resolve),
            Schema::Ref(..) => resolve(self)?.field(name),
            Schema::List { .. } | Schema::Leaf => None,
        }
    }

    /// The schema of list elements (kyaml's `Elements`).
    pub(crate) fn elements(&'static self) -> Option<&'static Schema> {
        match self {
            Schema::List { items, .. } => *items,
            Schema::Custom(node) => node.items().and_then(resolve),
            Schema::Ref(..) => resolve(self)?.elements(),
            _ => None,
        }
    }

    /// The list's patch strategy and merge keys (kyaml's `PatchStrategyAndKeyList`).
    pub(crate) fn strategy_and_keys(&'static self) -> (&'static str, &'static [&'static str]) {
        match self {
            Schema::List { strategy, keys, .. } => (strategy, keys),
            Schema::Custom(node) => node.strategy_and_keys(),
            Schema::Ref(..) => resolve(self).map_or(("", &[]), Schema::strategy_and_keys),
            _ => ("", &[]),
        }
    }

    /// Whether lists of this schema merge element-wise: the strategy names `merge`.
    pub(crate) fn is_associative(&'static self) -> bool {
        self.strategy_and_keys().0.split(',').any(|s| s == "merge")
    }
}

/// The merge keys of the list at `path` (map keys from the object root) in objects of this kind:
/// `Some(keys)` when the list merges element-wise (`keys` is empty for a list of scalars that
/// merges as a set), `None` when it is replaced or the path is unknown.
pub(crate) fn merge_keys_at(gvk: &Gvk, path: &[&str]) -> Option<&'static [&'static str]> {
    let mut schema = schema_for_gvk(gvk)?;
    for step in path {
        schema = match schema {
            Schema::List { items: Some(items), .. } if step.is_empty() || *step == "[]" => items,
            _ => schema.field(step)?,
        };
    }
    schema.is_associative().then(|| schema.strategy_and_keys().1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Gvk {
        Gvk::new("apps", "v1", "Deployment")
    }

    #[test]
    fn resources_are_sorted_for_binary_search() {
        assert!(RESOURCES.windows(2).all(|w| (w[0].api_version, w[0].kind) < (w[1].api_version, w[1].kind)));
        assert!(DEFINITIONS.iter().all(|props| props.windows(2).all(|w| w[0].0 < w[1].0)));
    }

    #[test]
    fn containers_merge_by_name() {
        assert_eq!(merge_keys_at(&deployment(), &["spec", "template", "spec", "containers"]), Some(&["name"][..]));
    }

    #[test]
    fn container_ports_use_list_map_keys() {
        let path = ["spec", "template", "spec", "containers", "[]", "ports"];
        assert_eq!(merge_keys_at(&deployment(), &path), Some(&["containerPort", "protocol"][..]));
    }

    #[test]
    fn volumes_with_merge_and_retain_keys_are_associative() {
        assert_eq!(merge_keys_at(&deployment(), &["spec", "template", "spec", "volumes"]), Some(&["name"][..]));
    }

    #[test]
    fn tolerations_and_args_are_replaced() {
        assert_eq!(merge_keys_at(&deployment(), &["spec", "template", "spec", "tolerations"]), None);
        assert_eq!(merge_keys_at(&deployment(), &["spec", "template", "spec", "containers", "[]", "args"]), None);
    }

    #[test]
    fn finalizers_merge_as_a_set() {
        let keys = merge_keys_at(&Gvk::new("", "v1", "ConfigMap"), &["metadata", "finalizers"]);
        assert_eq!(keys, Some(&[][..]));
    }

    #[test]
    fn unknown_kinds_have_no_schema() {
        assert!(resource_schema("kubeflow.org/v1", "Notebook").is_none());
        assert!(resource_schema("v1", "PodExecOptions").is_none());
        assert!(resource("v1", "PodExecOptions").is_some());
    }
}
