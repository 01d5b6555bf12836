//! The `namespace:` directive: kustomize's NamespaceTransformer, as v5.6 runs it.
//!
//! For every object, in order:
//! 1. its current id is remembered as a previous id — for *every* object, changed or not, as
//!    kustomize does; the name-reference fix-up treats objects with a previous id as possible
//!    referrals, so an object that went through a `namespace:` can be found by its name;
//! 2. namespaced objects get `metadata.namespace` (created when missing); cluster-scoped ones
//!    ([`is_cluster_scoped`]) are left alone;
//! 3. RoleBinding and ClusterRoleBinding `subjects` whose `name` is `default` get the namespace
//!    (kustomize's default "defaultOnly" subject mode; any subject kind, the field is created).
//!    Other subjects are left to the name-reference fix-up, which copies the namespace of the
//!    ServiceAccount it finds;
//! 4. the namespace field specs (`config.namespace`) are applied, except the ones kustomize
//!    handles by hand above: `metadata/namespace` specs, `metadata/name` specs on objects whose
//!    apiVersion is not `v1` (so only core `Namespace` objects are renamed), and
//!    `subjects/namespace` specs on role bindings. Field specs must reach scalars.
//!
//! After each object, no two objects may share an id ("ID conflict").

use super::config::TransformConfig;
use crate::error::{FieldError, KustomizeError, Result};
use crate::fieldpath;
use crate::gvk::Gvk;
use crate::kustomization::FieldSpec;
use crate::merge::is_cluster_scoped;
use crate::resmap::ResMap;
use crate::resource::Resource;
use serde_json::Value;

const ROLE_BINDING_KINDS: [&str; 2] = ["RoleBinding", "ClusterRoleBinding"];

/// Set `namespace` on every namespaced object and at the namespace field specs.
pub(crate) fn apply(resources: &mut ResMap, namespace: &str, config: &TransformConfig) -> Result<()> {
    for index in 0..resources.len() {
        set_in_object(resources.get_mut(index), namespace, &config.namespace)?;
        let id = resources.get(index).current_id();
        let holders = resources.find_by_current_id(&id);
        if holders.len() != 1 {
            return Err(KustomizeError::transform(
                id.to_string(),
                format!(
                    "namespace transformation produces ID conflict: {} objects now have this id; give them distinct names",
                    holders.len()
                ),
            ));
        }
    }
    Ok(())
}

/// The transformer's work on one object.
fn set_in_object(resource: &mut Resource, namespace: &str, specs: &[FieldSpec]) -> Result<()> {
    resource.remember_current_id();
    let gvk = resource.gvk();
    if !is_cluster_scoped(&gvk) {
        resource.set_namespace(namespace);
    }
    let role_binding = ROLE_BINDING_KINDS.contains(&gvk.kind.as_str());
    if role_binding {
        set_default_subjects(&mut resource.obj, namespace);
    }
    let context = resource.current_id().to_string();
    let api_version = resource.api_version().to_string();
    for spec in specs.iter().filter(|s| spec_applies(s, &gvk, &api_version, role_binding)) {
        set_at_path(&mut resource.obj, spec, namespace)
            .map_err(|source| KustomizeError::Field { context: context.clone(), source })?;
    }
    Ok(())
}

/// Whether a namespace field spec runs on an object (after kustomize's hand-made exclusions).
fn spec_applies(spec: &FieldSpec, gvk: &Gvk, api_version: &str, role_binding: bool) -> bool {
    let path = spec.path.as_str();
    let handled_by_hand = path == "metadata/namespace"
        || (path == "metadata/name" && api_version != "v1")
        || (role_binding && path == "subjects/namespace" && ROLE_BINDING_KINDS.contains(&spec.kind.as_str()));
    !handled_by_hand && spec.selects(gvk)
}

/// Subjects named `default` get the namespace (the field is created if missing).
fn set_default_subjects(obj: &mut Value, namespace: &str) {
    let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) else {
        return;
    };
    for subject in subjects.iter_mut().filter_map(Value::as_object_mut) {
        if subject.get("name").and_then(Value::as_str) == Some("default") {
            subject.insert("namespace".into(), Value::String(namespace.to_string()));
        }
    }
}

/// Write the namespace at one field spec's path; the path must end at a scalar (or nothing).
fn set_at_path(obj: &mut Value, spec: &FieldSpec, namespace: &str) -> std::result::Result<(), FieldError> {
    fieldpath::visit_mut(obj, &fieldpath::parse(&spec.path), spec.create, &mut |field| {
        if field.is_object() || field.is_array() {
            let found = if field.is_object() { "map" } else { "list" };
            return Err(FieldError::NamespaceNotScalar(spec.path.clone(), found));
        }
        *field = Value::String(namespace.to_string());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(kind: &str, group: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec { group: group.into(), version: String::new(), kind: kind.into(), path: path.into(), create }
    }

    /// kustomize v5.6's default namespace field specs.
    fn v56_config() -> TransformConfig {
        TransformConfig {
            namespace: vec![
                spec("Namespace", "", "metadata/name", true),
                spec("APIService", "apiregistration.k8s.io", "spec/service/namespace", true),
                spec(
                    "CustomResourceDefinition",
                    "apiextensions.k8s.io",
                    "spec/conversion/webhook/clientConfig/service/namespace",
                    false,
                ),
            ],
            ..TransformConfig::default()
        }
    }

    fn run(objects: Vec<Value>, namespace: &str, config: &TransformConfig) -> Result<Vec<Value>> {
        let mut map = ResMap::new();
        for o in objects {
            map.append(Resource::new(o), "test").unwrap();
        }
        apply(&mut map, namespace, config)?;
        Ok(crate::objects(&map))
    }

    fn run_ok(object: Value) -> Value {
        run(vec![object], "kf", &v56_config()).unwrap().remove(0)
    }

    #[test]
    fn namespaced_objects_get_the_namespace_created_or_replaced() {
        let out = run(
            vec![
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "other"}}),
                json!({"apiVersion": "x.io/v1", "kind": "Foo", "metadata": {"name": "c"}}),
            ],
            "kf",
            &v56_config(),
        )
        .unwrap();
        assert!(out.iter().all(|o| o["metadata"]["namespace"] == "kf"));
    }

    #[test]
    fn cluster_scoped_objects_get_no_namespace() {
        let out = run_ok(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}}),
        );
        assert_eq!(out["metadata"].get("namespace"), None);
    }

    #[test]
    fn core_namespace_objects_are_renamed_to_the_namespace() {
        let out = run_ok(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "old"}}));
        assert_eq!(out["metadata"], json!({"name": "kf"}));
    }

    #[test]
    fn namespace_kinds_of_other_api_versions_keep_their_name() {
        let out = run_ok(json!({"apiVersion": "v2", "kind": "Namespace", "metadata": {"name": "old"}}));
        assert_eq!(out["metadata"]["name"], "old");
    }

    #[test]
    fn role_binding_subjects_named_default_get_the_namespace_whatever_their_kind() {
        let out = run_ok(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "crb"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "default"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "other"},
                {"kind": "ServiceAccount", "name": "sa2"},
                {"kind": "User", "name": "default"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "foo"}
            ]
        }));
        let namespaces: Vec<_> =
            out["subjects"].as_array().unwrap().iter().map(|s| s.get("namespace").cloned()).collect();
        assert_eq!(namespaces, [Some(json!("kf")), Some(json!("other")), None, Some(json!("kf")), Some(json!("kf"))]);
    }

    #[test]
    fn subjects_namespace_specs_on_role_bindings_are_ignored() {
        let mut config = v56_config();
        config.namespace.push(spec("RoleBinding", "", "subjects/namespace", true));
        let out = run(
            vec![
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
                "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
            ],
            "kf",
            &config,
        )
        .unwrap();
        assert_eq!(out[0]["subjects"][0].get("namespace"), None);
    }

    #[test]
    fn api_service_service_namespace_is_created() {
        let out = run_ok(
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.x"},
            "spec": {"service": {"name": "s"}}}),
        );
        assert_eq!(out["spec"]["service"], json!({"name": "s", "namespace": "kf"}));
        assert_eq!(out["metadata"].get("namespace"), None);
    }

    #[test]
    fn crd_conversion_webhook_namespace_is_replaced_but_not_created() {
        let with = run_ok(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "f.x"},
            "spec": {"conversion": {"webhook": {"clientConfig": {"service": {"name": "s", "namespace": "old"}}}}}}),
        );
        assert_eq!(with["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["namespace"], "kf");
        let without = run_ok(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "f.x"},
            "spec": {"conversion": {"webhook": {"clientConfig": {"service": {"name": "s"}}}}}}),
        );
        assert_eq!(without["spec"]["conversion"]["webhook"]["clientConfig"]["service"].get("namespace"), None);
    }

    #[test]
    fn webhook_configurations_are_left_to_the_name_reference_fix_up() {
        let out = run_ok(
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "v"}, "webhooks": [{"name": "a", "clientConfig": {"service": {"name": "s", "namespace": "other"}}}]}),
        );
        assert_eq!(out["webhooks"][0]["clientConfig"]["service"]["namespace"], "other");
    }

    #[test]
    fn every_object_remembers_its_id_even_when_unchanged() {
        let mut map = ResMap::new();
        map.append(
            Resource::new(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "kf"}}),
            ),
            "t",
        )
        .unwrap();
        map.append(Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}})), "t")
            .unwrap();
        apply(&mut map, "kf", &v56_config()).unwrap();
        assert_eq!(map.get(0).previous_ids.len(), 1);
        assert_eq!(map.get(1).original_id().namespace, "");
        assert_eq!(map.get(1).current_id().namespace, "kf");
    }

    #[test]
    fn two_objects_landing_on_one_id_is_an_error() {
        let err = run(
            vec![
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "x"}}),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "y"}}),
            ],
            "kf",
            &v56_config(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("ID conflict"), "{err}");
    }

    #[test]
    fn field_specs_reaching_a_map_are_an_error() {
        let config =
            TransformConfig { namespace: vec![spec("ConfigMap", "", "data", false)], ..TransformConfig::default() };
        let err = run(
            vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}})],
            "kf",
            &config,
        )
        .unwrap_err();
        assert!(err.to_string().contains("must target scalar nodes"), "{err}");
    }
}
