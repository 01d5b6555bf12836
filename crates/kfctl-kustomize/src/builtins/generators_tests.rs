//! Tests of `generators.rs`: one named test per rule, expected values recorded with kustomize v5.6.

use super::*;
use crate::loader::LoadRestriction;
use serde_json::json;
use std::sync::Arc;

fn args(yaml: &str) -> GeneratorArgs {
    let value: Value = kfctl_yaml::parse_stream(yaml, "test").unwrap().remove(0);
    serde_json::from_value(value).unwrap()
}

fn literal_pairs(pairs: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect()
}

fn loader() -> Loader {
    Loader::new(Arc::new(crate::remote::NoRemote), LoadRestriction::RootOnly)
}

fn existing(obj: Value) -> ResMap {
    let mut map = ResMap::new();
    map.append(Resource::new(obj), "base").unwrap();
    map
}

#[test]
fn config_map_keys_come_out_sorted() {
    let r =
        generate(GeneratedKind::ConfigMap, &args("name: cm"), None, literal_pairs(&[("z", "1"), ("a", "2")])).unwrap();
    assert_eq!(r.obj["data"], json!({"a": "2", "z": "1"}));
    assert_eq!(r.obj["data"].as_object().unwrap().keys().collect::<Vec<_>>(), ["a", "z"]);
    assert_eq!(r.generated, Some(Generated { behavior: Behavior::Create, needs_hash: true }));
}

#[test]
fn non_utf8_values_go_to_binary_data() {
    let pairs = vec![("bin.dat".to_string(), vec![0xff, 0xfe, 0x00]), ("t".to_string(), b"x".to_vec())];
    let r = generate(GeneratedKind::ConfigMap, &args("name: cm"), None, pairs).unwrap();
    assert_eq!(r.obj["binaryData"], json!({"bin.dat": "//4A"}));
    assert_eq!(r.obj["data"], json!({"t": "x"}));
}

#[test]
fn secrets_are_base64_with_a_default_type() {
    let r = generate(GeneratedKind::Secret, &args("name: s"), None, literal_pairs(&[("b", "2"), ("a", "1")])).unwrap();
    assert_eq!(r.obj["data"], json!({"a": "MQ==", "b": "Mg=="}));
    assert_eq!(r.obj["type"], "Opaque");
    let tls = generate(GeneratedKind::Secret, &args("{name: s, type: kubernetes.io/tls}"), None, vec![]).unwrap();
    assert_eq!(tls.obj["type"], "kubernetes.io/tls");
    assert_eq!(tls.obj["data"], json!({}));
}

#[test]
fn namespace_and_immutable_come_from_args_and_options() {
    let r =
        generate(GeneratedKind::Secret, &args("{name: a, namespace: ns, options: {immutable: true}}"), None, vec![])
            .unwrap();
    assert_eq!(r.namespace(), "ns");
    assert_eq!(r.obj["immutable"], true);
}

#[test]
fn local_options_win_over_global_except_true_booleans() {
    let local = args("{name: a, options: {labels: {l: local, x: local}, disableNameSuffixHash: false}}").options;
    let global: GeneratorOptions = serde_json::from_value(
        json!({"labels": {"l": "global", "g": "global"}, "annotations": {"a": "g"}, "disableNameSuffixHash": true}),
    )
    .unwrap();
    let merged = merged_options(local.as_ref(), Some(&global));
    assert_eq!(merged.labels.get("l").unwrap(), "local");
    assert_eq!(merged.labels.get("g").unwrap(), "global");
    assert_eq!(merged.annotations.get("a").unwrap(), "g");
    assert_eq!(merged.disable_name_suffix_hash, Some(true));
}

#[test]
fn disabled_hash_is_recorded() {
    let r =
        generate(GeneratedKind::ConfigMap, &args("{name: a, options: {disableNameSuffixHash: true}}"), None, vec![])
            .unwrap();
    assert!(!r.generated.unwrap().needs_hash);
}

#[test]
fn a_generator_needs_a_name() {
    assert!(generate(GeneratedKind::ConfigMap, &args("literals: [a=1]"), None, vec![]).is_err());
}

#[test]
fn repeated_keys_are_refused() {
    let err = generate(GeneratedKind::ConfigMap, &args("name: a"), None, literal_pairs(&[("x", "1"), ("x", "2")]))
        .unwrap_err();
    assert!(err.to_string().contains("illegally repeats the key `x`"), "{err}");
}

#[test]
fn env_files_skip_comments_and_blanks_and_keep_values_raw() {
    let pairs = parse_env_file(b"\xEF\xBB\xBFB=2\n# c\n\n  A=1 \r\nC\nD=\"q\"\nE=a=b").unwrap();
    let expected = [("B", "2"), ("A", "1 "), ("C", ""), ("D", "\"q\""), ("E", "a=b")];
    assert_eq!(pairs, expected.map(|(k, v)| (k.to_string(), v.to_string())));
}

#[test]
fn env_files_must_be_utf8() {
    assert!(parse_env_file(b"A=\xff\n").is_err());
}

#[test]
fn literals_lose_one_pair_of_matching_quotes() {
    assert_eq!(parse_literal("y='quoted'").unwrap(), ("y".into(), "quoted".into()));
    assert_eq!(parse_literal("x=\"dq\"").unwrap(), ("x".into(), "dq".into()));
    assert_eq!(parse_literal("w=a=b").unwrap(), ("w".into(), "a=b".into()));
    assert_eq!(parse_literal("m='mixed\"").unwrap(), ("m".into(), "'mixed\"".into()));
    assert_eq!(parse_literal("e=").unwrap(), ("e".into(), "".into()));
    assert!(parse_literal("x").is_err());
    assert!(parse_literal("=x").is_err());
}

#[test]
fn file_sources_default_the_key_to_the_base_name() {
    assert_eq!(parse_file_source("dir/z.txt").unwrap(), ("z.txt".into(), "dir/z.txt".into()));
    assert_eq!(parse_file_source("k2=z.txt").unwrap(), ("k2".into(), "z.txt".into()));
    assert!(parse_file_source("=z.txt").is_err());
    assert!(parse_file_source("k=").is_err());
    assert!(parse_file_source("k=a=b").is_err());
}

#[test]
fn long_base64_values_are_broken_into_lines_of_70() {
    let mut bytes = vec![b'a'; 60];
    bytes.push(0xff);
    let expected = "YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYW\nFhYWFhYWFh/w==\n";
    assert_eq!(base64_lines(&bytes), expected);
    assert_eq!(base64_lines(&[b'b'; 51]).len(), 68);
    let cm =
        generate(GeneratedKind::ConfigMap, &args("name: cm"), None, vec![("long.txt".into(), bytes.clone())]).unwrap();
    assert_eq!(cm.obj["binaryData"]["long.txt"], expected);
    let secret = generate(GeneratedKind::Secret, &args("name: s"), None, vec![("long.txt".into(), bytes)]).unwrap();
    assert_eq!(secret.obj["data"]["long.txt"], expected);
    // Hashes recorded with kustomize v5.6 for these objects.
    assert_eq!(super::super::hash::content_hash(&secret.obj), "6267hmc2c8");
}

#[test]
fn base64_pads_like_the_standard_encoding() {
    assert_eq!(base64(b""), "");
    assert_eq!(base64(b"1"), "MQ==");
    assert_eq!(base64(b"ab"), "YWI=");
    assert_eq!(base64(b"abc"), "YWJj");
    assert_eq!(base64(&[0xff, 0xfe]), "//4=");
}

#[test]
fn sources_load_in_kustomize_order_through_the_loader() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.env"), "E=1\n").unwrap();
    std::fs::write(dir.path().join("f.txt"), "hello\n").unwrap();
    let a = args("{name: cm, files: [f.txt, k2=f.txt], literals: [L=2], envs: [a.env]}");
    let pairs = load_pairs(&a, dir.path(), &loader()).unwrap();
    let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["E", "L", "f.txt", "k2"]);
    assert_eq!(pairs[2].1, b"hello\n");
}

#[test]
fn file_sources_obey_the_load_restriction() {
    let outer = tempfile::tempdir().unwrap();
    let inner = outer.path().join("k");
    std::fs::create_dir(&inner).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "x").unwrap();
    let err = load_pairs(&args("{name: cm, files: [../secret.txt]}"), &inner, &loader()).unwrap_err();
    assert!(err.to_string().starts_with("security:"), "{err}");
}

#[test]
fn create_appends_and_refuses_an_existing_id() {
    let mut map = ResMap::new();
    let make = || generate(GeneratedKind::ConfigMap, &args("name: a"), None, literal_pairs(&[("x", "1")])).unwrap();
    absorb(&mut map, make(), "k").unwrap();
    let err = absorb(&mut map, make(), "k").unwrap_err();
    assert!(err.to_string().contains("exists; behavior must be merge or replace"), "{err}");
}

#[test]
fn merge_or_replace_needs_an_existing_object() {
    let r = generate(GeneratedKind::ConfigMap, &args("{name: a, behavior: merge}"), None, vec![]).unwrap();
    let err = absorb(&mut ResMap::new(), r, "k").unwrap_err();
    assert!(err.to_string().contains("does not exist; cannot merge or replace"), "{err}");
}

#[test]
fn merge_keeps_the_old_identity_and_merges_data_and_metadata() {
    let mut base = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"x": "base", "y": "base"}, "annotations": {"ab": "base"}}, "data": {"a": "1", "b": "2"}}));
    base.set_name("p-a");
    base.generated = Some(Generated { behavior: Behavior::Create, needs_hash: true });
    let mut map = ResMap::new();
    map.append(base, "base").unwrap();
    let overlay = args("{name: a, behavior: merge, options: {labels: {x: ov, z: ov}}}");
    let r = generate(GeneratedKind::ConfigMap, &overlay, None, literal_pairs(&[("b", "3"), ("c", "4")])).unwrap();
    absorb(&mut map, r, "ov").unwrap();
    let merged = map.get(0);
    assert_eq!(merged.name(), "p-a");
    assert_eq!(merged.original_id().name, "a");
    assert_eq!(merged.obj["data"], json!({"a": "1", "b": "3", "c": "4"}));
    assert_eq!(merged.obj["metadata"]["labels"], json!({"x": "ov", "y": "base", "z": "ov"}));
    assert_eq!(merged.obj["metadata"]["annotations"], json!({"ab": "base"}));
    assert!(merged.generated.as_ref().unwrap().needs_hash);
}

#[test]
fn replace_drops_the_old_data() {
    let mut map = existing(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}, "data": {"old": "1"}}),
    );
    let r = generate(
        GeneratedKind::ConfigMap,
        &args("{name: a, namespace: ns, behavior: replace}"),
        None,
        literal_pairs(&[("new", "2")]),
    )
    .unwrap();
    absorb(&mut map, r, "ov").unwrap();
    assert_eq!(map.get(0).obj["data"], json!({"new": "2"}));
    assert_eq!(map.get(0).namespace(), "ns");
}

#[test]
fn merging_into_a_plain_object_adds_no_hash() {
    let mut map =
        existing(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}, "data": {"zz": "1"}}));
    let r = generate(
        GeneratedKind::ConfigMap,
        &args("{name: plain, behavior: merge}"),
        None,
        literal_pairs(&[("mm", "3")]),
    )
    .unwrap();
    absorb(&mut map, r, "ov").unwrap();
    assert!(map.get(0).generated.is_none());
    assert_eq!(map.get(0).obj["data"], json!({"mm": "3", "zz": "1"}));
}

#[test]
fn hash_survives_a_merge_only_if_both_sides_want_it() {
    for (old_hash, new_disabled, expected) in [(true, false, true), (true, true, false), (false, false, false)] {
        let mut base = generate(GeneratedKind::ConfigMap, &args("name: a"), None, vec![]).unwrap();
        base.generated.as_mut().unwrap().needs_hash = old_hash;
        let mut map = ResMap::new();
        map.append(base, "base").unwrap();
        let text = format!("{{name: a, behavior: replace, options: {{disableNameSuffixHash: {new_disabled}}}}}");
        absorb(&mut map, generate(GeneratedKind::ConfigMap, &args(&text), None, vec![]).unwrap(), "ov").unwrap();
        assert_eq!(map.get(0).generated.as_ref().unwrap().needs_hash, expected, "{old_hash} {new_disabled}");
    }
}
