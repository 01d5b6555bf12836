//! Tests of `patches.rs`: one named test per rule, expected values recorded with kustomize v5.6.

use super::*;
use crate::loader::LoadRestriction;
use serde_json::json;
use std::sync::Arc;

fn loader() -> Loader {
    Loader::new(Arc::new(crate::remote::NoRemote), LoadRestriction::RootOnly)
}

fn resources() -> ResMap {
    let mut map = ResMap::new();
    for obj in [
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 1}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"}, "spec": {"replicas": 2}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}),
    ] {
        map.append(Resource::new(obj), "test").unwrap();
    }
    map
}

fn entry(yaml: &str) -> Patch {
    let value = kfctl_yaml::parse_stream(yaml, "test").unwrap().remove(0);
    serde_json::from_value(value).unwrap()
}

fn run(map: &mut ResMap, yaml: &str) -> Result<()> {
    let dir = tempfile::tempdir().unwrap();
    patches(map, &[entry(yaml)], dir.path(), &loader())
}

fn find<'a>(map: &'a ResMap, name: &str) -> &'a Value {
    &map.iter().find(|r| r.name() == name).unwrap_or_else(|| panic!("no {name}")).obj
}

#[test]
fn untargeted_patch_applies_to_the_object_with_its_id() {
    let mut map = resources();
    run(&mut map, "patch: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cm}\n  data: {b: '2'}\n").unwrap();
    assert_eq!(find(&map, "cm")["data"], json!({"a": "1", "b": "2"}));
}

#[test]
fn untargeted_patch_finds_a_renamed_object_by_its_old_name() {
    let mut map = resources();
    map.get_mut(2).set_name("p-cm");
    run(&mut map, "patch: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cm}\n  data: {b: '2'}\n").unwrap();
    assert_eq!(find(&map, "p-cm")["data"]["b"], "2");
    assert_eq!(find(&map, "p-cm")["metadata"]["name"], "p-cm");
}

#[test]
fn untargeted_patch_without_a_match_fails_in_kustomize_words() {
    let mut map = resources();
    let err =
        run(&mut map, "patch: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: nope}\n  data: {b: '2'}\n")
            .unwrap_err();
    assert!(
        err.to_string().contains(
            "no resource matches strategic merge patch \"ConfigMap.v1.[noGrp]/nope.[noNs]\": no matches for Id ConfigMap.v1.[noGrp]/nope.[noNs]; failed to find unique target for patch ConfigMap.v1.[noGrp]/nope.[noNs]"
        ),
        "{err}"
    );
}

#[test]
fn kustomize_id_form_names_every_part() {
    let id = ResId::new(
        crate::gvk::Gvk::new("networking.k8s.io", "v1", "NetworkPolicy"),
        "default-allow-same-namespace",
        "kubeflow",
    );
    assert_eq!(kid(&id), "NetworkPolicy.v1.networking.k8s.io/default-allow-same-namespace.kubeflow");
}

#[test]
fn several_documents_apply_in_turn_and_delete_removes_the_object() {
    let mut map = resources();
    let text = "patch: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cm}\n  data: {b: '2'}\n  ---\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: api}\n  $patch: delete\n";
    run(&mut map, text).unwrap();
    assert_eq!(map.len(), 2);
    assert!(map.iter().all(|r| r.name() != "api"));
}

#[test]
fn targeted_patch_applies_to_every_selected_object_keeping_names() {
    let mut map = resources();
    run(&mut map, "target: {kind: Deployment}\npatch: |\n  kind: Whatever\n  metadata: {name: x, namespace: zz}\n  spec: {replicas: 3}\n").unwrap();
    for name in ["web", "api"] {
        let obj = find(&map, name);
        assert_eq!(obj["spec"]["replicas"], 3);
        assert_eq!(obj["kind"], "Deployment");
        assert!(obj["metadata"].get("namespace").is_none());
    }
    assert_eq!(find(&map, "cm")["data"], json!({"a": "1"}));
}

#[test]
fn a_target_with_several_documents_is_refused() {
    let mut map = resources();
    let text = "target: {kind: Deployment}\npatch: |\n  kind: Deployment\n  metadata: {name: a}\n  ---\n  kind: Deployment\n  metadata: {name: b}\n";
    let err = run(&mut map, text).unwrap_err();
    assert!(err.to_string().contains("Multiple Strategic-Merge Patches in one `patches` entry"), "{err}");
}

#[test]
fn options_allow_name_and_kind_changes_but_never_namespace() {
    let mut map = resources();
    let text = "target: {kind: ConfigMap}\noptions: {allowNameChange: true, allowKindChange: true}\npatch: |\n  apiVersion: v1\n  kind: Secret\n  metadata: {name: newname, namespace: zz}\n";
    run(&mut map, text).unwrap();
    let renamed = map.iter().find(|r| r.name() == "newname").unwrap();
    assert_eq!(renamed.kind(), "Secret");
    assert_eq!(renamed.namespace(), "");
    assert_eq!(renamed.original_id().name, "cm");
}

#[test]
fn json_patches_in_yaml_or_json_apply_to_targets() {
    let mut map = resources();
    run(
        &mut map,
        "target: {kind: Deployment, name: api}\npatch: |\n  - op: replace\n    path: /spec/replicas\n    value: 4\n",
    )
    .unwrap();
    run(&mut map, "target: {kind: Deployment, name: web}\npatch: '[{\"op\": \"replace\", \"path\": \"/metadata/name\", \"value\": \"web2\"}]'\n").unwrap();
    assert_eq!(find(&map, "api")["spec"]["replicas"], 4);
    let web2 = map.iter().find(|r| r.name() == "web2").unwrap();
    assert_eq!(web2.original_id().name, "web");
    // Selection still finds the object by its original name.
    run(&mut map, "target: {kind: Deployment, name: web}\npatch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 3}]'\n").unwrap();
    assert_eq!(find(&map, "web2")["spec"]["replicas"], 3);
}

#[test]
fn json_replace_of_a_missing_key_in_an_existing_map_adds_it() {
    let mut map = resources();
    run(
        &mut map,
        "target: {kind: ConfigMap}\npatch: '[{\"op\": \"replace\", \"path\": \"/data/new\", \"value\": \"v\"}]'\n",
    )
    .unwrap();
    assert_eq!(find(&map, "cm")["data"]["new"], "v");
    assert!(
        run(
            &mut map,
            "target: {kind: ConfigMap}\npatch: '[{\"op\": \"replace\", \"path\": \"/nothere/x\", \"value\": 1}]'\n"
        )
        .is_err()
    );
}

#[test]
fn json_patch_without_target_is_refused() {
    let err = run(&mut resources(), "patch: |\n  - op: replace\n    path: /spec/replicas\n    value: 4\n").unwrap_err();
    assert!(err.to_string().contains("must specify a target for JSON patch"), "{err}");
}

#[test]
fn json_patch_on_a_missing_path_fails_and_changes_nothing() {
    let mut map = resources();
    let before = map.clone();
    let text = "target: {kind: Deployment, name: api}\npatch: |\n  - op: replace\n    path: /spec/replicas\n    value: 9\n  - op: replace\n    path: /spec/nothere/x\n    value: 4\n";
    assert!(run(&mut map, text).is_err());
    assert_eq!(map, before);
}

#[test]
fn a_patch_file_of_only_comments_qualifies_as_both_kinds_like_kustomize() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.yaml"), "# nothing\n").unwrap();
    let err = patches(&mut resources(), &[entry("path: empty.yaml")], dir.path(), &loader()).unwrap_err();
    assert!(
        err.to_string().contains("illegally qualifies as both an SM and JSON patch: [path: \"empty.yaml\"]"),
        "{err}"
    );
}

#[test]
fn an_empty_patch_file_is_an_empty_json_patch_that_needs_a_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.yaml"), "").unwrap();
    let err = patches(&mut resources(), &[entry("path: empty.yaml")], dir.path(), &loader()).unwrap_err();
    assert!(err.to_string().contains("must specify a target for JSON patch [path: \"empty.yaml\"]"), "{err}");
    let mut map = resources();
    let before = map.clone();
    patches(&mut map, &[entry("path: empty.yaml\ntarget: {kind: Deployment}")], dir.path(), &loader()).unwrap();
    assert_eq!(map, before);
}

#[test]
fn text_that_is_neither_kind_of_patch_is_refused() {
    let err = run(&mut resources(), "target: {kind: Deployment}\npatch: |\n  spec:\n    replicas: 5\n").unwrap_err();
    assert!(
        err.to_string().contains("unable to parse SM or JSON patch from [patch: \"spec:\\n  replicas: 5\"]"),
        "{err}"
    );
}

#[test]
fn patches_strategic_merge_takes_inline_yaml_and_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n$patch: delete\n",
    )
    .unwrap();
    let inline = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec: {paused: true}\n".to_string();
    let mut map = resources();
    strategic_merge_files(&mut map, &[inline, "p.yaml".into()], dir.path(), &loader()).unwrap();
    assert_eq!(map.len(), 2);
    assert_eq!(find(&map, "api")["spec"]["paused"], true);
}

#[test]
fn patches_strategic_merge_without_a_match_fails() {
    let dir = tempfile::tempdir().unwrap();
    let inline = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nope}\n".to_string();
    let err = strategic_merge_files(&mut resources(), &[inline], dir.path(), &loader()).unwrap_err();
    assert!(
        err.to_string().contains("no matches for Id ConfigMap.v1.[noGrp]/nope.[noNs]; failed to find unique target"),
        "{err}"
    );
}

#[test]
fn patches_strategic_merge_with_only_empty_files_is_refused_as_kustomize_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), "# nothing here\n").unwrap();
    std::fs::write(dir.path().join("b.yaml"), "").unwrap();
    let paths = ["a.yaml".to_string(), "b.yaml".to_string()];
    let err = strategic_merge_files(&mut resources(), &paths, dir.path(), &loader()).unwrap_err();
    assert!(err.to_string().starts_with("patchesStrategicMerge [a.yaml, b.yaml]: patch appears to be empty"), "{err}");
    strategic_merge_files(&mut resources(), &[], dir.path(), &loader()).expect("no entries, nothing to refuse");
}

#[test]
fn patch_files_are_read_through_the_loader() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.yaml"), "- op: add\n  path: /metadata/labels/x\n  value: zz\n").unwrap();
    let mut map = resources();
    json6902(&mut map, &[entry("{path: ops.yaml, target: {kind: Deployment, name: web}}")], dir.path(), &loader())
        .unwrap();
    assert_eq!(find(&map, "web")["metadata"]["labels"]["x"], "zz");
    let err = json6902(&mut map, &[entry("{path: ../ops.yaml, target: {kind: Deployment}}")], dir.path(), &loader())
        .unwrap_err();
    assert!(err.to_string().starts_with("security:") || err.to_string().contains("cannot read"), "{err}");
}

#[test]
fn patches_json6902_needs_a_target() {
    let dir = tempfile::tempdir().unwrap();
    let err = json6902(&mut resources(), &[entry("patch: '[]'")], dir.path(), &loader()).unwrap_err();
    assert!(err.to_string().contains("must specify a target"), "{err}");
}

#[test]
fn strict_patches_refuse_a_target_that_selects_nothing_naming_the_entry() {
    let mut map = resources();
    let dir = tempfile::tempdir().unwrap();
    let ok = entry(
        "target: {kind: Deployment, name: web}\npatch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 3}]'\n",
    );
    let none = entry(
        "target: {kind: Deployment, name: nope}\npatch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 3}]'\n",
    );
    patches(&mut map, std::slice::from_ref(&none), dir.path(), &loader()).expect("kustomize does nothing");
    let e = patches_strict(&mut map, &[ok, none], dir.path(), &loader()).unwrap_err();
    assert!(
        matches!(&e, KustomizeError::TopPatch { index: 1, message } if message.contains("(kind=Deployment, name=nope) selects no object")),
        "{e}"
    );
    assert_eq!(find(&map, "web")["spec"]["replicas"], json!(3));
}
