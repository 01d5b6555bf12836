use super::*;
use crate::remote::NoRemote;
use std::sync::Arc;

fn spec(group: &str, kind: &str, path: &str, create: bool) -> FieldSpec {
    FieldSpec { group: group.into(), kind: kind.into(), path: path.into(), create, ..FieldSpec::default() }
}

fn paths(specs: &[FieldSpec]) -> Vec<String> {
    specs.iter().map(|s| format!("{}:{}", s.kind, s.path)).collect()
}

#[test]
fn defaults_hold_kustomize_v5_6_tables() {
    let d = TransformConfig::defaults();
    let sizes = [
        d.name_prefix.len(),
        d.name_suffix.len(),
        d.namespace.len(),
        d.common_labels.len(),
        d.template_labels.len(),
        d.common_annotations.len(),
        d.images.len(),
        d.replicas.len(),
        d.var_reference.len(),
        d.name_reference.len(),
    ];
    assert_eq!(sizes, [1, 1, 3, 32, 10, 9, 4, 4, 72, 16]);
    assert!(d.labels.is_empty());
    let secret = d.name_reference.iter().find(|n| n.gvk == Gvk::new("", "v1", "Secret")).expect("Secret references");
    assert!(
        secret
            .referrers
            .iter()
            .any(|s| s.kind == "Ingress" && s.path == r"metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret")
    );
}

#[test]
fn defaults_are_sorted_in_kustomize_kind_order() {
    let d = TransformConfig::defaults();
    assert_eq!(
        paths(&d.replicas),
        [
            "Deployment:spec/replicas",
            "StatefulSet:spec/replicas",
            "ReplicaSet:spec/replicas",
            "ReplicationController:spec/replicas"
        ]
    );
    let kinds: Vec<&str> = d.name_reference.iter().map(|n| n.gvk.kind.as_str()).collect();
    assert_eq!(&kinds[..3], ["StorageClass", "ServiceAccount", "Role"]);
}

#[test]
fn file_format_reads_every_key_and_null_lists() {
    let text = "namePrefix: [{path: a}]\nnameSuffix: [{path: b}]\nnamespace: [{path: c}]\ncommonLabels: [{path: d}]\n\
labels: [{path: e}]\ntemplateLabels: [{path: f}]\ncommonAnnotations: [{path: g}]\nvarReference: [{path: h}]\n\
images: [{path: i}]\nreplicas: [{path: j, kind: K, create: true}]\n\
nameReference:\n- {kind: Issuer, group: cert-manager.io, fieldSpecs: [{kind: Certificate, path: spec/issuerRef/name}]}\n";
    let c = TransformConfig::from_yaml(text, "cfg.yaml").unwrap();
    assert_eq!(c.replicas, [spec("", "K", "j", true)]);
    assert_eq!(c.labels[0].path, "e");
    assert_eq!(c.name_reference[0].gvk, Gvk::new("cert-manager.io", "", "Issuer"));
    assert_eq!(c.name_reference[0].referrers[0].path, "spec/issuerRef/name");
    assert_eq!(TransformConfig::from_yaml("commonLabels:\n", "x").unwrap(), TransformConfig::default());
}

#[test]
fn unknown_keys_are_refused() {
    let err = TransformConfig::from_yaml("bogusKey: 1\n", "cfg.yaml").unwrap_err().to_string();
    assert!(err.contains("cfg.yaml") && err.contains("bogusKey"), "{err}");
    assert!(TransformConfig::from_yaml("commonLabels: [{path: a, skip: true}]\n", "cfg.yaml").is_err());
}

#[test]
fn merge_skips_a_spec_already_present() {
    let mut c = TransformConfig { common_labels: vec![spec("", "", "metadata/labels", true)], ..Default::default() };
    c.merge(&TransformConfig { common_labels: vec![spec("", "", "metadata/labels", true)], ..Default::default() });
    assert_eq!(c.common_labels.len(), 1);
}

#[test]
fn merge_presence_is_judged_by_the_incoming_gvk_as_selector() {
    let mut c = TransformConfig { images: vec![spec("", "Thing", "spec/image", false)], ..Default::default() };
    c.merge(&TransformConfig { images: vec![spec("", "", "spec/image", false)], ..Default::default() });
    assert_eq!(c.images.len(), 1, "a kindless incoming spec selects the existing Thing spec");
    let mut c = TransformConfig { images: vec![spec("", "", "spec/image", false)], ..Default::default() };
    c.merge(&TransformConfig { images: vec![spec("", "Thing", "spec/image", false)], ..Default::default() });
    assert_eq!(c.images.len(), 2, "a Thing spec does not select the kindless one");
}

#[test]
fn merge_conflict_on_create_fails_when_checked_and_keeps_the_old_spec_otherwise() {
    let old = TransformConfig { common_labels: vec![spec("", "", "metadata/labels", true)], ..Default::default() };
    let new = TransformConfig { common_labels: vec![spec("", "", "metadata/labels", false)], ..Default::default() };
    let err = old.clone().merge_checked(&new).unwrap_err();
    assert!(err.to_string().starts_with("failed to merge CommonLabels fieldSpec: conflicting fieldspecs"), "{err}");
    let mut lenient = old.clone();
    lenient.merge(&new);
    assert_eq!(lenient, old);
}

#[test]
fn merge_unions_name_references_of_the_same_gvk() {
    let issuer = Gvk::new("cert-manager.io", "", "Issuer");
    let entry =
        |path: &str| NameBackReference { gvk: issuer.clone(), referrers: vec![spec("", "Certificate", path, false)] };
    let mut c = TransformConfig { name_reference: vec![entry("a")], ..Default::default() };
    c.merge(&TransformConfig { name_reference: vec![entry("b"), entry("a")], ..Default::default() });
    assert_eq!(c.name_reference.len(), 1);
    assert_eq!(paths(&c.name_reference[0].referrers), ["Certificate:a", "Certificate:b"]);
}

#[test]
fn merged_lists_are_sorted_by_kind_order() {
    let mut c = TransformConfig { var_reference: vec![spec("", "Pod", "x", false)], ..Default::default() };
    c.merge(&TransformConfig {
        var_reference: vec![spec("", "Namespace", "y", false), spec("", "ValidatingWebhookConfiguration", "z", false)],
        ..Default::default()
    });
    assert_eq!(paths(&c.var_reference), ["Namespace:y", "Pod:x", "ValidatingWebhookConfiguration:z"]);
}

/// Folders under `tests/fixtures/fieldspecs/`, built whole and compared in order with what
/// real kustomize v5.6 made of them (`expected.yaml`), or with its error (`expected.error`).
#[test]
fn fixtures_match_real_kustomize() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fieldspecs");
    let options = crate::BuildOptions::default();
    let cases = ["labels", "images", "replicas", "sort-custom", "replicas-no-match", "config-conflict"];
    for case in cases {
        let dir = root.join(case);
        let built = crate::build(&dir, &options);
        if let Ok(expected) = std::fs::read_to_string(dir.join("expected.error")) {
            let err = built.expect_err(case).to_string();
            let gist = expected.trim().trim_start_matches("error: ");
            assert!(err.contains(gist), "{case}: expected an error containing {gist:?}, got {err}");
            continue;
        }
        let text = std::fs::read_to_string(dir.join("expected.yaml")).unwrap();
        let expected = kfctl_yaml::parse_stream(&text, case).unwrap();
        let actual = crate::objects(&built.unwrap_or_else(|e| panic!("{case}: {e}")));
        if let Some(report) = kfctl_yaml::compare::ordered_report(&expected, &actual, 8) {
            panic!("{case} differs from real kustomize:\n{report}");
        }
    }
}

#[test]
fn for_folder_reads_through_the_loader_and_checks_against_defaults() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.yaml"), "varReference:\n- {kind: Profile, path: spec/owner/name}\n").unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "commonLabels:\n- path: metadata/labels\n").unwrap();
    let loader = Loader::new(Arc::new(NoRemote), crate::LoadRestriction::RootOnly);
    let ok = TransformConfig::for_folder(&["ok.yaml".into()], dir.path(), &loader).unwrap();
    assert!(paths(&ok.var_reference).contains(&"Profile:spec/owner/name".to_string()));
    assert_eq!(ok.common_labels, TransformConfig::defaults().common_labels, "the defaults are kept");
    let err = TransformConfig::for_folder(&["bad.yaml".into()], dir.path(), &loader).unwrap_err().to_string();
    assert!(err.contains("conflicting fieldspecs"), "{err}");
    assert!(TransformConfig::for_folder(&["missing.yaml".into()], dir.path(), &loader).is_err());
    assert_eq!(
        TransformConfig::for_folder(&[], dir.path(), &loader).unwrap().into_owned(),
        TransformConfig::defaults()
    );
}

#[test]
fn a_narrower_name_spec_displaces_the_general_one_once_merged_into_the_accumulator() {
    // kustomize: defaults.Merge(file) keeps both (sorted: kind Host first); merging that into
    // the empty accumulator then drops the general spec, which selects Host's.
    let file = TransformConfig { name_prefix: vec![spec("", "Host", "metadata/name", false)], ..Default::default() };
    let mut own = TransformConfig::defaults();
    own.merge_checked(&file).unwrap();
    assert_eq!(paths(&own.name_prefix), ["Host:metadata/name", ":metadata/name"]);
    let mut acc = TransformConfig::default();
    acc.merge_checked(&own).unwrap();
    assert_eq!(paths(&acc.name_prefix), ["Host:metadata/name"]);
}
