//! `namePrefix:` and `nameSuffix:`: kustomize's PrefixTransformer, then its SuffixTransformer.
//!
//! Each runs only when its value is not empty, over every object except the kinds kustomize
//! never renames (judged by the object's *original* id): `CustomResourceDefinition` (any
//! group), `APIService` of `apiregistration.k8s.io` and `Namespace` (any group). For each field
//! spec whose gvk selects the original id:
//! - a `metadata/name` spec records the prefix (suffix) on the resource — the name-reference
//!   fix-up compares these lists between referrer and referral — and, unless it is empty,
//!   remembers the current id as a previous one before the name changes. A kustomization
//!   with only a `namePrefix` (only a `nameSuffix`) records an empty suffix (prefix): kustomize
//!   v5.6 keeps these lists as comma-separated annotations and appends the empty value too, so
//!   an object renamed by a sibling overlay's `namePrefix` still matches a referrer that an
//!   inner kustomization gave a `nameSuffix` (`[-inner, ""]` ends like `[""]`);
//! - the value at the spec's path becomes `prefix + value` (`value + suffix`); with `create`, a
//!   missing field is created holding just the prefix (suffix). Paths must reach scalars.

use super::config::TransformConfig;
use crate::error::{FieldError, KustomizeError, Result};
use crate::fieldpath;
use crate::gvk::Gvk;
use crate::kustomization::FieldSpec;
use crate::resmap::ResMap;
use crate::resource::Resource;
use serde_json::Value;

/// Which end of the value an affix goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Prefix,
    Suffix,
}

/// Apply `namePrefix` then `nameSuffix`. Nothing happens when both are empty; when only one
/// is, the other still records its empty affix, as kustomize does (see the module doc).
pub(crate) fn apply(resources: &mut ResMap, prefix: &str, suffix: &str, config: &TransformConfig) -> Result<()> {
    if prefix.is_empty() && suffix.is_empty() {
        return Ok(());
    }
    add_affix(resources, End::Prefix, prefix, &config.name_prefix)?;
    add_affix(resources, End::Suffix, suffix, &config.name_suffix)
}

/// Kinds kustomize's prefix and suffix transformers never touch: (group, kind), empty = any.
const NEVER_RENAMED: [(&str, &str); 3] =
    [("", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"), ("", "Namespace")];

fn never_renamed(gvk: &Gvk) -> bool {
    NEVER_RENAMED.iter().any(|(group, kind)| gvk.is_selected_by(&Gvk::new(group, "", kind)))
}

fn add_affix(resources: &mut ResMap, end: End, affix: &str, specs: &[FieldSpec]) -> Result<()> {
    for resource in resources.iter_mut() {
        let original = resource.original_id().gvk;
        if never_renamed(&original) {
            continue;
        }
        for spec in specs.iter().filter(|s| s.selects(&original)) {
            if spec.path == "metadata/name" {
                record_affix(resource, end, affix);
            }
            let context = resource.current_id().to_string();
            affix_at_path(&mut resource.obj, spec, end, affix)
                .map_err(|source| KustomizeError::Field { context, source })?;
        }
    }
    Ok(())
}

fn record_affix(resource: &mut Resource, end: End, affix: &str) {
    match end {
        End::Prefix => resource.name_prefixes.push(affix.to_string()),
        End::Suffix => resource.name_suffixes.push(affix.to_string()),
    }
    if !affix.is_empty() {
        resource.remember_current_id();
    }
}

fn affix_at_path(obj: &mut Value, spec: &FieldSpec, end: End, affix: &str) -> std::result::Result<(), FieldError> {
    fieldpath::visit_mut(obj, &fieldpath::parse(&spec.path), spec.create, &mut |field| {
        let current = match &*field {
            Value::Null => String::new(),
            Value::Object(_) | Value::Array(_) => {
                return Err(FieldError::AffixNotScalar(spec.path.clone()));
            }
            scalar => fieldpath::scalar_text(Some(scalar)).unwrap_or_default(),
        };
        let renamed = match end {
            End::Prefix => format!("{affix}{current}"),
            End::Suffix => format!("{current}{affix}"),
        };
        *field = Value::String(renamed);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(kind: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec { group: String::new(), version: String::new(), kind: kind.into(), path: path.into(), create }
    }

    fn config() -> TransformConfig {
        TransformConfig {
            name_prefix: vec![spec("", "metadata/name", false)],
            name_suffix: vec![spec("", "metadata/name", false)],
            ..TransformConfig::default()
        }
    }

    fn map_of(objects: Vec<Value>) -> ResMap {
        let mut map = ResMap::new();
        for o in objects {
            map.append(Resource::new(o), "test").unwrap();
        }
        map
    }

    fn renamed(object: Value, prefix: &str, suffix: &str) -> String {
        let mut map = map_of(vec![object]);
        apply(&mut map, prefix, suffix, &config()).unwrap();
        map.get(0).name().to_string()
    }

    #[test]
    fn prefix_and_suffix_wrap_the_name() {
        assert_eq!(
            renamed(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}), "p-", "-s"),
            "p-cm-s"
        );
    }

    #[test]
    fn crds_api_services_and_namespaces_keep_their_names() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "f.x.io"}});
        let api =
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.x"}});
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}});
        assert_eq!(renamed(crd, "p-", "-s"), "f.x.io");
        assert_eq!(renamed(api, "p-", "-s"), "v1.x");
        assert_eq!(renamed(ns, "p-", "-s"), "kf");
    }

    #[test]
    fn api_service_of_another_group_is_renamed() {
        let other = json!({"apiVersion": "example.com/v1", "kind": "APIService", "metadata": {"name": "a"}});
        assert_eq!(renamed(other, "p-", ""), "p-a");
    }

    #[test]
    fn each_renaming_step_is_remembered_with_its_affix() {
        let mut map = map_of(vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})]);
        apply(&mut map, "p-", "-s", &config()).unwrap();
        let r = map.get(0);
        let names: Vec<_> = r.previous_ids.iter().map(|id| id.name.as_str()).collect();
        assert_eq!(names, ["cm", "p-cm"]);
        assert_eq!(
            (r.name_prefixes.as_slice(), r.name_suffixes.as_slice()),
            (&["p-".to_string()][..], &["-s".to_string()][..])
        );
    }

    #[test]
    fn empty_affixes_change_and_record_nothing() {
        let mut map = map_of(vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})]);
        apply(&mut map, "", "", &config()).unwrap();
        assert!(map.get(0).previous_ids.is_empty() && map.get(0).name_prefixes.is_empty());
    }

    #[test]
    fn a_prefix_alone_records_an_empty_suffix_and_no_extra_previous_id() {
        let mut map = map_of(vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})]);
        apply(&mut map, "p-", "", &config()).unwrap();
        let r = map.get(0);
        assert_eq!(r.name(), "p-cm");
        assert_eq!(
            (r.name_prefixes.as_slice(), r.name_suffixes.as_slice()),
            (&["p-".to_string()][..], &[String::new()][..])
        );
        assert_eq!(r.previous_ids.len(), 1);
    }

    #[test]
    fn field_specs_select_by_kind_and_may_create() {
        let mut cfg = config();
        cfg.name_prefix.push(spec("Deployment", "spec/template/metadata/name", true));
        let mut map = map_of(vec![
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {}}}),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"template": {}}}),
        ]);
        apply(&mut map, "p-", "", &cfg).unwrap();
        assert_eq!(map.get(0).obj["spec"]["template"]["metadata"]["name"], "p-");
        assert_eq!(map.get(1).obj["spec"]["template"], json!({}));
        assert_eq!(map.get(0).name_prefixes, ["p-"], "only the metadata/name spec records the prefix");
    }

    #[test]
    fn prefixes_stack_outermost_last() {
        let mut map = map_of(vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})]);
        let cfg = TransformConfig {
            name_prefix: vec![spec("ConfigMap", "metadata/name", false)],
            ..TransformConfig::default()
        };
        apply(&mut map, "a-", "", &cfg).unwrap();
        apply(&mut map, "b-", "", &cfg).unwrap();
        assert_eq!(map.get(0).name(), "b-a-cm");
        assert_eq!(map.get(0).name_prefixes, ["a-", "b-"]);
    }

    #[test]
    fn non_scalar_targets_are_an_error() {
        let cfg = TransformConfig { name_prefix: vec![spec("", "metadata", false)], ..TransformConfig::default() };
        let mut map = map_of(vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})]);
        let err = apply(&mut map, "p-", "", &cfg).unwrap_err();
        assert!(err.to_string().contains("must target scalar nodes"), "{err}");
    }
}
