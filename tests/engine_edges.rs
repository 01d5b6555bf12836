//! Engine edges as real kustomize v5.6 has them (issue 38 item 5): an absolute path in
//! `resources:` (a file in the folder builds, a folder is refused: "new root cannot be
//! absolute"), an empty kustomization (zero bytes, only comments, `{}`, only `apiVersion` and
//! `kind`: "kustomization.yaml is empty"), and text encodings (UTF-16 behind a byte order mark
//! decoded, either way round; a UTF-8 BOM skipped; UTF-16 without a BOM refused). The recorded
//! outputs are in `tests/fixtures/engine/{utf16-le-bom,utf16-be-bom,utf8-bom}` and
//! `tests/fixtures/engine-refused/{empty-kustomization-*,utf16-without-bom}` (checked by
//! `parity`); the cases here need absolute paths, so they are written at run time, and the
//! last test builds each with real kustomize too.

use crate::common;
use kfctl_kustomize::BuildOptions;
use std::path::Path;
use std::process::Command;

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";

/// [`CM`] as kustomize writes it.
const BUILT_CM: &str = "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: cm\n";

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// UTF-16 behind its byte order mark, little- or big-endian.
fn utf16(text: &str, little: bool) -> Vec<u8> {
    let units = text.encode_utf16();
    match little {
        true => [0xFF, 0xFE].into_iter().chain(units.flat_map(u16::to_le_bytes)).collect(),
        false => [0xFE, 0xFF].into_iter().chain(units.flat_map(u16::to_be_bytes)).collect(),
    }
}

/// The edge cases, each a folder `<root>/<name>` whose kustomization is `<root>/<name>`;
/// the absolute paths point into `root`.
fn cases(root: &Path) -> Vec<&'static str> {
    let abs = |rel: &str| root.join(rel).display().to_string();
    write(root, "abs-file/cm.yaml", CM.as_bytes());
    write(root, "abs-file/kustomization.yaml", format!("resources:\n- {}\n", abs("abs-file/cm.yaml")).as_bytes());
    write(root, "abs-folder/base/cm.yaml", CM.as_bytes());
    write(root, "abs-folder/base/kustomization.yaml", b"resources:\n- cm.yaml\n");
    write(root, "abs-folder/kustomization.yaml", format!("resources:\n- {}\n", abs("abs-folder/base")).as_bytes());
    write(root, "abs-component/cm.yaml", CM.as_bytes());
    write(
        root,
        "abs-component/c/kustomization.yaml",
        b"apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamespace: z\n",
    );
    let component = format!("resources:\n- cm.yaml\ncomponents:\n- {}\n", abs("abs-component/c"));
    write(root, "abs-component/kustomization.yaml", component.as_bytes());
    write(root, "abs-file-outside/in/kustomization.yaml", format!("resources:\n- {}\n", abs("cm.yaml")).as_bytes());
    write(root, "cm.yaml", CM.as_bytes());
    write(root, "empty-bom/kustomization.yaml", b"\xEF\xBB\xBF# nothing\n");
    write(root, "empty-utf16/kustomization.yaml", &utf16("# nothing\n", true));
    write(root, "empty-list-builds/kustomization.yaml", b"resources: []\n");
    write(root, "utf16-le/kustomization.yaml", &utf16("resources:\n- cm.yaml\nnamePrefix: p-\n", true));
    write(root, "utf16-le/cm.yaml", &utf16(CM, false));
    write(root, "utf16-be/kustomization.yaml", &utf16("resources:\n- cm.yaml\n", false));
    write(root, "utf16-be/cm.yaml", &utf16(CM, true));
    vec![
        "abs-file",
        "abs-folder",
        "abs-component",
        "abs-file-outside/in",
        "empty-bom",
        "empty-utf16",
        "empty-list-builds",
        "utf16-le",
        "utf16-be",
    ]
}

/// The engine's output for `dir`, or its error.
fn engine(dir: &Path) -> Result<String, String> {
    kfctl_kustomize::build(dir, &BuildOptions::default())
        .map(|built| kfctl_yaml::to_yaml_stream(&kfctl_kustomize::objects(&built)))
        .map_err(|e| e.to_string())
}

#[test]
fn an_absolute_folder_in_resources_or_components_is_refused_naming_the_file_and_field() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    cases(&root);
    for (case, field) in [("abs-folder", "resources"), ("abs-component", "components")] {
        let err = engine(&root.join(case)).expect_err(case);
        let file = root.join(case).join("kustomization.yaml");
        assert!(
            err.starts_with(&format!("{}: {field}: `{}", file.display(), root.display()))
                && err.contains("is a folder named by an absolute path, which kustomize refuses"),
            "{case}: {err}"
        );
    }
    // an absolute file in the folder builds as any file does; outside it, the load restrictor refuses
    assert_eq!(engine(&root.join("abs-file")).unwrap(), BUILT_CM);
    let err = engine(&root.join("abs-file-outside/in")).unwrap_err();
    assert!(err.starts_with("security: "), "{err}");
}

#[test]
fn an_empty_kustomization_is_refused_naming_the_file() {
    let fixtures = common::repo_root().join("tests/fixtures/engine-refused").canonicalize().unwrap();
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    cases(&root);
    let dirs = ["zero-bytes", "comments-only", "braces", "kind-only"]
        .map(|d| fixtures.join(format!("empty-kustomization-{d}")))
        .into_iter()
        .chain([root.join("empty-bom"), root.join("empty-utf16")]);
    for dir in dirs {
        let err = engine(&dir).expect_err("an empty kustomization is refused");
        let file = dir.join("kustomization.yaml");
        assert!(
            err.starts_with(&format!("{}: the kustomization is empty", file.display()))
                && err.contains("`kustomization.yaml is empty`"),
            "{err}"
        );
    }
    // an empty list is a field kustomize sees: it builds, to nothing
    assert_eq!(engine(&root.join("empty-list-builds")).unwrap(), "");
}

#[test]
fn utf16_with_a_byte_order_mark_builds_either_way_round() {
    let root = tempfile::tempdir().unwrap();
    cases(root.path());
    assert_eq!(engine(&root.path().join("utf16-be")).unwrap(), BUILT_CM);
    assert_eq!(engine(&root.path().join("utf16-le")).unwrap(), BUILT_CM.replace("name: cm", "name: p-cm"));
}

/// Each case built by real kustomize v5.6 and by the engine: the same output byte for byte, or
/// both refuse.
#[test]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real kustomize): put ../shared/tools beside the repo")]
fn engine_edges_build_or_fail_as_real_kustomize() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    for case in cases(&root) {
        let dir = root.join(case);
        let out = Command::new(common::tool("kustomize-build")).arg(&dir).output().expect("kustomize-build runs");
        let ours = engine(&dir);
        match out.status.success() {
            true => {
                let theirs = String::from_utf8(out.stdout).unwrap();
                // the tool prints kustomize's output with one newline after it
                let theirs = theirs.strip_suffix('\n').unwrap_or(&theirs);
                assert_eq!(
                    ours.as_deref().map(|s| s.trim_end_matches('\n')),
                    Ok(theirs.trim_end_matches('\n')),
                    "{case}"
                );
            }
            false => assert!(
                ours.is_err(),
                "{case}: real kustomize refuses ({}), the engine built it",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }
    }
}
