//! Profiles: resolving built-in and user profiles, `extends`, per-release choices, the kustomization written.

use super::*;

#[test]
fn builtin_profiles_resolve_and_satisfy_dependencies() {
    let catalog = Catalog::embedded().unwrap();
    let names = builtin_names();
    assert_eq!(names, ["kind", "minimal", "multi-tenant"]);
    for name in names {
        let p = resolve(name, &catalog).unwrap();
        p.check_dependencies(&catalog, &[], false).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn kind_extends_multi_tenant_with_the_kind_oauth2_proxy_variant() {
    let catalog = Catalog::embedded().unwrap();
    let kind = resolve("kind", &catalog).unwrap();
    let mt = resolve("multi-tenant", &catalog).unwrap();
    assert_eq!(kind.components.len(), mt.components.len());
    assert!(kind.components.contains(&("oauth2-proxy".into(), "m2m-dex-and-kind".into())));
    assert!(kind.components.iter().any(|(c, _)| c == "trainer"));
    assert!(kind.allow_default_credentials && !mt.allow_default_credentials);
}

#[test]
fn minimal_is_trainer_without_istio_dex_oauth2_proxy_or_knative() {
    let catalog = Catalog::embedded().unwrap();
    let p = resolve("minimal", &catalog).unwrap();
    let names: Vec<&str> = p.components.iter().map(|(c, _)| c.as_str()).collect();
    assert!(names.contains(&"trainer"));
    for banned in ["istio", "dex", "oauth2-proxy", "knative-serving"] {
        assert!(!names.contains(&banned), "minimal has {banned}");
    }
}

#[test]
fn multi_tenant_kustomization_lists_upstream_example_entries_in_order() {
    let catalog = Catalog::for_release("v1.11.0").unwrap();
    let k = resolve("multi-tenant", &catalog).unwrap().kustomization(&catalog).unwrap();
    assert_eq!(k.resources.first().map(String::as_str), Some("../common/cert-manager/base"));
    assert_eq!(k.resources.last().map(String::as_str), Some("../applications/spark/spark-operator/overlays/kubeflow"));
    assert_eq!(k.components, ["../common/security/PSS/dynamic/baseline"]);
    assert_eq!(k.resources.len(), 29);
}

#[test]
fn multi_tenant_on_26_03_follows_the_moves_and_drops_what_upstream_dropped() {
    let catalog = Catalog::for_release("26.03").unwrap();
    let k = resolve("multi-tenant", &catalog).unwrap().kustomization(&catalog).unwrap();
    assert_eq!(k.resources.first().map(String::as_str), Some("../common/cert-manager/overlays/kubeflow"));
    assert!(k.resources.iter().any(|r| r == "../applications/pipeline/overlays"));
    assert!(!k.resources.iter().any(|r| r.contains("networkpolicies")), "{:?}", k.resources);
    assert!(k.components.is_empty());
    assert_eq!(k.resources.len(), 27);
}

#[test]
fn ambient_istio_variants_stand_in_for_the_namespace_components() {
    let dir = std::env::temp_dir().join(format!("kfctl-ambient-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ambient.yaml");
    std::fs::write(
        &path,
        "name: ambient\nextends: multi-tenant\ncomponents:\n  istio: {variant: ambient-oauth2-proxy}\n",
    )
    .unwrap();
    let catalog = Catalog::embedded().unwrap();
    let p = resolve(path.to_str().unwrap(), &catalog).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let names: Vec<&str> = p.components.iter().map(|(c, _)| c.as_str()).collect();
    assert!(!names.contains(&"istio-namespace") && !names.contains(&"kubeflow-namespace"), "{names:?}");
    p.check_dependencies(&catalog, &[], false).expect("dependencies on the provided components are met");
}

#[test]
fn missing_dependency_says_what_to_enable() {
    let catalog = Catalog::embedded().unwrap();
    let mut p = resolve("minimal", &catalog).unwrap();
    p.components.push(("kserve".into(), "default".into()));
    let e = p.check_dependencies(&catalog, &[], false).unwrap_err().to_string();
    assert!(e.starts_with("component `kserve` needs cert-manager, knative-serving"), "{e}");
    // knative-serving needs Istio, which needs its CRDs and namespace: all are named
    let install = "install them (--set cert-manager.enabled=true --set knative-serving.enabled=true \
                   --set istio.enabled=true --set istio-crds.enabled=true --set istio-namespace.enabled=true)";
    assert!(e.contains(install), "{e}");
    assert!(e.contains("use the cluster's own if it runs them (--set cert-manager.provided=true --set knative-serving.provided=true)"), "{e}");
    assert!(e.ends_with("leave `kserve` out (--set kserve.enabled=false)"), "{e}");
    let provided = ["cert-manager".to_string(), "knative-serving".to_string()];
    p.check_dependencies(&catalog, &provided, false).expect("provided by the cluster, the dependencies are met");
    let e = p.check_dependencies(&catalog, &provided[..1], true).unwrap_err().to_string();
    assert!(e.contains("install it (add knative-serving,istio,istio-crds,istio-namespace to --components)"), "{e}");
}

#[test]
fn user_profile_file_extends_a_builtin_and_disables_a_component() {
    let dir = std::env::temp_dir().join(format!("kfctl-profile-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.yaml");
    std::fs::write(&path, "name: mine\nextends: kind\ncomponents:\n  katib: {enabled: false}\n  ray: {}\n").unwrap();
    let catalog = Catalog::embedded().unwrap();
    let p = resolve(path.to_str().unwrap(), &catalog).unwrap();
    let names: Vec<&str> = p.components.iter().map(|(c, _)| c.as_str()).collect();
    assert!(!names.contains(&"katib") && names.contains(&"ray"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        resolve("nope", &catalog).unwrap_err().to_string().contains("built-in profiles: kind, minimal, multi-tenant")
    );
}
