use super::*;
use crate::kustomization::Kustomization;

fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n";

fn sample() -> tempfile::TempDir {
    folder(&[("app/kustomization.yaml", "namePrefix: p-\nresources:\n- cm.yaml\n"), ("app/cm.yaml", CM)])
}

fn settings(cache: &Path, version: &str) -> CacheSettings {
    CacheSettings { dir: cache.join("render"), version: version.into(), max_bytes: 1 << 30 }
}

fn build_text(dir: &Path, settings: &CacheSettings) -> (String, Outcome) {
    let (resources, outcome) = build(dir, &BuildOptions::default(), settings).expect("builds");
    (kfctl_yaml::to_yaml_stream(&crate::objects(&resources)), outcome)
}

fn uncached(dir: &Path) -> String {
    kfctl_yaml::to_yaml_stream(&crate::objects(&crate::build(dir, &BuildOptions::default()).expect("builds")))
}

#[test]
fn a_repeated_build_is_served_from_the_cache_with_the_same_output() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let s = settings(cache.path(), "1");
    let app = src.path().join("app");
    let (first, outcome) = build_text(&app, &s);
    assert_eq!(outcome, Outcome::Stored);
    let (second, outcome) = build_text(&app, &s);
    assert_eq!(outcome, Outcome::Hit);
    assert_eq!(first, second);
    assert_eq!(first, uncached(&app));
    assert!(first.contains("name: p-cm"), "{first}");
}

#[test]
fn a_changed_input_file_is_never_served_stale() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let s = settings(cache.path(), "1");
    let app = src.path().join("app");
    build_text(&app, &s);
    // Same length, changed within the same second: the racy case `stat` alone would miss.
    std::fs::write(app.join("cm.yaml"), CM.replace("\"1\"", "\"2\"")).expect("write");
    let (text, outcome) = build_text(&app, &s);
    assert_eq!(outcome, Outcome::Stored);
    assert!(text.contains("a: \"2\""), "{text}");
}

#[test]
fn a_changed_kustomization_is_never_served_stale() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let s = settings(cache.path(), "1");
    let app = src.path().join("app");
    build_text(&app, &s);
    std::fs::write(app.join("kustomization.yaml"), "namePrefix: q-\nresources:\n- cm.yaml\n").expect("write");
    let (text, outcome) = build_text(&app, &s);
    assert_eq!(outcome, Outcome::Stored);
    assert!(text.contains("name: q-cm"), "{text}");
}

#[test]
fn a_kustomization_file_appearing_beside_the_first_is_not_served_stale() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let s = settings(cache.path(), "1");
    let app = src.path().join("app");
    build_text(&app, &s);
    std::fs::write(app.join("kustomization.yml"), "resources: []\n").expect("write");
    let e = build(&app, &BuildOptions::default(), &s).expect_err("two kustomization files are refused");
    assert!(e.to_string().contains("kustomization"), "{e}");
}

#[test]
fn an_in_memory_kustomization_that_changed_is_another_entry() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let s = settings(cache.path(), "1");
    let top = src.path().join("virtual");
    let mut k = Kustomization { resources: vec!["../app".into()], ..Kustomization::default() };
    let (_, outcome) = build_kustomization(&top, &k, &BuildOptions::default(), &s).expect("builds");
    assert_eq!(outcome, Outcome::Stored);
    k.name_suffix = Some("-s".into());
    let (resources, outcome) = build_kustomization(&top, &k, &BuildOptions::default(), &s).expect("builds");
    assert_eq!(outcome, Outcome::Stored);
    assert_eq!(resources.get(0).obj["metadata"]["name"], "p-cm-s");
    let (_, outcome) = build_kustomization(&top, &k, &BuildOptions::default(), &s).expect("builds");
    assert_eq!(outcome, Outcome::Hit);
}

#[test]
fn another_kfctl_rs_version_never_uses_the_entry() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let app = src.path().join("app");
    build_text(&app, &settings(cache.path(), "1.0.0"));
    let (_, outcome) = build_text(&app, &settings(cache.path(), "1.0.1"));
    assert_eq!(outcome, Outcome::Stored);
}

#[test]
fn a_corrupted_entry_is_rebuilt_not_trusted() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let s = settings(cache.path(), "1");
    let app = src.path().join("app");
    let (first, _) = build_text(&app, &s);
    for entry in std::fs::read_dir(&s.dir).expect("entries") {
        let path = entry.expect("entry").path();
        let mut bytes = std::fs::read(&path).expect("entry");
        let at = bytes.windows(4).position(|w| w == b"p-cm").expect("the object's name is in the entry");
        bytes[at] = b'x';
        std::fs::write(&path, bytes).expect("corrupt");
    }
    let (second, outcome) = build_text(&app, &s);
    assert_eq!(outcome, Outcome::Stored);
    assert_eq!(first, second);
}

#[test]
fn the_cache_stays_within_its_bound() {
    let (src, cache) = (sample(), tempfile::tempdir().expect("cache"));
    let app = src.path().join("app");
    let mut s = settings(cache.path(), "1");
    build_text(&app, &s);
    let one = std::fs::read_dir(&s.dir).expect("entries").count();
    assert_eq!(one, 1);
    s.max_bytes = 1;
    s.version = "2".into();
    build_text(&app, &s);
    let left: u64 =
        std::fs::read_dir(&s.dir).expect("entries").map(|e| e.expect("e").metadata().expect("m").len()).sum();
    assert_eq!(left, 0, "entries above the bound are removed, the oldest first");
}

#[test]
fn a_build_for_some_names_gives_only_their_objects_stored_or_served() {
    let two = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n";
    let src = folder(&[("app/cm.yaml", CM), ("app/other.yaml", two)]);
    let cache = tempfile::tempdir().expect("cache");
    let s = settings(cache.path(), "1");
    let k = Kustomization { resources: vec!["cm.yaml".into(), "other.yaml".into()], ..Default::default() };
    let app = src.path().join("app");
    let names = ["cm".to_string()];
    let build = || {
        build_kustomization_named(
            &app,
            &k,
            &BuildOptions::default(),
            &s,
            Read { names: Some(&names), defer_schemas: false },
        )
        .expect("builds")
    };
    for expected in [Outcome::Stored, Outcome::Hit] {
        let (named, outcome) = build();
        assert_eq!(outcome, expected);
        let names: Vec<&str> = named.iter().filter_map(|r| r.obj.pointer("/metadata/name")?.as_str()).collect();
        assert_eq!(names, ["cm"], "{expected:?}");
    }
    let (whole, outcome) = build_kustomization(&app, &k, &BuildOptions::default(), &s).expect("builds");
    assert_eq!((whole.len(), outcome), (2, Outcome::Hit));
}

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\nspec:\n  group: example.com\n  names:\n    kind: Thing\n    plural: things\n  scope: Namespaced\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        type: object\n    served: true\n    storage: true\n";

/// `count` CRDs (more than the store makes at once), each with a description of its own.
fn crds(count: usize) -> String {
    (0..count)
        .map(|i| {
            CRD.replace("name: things.", &format!("name: things{i}."))
                .replace("type: object", &format!("type: object\n        description: crd {i}"))
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

#[test]
fn a_build_that_defers_schemas_gives_stubs_whose_text_and_attached_object_are_the_build_stored_or_served() {
    let src = folder(&[("app/crd.yaml", &crds(11)), ("app/cm.yaml", CM)]);
    let cache = tempfile::tempdir().expect("cache");
    let s = settings(cache.path(), "1");
    let k = Kustomization { resources: vec!["crd.yaml".into(), "cm.yaml".into()], ..Default::default() };
    let app = src.path().join("app");
    let whole = crate::build_kustomization(&app, &k, &BuildOptions::default()).expect("builds");
    let read = Read { names: None, defer_schemas: true };
    let build = || build_kustomization_named(&app, &k, &BuildOptions::default(), &s, read).expect("builds");
    for expected in [Outcome::Stored, Outcome::Hit] {
        let (got, outcome) = build();
        assert_eq!(outcome, expected);
        assert_eq!(got.len(), whole.len());
        for (crd, original) in got.iter().zip(whole.iter()).filter(|(_, o)| o.obj["kind"] == "CustomResourceDefinition")
        {
            assert_eq!(crd.obj.pointer("/spec/versions/0/schema"), Some(&serde_json::Value::Null), "{expected:?}");
            assert_text_and_attached(crd, &original.obj);
        }
        assert!(got.iter().filter(|r| r.obj["kind"] == "ConfigMap").all(|r| r.deferred.is_none()));
    }
    let (plain, _) = build_kustomization(&app, &k, &BuildOptions::default(), &s).expect("builds");
    assert_eq!(crate::objects(&plain), crate::objects(&whole), "a reader that does not defer gets whole objects");
}

/// `crd`'s deferred text is `original`'s YAML (copied into memory, and by the kernel into a
/// buffered file twice from the entry's offset), and attaching its schemas gives `original`.
fn assert_text_and_attached(crd: &Resource, original: &serde_json::Value) {
    let deferred = crd.deferred.as_ref().expect("the CRD is deferred");
    assert!(deferred.has_text_for(&crd.obj));
    let mut text = Vec::new();
    deferred.write_text(&mut text).expect("writes");
    assert_eq!(String::from_utf8(text).expect("utf-8"), kfctl_yaml::to_yaml(original));
    let copy = tempfile::NamedTempFile::new().expect("temp file");
    let mut file = std::io::BufWriter::new(copy.reopen().expect("reopens"));
    std::io::Write::write_all(&mut file, b"---\n").expect("writes");
    deferred.write_text(&mut file).expect("copies");
    deferred.write_text(&mut file).expect("copies again");
    drop(file);
    let twice = format!("---\n{0}{0}", kfctl_yaml::to_yaml(original));
    assert_eq!(std::fs::read_to_string(copy.path()).expect("reads"), twice);
    let mut attached = crd.obj.clone();
    deferred.attach(&mut attached).expect("attaches");
    assert_eq!(&attached, original);
}
