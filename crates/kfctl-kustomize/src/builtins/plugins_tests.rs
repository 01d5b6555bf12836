//! Tests of `plugins.rs`: `generators:`/`transformers:` entries built from small folders.

use crate::{BuildOptions, KustomizeError};

/// Write `files` (path, text) under a fresh folder and build it.
fn build(files: &[(&str, &str)]) -> crate::Result<Vec<serde_json::Value>> {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    crate::build(dir.path(), &BuildOptions::default()).map(crate::into_objects)
}

fn names(objects: &[serde_json::Value]) -> Vec<&str> {
    objects.iter().map(|o| o["metadata"]["name"].as_str().unwrap()).collect()
}

const GENERATOR: &str = "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: cm\nliterals: [a=b]\noptions: {disableNameSuffixHash: true}\n";

#[test]
fn a_folder_entry_is_accumulated_and_its_objects_are_the_configs() {
    let built = build(&[
        ("kustomization.yaml", "generators:\n- gen\n"),
        ("gen/kustomization.yaml", "namePrefix: p-\nresources:\n- cm.yaml\n"),
        ("gen/cm.yaml", GENERATOR),
    ])
    .unwrap();
    assert_eq!(names(&built), ["p-cm"], "the folder's own transformers ran on the config");
}

#[test]
fn inline_entries_run_before_files_and_folders() {
    let prefixer = |p: &str| {
        format!(
            "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: {p}\nprefix: {p}-\nfieldSpecs:\n- path: metadata/name\n"
        )
    };
    let inline = prefixer("inline").replace('\n', "\n  ");
    let kustomization = format!("resources:\n- cm.yaml\ntransformers:\n- file.yaml\n- |-\n  {inline}\n");
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n";
    let built =
        build(&[("kustomization.yaml", &kustomization), ("file.yaml", &prefixer("file")), ("cm.yaml", cm)]).unwrap();
    assert_eq!(names(&built), ["file-inline-cm"]);
}

#[test]
fn fields_kustomize_ignores_are_ignored_and_a_top_level_name_wins() {
    let config = format!("{GENERATOR}name: top\nlabels: {{x: y}}\nnote: ignored\n");
    let built = build(&[("kustomization.yaml", "generators:\n- g.yaml\n"), ("g.yaml", &config)]).unwrap();
    assert_eq!(names(&built), ["top"]);
    assert!(built[0]["metadata"].get("labels").is_none());
}

#[test]
fn a_known_field_in_other_case_or_an_unimplemented_one_is_refused_by_name() {
    for (config, field) in [
        (GENERATOR.replace("literals", "Literals"), "Literals"),
        (
            "apiVersion: builtin\nkind: PatchStrategicMergeTransformer\nmetadata:\n  name: p\npatches: 'x'\n".into(),
            "patches",
        ),
    ] {
        let list = if field == "patches" { "transformers" } else { "generators" };
        let kustomization = format!("{list}:\n- c.yaml\n");
        let e = build(&[("kustomization.yaml", &kustomization), ("c.yaml", &config)]).unwrap_err();
        assert!(
            matches!(&e, KustomizeError::UnsupportedPlugin { what, .. } if what.contains(&format!("`{field}`"))),
            "{e}"
        );
    }
}

#[test]
fn two_configs_with_one_id_are_an_error_as_in_kustomize() {
    let e = build(&[
        ("kustomization.yaml", "generators:\n- a.yaml\n- b.yaml\n"),
        ("a.yaml", GENERATOR),
        ("b.yaml", GENERATOR),
    ])
    .unwrap_err()
    .to_string();
    assert!(e.contains("may not add resource with an already registered id"), "{e}");
}

#[test]
fn a_folder_entry_under_build_metadata_tracking_is_refused() {
    let e = build(&[
        ("kustomization.yaml", "buildMetadata: [originAnnotations]\ngenerators:\n- gen\n"),
        ("gen/kustomization.yaml", "resources:\n- cm.yaml\n"),
        ("gen/cm.yaml", GENERATOR),
    ])
    .unwrap_err();
    assert!(matches!(&e, KustomizeError::UnsupportedPlugin { what, .. } if what.contains("folder gen")), "{e}");
}
