//! The values' defaults, and the schema they imply.
//!
//! [`defaults`] gives every key the values take: the static ones (`global:`, each component's
//! scheduling, credentials, identity, the external database) and those the default render
//! implies (each workload's image keys, replicas, resources, env and pod metadata; the Pod
//! Security levels upstream's namespaces carry). [`schema_for`] turns them into the schema,
//! declaring the free-form places (labels, node selectors, a container's resources) and the
//! checked ones (enums, patterns, users, connectors); `precheck` checks the user's values
//! against what is known before anything is built.

use super::component::Catalog;
use super::profile::Resolved;
use super::render::RenderedObject;
use super::schema::{self, Schema};
use super::{CatalogError, images, params};
use serde_json::{Map, Value, json};

/// Static defaults plus what the render implies (images, replicas, resources, PSS levels).
pub fn defaults(catalog: &Catalog, profile: &Resolved, objects: &[RenderedObject]) -> Value {
    let mut root = json!({
        "global": {
            "imageRegistry": "", "imagePullSecrets": [], "nodeSelector": {}, "tolerations": [], "affinity": {},
            "commonLabels": {}, "commonAnnotations": {}, "oidcClientSecret": "", "crds": "", "storageClass": "", "users": [], "resourcePolicy": "",
            "existingSecrets": [],
            "gateway": {"host": "", "tls": {"secretName": "", "issuer": ""}, "httpsRedirect": true, "serviceType": ""},
            "podSecurity": {"namespaces": pss_namespaces(objects), "profiles": pss_profiles(objects)},
        }
    });
    for name in catalog.components.keys() {
        let enabled = profile.components.iter().any(|(c, _)| c == name);
        let mut section = json!({"enabled": enabled, "nodeSelector": {}, "tolerations": [], "affinity": {}});
        if super::provided::dependency_of(name, &catalog.provided).is_some() {
            section["provided"] = json!(false);
        }
        if enabled {
            derive_workload_values(&mut section, objects.iter().filter(|o| &o.component == name).map(|o| &o.obj));
        }
        root[name.as_str()] = section;
    }
    for name in catalog.absent.keys() {
        root[name.as_str()] = json!({"enabled": false, "nodeSelector": {}, "tolerations": [], "affinity": {}});
    }
    for name in super::scheduling::runtime_components() {
        if let Some(section) = root.get_mut(name).and_then(Value::as_object_mut) {
            section.insert(
                "runtimes".into(),
                json!({"nodeSelector": {}, "tolerations": [], "affinity": {}, "resources": {}}),
            );
        }
    }
    root["dex"]["staticUser"] = json!({"email": "", "passwordHash": ""});
    root["oauth2-proxy"]["cookieSecret"] = json!("");
    root["pipelines"]["objectStore"] = json!({"accessKey": "", "secretKey": ""});
    super::identity::set_defaults(&mut root);
    root["pipelines"]["database"] = json!({"host": "", "port": null, "user": "", "password": ""});
    root
}

fn derive_workload_values<'a>(section: &mut Value, objs: impl Iterator<Item = &'a Value> + Clone) {
    let (all_images, users) = images::overridable(&objs.clone().collect::<Vec<_>>());
    let keys = images::keys_with_users(&all_images, &users);
    section["images"] = Value::Object(keys.into_iter().map(|(img, key)| (key, Value::String(img))).collect());
    let (mut replicas, mut resources, mut env) = (Map::new(), Map::new(), Map::new());
    for obj in objs.filter(|o| params::is_workload(o)) {
        let name = params::object_name(obj);
        // Every workload has a key; `null` where upstream sets no `spec.replicas` (left unset).
        replicas.insert(
            name.clone(),
            obj.pointer("/spec/replicas").filter(|v| v.is_number()).cloned().unwrap_or(Value::Null),
        );
        let containers = obj.pointer("/spec/template/spec/containers").and_then(Value::as_array).into_iter().flatten();
        let names: Vec<String> =
            containers.clone().map(|c| c.get("name").and_then(Value::as_str).unwrap_or_default().to_string()).collect();
        let per_container: Map<String, Value> = names
            .iter()
            .zip(containers)
            .map(|(n, c)| (n.clone(), c.get("resources").cloned().unwrap_or(json!({}))))
            .collect();
        resources.insert(name.clone(), Value::Object(per_container));
        env.insert(name, Value::Object(names.into_iter().map(|n| (n, json!([]))).collect()));
    }
    let empty_maps = || Value::Object(replicas.keys().map(|k| (k.clone(), json!({}))).collect());
    section["podAnnotations"] = empty_maps();
    section["podLabels"] = empty_maps();
    section["env"] = Value::Object(env);
    section["replicas"] = Value::Object(replicas);
    section["resources"] = Value::Object(resources);
}

fn pss_namespaces(objects: &[RenderedObject]) -> String {
    let levels: Vec<&str> = objects
        .iter()
        .filter(|o| o.obj.get("kind") == Some(&json!("Namespace")))
        .filter_map(|o| o.obj.pointer("/metadata/labels/pod-security.kubernetes.io~1enforce").and_then(Value::as_str))
        .collect();
    match levels.first() {
        Some(first) if levels.iter().all(|l| l == first) => first.to_string(),
        _ => String::new(),
    }
}

fn pss_profiles(objects: &[RenderedObject]) -> String {
    objects
        .iter()
        .filter_map(|o| o.obj.pointer("/data/namespace-labels.yaml").and_then(Value::as_str))
        .flat_map(str::lines)
        .find_map(|l| l.strip_prefix("pod-security.kubernetes.io/enforce: \"").and_then(|r| r.strip_suffix('"')))
        .unwrap_or_default()
        .to_string()
}

/// Check the values against what is known before building (every key but the per-workload
/// maps, which the render defines, and which take anything here), so a typo fails fast — even
/// offline, before any fetch.
pub(crate) fn precheck(user: &Value, catalog: &Catalog, profile: &Resolved) -> Result<(), CatalogError> {
    let mut known = defaults(catalog, profile, &[]);
    let mut schema = schema_for(&known);
    for name in catalog.components.keys() {
        for derived in ["images", "replicas", "resources", "podAnnotations", "podLabels", "env"] {
            schema.set(&[name, derived], Schema::any_map());
            known[name.as_str()][derived] = json!({});
        }
    }
    Ok(check_coalesced(&schema, &known, user)?)
}

/// Check the user's values as Helm checks them: coalesced over the defaults `known` (the
/// chart's `values.yaml`), where a null deletes the default it stands on and stays where none
/// stands, for the schema to meet.
pub(crate) fn check_coalesced(schema: &Schema, known: &Value, user: &Value) -> Result<(), schema::SchemaError> {
    let mut coalesced = known.clone();
    super::values::merge(&mut coalesced, user);
    schema.check(&coalesced)
}

/// The schema the defaults imply, with the free-form places declared.
pub fn schema_for(defaults: &Value) -> Schema {
    let mut schema = Schema::of_default(defaults);
    let scheduling = |s: &mut Schema, prefix: &[&str]| {
        s.set(&[prefix, &["nodeSelector"]].concat(), Schema::string_map());
        s.set(&[prefix, &["tolerations"]].concat(), Schema::List(Box::new(Schema::any_map())));
        s.set(&[prefix, &["affinity"]].concat(), Schema::any_map());
    };
    scheduling(&mut schema, &["global"]);
    schema.set(&["global", "commonLabels"], Schema::string_map());
    schema.set(&["global", "commonAnnotations"], Schema::string_map());
    schema.set(&["global", "imagePullSecrets"], Schema::List(Box::new(Schema::String)));
    let levels = vec!["", "off", "baseline", "restricted", "privileged"];
    schema.set(&["global", "podSecurity", "namespaces"], Schema::Enum(levels.clone()));
    schema.set(&["global", "podSecurity", "profiles"], Schema::Enum(levels));
    schema.set(&["global", "crds"], Schema::Enum(vec!["", "only", "skip"]));
    schema.set(&["global", "resourcePolicy"], Schema::Enum(vec!["", "keep"]));
    schema.set(&["global", "storageClass"], Schema::Pattern(schema::DNS_SUBDOMAIN_OR_EMPTY));
    schema.set(&["global", "users"], super::users::schema());
    schema.set(&["global", "existingSecrets"], super::existing_secrets::schema());
    schema.set(&["dex", "connectors"], super::identity::connectors_schema());
    schema.set(&["oauth2-proxy", "oidc"], super::identity::oidc_schema());
    schema.set(&["global", "gateway", "host"], Schema::Pattern(super::gateway::HOST_OR_EMPTY));
    schema.set(&["global", "gateway", "tls", "secretName"], Schema::Pattern(schema::DNS_SUBDOMAIN_OR_EMPTY));
    schema.set(&["global", "gateway", "tls", "issuer"], Schema::Pattern(schema::DNS_SUBDOMAIN_OR_EMPTY));
    schema.set(&["pipelines", "database", "host"], Schema::Pattern(super::external_store::HOST_OR_EMPTY));
    schema.set(&["pipelines", "database", "port"], Schema::IntOrNull);
    schema.set(&["global", "gateway", "serviceType"], Schema::Enum(super::gateway::SERVICE_TYPES.to_vec()));
    if let Some(map) = defaults.as_object() {
        for (name, section) in map.iter().filter(|(k, _)| *k != "global") {
            scheduling(&mut schema, &[name]);
            if section.get("runtimes").is_some() {
                scheduling(&mut schema, &[name, "runtimes"]);
                schema.set(&[name, "runtimes", "resources"], Schema::container_resources());
            }
            for (workload, default) in section.get("replicas").and_then(Value::as_object).into_iter().flatten() {
                let count = if default.is_null() { Schema::IntOrNull } else { Schema::Int };
                schema.set(&[name, "replicas", workload], count);
                schema.set(&[name, "podAnnotations", workload], Schema::string_map());
                schema.set(&[name, "podLabels", workload], Schema::string_map());
            }
            for (workload, containers) in section.get("env").and_then(Value::as_object).into_iter().flatten() {
                for container in containers.as_object().into_iter().flatten().map(|(c, _)| c) {
                    schema.set(&[name, "env", workload, container], Schema::List(Box::new(Schema::any_map())));
                }
            }
            for (workload, containers) in section.get("resources").and_then(Value::as_object).into_iter().flatten() {
                for container in containers.as_object().into_iter().flatten().map(|(c, _)| c) {
                    schema.set(&[name, "resources", workload, container], Schema::container_resources());
                }
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39: a null over a default deletes it before the schema looks, as in Helm; a
    /// null where no default stands meets the schema, which names its key.
    #[test]
    fn values_are_checked_coalesced_over_the_defaults() {
        let known =
            json!({"c": {"resources": {"w": {"a": {"limits": {"cpu": "2"}}, "b": {}}}, "replicas": {"w": null}}});
        let mut schema = schema_for(&known);
        schema.set(&["c", "resources", "w", "a"], Schema::container_resources());
        schema.set(&["c", "resources", "w", "b"], Schema::container_resources());
        let check = |user: Value| check_coalesced(&schema, &known, &user).map_err(|e| e.to_string());
        assert_eq!(check(json!({"c": {"resources": {"w": {"a": {"limits": {"cpu": null}}}}}})), Ok(()));
        assert_eq!(check(json!({"c": {"replicas": {"w": null}, "resources": null}})), Ok(()));
        let e = check(json!({"c": {"resources": {"w": {"b": {"limits": null}}}}})).unwrap_err();
        assert!(e.starts_with("values: `c.resources.w.b.limits` must be a map, got null; no default"), "{e}");
        let e = check(json!({"c": {"resources": {"w": {"a": {"limits": {"memory": null}}}}}})).unwrap_err();
        assert!(e.starts_with("values: `c.resources.w.a.limits.memory` must be a Kubernetes quantity"), "{e}");
    }
}
