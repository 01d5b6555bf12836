//! In-memory harness for vars: binding, values and expansion, checked against kustomize v5.6.

use super::*;
use crate::resource::Resource;
use serde_json::json;

fn values(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn var(yaml: &str) -> Var {
    serde_json::from_value(kfctl_yaml::parse_stream(yaml, "test").unwrap().remove(0)).unwrap()
}

fn specs(paths: &[&str]) -> Vec<FieldSpec> {
    paths.iter().map(|p| FieldSpec { path: p.to_string(), ..FieldSpec::default() }).collect()
}

fn build() -> ResMap {
    let mut map = ResMap::new();
    for obj in [
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "other"},
            "spec": {"ports": [{"port": 8080, "name": "http"}], "flag": true, "ratio": 1.5, "sel": {"a": "b"}}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": {"spec": {"containers": [
            {"name": "c", "command": ["$(SVC)", "$(PORT)", "x$(PORT)", "$(FLAG)", "$(RATIO)", "$(SEL)", "$$(SVC)", "$(UNKNOWN)", "$(NS).$(SVC)"],
             "env": [{"name": "A", "value": "$(PORT)"}, {"name": "B", "value": 3}]}]}}}}),
    ] {
        map.append(Resource::new(obj), "test").unwrap();
    }
    map
}

fn all_vars() -> Vec<Var> {
    vec![
        var("{name: SVC, objRef: {kind: Service, name: svc, apiVersion: v1}}"),
        var(
            "{name: NS, objRef: {kind: Service, name: svc, apiVersion: v1}, fieldRef: {fieldPath: metadata.namespace}}",
        ),
        var(
            "{name: PORT, objRef: {kind: Service, name: svc, apiVersion: v1}, fieldRef: {fieldPath: 'spec.ports[0].port'}}",
        ),
        var("{name: FLAG, objRef: {kind: Service, name: svc, version: v1}, fieldRef: {fieldPath: spec.flag}}"),
        var("{name: RATIO, objRef: {kind: Service, name: svc, version: v1}, fieldRef: {fieldPath: spec.ratio}}"),
        var("{name: SEL, objRef: {kind: Service, name: svc, version: v1}, fieldRef: {fieldPath: spec.sel}}"),
    ]
}

/// The build with every var bound, as the accumulator leaves it.
fn bound(mut map: ResMap, vars: &[Var]) -> ResMap {
    for v in vars {
        bind(&mut map, v).unwrap();
    }
    map
}

#[test]
fn references_expand_with_types_escapes_and_unknowns_as_kustomize_does() {
    let vars = all_vars();
    let mut map = bound(build(), &vars);
    resolve_with(
        &mut map,
        &vars,
        &specs(&["spec/template/spec/containers/command", "spec/template/spec/containers/env/value"]),
    )
    .unwrap();
    let container = &map.get(1).obj["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["command"],
        json!(["svc", 8080, "x8080", true, 1.5, "$(SEL)", "$(SVC)", "$(UNKNOWN)", "other.svc"])
    );
    assert_eq!(container["env"], json!([{"name": "A", "value": 8080}, {"name": "B", "value": 3}]));
}

#[test]
fn bindings_are_bookkeeping_not_object_data() {
    let vars = all_vars();
    let map = bound(build(), &vars);
    assert!(map.get(0).var_names.contains(&"SVC".to_string()), "{:?}", map.get(0).var_names);
    let objects = |m: &ResMap| m.iter().map(|r| r.obj.clone()).collect::<Vec<_>>();
    assert_eq!(objects(&map), objects(&build()));
}

#[test]
fn expansion_follows_the_kubernetes_syntax() {
    let v = values(&[("A", json!("x")), ("N", json!(5))]);
    assert_eq!(expand("$(A)", &v), json!("x"));
    assert_eq!(expand("$(N)", &v), json!(5));
    assert_eq!(expand("a$(N)b", &v), json!("a5b"));
    assert_eq!(expand("$$A $$(A) $A $(", &v), json!("$A $(A) $A $("));
    assert_eq!(expand("$(B) and $(A", &v), json!("$(B) and $(A"));
    assert_eq!(expand("€$é$", &v), json!("€$é$"));
}

#[test]
fn without_vars_nothing_is_expanded() {
    let mut map = build();
    let before = map.clone();
    resolve_with(&mut map, &[], &specs(&["spec/template/spec/containers/command"])).unwrap();
    assert_eq!(map, before);
}

#[test]
fn objects_are_bound_by_any_id_and_any_namespace_when_none_is_given() {
    let mut map = build();
    map.get_mut(0).set_name("p-svc");
    let vars = &all_vars()[..1];
    let map = bound(map, vars);
    assert_eq!(var_values(&map, vars).unwrap()["SVC"], "p-svc");
}

#[test]
fn a_given_namespace_must_match() {
    let wrong = [var("{name: SVC, objRef: {kind: Service, name: svc, version: v1, namespace: wrong}}")];
    let err = var_values(&bound(build(), &wrong), &wrong).unwrap_err();
    assert!(
        err.to_string().contains(
            "var '{SVC Service.v1.[noGrp] {metadata.name}}' cannot be mapped to a field in the set of known resources"
        ),
        "{err}"
    );
    let right = [var("{name: SVC, objRef: {kind: Service, name: svc, version: v1, namespace: other}}")];
    assert!(var_values(&bound(build(), &right), &right).is_ok());
}

#[test]
fn the_version_must_match_too() {
    let no_version = [var("{name: SVC, objRef: {kind: Service, name: svc}}")];
    let err = var_values(&bound(build(), &no_version), &no_version).unwrap_err();
    assert!(err.to_string().contains("{SVC Service.[noVer].[noGrp] {metadata.name}}"), "{err}");
}

#[test]
fn a_missing_field_is_an_error() {
    let missing =
        [var("{name: X, objRef: {kind: Service, name: svc, version: v1}, fieldRef: {fieldPath: spec.nothing}}")];
    let err = var_values(&bound(build(), &missing), &missing).unwrap_err();
    assert!(
        err.to_string().contains(
            "field specified in var '{X Service.v1.[noGrp] {spec.nothing}}' not found in corresponding resource"
        ),
        "{err}"
    );
}

#[test]
fn ambiguous_objects_are_an_error_where_the_var_is_declared() {
    let mut map = build();
    map.append(
        Resource::new(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "third"}}),
        ),
        "t",
    )
    .unwrap();
    let err = bind(&mut map, &all_vars()[0]).unwrap_err();
    assert!(err.to_string().contains("found 2 resId matches for var"), "{err}");
}

#[test]
fn the_binding_sticks_to_the_object_named_where_the_var_is_declared() {
    // A base declares the var while only its own `service` exists.
    let declared = [var("{name: SVC, objRef: {kind: Service, name: service, apiVersion: v1}}")];
    let mut map = ResMap::new();
    map.append(Resource::new(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "service"}})), "a")
        .unwrap();
    bind(&mut map, &declared[0]).unwrap();
    // Another base brings an object with the same name; parents add prefixes.
    map.append(
        Resource::new(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "service", "namespace": "kubeflow"}}),
        ),
        "b",
    )
    .unwrap();
    map.get_mut(0).set_name("a-service");
    map.get_mut(1).set_name("b-service");
    assert_eq!(var_values(&map, &declared).unwrap()["SVC"], "a-service");
}

#[test]
fn field_specs_select_kinds_and_walk_lists() {
    let vars = all_vars();
    let mut map = bound(build(), &vars);
    let mut only_services = specs(&["spec/template/spec/containers/command"]);
    only_services[0].kind = "Service".into();
    let before: Vec<Value> = build().iter().map(|r| r.obj.clone()).collect();
    resolve_with(&mut map, &vars, &only_services).unwrap();
    assert_eq!(map.iter().map(|r| r.obj.clone()).collect::<Vec<_>>(), before);
}

#[test]
fn a_scalar_in_the_middle_of_a_path_is_an_error() {
    let vars = all_vars();
    let err = resolve_with(&mut bound(build(), &vars), &vars, &specs(&["metadata/name/x"])).unwrap_err();
    assert!(err.to_string().contains("considering field 'metadata/name/x' of object Service.v1.[noGrp]/svc.other: expected sequence or mapping node"), "{err}");
}

#[test]
fn a_list_with_non_strings_is_an_error() {
    let vars = all_vars();
    let mut map = bound(build(), &vars);
    map.append(
        Resource::new(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"args": ["a", 1]}}),
        ),
        "t",
    )
    .unwrap();
    let err = resolve_with(&mut map, &vars, &specs(&["spec/args"])).unwrap_err();
    assert!(err.to_string().contains("invalid value type expect a string"), "{err}");
}

#[test]
fn maps_expand_their_string_values() {
    let vars = all_vars();
    let mut map = bound(build(), &vars);
    map.append(Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "$(SVC)", "b": 2}})), "t").unwrap();
    resolve_with(&mut map, &vars, &specs(&["data"])).unwrap();
    assert_eq!(map.get(2).obj["data"], json!({"a": "svc", "b": 2}));
}

#[test]
fn an_object_expanding_another_entrys_var_records_that_entry() {
    let vars = all_vars();
    let mut map = build();
    map.iter_mut().for_each(|r| r.origin = Some(if r.kind() == "Service" { "../svc".into() } else { "../web".into() }));
    let mut map = bound(map, &vars);
    resolve_with(&mut map, &vars, &specs(&["spec/template/spec/containers/command"])).unwrap();
    let web = map.iter().find(|r| r.kind() == "Deployment").unwrap();
    let by: Vec<&str> = web.influenced_by.iter().map(|o| &**o).collect();
    assert_eq!(by, ["../svc"]);
    assert!(map.iter().find(|r| r.kind() == "Service").unwrap().influenced_by.is_empty());
}
