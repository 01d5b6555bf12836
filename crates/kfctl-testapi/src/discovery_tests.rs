//! Discovery of the test API server (a test double): groups, resources and served versions.

use super::*;

fn crd() -> Value {
    json!({"spec": {"group": "kubeflow.org", "scope": "Namespaced",
        "names": {"plural": "notebooks", "kind": "Notebook", "singular": "notebook", "shortNames": ["nb"]},
        "versions": [
            {"name": "v1beta1", "served": true, "storage": false},
            {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
            {"name": "v1alpha1", "served": false, "storage": false}]}})
}

#[test]
fn builtins_cover_the_kinds_kubeflow_installs() {
    let catalog = Catalog::builtin();
    for (g, r) in [
        ("", "namespaces"),
        ("apps", "deployments"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("discovery.k8s.io", "endpointslices"),
        ("policy", "poddisruptionbudgets"),
    ] {
        assert!(catalog.types().any(|t| t.group == g && t.resource == r), "{g}/{r}");
    }
    let ns = catalog.find("", "v1", "namespaces").unwrap();
    assert!(!ns.namespaced && ns.status_subresource);
}

#[test]
fn crd_serves_only_served_versions_with_preferred_first() {
    let catalog = Catalog::builtin().with_crds([crd()].iter());
    assert!(catalog.find("kubeflow.org", "v1alpha1", "notebooks").is_none());
    let v1 = catalog.find("kubeflow.org", "v1", "notebooks").unwrap();
    assert!(v1.status_subresource && v1.namespaced);
    let group = catalog.api_group("kubeflow.org").unwrap();
    assert_eq!(group["preferredVersion"]["version"], "v1");
    assert_eq!(group["versions"][1]["version"], "v1beta1");
}

#[test]
fn version_priority_orders_like_kubernetes() {
    let mut versions = vec!["v1alpha1", "v2beta1", "v1", "foo", "v1beta2", "v2"];
    versions.sort_by_key(|v| version_priority(v));
    assert_eq!(versions, ["v2", "v1", "v2beta1", "v1beta2", "v1alpha1", "foo"]);
}

#[test]
fn resource_list_includes_status_subresource_entries() {
    let list = Catalog::builtin().resource_list("apps", "v1").unwrap();
    let names: Vec<&str> = list["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"deployments") && names.contains(&"deployments/status"));
    assert_eq!(list["groupVersion"], "apps/v1");
    assert!(Catalog::builtin().resource_list("apps", "v9").is_none());
}

#[test]
fn aggregated_documents_have_core_and_groups() {
    let catalog = Catalog::builtin();
    let core = catalog.aggregated(true);
    assert_eq!(core["items"].as_array().unwrap().len(), 1);
    assert!(core["items"][0]["metadata"].get("name").is_none());
    let apis = catalog.aggregated(false);
    let first = &apis["items"][0];
    assert_eq!(first["metadata"]["name"], "apiregistration.k8s.io");
    assert!(wants_aggregated("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"));
    assert!(!wants_aggregated("application/json, */*"));
}
