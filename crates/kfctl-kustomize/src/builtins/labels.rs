//! commonLabels and labels: add labels at the label (and selector) field specs.
//!
//! `commonLabels` writes its pairs at every field spec of the config's `commonLabels` list:
//! `metadata/labels`, pod template labels, and the selectors (`spec/selector` of Services,
//! `matchLabels` of workloads, affinity and spread selectors, network policies...), creating
//! them where the spec says.
//!
//! Each `labels:` entry picks its field specs as kustomize v5.6 does:
//! - its own `fields`;
//! - with `includeSelectors`, the whole `commonLabels` list;
//! - otherwise `metadata/labels` (created), plus, with `includeTemplates`, the
//!   `templateLabels` list (pod templates, job templates, volume claim templates);
//! - and always the config's `labels` list (empty unless a `configurations:` file adds to it).
//!
//! These lists merge with kustomize's rules (see [`super::config::merge_specs`]), so the same
//! field named with and without `create` is an error. Label values are always strings. An
//! entry without pairs changes nothing (it does not even create an empty `labels` map).

use super::config::{TransformConfig, merge_specs};
use super::fieldspec;
use crate::error::{KustomizeError, Result};
use crate::kustomization::{self as k, FieldSpec};
use crate::resmap::ResMap;
use std::collections::BTreeMap;

/// `commonLabels`: the pairs at every `commonLabels` field spec.
pub(crate) fn apply_common(
    resources: &mut ResMap,
    labels: &BTreeMap<String, String>,
    config: &TransformConfig,
) -> Result<()> {
    fieldspec::add_pairs(resources, labels, &config.common_labels)
}

/// One `labels:` entry.
pub(crate) fn apply_label_set(resources: &mut ResMap, set: &k::LabelSet, config: &TransformConfig) -> Result<()> {
    let specs = label_set_specs(set, config)?;
    fieldspec::add_pairs(resources, &set.pairs, &specs)
}

/// The field specs a `labels:` entry writes to.
pub(crate) fn label_set_specs(set: &k::LabelSet, config: &TransformConfig) -> Result<Vec<FieldSpec>> {
    let mut specs = set.fields.clone();
    let conflict = |spec: FieldSpec| {
        KustomizeError::transform(
            "labels",
            format!("conflicting fieldspecs: `{}` is listed both with and without `create`; list it once", spec.path),
        )
    };
    if set.include_selectors {
        merge_specs(&mut specs, &config.common_labels, true).map_err(conflict)?;
    } else {
        if set.include_templates {
            merge_specs(&mut specs, &config.template_labels, true).map_err(conflict)?;
        }
        let metadata_labels = FieldSpec { path: "metadata/labels".into(), create: true, ..FieldSpec::default() };
        merge_specs(&mut specs, &[metadata_labels], true).map_err(conflict)?;
    }
    merge_specs(&mut specs, &config.labels, true).map_err(conflict)?;
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Resource;
    use serde_json::{Value, json};

    fn resmap(objs: Vec<Value>) -> ResMap {
        let mut m = ResMap::new();
        m.replace_all(objs.into_iter().map(Resource::new).collect());
        m
    }

    fn pairs(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"template": {"metadata": {}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    }

    fn label_set(list: &[(&str, &str)], selectors: bool, templates: bool) -> k::LabelSet {
        k::LabelSet { pairs: pairs(list), include_selectors: selectors, include_templates: templates, fields: vec![] }
    }

    #[test]
    fn common_labels_reach_metadata_selector_and_template() {
        let mut m = resmap(vec![deployment()]);
        apply_common(&mut m, &pairs(&[("app", "web")]), &TransformConfig::defaults()).unwrap();
        let obj = &m.get(0).obj;
        assert_eq!(obj["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(obj["spec"]["selector"]["matchLabels"], json!({"app": "web"}));
        assert_eq!(obj["spec"]["template"]["metadata"]["labels"], json!({"app": "web"}));
    }

    #[test]
    fn common_labels_create_service_selectors() {
        let mut m = resmap(vec![
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": []}}),
        ]);
        apply_common(&mut m, &pairs(&[("app", "web")]), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["selector"], json!({"app": "web"}));
    }

    #[test]
    fn common_labels_do_not_create_selectors_of_jobs_or_budgets() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {}}});
        let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {"selector": {}}});
        let mut m = resmap(vec![job, pdb]);
        apply_common(&mut m, &pairs(&[("app", "web")]), &TransformConfig::defaults()).unwrap();
        assert!(m.get(0).obj["spec"].get("selector").is_none());
        assert_eq!(m.get(0).obj["spec"]["template"]["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(m.get(1).obj["spec"]["selector"], json!({}));
    }

    #[test]
    fn common_labels_label_every_volume_claim_template() {
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                         "spec": {"volumeClaimTemplates": [{"spec": {}}, {"metadata": {"name": "x"}}]}});
        let mut m = resmap(vec![sts]);
        apply_common(&mut m, &pairs(&[("app", "web")]), &TransformConfig::defaults()).unwrap();
        let vcts = &m.get(0).obj["spec"]["volumeClaimTemplates"];
        assert_eq!(vcts[0]["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(vcts[1]["metadata"], json!({"name": "x", "labels": {"app": "web"}}));
    }

    #[test]
    fn labels_without_selectors_touch_only_metadata() {
        let mut m = resmap(vec![deployment()]);
        apply_label_set(&mut m, &label_set(&[("team", "a")], false, false), &TransformConfig::defaults()).unwrap();
        let obj = &m.get(0).obj;
        assert_eq!(obj["metadata"]["labels"], json!({"team": "a"}));
        assert!(obj["spec"].get("selector").is_none());
        assert_eq!(obj["spec"]["template"]["metadata"], json!({}));
    }

    #[test]
    fn labels_with_templates_reach_templates_but_not_selectors() {
        let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                          "spec": {"jobTemplate": {"spec": {"template": {"spec": {}}}}}});
        let mut m = resmap(vec![deployment(), cron]);
        apply_label_set(&mut m, &label_set(&[("team", "a")], false, true), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["template"]["metadata"]["labels"], json!({"team": "a"}));
        assert!(m.get(0).obj["spec"].get("selector").is_none());
        assert_eq!(m.get(1).obj["spec"]["jobTemplate"]["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(m.get(1).obj["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"], json!({"team": "a"}));
    }

    #[test]
    fn labels_with_selectors_act_like_common_labels() {
        let mut a = resmap(vec![deployment()]);
        let mut b = resmap(vec![deployment()]);
        apply_label_set(&mut a, &label_set(&[("app", "web")], true, false), &TransformConfig::defaults()).unwrap();
        apply_common(&mut b, &pairs(&[("app", "web")]), &TransformConfig::defaults()).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn labels_custom_fields_are_added() {
        let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {}});
        let mut set = label_set(&[("team", "a")], false, false);
        set.fields.push(FieldSpec {
            kind: "Thing".into(),
            path: "spec/podLabels".into(),
            create: true,
            ..FieldSpec::default()
        });
        let mut m = resmap(vec![thing]);
        apply_label_set(&mut m, &set, &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["podLabels"], json!({"team": "a"}));
    }

    #[test]
    fn labels_configuration_list_applies_to_every_entry() {
        // Real kustomize v5.6: a `labels:` configuration spec is used with and without selectors.
        let mut config = TransformConfig::defaults();
        config.labels.push(FieldSpec {
            kind: "Thing".into(),
            path: "spec/template/metadata/labels".into(),
            create: true,
            ..FieldSpec::default()
        });
        let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {}});
        for selectors in [false, true] {
            let mut m = resmap(vec![thing.clone()]);
            apply_label_set(&mut m, &label_set(&[("team", "a")], selectors, false), &config).unwrap();
            assert_eq!(m.get(0).obj["spec"]["template"]["metadata"]["labels"], json!({"team": "a"}));
        }
    }

    #[test]
    fn labels_custom_field_conflicting_with_metadata_labels_is_an_error() {
        let mut set = label_set(&[("team", "a")], false, false);
        set.fields.push(FieldSpec { path: "metadata/labels".into(), create: false, ..FieldSpec::default() });
        let mut m = resmap(vec![deployment()]);
        assert!(apply_label_set(&mut m, &set, &TransformConfig::defaults()).is_err());
    }

    #[test]
    fn label_values_are_strings_and_replace_existing_ones() {
        let mut obj = deployment();
        obj["metadata"]["labels"] = json!({"v": 1, "keep": "me"});
        let mut m = resmap(vec![obj]);
        apply_common(&mut m, &pairs(&[("v", "2")]), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["metadata"]["labels"], json!({"v": "2", "keep": "me"}));
    }

    #[test]
    fn empty_pairs_change_nothing() {
        let mut m = resmap(vec![deployment()]);
        apply_label_set(&mut m, &label_set(&[], false, true), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj, deployment());
    }

    #[test]
    fn null_selector_is_replaced_but_null_affinity_is_left_alone() {
        // Real kustomize v5.6 on the same object.
        let mut obj = deployment();
        obj["spec"]["selector"] = Value::Null;
        obj["spec"]["template"]["spec"]["affinity"] = Value::Null;
        let mut m = resmap(vec![obj]);
        apply_common(&mut m, &pairs(&[("app", "web")]), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["selector"], json!({"matchLabels": {"app": "web"}}));
        assert_eq!(m.get(0).obj["spec"]["template"]["spec"]["affinity"], Value::Null);
    }
}
