//! Bad input to the engine: each case is a clear error naming the file or object and what to
//! do, in bounded time, never a panic.

use kfctl_kustomize::BuildOptions;
use std::path::Path;
use std::time::{Duration, Instant};

fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn build_error(dir: &Path) -> String {
    let started = Instant::now();
    let result = kfctl_kustomize::build(dir, &BuildOptions::default());
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    match result {
        Ok(r) => panic!("{} built {} objects", dir.display(), r.len()),
        Err(e) => e.to_string(),
    }
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";

#[test]
fn malformed_yaml_names_file_line_and_column() {
    let d = folder(&[
        ("kustomization.yaml", "resources:\n- bad.yaml\n"),
        ("bad.yaml", "apiVersion: v1\nkind: [unclosed\n"),
    ]);
    let e = build_error(d.path());
    assert!(e.contains("bad.yaml:") && e.contains("invalid YAML"), "{e}");
    assert!(
        e.split("bad.yaml:").nth(1).is_some_and(|rest| rest.chars().next().is_some_and(|c| c.is_ascii_digit())),
        "line number after the file: {e}"
    );
}

#[test]
fn unknown_kustomization_field_is_refused_with_its_name() {
    let d = folder(&[("kustomization.yaml", "resources: []\nnamePrefx: a-\n")]);
    let e = build_error(d.path());
    assert!(e.contains("kustomization.yaml") && e.contains("unknown field `namePrefx`"), "{e}");
}

#[test]
fn missing_resource_file_names_the_path() {
    let d = folder(&[("kustomization.yaml", "resources:\n- nowhere.yaml\n")]);
    let e = build_error(d.path());
    assert!(e.contains("nowhere.yaml"), "{e}");
}

#[test]
fn resource_cycles_are_detected() {
    let d =
        folder(&[("a/kustomization.yaml", "resources:\n- ../b\n"), ("b/kustomization.yaml", "resources:\n- ../a\n")]);
    let e = build_error(&d.path().join("a"));
    assert!(e.contains("cycle detected"), "{e}");
}

#[test]
fn duplicate_resource_ids_are_refused() {
    let d =
        folder(&[("kustomization.yaml", "resources:\n- one.yaml\n- two.yaml\n"), ("one.yaml", CM), ("two.yaml", CM)]);
    let e = build_error(d.path());
    assert!(e.contains("already registered id") && e.contains("ConfigMap.v1/cm"), "{e}");
}

#[test]
fn a_patch_that_matches_nothing_is_an_error() {
    let patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  a: c\n";
    let d = folder(&[
        ("kustomization.yaml", "resources:\n- cm.yaml\npatches:\n- path: p.yaml\n"),
        ("cm.yaml", CM),
        ("p.yaml", patch),
    ]);
    let e = build_error(d.path());
    assert!(e.contains("no resource matches strategic merge patch") && e.contains("other"), "{e}");
}

#[test]
fn files_outside_the_kustomization_folder_are_a_security_refusal() {
    let d = folder(&[
        ("outside.yaml", CM),
        ("k/kustomization.yaml", "resources:\n- cm.yaml\npatches:\n- path: ../outside.yaml\n"),
        ("k/cm.yaml", CM),
    ]);
    let e = build_error(&d.path().join("k"));
    assert!(e.starts_with("security:") && e.contains("outside.yaml"), "{e}");
}

#[test]
fn yaml_bombs_fail_fast_within_limits() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..12 {
        bomb.push_str(&format!(
            "{}: &{} [*{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}]\n",
            (b'b' + i) as char,
            (b'b' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char,
            (b'a' + i) as char
        ));
    }
    let deep = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: deep}}\ndata: {}{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    for (name, text) in [("bomb.yaml", bomb), ("deep.yaml", deep)] {
        let d = folder(&[("kustomization.yaml", &format!("resources:\n- {name}\n")), (name, &text)]);
        let e = build_error(d.path());
        assert!(e.contains(name) && (e.contains("limit") || e.contains("nest") || e.contains("alias")), "{name}: {e}");
    }
}

#[test]
fn unsupported_kustomization_fields_are_refused_by_name_never_ignored() {
    let cases = [
        ("buildMetadata", "buildMetadata: [originAnotations]\n"),
        ("validators", "validators:\n- v.yaml\n"),
        ("helmCharts", "helmCharts:\n- name: minecraft\n  repo: https://example.com\n"),
        ("helmGlobals", "helmGlobals:\n  chartHome: charts\n"),
        ("helmChartInflationGenerator", "helmChartInflationGenerator:\n- chartName: x\n"),
    ];
    for (field, yaml) in cases {
        let text = format!("resources:\n- cm.yaml\n{yaml}");
        let d = folder(&[("kustomization.yaml", text.as_str()), ("cm.yaml", CM)]);
        let e = build_error(d.path());
        assert!(e.contains("kustomization.yaml: `"), "{field}: names the file first: {e}");
        assert!(e.contains(&format!("`{field}` is not supported by kfctl-rs")), "{field}: {e}");
    }
}

#[test]
fn unsupported_fields_in_a_component_or_base_name_that_file() {
    let d = folder(&[
        ("kustomization.yaml", "resources:\n- base\n"),
        ("base/kustomization.yaml", "resources:\n- cm.yaml\nvalidators:\n- v.yaml\n"),
        ("base/cm.yaml", CM),
    ]);
    let e = build_error(d.path());
    assert!(e.contains("base/kustomization.yaml: `validators` is not supported by kfctl-rs"), "{e}");
}

#[test]
fn a_custom_openapi_schema_set_by_a_base_is_refused_by_name() {
    let d = folder(&[
        ("kustomization.yaml", "resources:\n- base\n"),
        ("base/kustomization.yaml", "resources:\n- cm.yaml\nopenapi:\n  path: schema.json\n"),
        ("base/schema.json", "{\"definitions\": {}}\n"),
        ("base/cm.yaml", CM),
    ]);
    let e = build_error(d.path());
    assert!(e.contains("base/kustomization.yaml: `openapi.path` is not supported by kfctl-rs"), "{e}");
    assert!(e.contains("move `openapi: path:` to the kustomization being built"), "{e}");
}

#[test]
fn origin_annotations_refuse_remote_resources_by_name() {
    let remote = "https://github.com/kubeflow/manifests//common/x?ref=v1.10.2";
    for list in ["resources", "components"] {
        let text = format!("buildMetadata: [originAnnotations]\nresources:\n- cm.yaml\n{list}:\n- {remote}\n");
        let d = folder(&[("kustomization.yaml", text.as_str()), ("cm.yaml", CM)]);
        let e = build_error(d.path());
        assert!(
            e.contains("`buildMetadata` is not supported by kfctl-rs") && e.contains("with the remote resource"),
            "{list}: {e}"
        );
    }
}

#[test]
fn an_invalid_custom_openapi_schema_names_the_file() {
    for (name, text) in [("schema.json", "{not json\n"), ("schema.yaml", "definitions: [a, b]\n")] {
        let kustomization = format!("resources:\n- cm.yaml\nopenapi:\n  path: {name}\n");
        let d = folder(&[("kustomization.yaml", kustomization.as_str()), (name, text), ("cm.yaml", CM)]);
        let e = build_error(d.path());
        assert!(e.contains(name) && e.contains("invalid schema file"), "{name}: {e}");
    }
}

#[test]
fn duplicate_keys_in_a_kustomization_keep_the_last_like_kustomize() {
    let d =
        folder(&[("kustomization.yaml", "resources:\n- cm.yaml\nnamePrefix: a-\nnamePrefix: b-\n"), ("cm.yaml", CM)]);
    let built = kfctl_kustomize::build(d.path(), &BuildOptions::default()).expect("builds");
    assert_eq!(kfctl_kustomize::objects(&built)[0]["metadata"]["name"], "b-cm");
}

#[test]
fn duplicate_keys_in_an_object_file_are_still_an_error() {
    let d = folder(&[
        ("kustomization.yaml", "resources:\n- cm.yaml\n"),
        ("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nkind: ConfigMap\nmetadata:\n  name: c\n"),
    ]);
    let e = build_error(d.path());
    assert!(e.contains("cm.yaml:") && e.contains("already defined"), "{e}");
}

#[test]
fn both_kustomization_yaml_and_yml_are_refused() {
    let d = folder(&[("kustomization.yaml", "resources: []\n"), ("kustomization.yml", "resources: []\n")]);
    let e = build_error(d.path());
    assert!(e.contains("more than one kustomization file (kustomization.yaml, kustomization.yml)"), "{e}");
}

#[test]
fn a_component_with_the_wrong_api_version_is_refused() {
    let d = folder(&[
        ("kustomization.yaml", "resources:\n- cm.yaml\ncomponents:\n- c\n"),
        ("cm.yaml", CM),
        // a field besides apiVersion and kind: without one, kustomize refuses it as empty first
        ("c/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Component\nnamePrefix: x-\n"),
    ]);
    let e = build_error(d.path());
    assert!(
        e.contains("c/kustomization.yaml: apiVersion for Component should be kustomize.config.k8s.io/v1alpha1"),
        "{e}"
    );
}

#[test]
fn an_empty_patch_file_without_a_target_is_refused() {
    let d = folder(&[
        ("kustomization.yaml", "resources:\n- cm.yaml\npatches:\n- path: p.yaml\n"),
        ("cm.yaml", CM),
        ("p.yaml", ""),
    ]);
    let e = build_error(d.path());
    assert!(e.contains("must specify a target for JSON patch [path: \"p.yaml\"]"), "{e}");
}

#[test]
fn unsupported_plugin_configs_are_refused_by_kind_never_ignored() {
    let cases = [
        (
            "transformers",
            "apiVersion: builtin\nkind: SortOrderTransformer\nmetadata:\n  name: s\n",
            "builtin kind SortOrderTransformer",
        ),
        (
            "transformers",
            "apiVersion: builtin\nkind: HashTransformer\nmetadata:\n  name: h\n",
            "builtin kind HashTransformer",
        ),
        (
            "generators",
            "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: h\n",
            "builtin kind HelmChartInflationGenerator",
        ),
        (
            "generators",
            "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\n",
            "builtin kind PatchTransformer",
        ),
        (
            "transformers",
            "apiVersion: example.com/v1\nkind: MyExec\nmetadata:\n  name: e\n",
            "plugin example.com/v1/MyExec",
        ),
        (
            "transformers",
            "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: x\n",
            "plugin builtin/LabelTransformer",
        ),
        (
            "transformers",
            // A field kustomize's builtin does not have is ignored, as kustomize ignores it; a
            // known one in other letter case is refused (builtins differ on whether they take it).
            "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: p\nPrefix: a-\nextra: 1\n",
            "field `Prefix` of PrefixSuffixTransformer",
        ),
    ];
    for (list, config, what) in cases {
        let text = format!("resources:\n- cm.yaml\n{list}:\n- config.yaml\n");
        let d = folder(&[("kustomization.yaml", text.as_str()), ("cm.yaml", CM), ("config.yaml", config)]);
        let e = build_error(d.path());
        assert!(
            e.contains(&format!("kustomization.yaml: `{list}` entry ({what}) is not supported by kfctl-rs")),
            "{e}"
        );
    }
}
