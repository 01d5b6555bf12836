use super::*;
use serde_json::json;

fn r(api: &str, kind: &str, name: &str) -> ObjectRef {
    ObjectRef { api_version: api.into(), kind: kind.into(), namespace: Some("kf".into()), name: name.into() }
}

fn change(path: &str, before: Value, after: Value) -> FieldChange {
    FieldChange { path: path.into(), before: Some(before), after: Some(after) }
}

fn entry(object: ObjectRef, changes: Vec<FieldChange>) -> DiffEntry {
    DiffEntry {
        object,
        action: Action::Change,
        changes,
        conflicts: Vec::new(),
        note: None,
        preexisting: false,
        unified: String::new(),
    }
}

#[test]
fn lists_of_one_length_drift_item_by_item_and_name_the_owner() {
    let before = json!([{"name": "web", "image": "x:2"}]);
    let after = json!([{"name": "web", "image": "x:1"}]);
    let paths: Vec<String> = refined(&change("/spec/containers", before, after)).into_iter().map(|c| c.path).collect();
    assert_eq!(paths, ["/spec/containers/0/image"]);
    let grown = refined(&change("/spec/ports", json!([1, 2]), json!([1])));
    assert_eq!(grown.len(), 1, "lists of other lengths stay whole");
    let live = json!({"metadata": {"managedFields": [{"manager": "kubectl-edit", "operation": "Update",
        "fieldsV1": {"f:spec": {"f:containers": {}}}}]}, "spec": {"containers": [{"name": "web", "image": "x:2"}]}});
    let e = entry(
        r("apps/v1", "Deployment", "web"),
        vec![change(
            "/spec/containers",
            json!([{"name": "web", "image": "x:2"}]),
            json!([{"name": "web", "image": "x:1"}]),
        )],
    );
    let o = drifted_object(&e, Some(&live), &HashSet::new()).unwrap();
    assert_eq!(
        o.fields,
        [DriftedField {
            path: "/spec/containers/0/image".into(),
            applied: Some(json!("x:1")),
            live: Some(json!("x:2")),
            managers: vec!["kubectl-edit".into()],
        }]
    );
}

#[test]
fn an_autoscaled_workloads_replicas_are_the_clusters_not_drift() {
    let hpa = json!({"metadata": {"namespace": "kf", "name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}});
    let scaled: HashSet<_> = target_of(&hpa).into_iter().collect();
    let web = r("apps/v1", "Deployment", "web");
    let replicas = || vec![change("/spec/replicas", json!(3), json!(1))];
    assert!(drifted_object(&entry(web.clone(), replicas()), None, &scaled).is_none());
    assert!(drifted_object(&entry(web, replicas()), None, &HashSet::new()).is_some(), "no autoscaler: drift");
    let other = r("apps/v1", "Deployment", "api");
    assert!(drifted_object(&entry(other, replicas()), None, &scaled).is_some(), "another Deployment's replicas");
}

#[test]
fn the_item_bounds_its_lists_and_says_what_to_do() {
    let fields = (0..7).map(|i| DriftedField {
        path: format!("/data/k{i}"),
        applied: Some(json!("a")),
        live: Some(json!("b".repeat(100))),
        managers: vec!["kubectl-patch".into()],
    });
    let object = |name: &str| DriftedObject {
        object: r("v1", "ConfigMap", name),
        fields: fields.clone().take(FIELDS_SHOWN).collect(),
        more_fields: 2,
        note: None,
    };
    let drift = Drift { compared: 40, drifted: 12, objects: (0..SHOWN).map(|i| object(&format!("c{i}"))).collect() };
    let checked = judge(&[], Ok(drift), "kfctl-rs upgrade --profile kind --version 26.03.1 --force-conflicts");
    assert_eq!(checked.mark, Mark::Warn);
    assert!(
        checked.detail.starts_with("12 of 40 with fields changed since the install: ConfigMap kf/c0, "),
        "{}",
        checked.detail
    );
    assert!(checked.detail.ends_with("ConfigMap kf/c9 and 2 more"), "{}", checked.detail);
    assert!(checked.hint.as_deref().unwrap().contains(
        "`kfctl-rs upgrade --profile kind --version 26.03.1 --force-conflicts` (with the install's -f and --set)"
    ));
    let lines = checked.drift.as_ref().unwrap().lines();
    assert_eq!(lines.len(), SHOWN * (FIELDS_SHOWN + 1) + 1);
    assert!(lines[0].starts_with("ConfigMap kf/c0: /data/k0 applied \"a\", live \"bbbb"), "{}", lines[0]);
    assert!(lines[0].ends_with("… (now owned by kubectl-patch)"), "{}", lines[0]);
    assert_eq!(lines[FIELDS_SHOWN], "ConfigMap kf/c0: and 2 more field(s)");
    assert_eq!(lines.last().unwrap(), "and 2 more object(s)");
}

#[test]
fn a_render_of_something_else_is_not_compared_and_says_so() {
    let installed = InstallMeta {
        profile: "kind".into(),
        upstream_version: "26.03.1".into(),
        upstream_digest: "sha256:a".into(),
        values_digest: "sha256:v".into(),
        ..InstallMeta::default()
    };
    assert_eq!(another_render(&installed, &installed.clone()), None);
    let other_values = InstallMeta { values_digest: "sha256:w".into(), ..installed.clone() };
    let why = another_render(&installed, &other_values).unwrap();
    assert!(why.contains("values sha256:w") && why.contains("values sha256:v"), "{why}");
    let checked = judge(&[], Err(why), "kfctl-rs upgrade --profile kind --version 26.03.1 --force-conflicts");
    assert_eq!(checked.mark, Mark::Warn);
    assert!(checked.detail.starts_with("fields not compared: the render is 26.03.1"), "{}", checked.detail);
    assert!(checked.hint.unwrap().contains("-f and --set"));
    assert!(checked.drift.is_none());
    let clean = judge(
        &[],
        Ok(Drift { compared: 9, drifted: 0, objects: Vec::new() }),
        "kfctl-rs upgrade --profile kind --version 26.03.1 --force-conflicts",
    );
    assert_eq!(
        (clean.mark, clean.detail.as_str()),
        (Mark::Pass, "9 objects with their recorded UID and applied fields")
    );
}
