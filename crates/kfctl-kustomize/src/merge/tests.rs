//! One named test per merge rule: (target, patch) → expected, all in memory. The expected
//! values follow real kustomize v5.6 (the same rules are checked against its recorded output by
//! `fixture_tests.rs`).

use super::*;

fn one(yaml: &str) -> Value {
    kfctl_yaml::parse_stream(yaml, "test").expect("test YAML parses").remove(0)
}

fn gvk_of(obj: &Value) -> Gvk {
    Gvk::from_api_version(obj["apiVersion"].as_str().unwrap_or(""), obj["kind"].as_str().unwrap_or(""))
}

fn merge(base: &str, patch: &str) -> Result<Value, MergeError> {
    let base = one(base);
    strategic_merge(&base, &one(patch), &gvk_of(&base))
}

/// A Deployment named `d` with this pod spec (flow YAML).
fn deploy(pod_spec: &str) -> String {
    format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {{template: {{spec: {pod_spec}}}}}")
}

/// The pod spec after patching a Deployment's pod spec.
fn pod_spec(base: &str, patch: &str) -> Value {
    let out = merge(&deploy(base), &deploy(patch)).expect("patch applies");
    out["spec"]["template"]["spec"].clone()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array().into_iter().flatten().map(|e| e["name"].as_str().unwrap_or("<none>")).collect()
}

#[test]
fn maps_merge_recursively() {
    let out = merge(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {a: '1'}}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {b: '2'}}",
    )
    .unwrap();
    assert_eq!(out["metadata"]["labels"], one("{a: '1', b: '2'}"));
}

#[test]
fn null_deletes_the_key() {
    let out = merge(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: x, b: y}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: null}",
    )
    .unwrap();
    assert_eq!(out["data"], one("{b: y}"));
}

#[test]
fn containers_merge_by_name_in_patch_order_then_target_order() {
    let spec = pod_spec(
        "{containers: [{name: a, image: a}, {name: b, image: b}]}",
        "{containers: [{name: c, image: c}, {name: a, image: a2}]}",
    );
    assert_eq!(names(&spec["containers"]), ["c", "a", "b"]);
    assert_eq!(spec["containers"][1]["image"], "a2");
}

#[test]
fn env_merges_by_name() {
    let spec = pod_spec(
        "{containers: [{name: a, env: [{name: X, value: '1'}, {name: Y, value: '2'}]}]}",
        "{containers: [{name: a, env: [{name: Y, value: '3'}]}]}",
    );
    assert_eq!(spec["containers"][0]["env"], one("[{name: Y, value: '3'}, {name: X, value: '1'}]"));
}

#[test]
fn volumes_merge_by_name_despite_retain_keys_strategy() {
    let spec = pod_spec(
        "{volumes: [{name: v, emptyDir: {}}], containers: [{name: a}]}",
        "{volumes: [{name: v, configMap: {name: c}}]}",
    );
    assert_eq!(spec["volumes"], one("[{name: v, emptyDir: {}, configMap: {name: c}}]"));
}

#[test]
fn ports_match_on_container_port_and_protocol() {
    // kyaml drops a patch port whose protocol the target port leaves unset.
    let spec = pod_spec(
        "{containers: [{name: a, ports: [{containerPort: 80, name: http}]}]}",
        "{containers: [{name: a, ports: [{containerPort: 80, protocol: TCP, name: web}, {containerPort: 90}]}]}",
    );
    assert_eq!(spec["containers"][0]["ports"], one("[{containerPort: 90}, {containerPort: 80, name: http}]"));
}

#[test]
fn delete_directive_removes_a_list_element() {
    let spec = pod_spec("{containers: [{name: a}, {name: b}]}", "{containers: [{name: b, $patch: delete}]}");
    assert_eq!(names(&spec["containers"]), ["a"]);
}

#[test]
fn delete_directive_removes_a_map() {
    let out = merge(
        &deploy("{containers: [{name: a}]}"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {$patch: delete}}",
    )
    .unwrap();
    assert_eq!(out["spec"], one("{}"));
}

#[test]
fn replace_directive_replaces_a_map() {
    let spec = pod_spec(
        "{containers: [{name: a}], dnsConfig: {nameservers: [x], searches: [y]}}",
        "{dnsConfig: {$patch: replace, options: [{name: z}]}}",
    );
    assert_eq!(spec["dnsConfig"], one("{options: [{name: z}]}"));
}

#[test]
fn replace_directive_replaces_a_list() {
    let spec = pod_spec("{containers: [{name: a}, {name: b}]}", "{containers: [{name: c}, {$patch: replace}]}");
    assert_eq!(names(&spec["containers"]), ["c"]);
}

#[test]
fn delete_directive_on_a_list_clears_it() {
    let spec = pod_spec("{containers: [{name: a}], volumes: [{name: v}]}", "{volumes: [{$patch: delete}]}");
    assert!(spec.get("volumes").is_none());
}

#[test]
fn unknown_directive_is_an_error() {
    let err = merge(&deploy("{containers: [{name: a}]}"), &deploy("{$patch: bogus}")).unwrap_err();
    assert!(err.to_string().contains("unknown patch strategy 'bogus'"), "{err}");
}

#[test]
fn lists_of_scalars_with_merge_strategy_merge_as_a_set() {
    let out = merge(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, finalizers: [a, b]}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, finalizers: [c, a]}",
    )
    .unwrap();
    assert_eq!(out["metadata"]["finalizers"], one("[c, a, b]"));
}

#[test]
fn lists_without_merge_strategy_are_replaced() {
    let spec = pod_spec(
        "{tolerations: [{key: a}], containers: [{name: a, args: [x, y]}]}",
        "{tolerations: [{key: b}], containers: [{name: a, args: [z]}]}",
    );
    assert_eq!(spec["tolerations"], one("[{key: b}]"));
    assert_eq!(spec["containers"][0]["args"], one("[z]"));
}

#[test]
fn custom_resource_lists_are_replaced() {
    let out = merge(
        "apiVersion: x.io/v1\nkind: W\nmetadata: {name: w}\nspec: {items: [{name: a}, {name: b}]}",
        "apiVersion: x.io/v1\nkind: W\nmetadata: {name: w}\nspec: {items: [{name: b, size: 2}]}",
    )
    .unwrap();
    assert_eq!(out["spec"]["items"], one("[{name: b, size: 2}]"));
}

#[test]
fn nested_object_with_builtin_type_gets_its_schema() {
    let base = "apiVersion: x.io/v1\nkind: W\nmetadata: {name: w}\nspec: {pod: {apiVersion: v1, kind: Pod, spec: {containers: [{name: a}]}}}";
    let patch = "apiVersion: x.io/v1\nkind: W\nmetadata: {name: w}\nspec: {pod: {spec: {containers: [{name: b}]}}}";
    assert_eq!(names(&merge(base, patch).unwrap()["spec"]["pod"]["spec"]["containers"]), ["b", "a"]);
}

#[test]
fn set_element_order_and_retain_keys_are_ordinary_fields() {
    let spec = pod_spec(
        "{containers: [{name: a}, {name: b}]}",
        "{$setElementOrder/containers: [{name: b}, {name: a}], volumes: [{name: v, $retainKeys: [name]}]}",
    );
    assert_eq!(spec["$setElementOrder/containers"], one("[{name: b}, {name: a}]"));
    assert_eq!(spec["volumes"], one("[{name: v, $retainKeys: [name]}]"));
    assert_eq!(names(&spec["containers"]), ["a", "b"]);
}

#[test]
fn elements_with_equal_keys_collapse_to_the_last() {
    let spec = pod_spec("{containers: [{name: a, env: [{name: X, value: '1'}, {name: X, value: '2'}]}]}", "{}");
    assert_eq!(spec["containers"][0]["env"], one("[{name: X, value: '2'}]"));
}

#[test]
fn element_without_merge_key_drops_the_elements_before_it() {
    let spec =
        pod_spec("{containers: [{name: a}, {image: nameless}, {name: b}]}", "{containers: [{name: a, image: a2}]}");
    assert_eq!(spec["containers"], one("[{image: nameless}]"));
}

#[test]
fn empty_patch_list_keeps_the_target_list() {
    let spec = pod_spec("{containers: [{name: a}], volumes: [{name: v}]}", "{volumes: []}");
    assert_eq!(names(&spec["volumes"]), ["v"]);
}

#[test]
fn empty_map_elements_vanish() {
    let spec = pod_spec("{containers: [{name: a}, {}]}", "{}");
    assert_eq!(names(&spec["containers"]), ["a"]);
}

#[test]
fn name_and_namespace_are_restored_and_kept_when_allowed() {
    let base = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}";
    let patch = one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: elsewhere, labels: {a: b}}");
    let out = strategic_merge(&one(base), &patch, &Gvk::new("", "v1", "ConfigMap")).unwrap();
    assert_eq!(out["metadata"], one("{name: c, namespace: ns, labels: {a: b}}"));
    let options = SmpOptions { allow_name_change: true, ..SmpOptions::default() };
    let out = strategic_merge_with(one(base), &patch, &Gvk::new("", "v1", "ConfigMap"), options).unwrap();
    assert_eq!(out["metadata"]["name"], "other");
    assert_eq!(out["metadata"]["namespace"], "ns");
}

#[test]
fn delete_directive_at_the_top_deletes_the_object() {
    let out = merge(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n$patch: delete",
    )
    .unwrap();
    assert!(out.is_null());
}

#[test]
fn kind_mismatch_is_an_error() {
    let err = merge(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: x}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: [x]",
    )
    .unwrap_err();
    assert!(err.to_string().contains("expected MappingNode but got SequenceNode"), "{err}");
}

#[test]
fn quoted_string_replaced_by_number_stays_a_string() {
    let out = merge(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {q: '80', p: http}",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {q: 81, p: 82}",
    )
    .unwrap();
    assert_eq!(out["data"], one("{q: '81', p: 82}"));
}

#[test]
fn targets_and_patches_must_be_maps() {
    let err = strategic_merge(&one("[a]"), &one("{a: 1}"), &Gvk::default()).unwrap_err();
    assert!(err.to_string().contains("target must be a map"), "{err}");
}

#[test]
fn cluster_scope_follows_the_openapi_data() {
    assert!(is_cluster_scoped(&Gvk::new("rbac.authorization.k8s.io", "v1", "ClusterRole")));
    assert!(is_cluster_scoped(&Gvk::new("", "v1", "Namespace")));
    assert!(!is_cluster_scoped(&Gvk::new("apps", "v1", "Deployment")));
    // Custom resources (even cluster-scoped CRDs' kinds) count as namespaced, as in kustomize.
    assert!(!is_cluster_scoped(&Gvk::new("kubeflow.org", "v1", "Profile")));
}

#[test]
fn builtin_kinds_are_those_with_a_schema() {
    assert!(is_builtin_kind(&Gvk::new("apps", "v1", "Deployment")));
    assert!(!is_builtin_kind(&Gvk::new("kubeflow.org", "v1", "Notebook")));
    assert!(!is_builtin_kind(&Gvk::new("", "v1", "PodExecOptions")));
}

#[test]
fn json6902_replace_of_a_missing_key_adds_it() {
    let out = apply_json6902(&one("{a: 1}"), &one("[{op: replace, path: /b, value: 2}]")).unwrap();
    assert_eq!(out, one("{a: 1, b: 2}"));
}

#[test]
fn json6902_negative_indices_count_from_the_end() {
    let out =
        apply_json6902(&one("{l: [a, b, c]}"), &one("[{op: remove, path: /l/-1}, {op: add, path: /l/-, value: z}]"))
            .unwrap();
    assert_eq!(out, one("{l: [a, b, z]}"));
}

#[test]
fn json6902_errors_name_the_operation_and_path() {
    let err = apply_json6902(&one("{a: 1}"), &one("[{op: remove, path: /nope}]")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "json patch: error in remove for path: '/nope': Unable to remove nonexistent key: nope: missing value"
    );
    let err = apply_json6902(&one("{a: 1}"), &one("[{op: add, path: /x/y, value: 1}]")).unwrap_err();
    assert!(err.to_string().contains("add operation does not apply: doc is missing path: \"/x/y\""), "{err}");
    let err = apply_json6902(&one("{a: 1}"), &one("[{op: frob, path: /a}]")).unwrap_err();
    assert!(err.to_string().ends_with("Unexpected kind: frob"), "{err}");
}

#[test]
fn merge_keys_are_exposed_for_the_engine() {
    let gvk = Gvk::new("apps", "v1", "Deployment");
    assert_eq!(merge_keys_at(&gvk, &["spec", "template", "spec", "containers", "[]", "env"]), Some(&["name"][..]));
    assert_eq!(merge_keys_at(&Gvk::new("x.io", "v1", "W"), &["spec", "items"]), None);
}

#[test]
fn nulls_in_the_target_that_the_patch_does_not_mention_are_kept() {
    // Checked with real kustomize v5.6: `creationTimestamp: null` survives a patch.
    let gvk = Gvk::new("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    let base = serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "x", "creationTimestamp": null}, "spec": {"nested": {"keep": null, "other": 1}}});
    let patch = serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "x", "labels": {"a": "b"}}});
    let out = strategic_merge(&base, &patch, &gvk).unwrap();
    assert!(out["metadata"]["creationTimestamp"].is_null() && out["metadata"].get("creationTimestamp").is_some());
    assert!(out["spec"]["nested"].get("keep").is_some());
    let delete = serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "x"}, "spec": {"nested": {"other": null}}});
    let out = strategic_merge(&base, &delete, &gvk).unwrap();
    assert!(out["spec"]["nested"].get("other").is_none(), "a null in the patch still deletes");
}
