//! replicas: set replica counts by name at the replica field specs.
//!
//! For each field spec of the config's `replicas` list (Deployment, ReplicationController,
//! ReplicaSet, StatefulSet by default, all `spec/replicas` with `create: true`), every object
//! of a selected kind that has *ever* had the entry's name (so a name given before a
//! namePrefix still matches) gets the count at that path. An entry that matches no object is
//! an error, as in kustomize. The count is written as a number, except that an existing
//! string value stays a string (`replicas: "1"` becomes `replicas: "3"`: kustomize keeps the
//! node's tag).

use super::config::{TransformConfig, spec_gvk};
use super::fieldspec::{self, CreateKind, describe};
use crate::error::{FieldError, KustomizeError, Result};
use crate::kustomization as k;
use crate::resmap::ResMap;
use serde_json::Value;

pub(crate) fn apply(resources: &mut ResMap, replica: &k::Replica, config: &TransformConfig) -> Result<()> {
    let mut found = false;
    for spec in &config.replicas {
        let selector = spec_gvk(spec);
        let matching =
            resources.positions(|r| r.all_ids().any(|id| id.name == replica.name && id.gvk.is_selected_by(&selector)));
        found |= !matching.is_empty();
        for index in matching {
            fieldspec::apply_one(resources.get_mut(index), spec, CreateKind::Scalar, &mut |node| {
                set_count(node, replica.count)
            })?;
        }
    }
    if found {
        return Ok(());
    }
    let kinds: Vec<String> = config.replicas.iter().map(|s| go_gvk_string(&spec_gvk(s))).collect();
    Err(KustomizeError::transform(
        format!("replicas entry `{}`", replica.name),
        format!(
            "resource with name {} does not match a config with the following GVK [{}]; check the name (before any prefix or suffix) or add a `replicas` field spec for the kind with `configurations`",
            replica.name,
            kinds.join(" ")
        ),
    ))
}

/// Write the count: a number, or a string where the field already holds a string.
fn set_count(node: &mut Value, count: i64) -> std::result::Result<(), FieldError> {
    match node {
        Value::String(_) => *node = Value::String(count.to_string()),
        Value::Null | Value::Number(_) | Value::Bool(_) => *node = Value::from(count),
        other => return Err(FieldError::NotACount(describe(other))),
    }
    Ok(())
}

/// kustomize's `Gvk.String()`: `Kind.version.group` with `[noKind]`, `[noVer]`, `[noGrp]`.
fn go_gvk_string(gvk: &crate::gvk::Gvk) -> String {
    let or = |s: &str, d: &str| if s.is_empty() { d.to_string() } else { s.to_string() };
    format!("{}.{}.{}", or(&gvk.kind, "[noKind]"), or(&gvk.version, "[noVer]"), or(&gvk.group, "[noGrp]"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kustomization::FieldSpec;
    use crate::resource::Resource;
    use serde_json::json;

    fn resmap(objs: Vec<Value>) -> ResMap {
        let mut m = ResMap::new();
        m.replace_all(objs.into_iter().map(Resource::new).collect());
        m
    }

    fn obj(api_version: &str, kind: &str, name: &str) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}})
    }

    fn replica(name: &str, count: i64) -> k::Replica {
        k::Replica { name: name.into(), count }
    }

    #[test]
    fn sets_and_creates_replicas_of_default_kinds() {
        let mut m = resmap(vec![
            obj("apps/v1", "Deployment", "d"),
            obj("apps/v1", "StatefulSet", "d"),
            obj("v1", "Service", "d"),
        ]);
        apply(&mut m, &replica("d", 3), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["replicas"], json!(3));
        assert_eq!(m.get(1).obj["spec"]["replicas"], json!(3));
        assert!(m.get(2).obj.get("spec").is_none());
    }

    #[test]
    fn only_objects_with_the_name_are_changed() {
        let mut m = resmap(vec![obj("apps/v1", "Deployment", "d"), obj("apps/v1", "Deployment", "e")]);
        apply(&mut m, &replica("d", 2), &TransformConfig::defaults()).unwrap();
        assert!(m.get(1).obj.get("spec").is_none());
    }

    #[test]
    fn a_name_before_prefixing_still_matches() {
        let mut m = resmap(vec![obj("apps/v1", "Deployment", "d")]);
        m.get_mut(0).set_name("p-d");
        apply(&mut m, &replica("d", 5), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["replicas"], json!(5));
    }

    #[test]
    fn a_string_count_stays_a_string() {
        let mut dep = obj("apps/v1", "Deployment", "d");
        dep["spec"] = json!({"replicas": "1"});
        let mut m = resmap(vec![dep]);
        apply(&mut m, &replica("d", 3), &TransformConfig::defaults()).unwrap();
        assert_eq!(m.get(0).obj["spec"]["replicas"], json!("3"));
    }

    #[test]
    fn configured_kinds_are_included() {
        let mut config = TransformConfig::defaults();
        config.replicas.push(FieldSpec {
            kind: "Thing".into(),
            path: "spec/size".into(),
            create: true,
            ..FieldSpec::default()
        });
        let mut m = resmap(vec![obj("example.com/v1", "Thing", "t")]);
        apply(&mut m, &replica("t", 4), &config).unwrap();
        assert_eq!(m.get(0).obj["spec"]["size"], json!(4));
    }

    #[test]
    fn no_match_is_an_error_listing_the_kinds() {
        let mut m = resmap(vec![obj("apps/v1", "Deployment", "d")]);
        let err = apply(&mut m, &replica("nope", 1), &TransformConfig::defaults()).unwrap_err().to_string();
        assert!(
            err.contains(
                "[Deployment.[noVer].[noGrp] StatefulSet.[noVer].[noGrp] ReplicaSet.[noVer].[noGrp] ReplicationController.[noVer].[noGrp]]"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_map_where_the_count_goes_is_an_error() {
        let mut dep = obj("apps/v1", "Deployment", "d");
        dep["spec"] = json!({"replicas": {"a": 1}});
        let mut m = resmap(vec![dep]);
        assert!(apply(&mut m, &replica("d", 3), &TransformConfig::defaults()).is_err());
    }
}
