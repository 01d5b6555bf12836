//! Tests of `replacements.rs`: one named test per rule, expected values recorded with kustomize v5.6.

use super::*;
use crate::loader::LoadRestriction;
use serde_json::json;
use std::sync::Arc;

fn resources() -> ResMap {
    let mut map = ResMap::new();
    for obj in [
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "ac", "image": "a", "args": ["x", "y"]}, {"name": "ca", "image": "b"}, {"name": "z", "image": "redis"}]}}}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "labels": {"app": "api"}}, "spec": {"replicas": 2}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
            "data": {"n": "7", "host": "svc.ns.cluster.local", "s": "abc"}, "spec": {"m": {"k": "v"}, "num": 3, "f": 1.5}}),
    ] {
        map.append(Resource::new(obj), "test").unwrap();
    }
    map
}

fn replacement(yaml: &str) -> Replacement {
    serde_json::from_value(kfctl_yaml::parse_stream(yaml, "test").unwrap().remove(0)).unwrap()
}

fn run(map: &mut ResMap, yaml: &str) -> Result<()> {
    apply_one(map, &replacement(yaml))
}

fn obj<'a>(map: &'a ResMap, name: &str) -> &'a Value {
    &map.iter().find(|r| r.name() == name).unwrap().obj
}

#[test]
fn a_number_target_stays_a_number_and_a_string_target_a_string() {
    let mut map = resources();
    run(
        &mut map,
        "source: {kind: ConfigMap, fieldPath: data.n}\ntargets: [{select: {name: api}, fieldPaths: [spec.replicas]}]",
    )
    .unwrap();
    run(&mut map, "source: {kind: ConfigMap, fieldPath: spec.num}\ntargets: [{select: {name: web}, fieldPaths: [spec.template.spec.containers.0.image]}]").unwrap();
    assert_eq!(obj(&map, "api")["spec"]["replicas"], 7);
    assert_eq!(obj(&map, "web")["spec"]["template"]["spec"]["containers"][0]["image"], "3");
}

#[test]
fn text_that_does_not_fit_a_typed_target_is_an_error() {
    let err = run(
        &mut resources(),
        "source: {kind: ConfigMap, fieldPath: data.s}\ntargets: [{select: {name: api}, fieldPaths: [spec.replicas]}]",
    )
    .unwrap_err();
    assert!(err.to_string().contains("cannot decode !!str `abc` as a !!int"), "{err}");
}

#[test]
fn a_map_source_replaces_collections_and_empties_strings() {
    let mut map = resources();
    run(&mut map, "source: {kind: ConfigMap, fieldPath: spec.m}\ntargets: [{select: {name: web}, fieldPaths: [spec.template.spec.containers.0.args, spec.template.spec.containers.1.image]}]").unwrap();
    let containers = &obj(&map, "web")["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["args"], json!({"k": "v"}));
    assert_eq!(containers[1]["image"], "");
}

#[test]
fn the_source_must_match_exactly_one_object() {
    let err = run(
        &mut resources(),
        "source: {kind: ConfigMap, name: nope, fieldPath: data.n}\ntargets: [{select: {kind: Deployment}}]",
    )
    .unwrap_err();
    assert!(err.to_string().contains("nothing selected by ConfigMap.[noVer].[noGrp]/nope.[noNs]:data.n"), "{err}");
    let err = run(&mut resources(), "source: {kind: Deployment}\ntargets: [{select: {kind: ConfigMap}}]").unwrap_err();
    assert!(
        err.to_string()
            .contains("multiple matches for selector Deployment.[noVer].[noGrp]/[noName].[noNs]:metadata.name"),
        "{err}"
    );
}

#[test]
fn a_missing_source_field_is_an_error() {
    let err =
        run(&mut resources(), "source: {kind: ConfigMap, fieldPath: data.zz}\ntargets: [{select: {kind: Deployment}}]")
            .unwrap_err();
    assert!(
        err.to_string().contains(
            "fieldPath `data.zz` is missing for replacement source ConfigMap.[noVer].[noGrp]/[noName].[noNs]"
        ),
        "{err}"
    );
}

#[test]
fn source_and_target_delimiters_pick_and_place_parts() {
    let mut map = resources();
    run(
        &mut map,
        "source: {kind: ConfigMap, fieldPath: data.host, options: {delimiter: '.', index: 1}}\ntargets:\n- select: {name: web}\n  fieldPaths: [spec.template.spec.containers.2.image]\n  options: {delimiter: /, index: 5}\n- select: {name: web}\n  fieldPaths: [spec.template.spec.containers.1.image]\n  options: {delimiter: /, index: -1}",
    )
    .unwrap();
    let containers = &obj(&map, "web")["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[2]["image"], "redis/ns");
    assert_eq!(containers[1]["image"], "ns/b");
    let err = run(&mut resources(), "source: {kind: ConfigMap, fieldPath: data.host, options: {delimiter: '.', index: 9}}\ntargets: [{select: {name: web}}]").unwrap_err();
    assert!(err.to_string().contains("options.index 9 is out of bounds"), "{err}");
}

#[test]
fn list_matches_are_unanchored_regexes_and_star_is_every_element() {
    let mut map = resources();
    run(&mut map, "source: {kind: ConfigMap, fieldPath: data.n}\ntargets: [{select: {name: web}, fieldPaths: ['spec.template.spec.containers.[name=c].image', 'spec.template.spec.containers.*.name']}]").unwrap();
    let containers = obj(&map, "web")["spec"]["template"]["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.iter().map(|c| c["image"].as_str().unwrap()).collect::<Vec<_>>(), ["7", "7", "redis"]);
    assert!(containers.iter().all(|c| c["name"] == "7"));
}

#[test]
fn a_target_path_that_finds_nothing_is_an_error() {
    let err = run(&mut resources(), "source: {kind: ConfigMap, fieldPath: data.n}\ntargets: [{select: {name: api}, fieldPaths: [metadata.nothere]}]").unwrap_err();
    assert!(err.to_string().contains("unable to find field \"metadata.nothere\" in replacement target"), "{err}");
    let err = run(&mut resources(), "source: {kind: ConfigMap, fieldPath: data.n}\ntargets: [{select: {name: web}, fieldPaths: [spec.template.spec.containers.image]}]").unwrap_err();
    assert!(err.to_string().contains("wrong node kind: expected MappingNode but got SequenceNode"), "{err}");
}

#[test]
fn create_makes_missing_fields_typed_as_yaml_reads_them() {
    let mut map = resources();
    run(&mut map, "source: {kind: ConfigMap, fieldPath: data.n}\ntargets: [{select: {name: api}, fieldPaths: [spec.new.field, 'spec.list.[name=x].value', metadata.annotations.q], options: {create: true}}]").unwrap();
    let api = obj(&map, "api");
    assert_eq!(api["spec"]["new"]["field"], 7);
    assert_eq!(api["spec"]["list"], json!([{"name": "x", "value": 7}]));
    let err = run(&mut resources(), "source: {kind: ConfigMap, fieldPath: data.n}\ntargets: [{select: {name: api}, fieldPaths: ['spec.*'], options: {create: true}}]").unwrap_err();
    assert!(err.to_string().contains("cannot support create option in a multi-value target"), "{err}");
}

#[test]
fn selection_uses_any_id_and_rejects_on_any_id_and_labels() {
    let mut map = resources();
    for r in map.iter_mut() {
        let name = format!("p-{}", r.name());
        r.set_name(&name);
    }
    run(&mut map, "source: {kind: ConfigMap, name: cm, fieldPath: data.n}\ntargets:\n- select: {kind: Deployment}\n  reject: [{name: web}, {labelSelector: app=zzz}]\n  fieldPaths: [spec.replicas]").unwrap();
    assert_eq!(obj(&map, "p-api")["spec"]["replicas"], 7);
    assert_eq!(obj(&map, "p-web")["spec"]["replicas"], 1);
    run(&mut map, "source: {kind: ConfigMap, name: cm, fieldPath: data.s}\ntargets:\n- select: {labelSelector: app=api}\n  fieldPaths: [metadata.labels.app]").unwrap();
    assert_eq!(obj(&map, "p-api")["metadata"]["labels"]["app"], "abc");
    assert_eq!(obj(&map, "p-web")["metadata"]["labels"]["app"], "web");
}

#[test]
fn the_default_field_path_is_the_name() {
    let mut map = resources();
    run(&mut map, "source: {kind: ConfigMap}\ntargets: [{select: {name: api}, fieldPaths: [metadata.labels.app]}]")
        .unwrap();
    run(&mut map, "source: {kind: ConfigMap, fieldPath: data.s}\ntargets: [{select: {name: api}}]").unwrap();
    assert_eq!(obj(&map, "abc")["metadata"]["labels"]["app"], "cm");
}

#[test]
fn bracketed_keys_without_equals_are_plain_keys() {
    assert_eq!(
        split_field_path("metadata.annotations.[cert-manager.io/inject-ca-from]"),
        ["metadata", "annotations", "cert-manager.io/inject-ca-from"]
    );
    assert_eq!(split_field_path("spec.containers.[name=a.b].image"), ["spec", "containers", "[name=a.b]", "image"]);
    assert_eq!(split_field_path(r"metadata.annotations.example\.com/x"), ["metadata", "annotations", "example.com/x"]);
}

#[test]
fn created_fields_take_delimited_parts_in_turn() {
    let mut map = resources();
    let targets = "targets: [{select: {name: api}, fieldPaths: ['metadata.annotations.[cert-manager.io/inject-ca-from]'], options: {delimiter: /, create: true}}]";
    run(&mut map, &format!("source: {{kind: ConfigMap, fieldPath: data.s}}\n{targets}")).unwrap();
    run(
        &mut map,
        &format!(
            "source: {{kind: ConfigMap, fieldPath: data.n}}\n{}",
            targets.replace("create: true", "index: 1, create: true")
        ),
    )
    .unwrap();
    assert_eq!(obj(&map, "api")["metadata"]["annotations"]["cert-manager.io/inject-ca-from"], "abc/7");
}

#[test]
fn a_replacement_needs_a_source_targets_and_a_select() {
    assert!(run(&mut resources(), "targets: []").is_err());
    let err = run(&mut resources(), "source: {kind: ConfigMap}\ntargets: [{fieldPaths: [spec]}]").unwrap_err();
    assert!(err.to_string().contains("target must specify resources to select"), "{err}");
}

#[test]
fn path_entries_hold_one_replacement_or_a_list() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.yaml"), "- source: {kind: ConfigMap, fieldPath: data.n}\n  targets: [{select: {name: api}, fieldPaths: [spec.replicas]}]\n").unwrap();
    std::fs::write(dir.path().join("one.yaml"), "source: {kind: ConfigMap, fieldPath: data.s}\ntargets: [{select: {name: web}, fieldPaths: [metadata.labels.app]}]\n").unwrap();
    let entries: Vec<ReplacementEntry> =
        serde_json::from_value(json!([{"path": "list.yaml"}, {"path": "one.yaml"}])).unwrap();
    let loader = Loader::new(Arc::new(crate::remote::NoRemote), LoadRestriction::RootOnly);
    let mut map = resources();
    apply(&mut map, &entries, dir.path(), &loader).unwrap();
    assert_eq!(obj(&map, "api")["spec"]["replicas"], 7);
    assert_eq!(obj(&map, "web")["metadata"]["labels"]["app"], "abc");
}
