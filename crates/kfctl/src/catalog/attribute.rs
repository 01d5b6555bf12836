//! Attributing to catalog components what no catalog path names, by catalog data only.
//!
//! A render tags every object with the component whose upstream folder produced it
//! ([`super::render::RenderedObject`]). Two inputs have no such folder:
//!
//! - a pre-rendered stream (`install --objects FILE`): [`attribute_prerendered`] infers each
//!   object's component from the components' `namePrefixes` and `namespaces`, the only place in
//!   kfctl-rs where an object's component is inferred rather than carried from the render;
//! - the `example/kustomization.yaml` of a tree whose layout the catalog does not describe (no
//!   pinned release, or a release whose folders moved): [`attribute_example`] gives each entry
//!   the component one of whose variants names that path; else the component whose `marks`
//!   (objects only it renders) the entry's own build holds ([`super::identify`]), so a folder
//!   that moved or was renamed is still found; else the first (in catalog order) whose
//!   `entryPatterns` match the path. The rest are unattributed, and the render warns about them.

use super::CatalogError;
use super::component::Catalog;
use super::render::RenderedObject;
use crate::source::releases::glob_match;
use kfctl_kustomize::kustomization::Kustomization;
use kfctl_kustomize::remote::RemoteResolver;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// One `resources:` or `components:` entry of an `example/` and the (component, variant) it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributed {
    /// The entry as written.
    pub entry: String,
    /// The (component, variant) it is, when one matches.
    pub component: Option<(String, String)>,
    /// How it was found (`None` with no component).
    pub how: Option<How>,
    /// Other components whose marks its build holds: a folder upstream merged them into. It
    /// renders whenever any of them is enabled.
    pub also: Vec<String>,
}

impl Attributed {
    /// Whether this entry holds component `name` (as the one it is, or as one merged into it).
    pub(crate) fn holds(&self, name: &str) -> bool {
        self.component.as_ref().is_some_and(|(c, _)| c == name) || self.also.iter().any(|c| c == name)
    }
}

/// How an `example/` entry was attributed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// A catalog variant names its path.
    Path,
    /// Its build holds objects only that component renders (its `marks`).
    Content,
    /// Its path matches the component's `entryPatterns`.
    Pattern,
}

impl std::fmt::Display for How {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            How::Path => "by path",
            How::Content => "by content",
            How::Pattern => "by path pattern",
        })
    }
}

/// A tree's `example/` kustomization, each entry attributed.
#[derive(Debug, Clone)]
pub struct ExampleAttribution {
    pub(crate) kustomization: Kustomization,
    /// The `resources:` entries, attributed.
    pub resources: Vec<Attributed>,
    pub(crate) components: Vec<Attributed>,
}

impl ExampleAttribution {
    /// The entries nothing claimed, `resources:` then `components:`.
    pub(crate) fn unattributed(&self) -> Vec<&str> {
        self.resources
            .iter()
            .chain(&self.components)
            .filter(|a| a.component.is_none())
            .map(|a| a.entry.as_str())
            .collect()
    }

    /// The attributed components and their variants, in catalog order, each once (those
    /// merged into another's folder with their default variant).
    pub(crate) fn components_in(&self, catalog: &Catalog) -> Vec<(String, String)> {
        let found: Vec<&(String, String)> = self.resources.iter().filter_map(|a| a.component.as_ref()).collect();
        catalog
            .components
            .iter()
            .filter_map(|(name, def)| match found.iter().find(|(c, _)| c == name) {
                Some(pair) => Some((*pair).clone()),
                None => self
                    .resources
                    .iter()
                    .any(|a| a.holds(name))
                    .then(|| (name.clone(), def.default_variant().to_string())),
            })
            .collect()
    }
}

/// Read `<manifests>/example/kustomization.yaml` and attribute its entries; `remote` serves the
/// remote bases of the entries built to be identified by content.
pub fn attribute_example(
    catalog: &Catalog,
    manifests_dir: &Path,
    remote: Arc<dyn RemoteResolver>,
) -> Result<ExampleAttribution, CatalogError> {
    let loader = kfctl_kustomize::Loader::new(
        Arc::new(kfctl_kustomize::remote::NoRemote),
        kfctl_kustomize::LoadRestriction::RootOnly,
    );
    let example_dir = manifests_dir.join("example");
    let (_, kustomization) = loader.kustomization(&example_dir)?;
    let by_content =
        |entry: &str| super::identify::identify_folder_all(catalog, &example_dir.join(entry), remote.clone());
    let attribute = |entry: &String, kc: bool| {
        let found = attribute_entry(catalog, entry, kc);
        // a catalog path is the component (built only when rendered); anything else is read
        // by what it builds
        if kc || found.how == Some(How::Path) {
            return found;
        }
        let Some((leader, also)) = by_content(entry) else { return found };
        let mut also: Vec<String> =
            also.into_iter().filter(|c| found.component.as_ref().is_none_or(|(f, _)| f != c)).collect();
        // several components' marks, none leading: a merged folder, named after the first
        let leader = leader.or_else(|| {
            let first = catalog.components.keys().find(|c| also.contains(c))?.clone();
            also.retain(|c| *c != first);
            Some((first.clone(), catalog.components[&first].default_variant().to_string()))
        });
        match leader {
            Some(component) => Attributed { component: Some(component), how: Some(How::Content), also, ..found },
            None => Attributed { also, ..found },
        }
    };
    let resources = kustomization.resources.iter().map(|e| attribute(e, false)).collect();
    let components = kustomization.components.iter().map(|e| attribute(e, true)).collect();
    Ok(ExampleAttribution { kustomization, resources, components })
}

fn attribute_entry(catalog: &Catalog, entry: &str, kustomize_component: bool) -> Attributed {
    let path = entry.strip_prefix("../").unwrap_or(entry).trim_end_matches('/');
    let defs = || catalog.components.values();
    let exact = defs().find_map(|d| {
        if kustomize_component {
            d.kustomize_components.iter().any(|p| p == path).then(|| (d.name.clone(), d.default_variant().to_string()))
        } else {
            d.variants
                .iter()
                .find(|(_, paths)| paths.iter().any(|p| p == path))
                .map(|(v, _)| (d.name.clone(), v.clone()))
        }
    });
    let by_pattern = || {
        defs()
            .find(|d| d.entry_patterns.iter().any(|p| glob_match(p, path)))
            .map(|d| (d.name.clone(), d.default_variant().to_string()))
    };
    let (component, how) = match exact {
        Some(found) => (Some(found), Some(How::Path)),
        None => {
            let found = by_pattern();
            let how = found.as_ref().map(|_| How::Pattern);
            (found, how)
        }
    };
    Attributed { entry: entry.to_string(), component, how, also: Vec::new() }
}

/// The component of an object nothing could attribute.
pub(crate) const UNKNOWN: &str = "unknown";

/// Tag each object of a pre-rendered stream with a catalog component, in catalog order:
/// the first component with a `namePrefixes` entry the object's name starts with; else the
/// first whose `namespaces` holds the object's namespace (or, for a Namespace, its name);
/// else `UNKNOWN`.
pub fn attribute_prerendered(catalog: &Catalog, objects: Vec<Value>) -> Vec<RenderedObject> {
    objects.into_iter().map(|obj| RenderedObject::new(component_for(catalog, &obj), obj)).collect()
}

fn component_for(catalog: &Catalog, obj: &Value) -> String {
    let text = |pointer: &str| obj.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = text("/metadata/name").unwrap_or_default();
    let namespace = match text("/kind") {
        Some("Namespace") => Some(name),
        _ => text("/metadata/namespace"),
    };
    let defs = || catalog.components.values();
    defs()
        .find(|d| d.name_prefixes.iter().any(|p| name.starts_with(p.as_str())))
        .or_else(|| namespace.and_then(|ns| defs().find(|d| d.namespaces.iter().any(|n| n == ns))))
        .map_or_else(|| UNKNOWN.to_string(), |d| d.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn component(obj: Value) -> String {
        attribute_prerendered(&Catalog::embedded().unwrap(), vec![obj]).remove(0).component
    }

    #[test]
    fn example_entries_by_path_then_by_pattern() {
        let catalog = Catalog::for_release("26.03").unwrap();
        let at = |e: &str, kc: bool| attribute_entry(&catalog, e, kc).component.map(|(c, v)| format!("{c}/{v}"));
        assert_eq!(at("../common/cert-manager/base", false).as_deref(), Some("cert-manager/default"));
        assert_eq!(at("../common/istio/istio-install/overlays/gke", false).as_deref(), Some("istio/gke"));
        assert_eq!(
            at("../apps/hp-tuning/katib/upstream/installs/katib-with-kubeflow", false).as_deref(),
            Some("katib/default")
        );
        assert_eq!(at("../common/security/PSS/dynamic/baseline", true).as_deref(), Some("profiles/default"));
        assert_eq!(at("../somewhere/else", false), None);
        // 26.03.1 merged profiles into dashboard: the old folders' patterns mean dashboard.
        let merged = Catalog::for_release("26.03.1").unwrap();
        let at = |e: &str, kc: bool| attribute_entry(&merged, e, kc).component.map(|(c, v)| format!("{c}/{v}"));
        assert_eq!(at("../common/security/PSS/dynamic/baseline", true).as_deref(), Some("dashboard/default"));
        assert_eq!(at("../applications/dashboard/overlays/istio", false).as_deref(), Some("dashboard/default"));
        assert_eq!(at("../applications/notebooks-v1/overlays/istio", false).as_deref(), Some("notebooks-v1/default"));
    }

    #[test]
    fn name_prefixes_then_namespaces_then_unknown() {
        let deployment = |ns: &str, name: &str| json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": ns, "name": name}});
        assert_eq!(component(deployment("kubeflow-system", "jobset-controller-manager")), "trainer");
        assert_eq!(component(deployment("kubeflow", "ml-pipeline")), "kubeflow-namespace");
        assert_eq!(component(deployment("auth", "dex")), "dex");
        assert_eq!(component(json!({"kind": "Namespace", "metadata": {"name": "istio-system"}})), "istio");
        assert_eq!(component(json!({"kind": "ClusterRole", "metadata": {"name": "x"}})), UNKNOWN);
    }
}
