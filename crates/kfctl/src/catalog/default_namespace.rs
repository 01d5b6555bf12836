//! Namespaces for components whose upstream folder names none.
//!
//! A few upstream folders leave the namespace to whoever applies them: Model Registry's
//! `overlays/db` before 26.03.1 is installed with `kubectl apply -k … -n kubeflow`, as its
//! README says. Built alone, their namespaced objects carry no namespace, and an install would
//! put them in `default`, apart from the UI in `kubeflow`. Such a component says
//! `defaultNamespace:` in its catalog file. Its namespaced objects that name no namespace get
//! that one after the build, as `kubectl apply -n` would set it. Objects that name one keep it.
//!
//! A kind counts as namespaced when kustomize's schema says so for built-in kinds, or when a
//! CustomResourceDefinition in the same render is `Namespaced`. A custom kind with no CRD in the
//! render is namespaced unless a CRD in the render says `Cluster`. Cluster-scoped kinds never get
//! a namespace. Only objects without one change, and only for components that ask, so the
//! default renders stay byte-identical to kustomize's.

use super::component::Catalog;
use super::render::RenderedObject;
use kfctl_kustomize::Gvk;
use serde_json::Value;
use std::collections::HashSet;

/// Give each namespaced object of a component with a `defaultNamespace` that namespace when it
/// names none.
pub(crate) fn fill(objects: &mut [RenderedObject], catalog: &Catalog) {
    let cluster_custom = cluster_scoped_crds(objects);
    for object in objects.iter_mut() {
        let Some(namespace) = catalog.components.get(&object.component).and_then(|c| c.default_namespace.as_ref())
        else {
            continue;
        };
        if has_namespace(&object.obj) || !namespaced(&object.obj, &cluster_custom) {
            continue;
        }
        if let Some(metadata) = object.obj.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.insert("namespace".into(), Value::String(namespace.clone()));
        }
    }
}

/// The namespaced objects that name no namespace (an install would put them in `default`).
pub fn missing_namespace(objects: &[RenderedObject]) -> Vec<&RenderedObject> {
    let cluster_custom = cluster_scoped_crds(objects);
    objects.iter().filter(|o| !has_namespace(&o.obj) && namespaced(&o.obj, &cluster_custom)).collect()
}

fn has_namespace(obj: &Value) -> bool {
    obj.pointer("/metadata/namespace").and_then(Value::as_str).is_some_and(|n| !n.is_empty())
}

/// `group/Kind` of every cluster-scoped CRD in the render.
fn cluster_scoped_crds(objects: &[RenderedObject]) -> HashSet<String> {
    objects
        .iter()
        .map(|o| &o.obj)
        .filter(|o| o["kind"] == "CustomResourceDefinition" && o.pointer("/spec/scope") == Some(&"Cluster".into()))
        .filter_map(|o| {
            let group = o.pointer("/spec/group").and_then(Value::as_str)?;
            let kind = o.pointer("/spec/names/kind").and_then(Value::as_str)?;
            Some(format!("{group}/{kind}"))
        })
        .collect()
}

fn namespaced(obj: &Value, cluster_custom: &HashSet<String>) -> bool {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let gvk = Gvk::from_api_version(api_version, kind);
    !kfctl_kustomize::is_cluster_scoped(&gvk) && !cluster_custom.contains(&format!("{group}/{kind}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(component: &str, obj: Value) -> RenderedObject {
        RenderedObject::new(component, obj)
    }

    #[test]
    fn only_namespaced_objects_without_a_namespace_of_asking_components_get_one() {
        let mut catalog = Catalog::embedded().unwrap();
        let registry = catalog.components.get_mut("katib").unwrap();
        registry.default_namespace = Some("kubeflow".into());
        let mut objects = vec![
            object("katib", json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}})),
            object(
                "katib",
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b", "namespace": "x"}}),
            ),
            object(
                "katib",
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "c"}}),
            ),
            object("katib", json!({"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "d"}})),
            object("katib", json!({"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "e"}})),
            object(
                "katib",
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "gadgets.example.org"},
                "spec": {"group": "example.org", "scope": "Cluster", "names": {"kind": "Gadget"}}}),
            ),
            object("pipelines", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "f"}})),
        ];
        fill(&mut objects, &catalog);
        let namespaces: Vec<Option<&str>> =
            objects.iter().map(|o| o.obj.pointer("/metadata/namespace").and_then(Value::as_str)).collect();
        assert_eq!(
            namespaces,
            [Some("kubeflow"), Some("x"), None, Some("kubeflow"), None, None, None],
            "a Service, a kept namespace, a ClusterRole, a namespaced and a cluster-scoped custom kind, a CRD, \
             another component"
        );
    }
}
