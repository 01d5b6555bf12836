//! Issue 39: every component a profile can enable lands its namespaced objects in a namespace.
//!
//! For each component of the release under test, `multi-tenant` with `<component>.enabled=true`
//! renders no namespaced object without a namespace beyond those upstream's own `example/`
//! leaves to `default` (the default render, byte-identical to kustomize, is the baseline).
//! Model Registry's `overlays/db` before 26.03.1 names no namespace: its objects go to
//! `kubeflow` (`defaultNamespace:` in its catalog file), beside its UI.

use crate::common;

use kfctl::catalog::default_namespace::missing_namespace;
use kfctl::catalog::render;
use serde_json::Value;

fn identities(objects: &[&kfctl::catalog::RenderedObject]) -> Vec<String> {
    let s = |o: &Value, p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    objects
        .iter()
        .map(|o| format!("{} {} ({})", s(&o.obj, "/kind"), s(&o.obj, "/metadata/name"), o.component))
        .collect()
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn every_component_a_profile_can_enable_names_a_namespace_for_its_namespaced_objects() {
    let baseline = render(&common::render_request_set("multi-tenant", &[])).expect("multi-tenant renders");
    let allowed = identities(&missing_namespace(&baseline.objects));
    let catalog = common::layout().catalog(&common::manifests_dir()).unwrap();
    let (mut checked, mut failures) = (Vec::new(), Vec::new());
    for name in catalog.components.keys() {
        let set = format!("{name}.enabled=true");
        let Ok(rendered) = render(&common::render_request_set("multi-tenant", &[set.as_str()])) else { continue };
        checked.push(name.clone());
        let missing: Vec<String> =
            identities(&missing_namespace(&rendered.objects)).into_iter().filter(|i| !allowed.contains(i)).collect();
        if !missing.is_empty() {
            failures.push(format!("{set}: {missing:?}"));
        }
    }
    assert!(checked.len() >= 20, "only {} components rendered alone: {checked:?}", checked.len());
    assert!(
        failures.is_empty(),
        "{}: namespaced objects without a namespace:\n{}",
        common::release(),
        failures.join("\n")
    );
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn model_registry_lands_beside_its_ui_in_kubeflow() {
    let rendered = render(&common::render_request_set("kind", &["model-registry.enabled=true"])).unwrap();
    let registry: Vec<&Value> = rendered
        .objects
        .iter()
        .filter(|o| ["model-registry", "hub"].contains(&o.component.as_str()))
        .map(|o| &o.obj)
        .filter(|o| {
            o["metadata"]["name"] == "model-registry-deployment" || o["metadata"]["name"] == "model-registry-ui"
        })
        .collect();
    assert!(!registry.is_empty(), "{}: no Model Registry Deployment rendered", common::release());
    for o in registry {
        let namespace = o.pointer("/metadata/namespace").and_then(Value::as_str);
        assert!(namespace.is_some(), "{}: {} has no namespace", common::release(), o["metadata"]["name"]);
        if common::release() != "26.03.1" {
            assert_eq!(namespace, Some("kubeflow"), "{}", o["metadata"]["name"]);
        }
    }
}
