//! Fields an update may not change, refused as kube-apiserver 1.33 refuses them.
//!
//! This is the test double's **own copy** of the rules, written from kube-apiserver's
//! validation code (`ValidateDeploymentUpdate`, `ValidateStatefulSetUpdate`,
//! `ValidateRoleBindingUpdate`, `validateUpgradeDowngradeClusterIPs`,
//! `ValidatePersistentVolumeClaimUpdate`, `ValidateCustomResourceDefinitionSpecUpdate`...), not
//! shared with kfctl's `cluster::immutable` table on purpose: a double that read the table of
//! the code under test would agree with every mistake in it. A test holds the two in agreement
//! (every kfctl rule is refused here, with the wording kfctl matches on).
//!
//! | kind | field | refusal |
//! |------|-------|---------|
//! | Deployment, DaemonSet, ReplicaSet (apps), Job (batch) | `spec.selector` | 422 `field is immutable` |
//! | Job | `spec.template` | 422 `field is immutable` |
//! | StatefulSet | `spec` but replicas, ordinals, template, updateStrategy, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy, minReadySeconds | 422 `spec: Forbidden: updates to statefulset spec ...` |
//! | Service | `spec.clusterIP` once set (not ExternalName, not headless on both sides) | 422 `spec.clusterIPs[0]: ... may not change once set` |
//! | RoleBinding, ClusterRoleBinding | `roleRef` | 422 `cannot change roleRef` |
//! | PersistentVolumeClaim | `spec` but resources.requests, volumeAttributesClassName | 422 `spec: Forbidden: spec is immutable after creation except ...` |
//! | CustomResourceDefinition | `spec.group`, `spec.names.plural`; `spec.scope`, `spec.names.kind` once Established | 422 `field is immutable` |
//!
//! The message is upstream's: `Deployment.apps "web" is invalid: spec.selector: Invalid value:
//! v1.LabelSelector{...}: field is immutable`, with `details.kind` the Kind and one `causes`
//! entry per error (`FieldValueInvalid` / `FieldValueForbidden`, its `field`), so kubectl prints
//! `The Deployment "web" is invalid: ...`. Simplifications: the bad value is printed in Go's
//! `%#v` syntax for selectors, role references and cluster IPs (what 1.33 prints); a Job's
//! template is printed as `core.PodTemplateSpec{...}` and a claim's spec diff as the changed
//! fields only, not Go's full struct dump.

use serde_json::{Map, Value, json};

use super::discovery::ResourceType;
use super::errors::ApiError;

/// `updates to statefulset spec ...`: the fields an update may change, as upstream lists them.
const STATEFULSET_MUTABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];
const STATEFULSET_FORBIDDEN: &str = "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
     'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and \
     'minReadySeconds' are forbidden";
const PVC_MUTABLE: &[&str] = &["resources", "volumeAttributesClassName"];
const PVC_FORBIDDEN: &str =
    "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";
const IMMUTABLE: &str = "field is immutable";

/// One validation error, as `field.Error` renders it.
#[derive(Debug, Clone, PartialEq)]
struct FieldError {
    field: String,
    /// `FieldValueInvalid` or `FieldValueForbidden`.
    reason: &'static str,
    /// `Invalid value: ...: field is immutable`.
    body: String,
}

fn invalid(field: &str, value: String, detail: &str) -> FieldError {
    FieldError { field: field.into(), reason: "FieldValueInvalid", body: format!("Invalid value: {value}: {detail}") }
}

fn forbidden(field: &str, detail: String) -> FieldError {
    FieldError { field: field.into(), reason: "FieldValueForbidden", body: format!("Forbidden: {detail}") }
}

/// Refuse an update of `old` to `new` that changes a field the kind makes immutable.
pub(crate) fn check(rt: &ResourceType, name: &str, old: &Value, new: &Value) -> Result<(), ApiError> {
    let errors = errors_of(rt, old, new);
    if errors.is_empty() {
        return Ok(());
    }
    Err(refusal(rt, name, &errors))
}

fn errors_of(rt: &ResourceType, old: &Value, new: &Value) -> Vec<FieldError> {
    let at = |v: &Value, p: &str| v.pointer(p).cloned().unwrap_or(Value::Null);
    let changed = |p: &str| at(old, p) != at(new, p);
    let mut errors = Vec::new();
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("apps", "Deployment" | "DaemonSet" | "ReplicaSet") | ("batch", "Job") if changed("/spec/selector") => {
            errors.push(invalid("spec.selector", go_selector(&at(new, "/spec/selector")), IMMUTABLE));
        }
        _ => {}
    }
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("batch", "Job") if changed("/spec/template") => {
            errors.push(invalid("spec.template", "core.PodTemplateSpec{...}".into(), IMMUTABLE));
        }
        ("apps", "StatefulSet")
            if without(&at(old, "/spec"), STATEFULSET_MUTABLE) != without(&at(new, "/spec"), STATEFULSET_MUTABLE) =>
        {
            errors.push(forbidden("spec", STATEFULSET_FORBIDDEN.into()));
        }
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") if changed("/roleRef") => {
            errors.push(invalid("roleRef", go_role_ref(&at(new, "/roleRef")), "cannot change roleRef"));
        }
        ("", "Service") => errors.extend(cluster_ip(old, new)),
        ("", "PersistentVolumeClaim") => {
            let (before, after) = (claim_spec(&at(old, "/spec")), claim_spec(&at(new, "/spec")));
            if before != after {
                errors.push(forbidden("spec", format!("{PVC_FORBIDDEN}\n{}", spec_diff(&before, &after))));
            }
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => errors.extend(crd(old, new)),
        _ => {}
    }
    errors
}

/// A map without the given keys (`Null` stays `Null`).
fn without(spec: &Value, keys: &[&str]) -> Value {
    match spec {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(k, _)| !keys.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ),
        other => other.clone(),
    }
}

/// A claim's spec as upstream compares it: `resources.requests` and `volumeAttributesClassName`
/// may change, `resources.limits` may not.
fn claim_spec(spec: &Value) -> Value {
    let mut out = without(spec, PVC_MUTABLE);
    if let Some(limits) = spec.pointer("/resources/limits") {
        out["resources"] = json!({ "limits": limits });
    }
    out
}

fn spec_diff(before: &Value, after: &Value) -> String {
    let empty = Map::new();
    let (a, b) = (before.as_object().unwrap_or(&empty), after.as_object().unwrap_or(&empty));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut lines = vec!["  core.PersistentVolumeClaimSpec{".to_string()];
    for key in keys.into_iter().filter(|k| a.get(*k) != b.get(*k)) {
        let show = |v: Option<&Value>| v.map_or("nil".to_string(), Value::to_string);
        lines.push(format!("- \t{}: {},", go_field(key), show(a.get(key))));
        lines.push(format!("+ \t{}: {},", go_field(key), show(b.get(key))));
    }
    lines.push("  }".into());
    lines.join("\n")
}

fn go_field(key: &str) -> String {
    let mut chars = key.chars();
    chars.next().map_or(String::new(), |c| c.to_ascii_uppercase().to_string() + chars.as_str())
}

/// `validateUpgradeDowngradeClusterIPs`: a set primary cluster IP stays.
fn cluster_ip(old: &Value, new: &Value) -> Option<FieldError> {
    let text = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
    let external = |v: &Value| text(v, "/spec/type") == "ExternalName";
    let (before, after) = (text(old, "/spec/clusterIP"), text(new, "/spec/clusterIP"));
    if external(old) || external(new) || before.is_empty() || before == after || (before == "None" && after == "None") {
        return None;
    }
    if after.is_empty() {
        return Some(invalid("spec.clusterIPs[0]", "[]string(nil)".into(), "primary clusterIP can not be unset"));
    }
    Some(invalid("spec.clusterIPs[0]", format!("[]string{{{}}}", go_string(&after)), "may not change once set"))
}

fn crd(old: &Value, new: &Value) -> Vec<FieldError> {
    let established = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Established" && c["status"] == "True"));
    let mut fields = vec![("/spec/group", "spec.group"), ("/spec/names/plural", "spec.names.plural")];
    if established {
        fields.extend([("/spec/scope", "spec.scope"), ("/spec/names/kind", "spec.names.kind")]);
    }
    fields
        .into_iter()
        .filter(|(p, _)| old.pointer(p) != new.pointer(p))
        .map(|(p, field)| invalid(field, go_string(new.pointer(p).and_then(Value::as_str).unwrap_or("")), IMMUTABLE))
        .collect()
}

fn go_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn go_string_map(map: Option<&Value>) -> String {
    let Some(map) = map.and_then(Value::as_object) else { return "map[string]string(nil)".into() };
    let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let items: Vec<String> =
        pairs.iter().map(|(k, v)| format!("{}:{}", go_string(k), go_string(v.as_str().unwrap_or("")))).collect();
    format!("map[string]string{{{}}}", items.join(", "))
}

/// `v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`.
fn go_selector(selector: &Value) -> String {
    if selector.is_null() {
        return "null".into();
    }
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    let values: Vec<String> = e["values"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|v| go_string(v.as_str().unwrap_or("")))
                        .collect();
                    let values = if values.is_empty() {
                        "[]string(nil)".into()
                    } else {
                        format!("[]string{{{}}}", values.join(", "))
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        go_string(e["key"].as_str().unwrap_or("")),
                        go_string(e["operator"].as_str().unwrap_or(""))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        go_string_map(selector.get("matchLabels"))
    )
}

/// `rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}`.
fn go_role_ref(role_ref: &Value) -> String {
    let text = |k: &str| go_string(role_ref.get(k).and_then(Value::as_str).unwrap_or(""));
    format!("rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}", text("apiGroup"), text("kind"), text("name"))
}

/// `errors.NewInvalid`: 422, the qualified Kind in the message and in `details`, one cause each.
fn refusal(rt: &ResourceType, name: &str, errors: &[FieldError]) -> ApiError {
    let kind = if rt.group.is_empty() { rt.kind.clone() } else { format!("{}.{}", rt.kind, rt.group) };
    let rendered: Vec<String> = errors.iter().map(|e| format!("{}: {}", e.field, e.body)).collect();
    let list = if let [one] = rendered.as_slice() { one.clone() } else { format!("[{}]", rendered.join(", ")) };
    let causes: Vec<Value> =
        errors.iter().map(|e| json!({"reason": e.reason, "message": e.body, "field": e.field})).collect();
    let mut details = json!({"name": name, "kind": rt.kind, "causes": causes});
    if !rt.group.is_empty() {
        details["group"] = json!(rt.group);
    }
    ApiError {
        details: Some(Box::new(details)),
        ..ApiError::new(422, "Invalid", format!("{kind} {} is invalid: {list}", go_string(name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(group: &str, kind: &str) -> ResourceType {
        ResourceType {
            group: group.into(),
            version: "v1".into(),
            resource: format!("{}s", kind.to_lowercase()),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            namespaced: true,
            verbs: Vec::new(),
            short_names: Vec::new(),
            categories: Vec::new(),
            status_subresource: false,
        }
    }

    #[test]
    fn a_deployment_selector_is_refused_in_upstreams_words() {
        let old = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "replicas": 1}});
        let new = json!({"spec": {"selector": {"matchLabels": {"app": "web2"}}, "replicas": 1}});
        let e = check(&rt("apps", "Deployment"), "web", &old, &new).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        );
        let details = e.details.unwrap();
        assert_eq!(
            (details["kind"].as_str(), details["causes"][0]["field"].as_str()),
            (Some("Deployment"), Some("spec.selector"))
        );
        let scaled = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "replicas": 3}});
        assert!(check(&rt("apps", "Deployment"), "web", &old, &scaled).is_ok());
    }

    #[test]
    fn role_refs_statefulsets_services_claims_and_crds() {
        let rb = |name: &str| json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}});
        let e = check(&rt("rbac.authorization.k8s.io", "ClusterRoleBinding"), "b", &rb("a"), &rb("b")).unwrap_err();
        assert!(e.message.ends_with("roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"b\"}: cannot change roleRef"), "{}", e.message);

        let sts = |class: &str, replicas: u32| json!({"spec": {"replicas": replicas, "serviceName": "s", "volumeClaimTemplates": [{"spec": {"storageClassName": class}}]}});
        assert!(check(&rt("apps", "StatefulSet"), "db", &sts("a", 1), &sts("a", 3)).is_ok());
        let e = check(&rt("apps", "StatefulSet"), "db", &sts("a", 1), &sts("b", 1)).unwrap_err();
        assert!(e.message.starts_with("StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas'"), "{}", e.message);

        let svc = |ip: &str| json!({"spec": {"clusterIP": ip}});
        assert!(check(&rt("", "Service"), "s", &svc(""), &svc("None")).is_ok());
        let e = check(&rt("", "Service"), "s", &svc("10.0.0.7"), &svc("None")).unwrap_err();
        assert_eq!(
            e.message,
            "Service \"s\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"None\"}: may not change once set"
        );

        let pvc = |class: &str, size: &str| json!({"spec": {"storageClassName": class, "resources": {"requests": {"storage": size}}}});
        assert!(check(&rt("", "PersistentVolumeClaim"), "c", &pvc("a", "1Gi"), &pvc("a", "2Gi")).is_ok());
        let e = check(&rt("", "PersistentVolumeClaim"), "c", &pvc("a", "1Gi"), &pvc("b", "1Gi")).unwrap_err();
        assert!(
            e.message.contains("spec: Forbidden: spec is immutable after creation except resources.requests")
                && e.message.contains("StorageClassName"),
            "{}",
            e.message
        );

        let crd = |scope: &str, established: bool| {
            json!({"spec": {"group": "x.io", "scope": scope, "names": {"plural": "ws", "kind": "W"}},
            "status": {"conditions": [{"type": "Established", "status": if established { "True" } else { "False" }}]}})
        };
        assert!(
            check(
                &rt("apiextensions.k8s.io", "CustomResourceDefinition"),
                "ws.x.io",
                &crd("Namespaced", false),
                &crd("Cluster", false)
            )
            .is_ok()
        );
        let e = check(
            &rt("apiextensions.k8s.io", "CustomResourceDefinition"),
            "ws.x.io",
            &crd("Namespaced", true),
            &crd("Cluster", true),
        )
        .unwrap_err();
        assert!(e.message.ends_with("spec.scope: Invalid value: \"Cluster\": field is immutable"), "{}", e.message);
    }
}
