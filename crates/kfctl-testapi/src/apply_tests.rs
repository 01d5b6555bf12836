//! Unit tests of server-side apply and field ownership.

use super::*;

fn writer(manager: &str) -> Writer<'_> {
    Writer { manager, subresource: None, api_version: "apps/v1", now: "2025-01-01T00:00:00Z" }
}

fn deployment(replicas: i64, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "kf", "labels": {"app": "web"}},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
}

#[test]
fn leaf_paths_descend_maps_and_keep_lists_atomic() {
    let paths = leaf_paths(&deployment(1, "a"));
    let expected: Vec<Vec<&str>> = vec![
        vec!["metadata", "labels", "app"],
        vec!["spec", "replicas"],
        vec!["spec", "template", "spec", "containers"],
    ];
    let got: Vec<Vec<&str>> = paths.iter().map(|p| p.iter().map(String::as_str).collect()).collect();
    assert_eq!(got, expected);
}

#[test]
fn fields_v1_round_trips() {
    let set = leaf_paths(&deployment(1, "a"));
    let encoded = fields_v1(&set);
    assert_eq!(encoded["f:spec"]["f:replicas"], json!({}));
    assert_eq!(parse_fields_v1(&encoded), set);
}

#[test]
fn parse_fields_v1_treats_keyed_list_items_as_atomic_list() {
    let upstream = json!({"f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}}}}});
    let set = parse_fields_v1(&upstream);
    assert_eq!(set.into_iter().collect::<Vec<_>>(), vec![vec!["spec".to_string(), "containers".to_string()]]);
}

#[test]
fn first_apply_creates_one_apply_entry() {
    let out = apply(None, &deployment(1, "a"), &writer("kfctl"), false).unwrap();
    let managers = read_managers(&out);
    assert_eq!(managers.len(), 1);
    assert_eq!((managers[0].manager.as_str(), managers[0].operation.as_str()), ("kfctl", "Apply"));
    assert_eq!(out["spec"]["replicas"], 1);
}

#[test]
fn identical_reapply_is_byte_identical() {
    let first = apply(None, &deployment(1, "a"), &writer("kfctl"), false).unwrap();
    let later = Writer { now: "2030-01-01T00:00:00Z", ..writer("kfctl") };
    let second = apply(Some(&first), &deployment(1, "a"), &later, false).unwrap();
    assert_eq!(first, second);
}

#[test]
fn conflicting_value_from_other_manager_is_reported_like_upstream() {
    let live = apply(None, &deployment(1, "a"), &writer("other"), false).unwrap();
    let conflicts = apply(Some(&live), &deployment(3, "a"), &writer("kfctl"), false).unwrap_err();
    assert_eq!(conflicts, vec![Conflict { manager: "\"other\"".into(), path: ".spec.replicas".into() }]);
    let error = conflict_error(&conflicts, "apps", "deployments", "web");
    assert_eq!(error.code, 409);
    assert_eq!(error.message, "Apply failed with 1 conflict: conflict with \"other\": .spec.replicas");
    assert_eq!(error.to_status()["details"]["causes"][0]["field"], ".spec.replicas");
}

#[test]
fn equal_values_are_shared_without_conflict() {
    let live = apply(None, &deployment(1, "a"), &writer("other"), false).unwrap();
    let out = apply(Some(&live), &deployment(1, "a"), &writer("kfctl"), false).unwrap();
    assert_eq!(read_managers(&out).len(), 2);
}

#[test]
fn force_takes_ownership_from_the_other_manager() {
    let live = apply(None, &deployment(1, "a"), &writer("other"), false).unwrap();
    let out = apply(Some(&live), &deployment(3, "a"), &writer("kfctl"), true).unwrap();
    assert_eq!(out["spec"]["replicas"], 3);
    let other = read_managers(&out).into_iter().find(|m| m.manager == "other").unwrap();
    assert!(!other.fields.contains(&vec!["spec".to_string(), "replicas".to_string()]));
}

#[test]
fn dropped_field_is_removed_unless_another_manager_owns_it() {
    let live = apply(None, &deployment(1, "a"), &writer("kfctl"), false).unwrap();
    let mut smaller = deployment(1, "a");
    smaller["metadata"].as_object_mut().unwrap().remove("labels");
    let out = apply(Some(&live), &smaller, &writer("kfctl"), false).unwrap();
    assert!(out["metadata"].get("labels").is_none());

    let shared = apply(Some(&live), &deployment(1, "a"), &writer("other"), false).unwrap();
    let out = apply(Some(&shared), &smaller, &writer("kfctl"), false).unwrap();
    assert_eq!(out["metadata"]["labels"]["app"], "web");
}

#[test]
fn multiple_conflicts_are_grouped_by_manager() {
    let conflicts = vec![
        Conflict { manager: "\"b\"".into(), path: ".spec.x".into() },
        Conflict { manager: "\"a\"".into(), path: ".spec.y".into() },
    ];
    let error = conflict_error(&conflicts, "", "configmaps", "c");
    assert_eq!(
        error.message,
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.y\nconflicts with \"b\":\n- .spec.x"
    );
}

#[test]
fn update_moves_changed_fields_to_the_updater_and_apply_then_conflicts() {
    let live = apply(None, &deployment(1, "a"), &writer("kfctl"), false).unwrap();
    let mut scaled = live.clone();
    scaled["spec"]["replicas"] = json!(5);
    record_update(Some(&live), &mut scaled, &Writer { manager: "hpa", ..writer("hpa") });
    let managers = read_managers(&scaled);
    let hpa = managers.iter().find(|m| m.manager == "hpa").unwrap();
    assert_eq!(hpa.operation, "Update");
    assert!(hpa.label().starts_with("\"hpa\" using apps/v1 at "));
    let err = apply(Some(&scaled), &deployment(1, "a"), &writer("kfctl"), false).unwrap_err();
    assert_eq!(err[0].path, ".spec.replicas");
}

#[test]
fn null_in_config_removes_the_field_and_server_metadata_is_ignored() {
    let mut config = deployment(1, "a");
    config["metadata"]["creationTimestamp"] = Value::Null;
    config["metadata"]["resourceVersion"] = json!("999");
    let out = apply(None, &config, &writer("kfctl"), false).unwrap();
    assert!(out["metadata"].get("creationTimestamp").is_none() && out["metadata"].get("resourceVersion").is_none());
}
