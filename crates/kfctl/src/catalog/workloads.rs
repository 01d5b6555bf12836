//! Per-workload pod values, native side: `<component>.podAnnotations.<workload>`,
//! `.podLabels.<workload>` and `.env.<workload>.<container>` on the Deployments and
//! StatefulSets (the workloads [`super::params::is_workload`] names).
//!
//! - `podAnnotations` / `podLabels` are merged into the pod template's
//!   `spec.template.metadata.annotations` / `.labels` (the value's keys win; every upstream
//!   workload has a template `metadata`, one without is left alone by both sides);
//! - `env` entries are appended to that container's `env`; a `name` upstream's container
//!   already has is refused ([`check_env`], and `fail` in the chart's `kfctl.envItems`), since a
//!   duplicate name is what server-side apply rejects (change upstream's with a profile patch).
//!
//! Empty (the defaults: `{}`, `[]`) leaves upstream's objects as they are. The Helm side is
//! `templates/chart/helpers/podMetadata.tpl` and `env.tpl`, marked by `chart/params.rs`.

use super::CatalogError;
use super::params::{Ctx, is_empty, is_workload, object_name};
use serde_json::{Map, Value, json};

/// The pod template's metadata field each value merges into.
pub(crate) const POD_METADATA: &[(&str, &str)] = &[("podAnnotations", "annotations"), ("podLabels", "labels")];

pub(crate) fn apply_pod_metadata(obj: &mut Value, ctx: &Ctx) {
    if !is_workload(obj) {
        return;
    }
    let name = object_name(obj);
    for (value, field) in POD_METADATA {
        let Some(Value::Object(extra)) = ctx.own(&[value, &name]).filter(|v| !is_empty(v)).cloned() else { continue };
        let Some(meta) = obj.pointer_mut("/spec/template/metadata").and_then(Value::as_object_mut) else { continue };
        if let Value::Object(m) = meta.entry(*field).or_insert_with(|| json!({})) {
            m.extend(extra);
        }
    }
}

pub(crate) fn apply_env(obj: &mut Value, ctx: &Ctx) {
    if !is_workload(obj) {
        return;
    }
    let name = object_name(obj);
    let Some(per_container) = ctx.own(&["env", &name]).and_then(Value::as_object).cloned() else { return };
    let Some(containers) = obj.pointer_mut("/spec/template/spec/containers").and_then(Value::as_array_mut) else {
        return;
    };
    for c in containers.iter_mut().filter_map(Value::as_object_mut) {
        let cname = c.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        if let Some(Value::Array(extra)) = per_container.get(&cname).filter(|e| !is_empty(e)) {
            merge_env(c, extra);
        }
    }
}

/// Append `extra` to the container's `env` (names are checked new by [`check_env`]).
pub(crate) fn merge_env(container: &mut Map<String, Value>, extra: &[Value]) {
    if let Value::Array(env) = container.entry("env").or_insert_with(|| json!([])) {
        env.extend(extra.iter().cloned());
    }
}

/// The names of a container's upstream `env` entries.
pub(crate) fn env_names(container: &Map<String, Value>) -> Vec<String> {
    let env = container.get("env").and_then(Value::as_array).into_iter().flatten();
    env.filter_map(|e| e.get("name").and_then(Value::as_str)).map(str::to_string).collect()
}

/// Refuse an extra `env` entry whose name the upstream container already has: appended, it
/// would be a duplicate name server-side apply rejects (change upstream's with a profile patch).
pub(crate) fn check_env(values: &Value, objects: &[super::RenderedObject]) -> Result<(), CatalogError> {
    for o in objects.iter().filter(|o| is_workload(&o.obj)) {
        let workload = object_name(&o.obj);
        let Some(per_container) =
            super::values::get(values, &[&o.component, "env", &workload]).and_then(Value::as_object)
        else {
            continue;
        };
        let containers =
            o.obj.pointer("/spec/template/spec/containers").and_then(Value::as_array).into_iter().flatten();
        for c in containers.filter_map(Value::as_object) {
            let container = c.get("name").and_then(Value::as_str).unwrap_or_default();
            let taken = env_names(c);
            let extra = per_container.get(container).and_then(Value::as_array).into_iter().flatten();
            if let Some(name) =
                extra.filter_map(|e| e.get("name").and_then(Value::as_str)).find(|n| taken.iter().any(|t| t == n))
            {
                return Err(CatalogError::EnvTaken {
                    path: format!("{}.env.{workload}.{container}", o.component),
                    name: name.to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
               "spec": {"template": {"metadata": {"labels": {"app": "w"}},
                        "spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}]}}}})
    }

    fn apply(obj: &mut Value, values: Value) {
        let defaults = json!({});
        let ctx = Ctx { values: &values, defaults: &defaults, component: "katib" };
        apply_pod_metadata(obj, &ctx);
        apply_env(obj, &ctx);
    }

    #[test]
    fn pod_labels_annotations_and_env_land_on_the_named_workload_and_container() {
        let mut d = deployment();
        apply(
            &mut d,
            json!({"katib": {"podLabels": {"w": {"team": "ml", "app": "x"}}, "podAnnotations": {"w": {"a": "b"}},
                             "env": {"w": {"c": [{"name": "B", "value": "2"}]}}}}),
        );
        assert_eq!(d.pointer("/spec/template/metadata/labels").unwrap(), &json!({"app": "x", "team": "ml"}));
        assert_eq!(d.pointer("/spec/template/metadata/annotations").unwrap(), &json!({"a": "b"}));
        assert_eq!(
            d.pointer("/spec/template/spec/containers/0/env").unwrap(),
            &json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
        );
    }

    #[test]
    fn an_env_name_upstream_has_is_refused_naming_the_value() {
        let objects = vec![super::super::RenderedObject::new("katib", deployment())];
        let taken = json!({"katib": {"env": {"w": {"c": [{"name": "B"}, {"name": "A", "value": "2"}]}}}});
        let e = check_env(&taken, &objects).unwrap_err().to_string();
        assert!(e.starts_with("values: `katib.env.w.c` sets `A`, which upstream's container already has"), "{e}");
        assert!(check_env(&json!({"katib": {"env": {"w": {"c": [{"name": "B"}]}}}}), &objects).is_ok());
    }

    #[test]
    fn empty_values_and_other_workloads_change_nothing() {
        let mut d = deployment();
        apply(
            &mut d,
            json!({"katib": {"podLabels": {"w": {}}, "env": {"w": {"c": []}, "other": {"c": [{"name": "X"}]}}}}),
        );
        assert_eq!(d, deployment());
    }
}
