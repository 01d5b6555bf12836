use super::*;

fn noted(created: bool, uid: Option<&str>) -> Noted<'_> {
    Noted { created, marked: true, uid }
}

fn r(kind: &str, name: &str) -> ObjectRef {
    ObjectRef { api_version: "v1".into(), kind: kind.into(), namespace: None, name: name.into() }
}

fn meta() -> InstallMeta {
    InstallMeta {
        upgrade_notes: Vec::new(),
        profile: "kind".into(),
        upstream_version: "v1.11.0".into(),
        upstream_digest: "d".into(),
        values_digest: "v".into(),
        provided: Vec::new(),
    }
}

#[test]
fn record_round_trips_through_its_configmap() {
    let mut rec = InstallRecord::resume(None, meta(), "p1", 3);
    rec.note_applied(&r("Namespace", "kf"), "platform", 1, noted(true, None));
    rec.reach(1, "namespaces");
    let cm = rec.to_configmap();
    assert_eq!(cm.pointer("/metadata/labels/app.kubernetes.io~1managed-by"), Some(&json!("kfctl-rs")));
    assert_eq!(InstallRecord::from_configmap(&cm).unwrap(), rec);
    assert!(InstallRecord::from_configmap(&json!({"data": {}})).is_err());
}

#[test]
fn resume_keeps_progress_only_for_the_same_plan_and_inventory_always() {
    let mut rec = InstallRecord::resume(None, meta(), "p1", 3);
    rec.note_applied(&r("Namespace", "kf"), "platform", 1, noted(true, None));
    rec.reach(2, "crds");
    let same = InstallRecord::resume(Some(rec.clone()), meta(), "p1", 3);
    assert_eq!((same.waves_done, same.inventory.len()), (2, 1));
    let other = InstallRecord::resume(Some(rec), meta(), "p2", 4);
    assert_eq!((other.waves_done, other.inventory.len()), (0, 1));
}

#[test]
fn created_flag_sticks_and_deletion_order_reverses_waves() {
    let mut rec = InstallRecord::resume(None, meta(), "p", 2);
    rec.note_applied(&r("Namespace", "a"), "platform", 1, noted(true, None));
    rec.note_applied(&r("Namespace", "b"), "platform", 1, noted(false, None));
    rec.note_applied(&r("ConfigMap", "c"), "platform", 2, noted(true, None));
    rec.note_applied(&r("Namespace", "a"), "platform", 1, noted(false, None));
    assert!(rec.inventory[0].created);
    let order: Vec<&str> = rec.deletion_order().iter().map(|e| e.reference.name.as_str()).collect();
    assert_eq!(order, ["c", "b", "a"]);
}

#[test]
fn entries_added_or_changed_by_hand_break_their_seal_and_are_set_apart() {
    let mut rec = InstallRecord::resume(None, meta(), "p", 1);
    rec.note_applied(&r("Namespace", "kf"), "platform", 1, noted(true, Some("u1")));
    rec.note_applied(&r("ConfigMap", "c"), "platform", 1, noted(true, Some("u2")));
    let cm = rec.to_configmap();
    assert_eq!(InstallRecord::from_configmap(&cm).unwrap(), rec);
    let mut doc: Value = serde_json::from_str(cm["data"][RECORD_KEY].as_str().unwrap()).unwrap();
    doc["inventory"][1]["name"] = json!("users-configmap");
    let added = json!({"apiVersion": "v1", "kind": "Namespace", "name": "kube-public", "component": "platform", "wave": 1, "created": true});
    doc["inventory"].as_array_mut().unwrap().push(added);
    let edited = json!({"data": {RECORD_KEY: doc.to_string()}});
    let read = InstallRecord::from_configmap(&edited).unwrap();
    let names = |v: &[InventoryEntry]| v.iter().map(|e| e.reference.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&read.inventory), ["kf"]);
    assert_eq!(names(&read.hand_edited), ["users-configmap", "kube-public"]);
    // a record written before seals: nothing to check, every entry reads
    doc.as_object_mut().unwrap().remove("sealed");
    let legacy = InstallRecord::from_configmap(&json!({"data": {RECORD_KEY: doc.to_string()}})).unwrap();
    assert_eq!((legacy.inventory.len(), legacy.hand_edited.len()), (3, 0));
    assert!(legacy.inventory.iter().all(|e| e.uid.is_none()), "UIDs in an unsealed record are not trusted");
}

#[test]
fn a_record_past_the_input_limit_is_refused_unparsed() {
    let huge = " ".repeat(crate::input::MAX_INPUT_BYTES as usize + 1);
    let err = InstallRecord::from_configmap(&json!({"data": {RECORD_KEY: huge}})).unwrap_err().to_string();
    assert!(err.contains("record.json is 8388609 bytes, larger than the 8 MiB limit"), "{err}");
}

fn done(rec: &mut InstallRecord, succeeded: bool) {
    rec.reach(rec.waves_total, "last");
    let run = LastRun {
        operation: "upgrade".into(),
        succeeded,
        stage: "done".into(),
        error: None,
        from: None,
        applied: 1,
        planned: 1,
        at: "t".into(),
    };
    rec.finish(run);
}

#[test]
fn previous_is_the_last_completed_release_and_survives_a_failed_retry() {
    let next = InstallMeta { upstream_version: "v1.12.0".into(), ..meta() };
    let mut rec = InstallRecord::resume(None, meta(), "p1", 2);
    done(&mut rec, true);
    assert_eq!(InstallRecord::resume(Some(rec.clone()), meta(), "p1", 2).previous, None, "same release");
    let mut failed = InstallRecord::resume(Some(rec.clone()), next.clone(), "p2", 2);
    assert_eq!(failed.previous.as_ref(), Some(&meta()));
    done(&mut failed, false);
    let retried = InstallRecord::resume(Some(failed.clone()), next.clone(), "p2", 2);
    assert_eq!(retried.previous.as_ref(), Some(&meta()), "a retried failed upgrade keeps it");
    let rolled_back = InstallRecord::resume(Some(failed), meta(), "p1", 2);
    assert_eq!(rolled_back.previous, None, "back on the previous release: nothing before it");
    let other_values = InstallMeta { values_digest: "w".into(), ..meta() };
    let unfinished = InstallRecord::resume(None, meta(), "p1", 2);
    assert_eq!(InstallRecord::resume(Some(unfinished), other_values.clone(), "p3", 2).previous, None);
    assert_eq!(InstallRecord::resume(Some(rec), other_values, "p3", 2).previous, Some(meta()));
}

#[test]
fn records_without_previous_read_and_write_none() {
    let mut rec = InstallRecord::resume(None, meta(), "p", 1);
    let cm = rec.to_configmap();
    assert!(!cm["data"][RECORD_KEY].as_str().unwrap().contains("previous"));
    rec.previous = Some(meta());
    let read = InstallRecord::from_configmap(&rec.to_configmap()).unwrap();
    assert_eq!(read.previous, Some(meta()));
}

#[test]
fn older_records_without_components_read_as_unknown() {
    let mut rec = InstallRecord::resume(None, meta(), "p", 1);
    rec.note_applied(&r("Namespace", "kf"), "kubeflow-namespace", 1, noted(true, None));
    let mut doc = serde_json::to_value(&rec).unwrap();
    doc["inventory"][0].as_object_mut().unwrap().remove("component");
    let cm = json!({"data": {RECORD_KEY: doc.to_string()}});
    let read = InstallRecord::from_configmap(&cm).unwrap();
    assert_eq!(read.inventory[0].component, UNKNOWN_COMPONENT);
}
