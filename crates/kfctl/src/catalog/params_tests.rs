//! The native side's rules, one named test each.

use super::*;

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "kubeflow"},
           "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "ghcr.io/k/w:v1"}]}}}})
}

#[test]
fn registry_moves_every_image_field() {
    let mut d = deployment();
    apply_all(&mut d, &json!({"global": {"imageRegistry": "r.example.com"}}), &json!({}), "katib");
    assert_eq!(d.pointer("/spec/template/spec/containers/0/image").unwrap(), "r.example.com/k/w:v1");
}

#[test]
fn per_image_override_by_key() {
    let mut d = deployment();
    let values = json!({"katib": {"images": {"w": "my.io/w:v2"}}});
    apply_all(&mut d, &values, &json!({"katib": {"images": {"w": "ghcr.io/k/w:v1"}}}), "katib");
    assert_eq!(d.pointer("/spec/template/spec/containers/0/image").unwrap(), "my.io/w:v2");
}

#[test]
fn component_scheduling_wins_over_global() {
    let mut d = deployment();
    let values = json!({"global": {"nodeSelector": {"a": "g"}}, "trainer": {"nodeSelector": {"gpu": "true"}, "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}});
    apply_all(&mut d, &values, &json!({}), "trainer");
    assert_eq!(d.pointer("/spec/template/spec/nodeSelector").unwrap(), &json!({"gpu": "true"}));
    assert_eq!(d.pointer("/spec/template/spec/tolerations/0/key").unwrap(), "nvidia.com/gpu");
}

#[test]
fn replicas_and_resources_by_workload_and_container() {
    let mut d = deployment();
    let values = json!({"katib": {"replicas": {"w": 3}, "resources": {"w": {"c": {"limits": {"cpu": "2"}}}}}});
    apply_all(&mut d, &values, &json!({}), "katib");
    assert_eq!(d.pointer("/spec/replicas").unwrap(), 3);
    assert_eq!(d.pointer("/spec/template/spec/containers/0/resources/limits/cpu").unwrap(), "2");
}

#[test]
fn empty_values_change_nothing() {
    let mut d = deployment();
    let values =
        json!({"global": {"imageRegistry": "", "imagePullSecrets": [], "nodeSelector": {}, "commonLabels": {}}});
    apply_all(&mut d, &values, &json!({}), "katib");
    assert_eq!(d, deployment());
}

#[test]
fn credentials_replace_their_fields_with_the_right_encoding() {
    let mut s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "oauth2-proxy-h675gf55ht", "namespace": "oauth2-proxy"},
                       "data": {"client-secret": "b2xk", "cookie-secret": "b2xk"}});
    apply_all(
        &mut s,
        &json!({"global": {"oidcClientSecret": "new"}, "oauth2-proxy": {"cookieSecret": "c"}}),
        &json!({}),
        "oauth2-proxy",
    );
    assert_eq!(s.pointer("/data/client-secret").unwrap(), "bmV3");
    assert_eq!(s.pointer("/data/cookie-secret").unwrap(), "Yw==");
}

#[test]
fn pss_levels_for_static_and_profile_namespaces() {
    let mut ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow", "labels": {PSS_LABEL: "restricted"}}});
    apply_all(&mut ns, &json!({"global": {"podSecurity": {"namespaces": "off"}}}), &json!({}), "kubeflow-namespace");
    assert!(ns.pointer("/metadata/labels").unwrap().get(PSS_LABEL).is_none());
    assert_eq!(
        replace_pss_line("a: \"x\"\npod-security.kubernetes.io/enforce: \"baseline\"\n", "restricted"),
        "a: \"x\"\npod-security.kubernetes.io/enforce: \"restricted\"\n"
    );
}

#[test]
fn empty_image_override_keeps_the_upstream_image() {
    let mut d = deployment();
    apply_all(
        &mut d,
        &json!({"katib": {"images": {"w": ""}}}),
        &json!({"katib": {"images": {"w": "ghcr.io/k/w:v1"}}}),
        "katib",
    );
    assert_eq!(d, deployment());
}

#[test]
fn empty_resources_leave_upstream_resources_as_they_are() {
    let mut d = deployment();
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({});
    let before = d.clone();
    apply_all(&mut d, &json!({"katib": {"resources": {"w": {"c": {}}}}}), &json!({}), "katib");
    assert_eq!(d, before, "an empty value is the default of a container without resources");
}

#[test]
fn pss_line_replacement_keeps_every_other_byte() {
    let text = "a: \"x\"\r\npod-security.kubernetes.io/enforce: \"baseline\"\nb: y";
    assert_eq!(replace_pss_line(text, ""), "a: \"x\"\r\npod-security.kubernetes.io/enforce: \"\"\nb: y");
}

#[test]
fn crds_value_keeps_only_or_skips_custom_resource_definitions() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x.y"}});
    let dep = deployment();
    let with = |mode: &str| json!({"global": {"crds": mode}});
    assert!(keep(&crd, &with(""), "c", &[]) && keep(&dep, &with(""), "c", &[]));
    assert!(keep(&crd, &with("only"), "c", &[]) && !keep(&dep, &with("only"), "c", &[]));
    assert!(!keep(&crd, &with("skip"), "c", &[]) && keep(&dep, &with("skip"), "c", &[]));
    assert!(keep(&crd, &json!({}), "c", &[]));
}

#[test]
fn a_component_the_cluster_provides_renders_nothing() {
    let provided = json!({"c": {"provided": true}, "global": {"crds": "only"}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x.y"}});
    assert!(!keep(&crd, &provided, "c", &[]) && !keep(&deployment(), &provided, "c", &[]));
    assert!(keep(&crd, &provided, "other", &[]));
}

#[test]
fn kubeflows_own_objects_in_a_provided_dependencys_folder_still_render() {
    let catalog = crate::catalog::Catalog::embedded().unwrap();
    let provided = json!({"cert-manager": {"provided": true}});
    let issuer = json!({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": {"name": "kubeflow-self-signing-issuer"}});
    assert!(keep(&issuer, &provided, "cert-manager", &catalog.provided));
    assert!(!keep(&deployment(), &provided, "cert-manager", &catalog.provided));
}

#[test]
fn storage_class_sets_every_claim() {
    let mut pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "p"}, "spec": {"accessModes": ["ReadWriteOnce"]}});
    let mut sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                         "spec": {"volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {"storageClassName": "old"}}]}});
    let values = json!({"global": {"storageClass": "fast"}});
    apply_all(&mut pvc, &values, &json!({}), "katib");
    apply_all(&mut sts, &values, &json!({}), "katib");
    assert_eq!(pvc.pointer("/spec/storageClassName").unwrap(), "fast");
    assert_eq!(sts.pointer("/spec/volumeClaimTemplates/0/spec/storageClassName").unwrap(), "fast");
    let before = pvc.clone();
    apply_all(&mut pvc, &json!({"global": {"storageClass": ""}}), &json!({}), "katib");
    assert_eq!(pvc, before);
}

#[test]
fn base64_matches_the_standard_alphabet() {
    assert_eq!(base64_encode(b"kubeflow-oidc-authservice"), "a3ViZWZsb3ctb2lkYy1hdXRoc2VydmljZQ==");
    assert_eq!(base64_encode(b""), "");
}
