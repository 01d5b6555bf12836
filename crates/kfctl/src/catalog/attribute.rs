//! Attributing a pre-rendered stream (`install --objects FILE`) to catalog components.
//!
//! A render tags every object with the component whose upstream folder produced it
//! ([`super::render::RenderedObject`]). A pre-rendered stream has no tags, so
//! [`attribute_prerendered`] infers them from catalog data; it is the only place in kfctl-rs
//! where an object's component is inferred rather than carried from the render.

use super::component::Catalog;
use super::render::RenderedObject;
use serde_json::Value;

/// The component of an object nothing could attribute.
pub const UNKNOWN: &str = "unknown";

/// Tag each object of a pre-rendered stream with a catalog component, in catalog order:
/// the first component with a `namePrefixes` entry the object's name starts with; else the
/// first whose `namespaces` holds the object's namespace (or, for a Namespace, its name);
/// else [`UNKNOWN`].
pub fn attribute_prerendered(catalog: &Catalog, objects: Vec<Value>) -> Vec<RenderedObject> {
    objects.into_iter().map(|obj| RenderedObject { component: component_for(catalog, &obj), obj }).collect()
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
    fn name_prefixes_then_namespaces_then_unknown() {
        let deployment = |ns: &str, name: &str| json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": ns, "name": name}});
        assert_eq!(component(deployment("kubeflow-system", "jobset-controller-manager")), "trainer");
        assert_eq!(component(deployment("kubeflow", "ml-pipeline")), "kubeflow-namespace");
        assert_eq!(component(deployment("auth", "dex")), "dex");
        assert_eq!(component(json!({"kind": "Namespace", "metadata": {"name": "istio-system"}})), "istio");
        assert_eq!(component(json!({"kind": "ClusterRole", "metadata": {"name": "x"}})), UNKNOWN);
    }
}
