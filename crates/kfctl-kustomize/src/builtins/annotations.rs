//! commonAnnotations: add annotations at the annotation field specs.
//!
//! The pairs go to every field spec of the config's `commonAnnotations` list:
//! `metadata/annotations` of every object and the pod template annotations of the workload
//! kinds (Deployment, ReplicaSet, DaemonSet, StatefulSet, ReplicationController, Job, and both
//! template levels of CronJob), created where missing. Values are strings; no pairs, no change.

use super::config::TransformConfig;
use super::fieldspec;
use crate::error::Result;
use crate::resmap::ResMap;
use std::collections::BTreeMap;

pub(crate) fn apply(
    resources: &mut ResMap,
    annotations: &BTreeMap<String, String>,
    config: &TransformConfig,
) -> Result<()> {
    fieldspec::add_pairs(resources, annotations, &config.common_annotations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kustomization::FieldSpec;
    use crate::resource::Resource;
    use serde_json::{Value, json};

    fn resmap(objs: Vec<Value>) -> ResMap {
        let mut m = ResMap::new();
        m.replace_all(objs.into_iter().map(Resource::new).collect());
        m
    }

    fn note() -> BTreeMap<String, String> {
        BTreeMap::from([("note".to_string(), "1".to_string())])
    }

    #[test]
    fn every_object_gets_metadata_annotations() {
        let mut m = resmap(vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})]);
        apply(&mut m, &note(), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["metadata"]["annotations"], json!({"note": "1"}));
    }

    #[test]
    fn workload_pod_templates_are_annotated_and_created() {
        let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}});
        let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {}});
        let mut m = resmap(vec![dep, cron]);
        apply(&mut m, &note(), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["template"]["metadata"]["annotations"], json!({"note": "1"}));
        assert_eq!(m.get(1).obj["spec"]["jobTemplate"]["metadata"]["annotations"], json!({"note": "1"}));
        assert_eq!(
            m.get(1).obj["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"],
            json!({"note": "1"})
        );
    }

    #[test]
    fn other_kinds_templates_are_left_alone() {
        let pod_template_like = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"template": {}}});
        let mut m = resmap(vec![pod_template_like]);
        apply(&mut m, &note(), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["template"], json!({}));
    }

    #[test]
    fn existing_annotations_are_kept_and_overridden_by_key() {
        let mut m = resmap(vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {"note": "0", "other": "x"}}}),
        ]);
        apply(&mut m, &note(), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["metadata"]["annotations"], json!({"note": "1", "other": "x"}));
    }

    #[test]
    fn configured_specs_are_used() {
        let mut config = TransformConfig::defaults();
        config.common_annotations.push(FieldSpec {
            kind: "Thing".into(),
            path: "spec/notes".into(),
            create: true,
            ..FieldSpec::default()
        });
        let mut m = resmap(vec![json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}})]);
        apply(&mut m, &note(), &config).unwrap();
        assert_eq!(m.get(0).obj["spec"]["notes"], json!({"note": "1"}));
    }

    #[test]
    fn no_pairs_no_change() {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let mut m = resmap(vec![obj.clone()]);
        apply(&mut m, &BTreeMap::new(), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj, obj);
    }
}
