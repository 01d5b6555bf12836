//! In-memory harness for the name-reference fix-up: objects in, renamed by the real namespace
//! and prefix/suffix transformers, fixed, objects out. Expectations were checked against
//! kustomize v5.6 (`kubectl kustomize`) on equivalent folders.

use super::*;
use crate::builtins::config::NameBackReference;
use crate::builtins::{namespace, prefix_suffix};
use serde_json::json;

fn spec(kind: &str, path: &str) -> FieldSpec {
    FieldSpec { group: String::new(), version: String::new(), kind: kind.into(), path: path.into(), create: false }
}

fn back(kind: &str, referrers: Vec<FieldSpec>) -> NameBackReference {
    NameBackReference { gvk: Gvk::new("", "", kind), referrers }
}

/// A small slice of kustomize's default nameReference table.
fn config() -> TransformConfig {
    let pod = "spec/template/spec";
    TransformConfig {
        name_prefix: vec![spec("", "metadata/name")],
        name_suffix: vec![spec("", "metadata/name")],
        name_reference: vec![
            back(
                "ConfigMap",
                vec![
                    spec("Deployment", &format!("{pod}/volumes/configMap/name")),
                    spec("Deployment", &format!("{pod}/containers/envFrom/configMapRef/name")),
                    spec("Deployment", &format!("{pod}/containers/env/valueFrom/configMapKeyRef/name")),
                ],
            ),
            back(
                "ServiceAccount",
                vec![
                    spec("Deployment", &format!("{pod}/serviceAccountName")),
                    spec("RoleBinding", "subjects"),
                    spec("ClusterRoleBinding", "subjects"),
                ],
            ),
            back("Role", vec![spec("RoleBinding", "roleRef/name")]),
            back("ClusterRole", vec![spec("RoleBinding", "roleRef/name"), spec("ClusterRoleBinding", "roleRef/name")]),
            back("Service", vec![spec("ValidatingWebhookConfiguration", "webhooks/clientConfig/service")]),
            back("Secret", vec![spec("ClusterRole", "rules/resourceNames")]),
        ],
        ..TransformConfig::default()
    }
}

/// One kustomization layer: its objects, then `namespace`, `namePrefix`, `nameSuffix`.
struct Layer {
    objects: Vec<Value>,
    namespace: &'static str,
    prefix: &'static str,
    suffix: &'static str,
}

fn layer(objects: Vec<Value>) -> Layer {
    Layer { objects, namespace: "", prefix: "", suffix: "" }
}

impl Layer {
    fn ns(mut self, ns: &'static str) -> Self {
        self.namespace = ns;
        self
    }
    fn prefix(mut self, p: &'static str) -> Self {
        self.prefix = p;
        self
    }
    fn suffix(mut self, s: &'static str) -> Self {
        self.suffix = s;
        self
    }

    /// Accumulate sub-layers and this layer's objects, then run its transformers.
    fn build(self, bases: Vec<ResMap>) -> ResMap {
        let mut map = ResMap::new();
        for base in bases {
            map.append_all(base, "base").unwrap();
        }
        for o in self.objects {
            map.append(Resource::new(o), "test").unwrap();
        }
        if !self.namespace.is_empty() {
            namespace::apply(&mut map, self.namespace, &config()).unwrap();
        }
        prefix_suffix::apply(&mut map, self.prefix, self.suffix, &config()).unwrap();
        map
    }
}

fn fixed(mut map: ResMap) -> ResMap {
    fix_back_references(&mut map, &config()).unwrap();
    map
}

fn find<'a>(map: &'a ResMap, kind: &str) -> &'a Value {
    &map.iter().find(|r| r.kind() == kind).unwrap_or_else(|| panic!("no {kind}")).obj
}

fn obj(kind: &str, name: &str) -> Value {
    let api = match kind {
        "Deployment" => "apps/v1",
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => "rbac.authorization.k8s.io/v1",
        "ValidatingWebhookConfiguration" => "admissionregistration.k8s.io/v1",
        _ => "v1",
    };
    json!({"apiVersion": api, "kind": kind, "metadata": {"name": name}})
}

fn in_ns(mut o: Value, ns: &str) -> Value {
    o["metadata"]["namespace"] = json!(ns);
    o
}

fn deployment(cm: &str, sa: &str) -> Value {
    let mut d = obj("Deployment", "d");
    d["spec"] = json!({"template": {"spec": {
        "serviceAccountName": sa,
        "containers": [{"name": "c",
            "envFrom": [{"configMapRef": {"name": cm}}],
            "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": cm, "key": "k"}}}]}],
        "volumes": [{"name": "v", "configMap": {"name": cm}}]}}});
    d
}

fn binding(kind: &str, role_kind: &str, subjects: Value) -> Value {
    let mut b = obj(kind, "b");
    b["roleRef"] = json!({"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": "r"});
    b["subjects"] = subjects;
    b
}

#[test]
fn scalar_references_follow_a_renamed_referral() {
    let base = layer(vec![obj("ConfigMap", "cm"), obj("ServiceAccount", "sa")]).prefix("b-").build(vec![]);
    let map = fixed(layer(vec![deployment("cm", "sa")]).ns("kf").suffix("-s").build(vec![base]));
    let pod = &find(&map, "Deployment")["spec"]["template"]["spec"];
    assert_eq!(pod["volumes"][0]["configMap"]["name"], "b-cm-s");
    assert_eq!(pod["containers"][0]["envFrom"][0]["configMapRef"]["name"], "b-cm-s");
    assert_eq!(pod["containers"][0]["env"][0]["valueFrom"]["configMapKeyRef"]["name"], "b-cm-s");
    assert_eq!(pod["serviceAccountName"], "b-sa-s");
}

#[test]
fn objects_no_transformer_touched_are_never_referrals() {
    let mut map = layer(vec![obj("ConfigMap", "cm"), deployment("cm", "sa")]).build(vec![]);
    map.get_mut(0).obj["metadata"]["name"] = json!("edited-by-hand");
    let map = fixed(map);
    assert_eq!(find(&map, "Deployment")["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"], "cm");
    assert!(map.get(0).referenced_by.is_empty());
}

#[test]
fn referrals_in_another_namespace_are_not_seen() {
    let cms = layer(vec![obj("ConfigMap", "cm")]).ns("b").prefix("p-").build(vec![]);
    let map = fixed(layer(vec![in_ns(deployment("cm", "sa"), "a")]).build(vec![cms]));
    assert_eq!(find(&map, "Deployment")["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"], "cm");
}

#[test]
fn referral_found_records_its_referrer_even_when_the_name_is_unchanged() {
    let map = fixed(layer(vec![obj("ConfigMap", "cm"), deployment("cm", "sa")]).ns("kf").build(vec![]));
    let cm = map.iter().find(|r| r.kind() == "ConfigMap").unwrap();
    assert_eq!(find(&map, "Deployment")["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"], "cm");
    assert_eq!(cm.referenced_by.len(), 3, "volume, envFrom and env each record the Deployment");
    assert_eq!(cm.referenced_by[0].to_string(), "Deployment.v1.apps/d.kf");
}

#[test]
fn subject_without_namespace_gets_the_service_accounts_namespace() {
    let base = layer(vec![obj("ServiceAccount", "sa")]).prefix("b-").build(vec![]);
    let crb = binding("ClusterRoleBinding", "ClusterRole", json!([{"kind": "ServiceAccount", "name": "sa"}]));
    let map = fixed(layer(vec![crb]).ns("kf").build(vec![base]));
    assert_eq!(
        find(&map, "ClusterRoleBinding")["subjects"][0],
        json!({"kind": "ServiceAccount", "name": "b-sa", "namespace": "kf"})
    );
}

#[test]
fn subject_namespace_matches_the_original_namespace_first() {
    let base = layer(vec![obj("ServiceAccount", "sa")]).prefix("b-").build(vec![]);
    let subjects = json!([
        {"kind": "ServiceAccount", "name": "sa", "namespace": "default"},
        {"kind": "ServiceAccount", "name": "sa", "namespace": "elsewhere"}
    ]);
    let map = fixed(layer(vec![binding("RoleBinding", "Role", subjects)]).ns("kf").build(vec![base]));
    let subjects = &find(&map, "RoleBinding")["subjects"];
    assert_eq!(subjects[0], json!({"kind": "ServiceAccount", "name": "b-sa", "namespace": "kf"}));
    assert_eq!(subjects[1], json!({"kind": "ServiceAccount", "name": "sa", "namespace": "elsewhere"}));
}

#[test]
fn subject_namespace_falls_back_to_the_current_namespace() {
    let base = layer(vec![obj("ServiceAccount", "sa")]).ns("kf").prefix("b-").build(vec![]);
    let subjects = json!([{"kind": "ServiceAccount", "name": "sa", "namespace": "kf"}]);
    let map = fixed(layer(vec![binding("ClusterRoleBinding", "ClusterRole", subjects)]).build(vec![base]));
    assert_eq!(find(&map, "ClusterRoleBinding")["subjects"][0]["name"], "b-sa");
}

#[test]
fn role_binding_sees_service_accounts_in_its_subjects_namespaces() {
    let sa = layer(vec![obj("ServiceAccount", "sa")]).ns("other").prefix("p-").build(vec![]);
    let subjects = json!([{"kind": "ServiceAccount", "name": "sa", "namespace": "other"}]);
    let map = fixed(layer(vec![in_ns(binding("RoleBinding", "Role", subjects), "kf")]).build(vec![sa]));
    assert_eq!(
        find(&map, "RoleBinding")["subjects"][0],
        json!({"kind": "ServiceAccount", "name": "p-sa", "namespace": "other"})
    );
}

#[test]
fn webhook_service_maps_get_name_and_namespace_unless_namespaced_elsewhere() {
    let svc = layer(vec![obj("Service", "svc")]).prefix("b-").build(vec![]);
    let mut hook = obj("ValidatingWebhookConfiguration", "v");
    hook["webhooks"] = json!([
        {"name": "a", "clientConfig": {"service": {"name": "svc", "namespace": "other"}}},
        {"name": "b", "clientConfig": {"service": {"name": "svc"}}}
    ]);
    let map = fixed(layer(vec![hook]).ns("kf").build(vec![svc]));
    let hooks = &find(&map, "ValidatingWebhookConfiguration")["webhooks"];
    assert_eq!(hooks[0]["clientConfig"]["service"], json!({"name": "svc", "namespace": "other"}));
    assert_eq!(hooks[1]["clientConfig"]["service"], json!({"name": "b-svc", "namespace": "kf"}));
}

#[test]
fn role_ref_kind_chooses_between_role_and_cluster_role() {
    let mut roles = layer(vec![obj("Role", "r"), obj("ClusterRole", "r")]).suffix("-x").build(vec![]);
    // Rename the ClusterRole once more so that the two referrals differ.
    roles.iter_mut().find(|r| r.kind() == "ClusterRole").unwrap().set_name("cluster-r-x");
    let mut to_role = binding("RoleBinding", "Role", json!([]));
    to_role["metadata"]["name"] = json!("b2");
    let map = fixed(layer(vec![binding("RoleBinding", "ClusterRole", json!([])), to_role]).build(vec![roles]));
    let names: Vec<_> =
        map.iter().filter(|r| r.kind() == "RoleBinding").map(|r| r.obj["roleRef"]["name"].clone()).collect();
    assert_eq!(names, [json!("cluster-r-x"), json!("r-x")]);
}

#[test]
fn equal_prefixes_and_suffixes_break_ties() {
    let b1 = layer(vec![obj("ClusterRole", "r")]).prefix("a-").build(vec![]);
    let b2 = layer(vec![obj("ClusterRole", "r"), binding("ClusterRoleBinding", "ClusterRole", json!([]))])
        .prefix("b-")
        .build(vec![]);
    let map = fixed(layer(vec![]).build(vec![b1, b2]));
    assert_eq!(find(&map, "ClusterRoleBinding")["roleRef"]["name"], "b-r");
}

#[test]
fn referrer_without_affixes_matches_no_prefixed_candidate_when_several() {
    let b1 = layer(vec![obj("ClusterRole", "r")]).prefix("a-").build(vec![]);
    let b2 = layer(vec![obj("ClusterRole", "r")]).prefix("b-").build(vec![]);
    let map = fixed(layer(vec![binding("ClusterRoleBinding", "ClusterRole", json!([]))]).ns("x").build(vec![b1, b2]));
    assert_eq!(find(&map, "ClusterRoleBinding")["roleRef"]["name"], "r");
}

#[test]
fn several_different_referrals_are_an_error() {
    let b1 = layer(vec![obj("ClusterRole", "r")]).prefix("a-").build(vec![]);
    let b2 = layer(vec![obj("ClusterRole", "r")]).prefix("b-").build(vec![]);
    let mut map = layer(vec![binding("ClusterRoleBinding", "ClusterRole", json!([]))]).prefix("c-").build(vec![b1, b2]);
    let err = fix_back_references(&mut map, &config()).unwrap_err().to_string();
    assert!(err.contains("found multiple possible referrals"), "{err}");
    assert!(err.contains("c-a-r") && err.contains("c-b-r") && err.contains("roleRef/name"), "{err}");
}

#[test]
fn several_referrals_agreeing_on_the_name_pick_the_first() {
    let x = layer(vec![obj("Secret", "s")]).ns("x").prefix("p-").build(vec![]);
    let y = layer(vec![obj("Secret", "s")]).ns("y").prefix("p-").build(vec![]);
    let mut role = obj("ClusterRole", "cr");
    role["rules"] = json!([{"resourceNames": ["s", "other"]}]);
    let role = layer(vec![role]).prefix("p-").build(vec![]);
    let map = fixed(layer(vec![]).build(vec![x, y, role]));
    assert_eq!(find(&map, "ClusterRole")["rules"][0]["resourceNames"], json!(["p-s", "other"]));
    assert_eq!(map.get(0).referenced_by.len(), 1);
    assert!(map.get(1).referenced_by.is_empty());
}

#[test]
fn maps_need_name_and_namespace_to_agree() {
    let x = layer(vec![obj("ServiceAccount", "sa")]).ns("x").prefix("p-").build(vec![]);
    let y = layer(vec![obj("ServiceAccount", "sa")]).ns("y").prefix("p-").build(vec![]);
    let crb = binding("ClusterRoleBinding", "ClusterRole", json!([{"kind": "ServiceAccount", "name": "sa"}]));
    let crb = layer(vec![crb]).prefix("p-").build(vec![]);
    let mut map = layer(vec![]).build(vec![x, y, crb]);
    let err = fix_back_references(&mut map, &config()).unwrap_err().to_string();
    assert!(err.contains("found multiple possible referrals"), "{err}");
}

#[test]
fn a_map_without_name_is_a_config_error() {
    let svc = layer(vec![obj("Service", "svc")]).prefix("b-").build(vec![]);
    let mut hook = obj("ValidatingWebhookConfiguration", "v");
    hook["webhooks"] = json!([{"name": "a", "clientConfig": {"service": {"namespace": "kf"}}}]);
    let mut map = layer(vec![hook]).build(vec![svc]);
    let err = fix_back_references(&mut map, &config()).unwrap_err().to_string();
    assert!(err.contains("without a `name`"), "{err}");
}

#[test]
fn referrer_specs_select_by_the_original_kind() {
    let base = layer(vec![obj("ConfigMap", "cm")]).prefix("b-").build(vec![]);
    let mut not_deployment = deployment("cm", "sa");
    not_deployment["kind"] = json!("StatefulSet");
    let map = fixed(layer(vec![not_deployment]).build(vec![base]));
    assert_eq!(find(&map, "StatefulSet")["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"], "cm");
}

#[test]
fn same_ending_compares_tails_and_empties() {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(same_ending(&v(&["a", "b", "c"]), &v(&["b", "c"])));
    assert!(!same_ending(&v(&["a", "b", "c"]), &v(&["a", "b"])));
    assert!(same_ending(&v(&[]), &v(&[])));
    assert!(!same_ending(&v(&[]), &v(&["a"])));
}

/// Folders under `tests/fixtures/nameref/`, each with what real kustomize v5.6 made of it
/// (`expected.yaml`, or the start of its error in `expected.error`). Objects are compared as
/// data, in any order (output order is the sort step's business).
#[test]
fn fixtures_match_real_kustomize() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/nameref");
    let options = crate::BuildOptions::default();
    let key = |o: &Value| format!("{}/{}/{}", o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]);
    for case in ["namespace-defaults", "references-across-layers", "many-kinds", "unaffixed-referrer", "ambiguous"] {
        let dir = root.join(case);
        let built = crate::build(&dir, &options);
        if let Ok(expected_error) = std::fs::read_to_string(dir.join("expected.error")) {
            let err = built.expect_err(case).to_string();
            assert!(
                expected_error.contains("found multiple possible referrals")
                    && err.contains("found multiple possible referrals"),
                "{case}: {err}"
            );
            continue;
        }
        let text = std::fs::read_to_string(dir.join("expected.yaml")).unwrap();
        let mut expected = kfctl_yaml::parse_stream(&text, case).unwrap();
        let mut actual = crate::objects(&built.unwrap_or_else(|e| panic!("{case}: {e}")));
        expected.sort_by_key(key);
        actual.sort_by_key(key);
        if let Some(report) = kfctl_yaml::compare::ordered_report(&expected, &actual, 8) {
            panic!("{case} differs from real kustomize:\n{report}");
        }
    }
}

/// Objects of the top-level entries `entries` (one layer each), with their origins set as
/// accumulation sets them.
fn entries(layers: Vec<(&str, ResMap)>) -> ResMap {
    let mut map = ResMap::new();
    for (origin, mut layer) in layers {
        layer.iter_mut().for_each(|r| r.origin = Some(origin.into()));
        map.append_all(layer, origin).unwrap();
    }
    map
}

#[test]
fn other_entries_whose_candidates_could_be_chosen_are_recorded() {
    let a = layer(vec![obj("ConfigMap", "cm")]).prefix("a-").build(vec![]);
    let b = layer(vec![obj("ConfigMap", "cm")]).prefix("b-").build(vec![]);
    let c = layer(vec![deployment("cm", "sa")]).build(vec![]);
    let map = fixed(entries(vec![("../a", a), ("../b", b), ("../c", c)]));
    let d = map.iter().find(|r| r.kind() == "Deployment").unwrap();
    // two candidates, neither with the referrer's affixes: nothing chosen; without either,
    // the other would be
    assert_eq!(d.obj["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"], "cm");
    let by: Vec<&str> = d.influenced_by.iter().map(|o| &**o).collect();
    assert_eq!(by, ["../a", "../b"]);
}

#[test]
fn other_entries_filtered_out_by_affixes_beside_an_own_candidate_are_not_recorded() {
    let b = layer(vec![obj("ConfigMap", "cm")]).prefix("b-").build(vec![]);
    let c = layer(vec![obj("ConfigMap", "cm"), deployment("cm", "sa")]).prefix("c-").build(vec![]);
    let map = fixed(entries(vec![("../b", b), ("../c", c)]));
    let d = map.iter().find(|r| r.kind() == "Deployment").unwrap();
    assert_eq!(d.obj["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"], "c-cm");
    assert!(d.influenced_by.is_empty(), "{:?}", d.influenced_by);
}
