//! Custom OpenAPI schemas (`openapi: path:`), as kustomize v5.6 uses them.
//!
//! kustomize keeps one schema for the whole build. A custom schema file *replaces* the
//! built-in Kubernetes schema (it is not added to it): only the kinds the file defines (a
//! definition with `x-kubernetes-group-version-kind`) have a schema, so a list of a Deployment
//! is replaced by a patch unless the file defines Deployment too. Merge keys come from the
//! file's `x-kubernetes-patch-strategy`, `x-kubernetes-list-map-keys` and
//! `x-kubernetes-patch-merge-key`; `$ref: '#/definitions/…'` is resolved.
//!
//! Scope follows kyaml's `IsNamespaceScoped`: the kinds of kyaml's precomputed list
//! ([`PRECOMPUTED_SCOPE`]) keep their built-in scope; every other kind is cluster-scoped only
//! when the file's `paths` list it (a `get` with `x-kubernetes-group-version-kind`) and none
//! of its paths has `namespaces/{namespace}`.
//!
//! While a build runs, its schema is *active* on the build's thread ([`with_active`]); the
//! lookups in `schema.rs` and `is_cluster_scoped` read it. Parsed schemas live for the whole
//! process (they are interned by content, so building the same overlay again parses nothing).

use super::schema_types::{Definitions, Node, Schema, resolve};
use serde_json::Value;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A parsed custom schema.
#[derive(Debug)]
pub(crate) struct CustomSchema {
    definitions: &'static Definitions,
    /// `(apiVersion, kind)` to the name of the definition with that gvk.
    resources: HashMap<(String, String), String>,
    /// `(apiVersion, kind)` to whether some path of the kind is namespaced.
    namespaced: HashMap<(String, String), bool>,
}

impl CustomSchema {
    /// The schema of a whole object of this type, if the file defines the kind.
    pub(crate) fn resource(&'static self, api_version: &str, kind: &str) -> Option<&'static Schema> {
        let name = self.resources.get(&(api_version.to_string(), kind.to_string()))?;
        resolve(self.definitions.get()?.get(name)?)
    }

    /// kyaml's `IsCertainlyClusterScoped` for a kind that is not precomputed.
    pub(crate) fn is_cluster_scoped(&self, api_version: &str, kind: &str) -> bool {
        self.namespaced.get(&(api_version.to_string(), kind.to_string())) == Some(&false)
    }
}

/// Why a custom schema file (`openapi: path:`) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The cache of parsed schemas was poisoned by a panic.
    #[error("schema cache poisoned")]
    Poisoned,
    /// JSON text that does not parse.
    #[error("invalid JSON: {0}")]
    Json(serde_json::Error),
    /// YAML text that does not parse.
    #[error(transparent)]
    Yaml(#[from] kfctl_yaml::YamlError),
    /// A document that is not a map.
    #[error("expected a swagger document (a map with `definitions`)")]
    NotADocument,
    /// The definitions were set twice (cannot happen: each parse makes its own).
    #[error("definitions set twice")]
    DefinitionsSetTwice,
    /// A top-level field that must be a map: its key.
    #[error("`{0}` must be a map")]
    NotAMap(String),
    /// A gvk extension without string `version` and `kind`: where it is.
    #[error("{0}: x-kubernetes-group-version-kind needs string `version` and `kind`")]
    TypeMeta(String),
    /// An extension that must be a string: where it is and its key.
    #[error("{0}: `{1}` must be a string")]
    NotAString(String, String),
    /// `x-kubernetes-list-map-keys` with a non-string item: where it is.
    #[error("{0}: `x-kubernetes-list-map-keys` must list strings")]
    KeysNotStrings(String),
    /// `x-kubernetes-list-map-keys` that is not a list: where it is.
    #[error("{0}: `x-kubernetes-list-map-keys` must be a list")]
    KeysNotAList(String),
}

/// Parse a schema file (JSON when it starts with `{`, else YAML), interned by content.
pub(crate) fn parse(text: &str, origin: &str) -> Result<&'static CustomSchema, SchemaError> {
    static INTERNED: OnceLock<Mutex<HashMap<String, &'static CustomSchema>>> = OnceLock::new();
    let interned = INTERNED.get_or_init(Default::default);
    if let Some(found) = interned.lock().map_err(|_| SchemaError::Poisoned)?.get(text) {
        return Ok(found);
    }
    let doc: Value = if text.starts_with('{') {
        serde_json::from_str(text).map_err(SchemaError::Json)?
    } else {
        kfctl_yaml::parse_stream(text, origin)?.into_iter().next().unwrap_or(Value::Null)
    };
    let schema: &'static CustomSchema = Box::leak(Box::new(from_document(&doc)?));
    interned.lock().map_err(|_| SchemaError::Poisoned)?.insert(text.to_string(), schema);
    Ok(schema)
}

fn from_document(doc: &Value) -> Result<CustomSchema, SchemaError> {
    let doc = doc.as_object().ok_or(SchemaError::NotADocument)?;
    let definitions: &'static Definitions = Box::leak(Box::new(OnceLock::new()));
    let mut defs = HashMap::new();
    let mut resources = HashMap::new();
    for (name, def) in object_field(doc, "definitions")? {
        defs.insert(name.clone(), schema_of(def, definitions, name)?);
        for gvk in def.get("x-kubernetes-group-version-kind").and_then(Value::as_array).into_iter().flatten() {
            if let Some(type_meta) = type_meta(gvk, name)? {
                resources.entry(type_meta).or_insert_with(|| name.clone());
            }
        }
    }
    definitions.set(defs).map_err(|_| SchemaError::DefinitionsSetTwice)?;
    Ok(CustomSchema { definitions, resources, namespaced: namespaceability(doc)? })
}

/// A map field of the document (absent or null: empty).
fn object_field<'a>(
    doc: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<Vec<(&'a String, &'a Value)>, SchemaError> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => Ok(map.iter().collect()),
        Some(_) => Err(SchemaError::NotAMap(key.to_string())),
    }
}

/// kyaml's `findNamespaceability`: a kind is namespaced when one of its `get` paths has
/// `namespaces/{namespace}`.
fn namespaceability(doc: &serde_json::Map<String, Value>) -> Result<HashMap<(String, String), bool>, SchemaError> {
    let mut out: HashMap<(String, String), bool> = HashMap::new();
    for (path, info) in object_field(doc, "paths")? {
        let Some(gvk) = info.get("get").and_then(|get| get.get("x-kubernetes-group-version-kind")) else { continue };
        let Some(type_meta) = type_meta(gvk, path)? else { continue };
        if path.contains("namespaces/{namespace}") {
            out.insert(type_meta, true);
        } else {
            out.entry(type_meta).or_insert(false);
        }
    }
    Ok(out)
}

/// `(apiVersion, kind)` of a gvk extension; `None` when it is not a map (kyaml skips it).
fn type_meta(gvk: &Value, at: &str) -> Result<Option<(String, String)>, SchemaError> {
    let Some(map) = gvk.as_object() else { return Ok(None) };
    let text = |key: &str| map.get(key).and_then(Value::as_str);
    let (Some(version), Some(kind)) = (text("version"), text("kind")) else {
        return Err(SchemaError::TypeMeta(at.to_string()));
    };
    let api_version = match text("group") {
        Some(group) if !group.is_empty() => format!("{group}/{version}"),
        _ => version.to_string(),
    };
    Ok(Some((api_version, kind.to_string())))
}

/// The schema of one JSON schema value; `$ref`s become [`Schema::Ref`] into `definitions`.
fn schema_of(value: &Value, definitions: &'static Definitions, at: &str) -> Result<Schema, SchemaError> {
    let Some(map) = value.as_object() else { return Ok(Schema::Leaf) };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        // Only local references resolve (any other names no definition, as kyaml finds none).
        let name = match reference.strip_prefix("#/definitions/") {
            Some(name) => name.replace("~1", "/").replace("~0", "~"),
            None => reference.to_string(),
        };
        return Ok(Schema::Ref(definitions, String::leak(name)));
    }
    let mut properties = HashMap::new();
    for (name, property) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
        properties.insert(name.clone(), schema_of(property, definitions, &format!("{at}.{name}"))?);
    }
    let additional = match map.get("additionalProperties") {
        Some(v @ Value::Object(_)) => Some(schema_of(v, definitions, &format!("{at}.additionalProperties"))?),
        _ => None,
    };
    let is_array = match map.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(types)) => types.len() == 1 && types[0] == "array",
        _ => false,
    };
    let items = match map.get("items") {
        Some(v @ Value::Object(_)) if is_array => Some(schema_of(v, definitions, &format!("{at}[]"))?),
        _ => None,
    };
    let (strategy, keys) = strategy_and_keys(map, at)?;
    Ok(Schema::Custom(Box::leak(Box::new(Node { properties, additional, items, strategy, keys }))))
}

/// kyaml's `PatchStrategyAndKeyList`: `x-kubernetes-list-map-keys` when present, else the
/// merge key; nothing without a patch strategy.
fn strategy_and_keys(
    map: &serde_json::Map<String, Value>,
    at: &str,
) -> Result<(&'static str, &'static [&'static str]), SchemaError> {
    let string = |key: &str| -> Result<Option<&'static str>, SchemaError> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(String::leak(s.clone()))),
            Some(_) => Err(SchemaError::NotAString(at.to_string(), key.to_string())),
        }
    };
    let Some(strategy) = string("x-kubernetes-patch-strategy")? else { return Ok(("", &[])) };
    let keys: Vec<&'static str> = match map.get("x-kubernetes-list-map-keys") {
        Some(Value::Array(list)) => list
            .iter()
            .map(|k| k.as_str().map(|s| &*String::leak(s.to_string())))
            .collect::<Option<_>>()
            .ok_or_else(|| SchemaError::KeysNotStrings(at.to_string()))?,
        Some(_) => return Err(SchemaError::KeysNotAList(at.to_string())),
        None => string("x-kubernetes-patch-merge-key")?.into_iter().collect(),
    };
    Ok((strategy, Vec::leak(keys)))
}

thread_local! {
    static ACTIVE: Cell<Option<&'static CustomSchema>> = const { Cell::new(None) };
}

/// The custom schema of the build running on this thread, if it has one.
pub(crate) fn active() -> Option<&'static CustomSchema> {
    ACTIVE.with(Cell::get)
}

/// Run `f` with `schema` active on this thread (restored afterwards, also on panic).
pub(crate) fn with_active<R>(schema: Option<&'static CustomSchema>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<&'static CustomSchema>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(ACTIVE.with(|a| a.replace(schema)));
    f()
}

/// The kinds whose scope kyaml (v0.19, in kustomize v5.6) knows without any schema, so a
/// custom schema does not change it. Their scope is the built-in table's.
pub(crate) const PRECOMPUTED_SCOPE: &[(&str, &str)] = &[
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apiregistration.k8s.io/v1beta1", "APIService"),
    ("apps/v1", "ControllerRevision"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"),
    ("autoscaling/v1", "Scale"),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
    ("batch/v1", "CronJob"),
    ("batch/v1", "Job"),
    ("batch/v1beta1", "CronJob"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"),
    ("certificates.k8s.io/v1beta1", "CertificateSigningRequest"),
    ("coordination.k8s.io/v1", "Lease"),
    ("coordination.k8s.io/v1beta1", "Lease"),
    ("discovery.k8s.io/v1", "EndpointSlice"),
    ("discovery.k8s.io/v1beta1", "EndpointSlice"),
    ("events.k8s.io/v1", "Event"),
    ("events.k8s.io/v1beta1", "Event"),
    ("extensions/v1beta1", "Ingress"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration"),
    ("networking.k8s.io/v1", "Ingress"),
    ("networking.k8s.io/v1", "IngressClass"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("networking.k8s.io/v1beta1", "Ingress"),
    ("networking.k8s.io/v1beta1", "IngressClass"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("node.k8s.io/v1beta1", "RuntimeClass"),
    ("policy/v1", "PodDisruptionBudget"),
    ("policy/v1beta1", "PodDisruptionBudget"),
    ("policy/v1beta1", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1beta1", "Role"),
    ("rbac.authorization.k8s.io/v1beta1", "RoleBinding"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("storage.k8s.io/v1", "VolumeAttachment"),
    ("storage.k8s.io/v1beta1", "CSIDriver"),
    ("storage.k8s.io/v1beta1", "CSINode"),
    ("storage.k8s.io/v1beta1", "CSIStorageCapacity"),
    ("storage.k8s.io/v1beta1", "StorageClass"),
    ("storage.k8s.io/v1beta1", "VolumeAttachment"),
    ("v1", "ComponentStatus"),
    ("v1", "ConfigMap"),
    ("v1", "Endpoints"),
    ("v1", "Event"),
    ("v1", "LimitRange"),
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("v1", "NodeProxyOptions"),
    ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Pod"),
    ("v1", "PodAttachOptions"),
    ("v1", "PodExecOptions"),
    ("v1", "PodPortForwardOptions"),
    ("v1", "PodProxyOptions"),
    ("v1", "PodTemplate"),
    ("v1", "ReplicationController"),
    ("v1", "ResourceQuota"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "ServiceProxyOptions"),
];

/// Whether kyaml knows the scope of this kind without a schema.
pub(crate) fn is_precomputed(api_version: &str, kind: &str) -> bool {
    PRECOMPUTED_SCOPE.iter().any(|(v, k)| *v == api_version && *k == kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gvk::Gvk;
    use crate::merge::schema;
    use crate::merge::schema_types::Scope;

    const SCHEMA: &str = r##"{"definitions": {
      "k": {"x-kubernetes-group-version-kind": [{"group": "x.io", "version": "v1", "kind": "K"}],
            "properties": {"spec": {"$ref": "#/definitions/spec"}}},
      "spec": {"properties": {"items": {"type": "array", "items": {"$ref": "#/definitions/item"},
               "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "id"},
               "loop": {"$ref": "#/definitions/loop"}}},
      "loop": {"$ref": "#/definitions/loop"},
      "item": {"type": "object"}}}"##;

    #[test]
    fn precomputed_kinds_are_all_in_the_builtin_table() {
        for (api_version, kind) in PRECOMPUTED_SCOPE {
            let row = schema::resource(api_version, kind).unwrap_or_else(|| panic!("{api_version} {kind}"));
            assert_ne!(row.scope, Scope::Unknown, "{api_version} {kind}");
        }
    }

    #[test]
    fn an_active_custom_schema_gives_merge_keys_and_replaces_the_builtin_one() {
        let custom = parse(SCHEMA, "s.json").expect("parses");
        let (k, deployment) = (Gvk::new("x.io", "v1", "K"), Gvk::new("apps", "v1", "Deployment"));
        let containers = ["spec", "template", "spec", "containers"];
        with_active(Some(custom), || {
            assert_eq!(schema::merge_keys_at(&k, &["spec", "items"]), Some(&["id"][..]));
            assert_eq!(schema::merge_keys_at(&k, &["spec", "loop"]), None, "a $ref cycle is no schema");
            assert_eq!(schema::merge_keys_at(&deployment, &containers), None);
        });
        assert_eq!(schema::merge_keys_at(&deployment, &containers), Some(&["name"][..]), "restored");
        assert_eq!(schema::merge_keys_at(&k, &["spec", "items"]), None);
    }

    #[test]
    fn the_same_file_is_parsed_once() {
        let a = parse(SCHEMA, "a.json").expect("parses");
        let b = parse(SCHEMA, "b.json").expect("parses");
        assert!(std::ptr::eq(a, b));
    }

    #[test]
    fn malformed_extensions_are_errors_not_guesses() {
        let bad = r#"{"definitions": {"d": {"x-kubernetes-group-version-kind": [{"group": "x"}]}}}"#;
        assert!(parse(bad, "s.json").expect_err("refused").to_string().contains("version"));
        let bad = r#"{"definitions": {"d": {"x-kubernetes-patch-strategy": 3}}}"#;
        assert!(parse(bad, "s.json").expect_err("refused").to_string().contains("x-kubernetes-patch-strategy"));
    }
}
