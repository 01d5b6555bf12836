//! What one object needs, read from its body: the facts the dependency graph
//! (`crate::cluster::apply::graph`) is built from.
//!
//! Each fact is a table row, not code: [`POD_MAKERS`] says which kinds make pods and where
//! their pod template is, [`PRODUCERS`] which kinds make an object another names (a
//! cert-manager Certificate makes the Secret a Deployment mounts), [`POD_SPEC_NAMES`] where a
//! pod spec names a ServiceAccount, ConfigMap, Secret or PersistentVolumeClaim. The functions
//! here only read those tables against a body; nothing here talks to a cluster.
//!
//! A webhook configuration admits an object when one of its rules lists the object's API group
//! and its resource (the plural, from the plan's CRD for a custom resource, else from the
//! kind), or `pods` for a kind that makes pods (its pods are admitted when its controller
//! creates them), and its `objectSelector` and `namespaceSelector` select the object (its pods'
//! labels for pods). A namespace the plan does not hold has labels the plan cannot know: every
//! selector matches there, so an object a webhook might not admit waits for it anyway, which is
//! only slower, never wrong.

use crate::cluster::object::ObjectRef;
use serde_json::Value;

/// Kinds that make pods (`group/Kind`, bare `Kind` for the core group), with the JSON pointer of their pod template (a
/// template has `metadata.labels` and `spec`; a Pod is its own template).
pub(crate) const POD_MAKERS: &[(&str, &str)] = &[
    ("apps/Deployment", "/spec/template"),
    ("apps/StatefulSet", "/spec/template"),
    ("apps/DaemonSet", "/spec/template"),
    ("apps/ReplicaSet", "/spec/template"),
    ("batch/Job", "/spec/template"),
    ("batch/CronJob", "/spec/jobTemplate/spec/template"),
    ("ReplicationController", "/spec/template"),
    ("Pod", ""),
];

/// Kinds whose controller makes an object that others name: (`group/Kind` of the maker, the
/// pointer of the made object's name in the maker's body, the kind made).
pub(crate) const PRODUCERS: &[(&str, &str, &str)] = &[("cert-manager.io/Certificate", "/spec/secretName", "Secret")];

/// Where a pod spec names another object of its namespace: (kind named, path of arrays and
/// fields from the pod spec, the name's field). `[]` steps into every element of an array.
pub(crate) const POD_SPEC_NAMES: &[(&str, &[&str], &str)] = &[
    ("ServiceAccount", &[], "serviceAccountName"),
    ("ConfigMap", &["volumes[]", "configMap"], "name"),
    ("Secret", &["volumes[]", "secret"], "secretName"),
    ("PersistentVolumeClaim", &["volumes[]", "persistentVolumeClaim"], "claimName"),
    ("ConfigMap", &["volumes[]", "projected", "sources[]", "configMap"], "name"),
    ("Secret", &["volumes[]", "projected", "sources[]", "secret"], "name"),
    ("Secret", &["imagePullSecrets[]"], "name"),
    ("ConfigMap", &["containers[]", "envFrom[]", "configMapRef"], "name"),
    ("Secret", &["containers[]", "envFrom[]", "secretRef"], "name"),
    ("ConfigMap", &["containers[]", "env[]", "valueFrom", "configMapKeyRef"], "name"),
    ("Secret", &["containers[]", "env[]", "valueFrom", "secretKeyRef"], "name"),
    ("ConfigMap", &["initContainers[]", "envFrom[]", "configMapRef"], "name"),
    ("Secret", &["initContainers[]", "envFrom[]", "secretRef"], "name"),
    ("ConfigMap", &["initContainers[]", "env[]", "valueFrom", "configMapKeyRef"], "name"),
    ("Secret", &["initContainers[]", "env[]", "valueFrom", "secretKeyRef"], "name"),
];

fn maker_row(r: &ObjectRef) -> Option<&'static (&'static str, &'static str)> {
    let gk = r.group_kind();
    POD_MAKERS.iter().find(|(kind, _)| *kind == gk)
}

/// The pod template of a kind that makes pods.
pub(crate) fn pod_template<'a>(r: &ObjectRef, doc: &'a Value) -> Option<&'a Value> {
    let (_, pointer) = maker_row(r)?;
    if pointer.is_empty() { Some(doc) } else { doc.pointer(pointer) }
}

fn walk<'a>(value: &'a Value, path: &[&str], out: &mut Vec<&'a Value>) {
    let Some((step, rest)) = path.split_first() else {
        out.push(value);
        return;
    };
    match step.strip_suffix("[]") {
        Some(field) => {
            for item in value.get(field).and_then(Value::as_array).into_iter().flatten() {
                walk(item, rest, out);
            }
        }
        None => {
            if let Some(next) = value.get(step) {
                walk(next, rest, out);
            }
        }
    }
}

/// The objects (kind, name) a pod-making object names in its namespace, by [`POD_SPEC_NAMES`].
pub(crate) fn named_by_pods(r: &ObjectRef, doc: &Value) -> Vec<(&'static str, String)> {
    let Some(spec) = pod_template(r, doc).and_then(|t| t.get("spec")) else { return Vec::new() };
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for (kind, path, field) in POD_SPEC_NAMES {
        let mut found = Vec::new();
        walk(spec, path, &mut found);
        for name in found.iter().filter_map(|v| v.get(*field)).filter_map(Value::as_str) {
            if !out.iter().any(|(k, n)| k == kind && n == name) {
                out.push((kind, name.to_string()));
            }
        }
    }
    out
}

/// What an object's controller makes that others may name: (kind, name), by [`PRODUCERS`].
pub(crate) fn produced_by(r: &ObjectRef, doc: &Value) -> Option<(&'static str, String)> {
    let gk = r.group_kind();
    let (_, pointer, kind) = PRODUCERS.iter().find(|(maker, _, _)| *maker == gk)?;
    doc.pointer(pointer).and_then(Value::as_str).map(|name| (*kind, name.to_string()))
}

/// The labels of the pods a pod-making object makes.
pub(crate) fn pod_labels<'a>(r: &ObjectRef, doc: &'a Value) -> Option<&'a Value> {
    pod_template(r, doc).and_then(|t| t.pointer("/metadata/labels"))
}

/// Whether a Service's `spec.selector` selects pods with `labels` (an empty selector selects
/// none: such a Service has no endpoints of its own).
pub(crate) fn selects(service: &Value, labels: &Value) -> bool {
    let Some(selector) = service.pointer("/spec/selector").and_then(Value::as_object) else { return false };
    !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// The ServiceAccounts (namespace, name) a RoleBinding or ClusterRoleBinding binds.
pub(crate) fn bound_service_accounts(r: &ObjectRef, doc: &Value) -> Vec<(String, String)> {
    if r.group() != "rbac.authorization.k8s.io" || !r.kind.ends_with("RoleBinding") {
        return Vec::new();
    }
    let subjects = doc.get("subjects").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    subjects
        .iter()
        .filter(|s| s["kind"] == "ServiceAccount")
        .filter_map(|s| {
            let ns = s["namespace"].as_str().or(r.namespace.as_deref())?;
            Some((ns.to_string(), s["name"].as_str()?.to_string()))
        })
        .collect()
}

/// The plural resource names a built-in kind may have (`NetworkPolicy` → `networkpolicies`).
pub(crate) fn plurals_of(kind: &str) -> Vec<String> {
    let lower = kind.to_lowercase();
    let mut out = vec![format!("{lower}s"), format!("{lower}es"), lower.clone()];
    if let Some(stem) = lower.strip_suffix('y') {
        out.push(format!("{stem}ies"));
    }
    out
}

fn listed(values: &Value, want: &str) -> bool {
    values.as_array().is_some_and(|vs| vs.iter().any(|v| v == "*" || v == want))
}

fn resource_listed(resources: &Value, plurals: &[String]) -> bool {
    let Some(resources) = resources.as_array() else { return false };
    resources.iter().filter_map(Value::as_str).any(|r| r == "*" || plurals.iter().any(|p| p == r))
}

/// An object as webhook rules and selectors see it.
pub(crate) struct Admitted<'a> {
    pub group: &'a str,
    /// The resource names it may have.
    pub plurals: &'a [String],
    /// Its labels, for `objectSelector`.
    pub labels: &'a Value,
    /// The labels of the pods it makes, when it makes pods.
    pub pod_labels: Option<&'a Value>,
    /// The labels of its namespace when the plan makes it (`None`: cluster-scoped, or a
    /// namespace the plan does not hold, whose labels are not known: any selector matches).
    pub namespace_labels: Option<&'a Value>,
}

/// A `metav1.LabelSelector` (matchLabels, matchExpressions) against labels; unset or empty
/// matches everything.
pub(crate) fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let exact = selector["matchLabels"].as_object().is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    let expressions = selector["matchExpressions"].as_array().is_none_or(|es| {
        es.iter().all(|e| {
            let key = e["key"].as_str().unwrap_or("");
            let values: Vec<&str> = e["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            match e["operator"].as_str().unwrap_or("") {
                "In" => label(key).is_some_and(|l| values.contains(&l)),
                "NotIn" => label(key).is_none_or(|l| !values.contains(&l)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => true,
            }
        })
    });
    exact && expressions
}

/// Whether one webhook's rules and selectors take writes of `object` (or of its pods).
fn hook_admits(hook: &Value, object: &Admitted) -> bool {
    let in_namespace = object.namespace_labels.is_none_or(|l| selector_matches(&hook["namespaceSelector"], l));
    let selected = |labels: &Value| in_namespace && selector_matches(&hook["objectSelector"], labels);
    let pods = ["pods".to_string()];
    hook.get("rules").and_then(Value::as_array).into_iter().flatten().any(|rule| {
        let creates = listed(&rule["operations"], "CREATE") || listed(&rule["operations"], "UPDATE");
        let own = listed(&rule["apiGroups"], object.group) && resource_listed(&rule["resources"], object.plurals);
        let pod = listed(&rule["apiGroups"], "") && resource_listed(&rule["resources"], &pods);
        creates && ((own && selected(object.labels)) || (pod && object.pod_labels.is_some_and(selected)))
    })
}

/// Whether a webhook configuration admits writes of an object or of the pods it makes.
pub(crate) fn admits(config: &Value, object: &Admitted) -> bool {
    let hooks = config.get("webhooks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    hooks.iter().any(|h| hook_admits(h, object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(api: &str, kind: &str) -> ObjectRef {
        ObjectRef { api_version: api.into(), kind: kind.into(), namespace: Some("kf".into()), name: "x".into() }
    }

    #[test]
    fn pod_spec_names_table_finds_service_account_config_and_secrets() {
        let doc = json!({"spec": {"template": {"metadata": {"labels": {"app": "w"}}, "spec": {
            "serviceAccountName": "sa",
            "volumes": [{"configMap": {"name": "cm"}}, {"secret": {"secretName": "cert"}},
                {"projected": {"sources": [{"secret": {"name": "p"}}]}}],
            "containers": [{"envFrom": [{"configMapRef": {"name": "env"}}],
                "env": [{"valueFrom": {"secretKeyRef": {"name": "pw"}}}]}]}}}});
        let names = named_by_pods(&r("apps/v1", "Deployment"), &doc);
        for want in [("ServiceAccount", "sa"), ("ConfigMap", "cm"), ("Secret", "cert"), ("Secret", "p")] {
            assert!(names.contains(&(want.0, want.1.to_string())), "{want:?} in {names:?}");
        }
        assert!(names.contains(&("ConfigMap", "env".into())) && names.contains(&("Secret", "pw".into())));
        assert!(named_by_pods(&r("v1", "ConfigMap"), &doc).is_empty());
    }

    fn admitted<'a>(group: &'a str, plurals: &'a [String], pods: Option<&'a Value>) -> Admitted<'a> {
        Admitted { group, plurals, labels: &Value::Null, pod_labels: pods, namespace_labels: None }
    }

    #[test]
    fn webhook_rules_admit_by_group_and_plural_and_pods_by_their_makers() {
        let hook = json!({"webhooks": [{"rules": [
            {"apiGroups": [""], "resources": ["pods"], "operations": ["CREATE"]},
            {"apiGroups": ["kubeflow.org"], "resources": ["notebooks"], "operations": ["CREATE", "UPDATE"]}]}]});
        let (deployments, configmaps) = (plurals_of("Deployment"), plurals_of("ConfigMap"));
        let pods = json!({"app": "x"});
        assert!(admits(&hook, &admitted("apps", &deployments, Some(&pods))));
        assert!(!admits(&hook, &admitted("", &configmaps, None)));
        assert!(admits(&hook, &admitted("kubeflow.org", &["notebooks".into()], None)));
        assert!(!admits(&hook, &admitted("kubeflow.org", &["profiles".into()], None)));
        let deletes =
            json!({"webhooks": [{"rules": [{"apiGroups": ["*"], "resources": ["*"], "operations": ["DELETE"]}]}]});
        assert!(!admits(&deletes, &admitted("apps", &deployments, Some(&pods))));
        assert!(plurals_of("NetworkPolicy").contains(&"networkpolicies".to_string()));
    }

    #[test]
    fn webhook_selectors_narrow_what_it_admits_and_unknown_namespaces_match() {
        let hook = json!({"webhooks": [{"rules": [{"apiGroups": [""], "resources": ["pods"], "operations": ["CREATE"]}],
            "objectSelector": {"matchExpressions": [{"key": "jobset.sigs.k8s.io/jobset-name", "operator": "Exists"}]},
            "namespaceSelector": {"matchLabels": {"inject": "on"}}}]});
        let deployments = plurals_of("Deployment");
        let (plain, jobset) = (json!({"app": "x"}), json!({"jobset.sigs.k8s.io/jobset-name": "j"}));
        assert!(!admits(&hook, &admitted("apps", &deployments, Some(&plain))));
        assert!(admits(&hook, &admitted("apps", &deployments, Some(&jobset))));
        let off = json!({"inject": "off"});
        let in_off = Admitted { namespace_labels: Some(&off), ..admitted("apps", &deployments, Some(&jobset)) };
        assert!(!admits(&hook, &in_off));
    }

    #[test]
    fn producers_table_and_selectors() {
        let cert = ObjectRef {
            api_version: "cert-manager.io/v1".into(),
            kind: "Certificate".into(),
            namespace: Some("kf".into()),
            name: "c".into(),
        };
        assert_eq!(produced_by(&cert, &json!({"spec": {"secretName": "tls"}})), Some(("Secret", "tls".into())));
        let service = json!({"spec": {"selector": {"app": "w"}}});
        assert!(selects(&service, &json!({"app": "w", "v": "1"})));
        assert!(!selects(&service, &json!({"app": "z"})));
        assert!(!selects(&json!({"spec": {}}), &json!({"app": "w"})));
        assert!(pod_template(&r("apps/v1", "Deployment"), &json!({"spec": {"template": {}}})).is_some());
        assert!(pod_template(&r("v1", "Service"), &json!({"spec": {"template": {}}})).is_none());
    }
}
