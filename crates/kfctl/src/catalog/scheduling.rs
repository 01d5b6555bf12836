//! Which scheduling values reach which pod templates: the `podScopes` table of
//! `charts/catalog.yaml`, read by the native render and the Helm export alike.
//!
//! A pod template (a map with `containers`) is one of three kinds, decided by its object
//! (`pod_scope`):
//!
//! | pod template | `nodeSelector`, `tolerations`, `affinity` from |
//! |---|---|
//! | the platform's own (every other object) | the component's value, else `global`'s (`Source::Scoped`) |
//! | a node agent (`podScopes.nodeAgents`, e.g. the istio-cni DaemonSet) | none: it runs on every node, tolerating every taint as upstream has it |
//! | a user's runtime (`podScopes.runtimes`, Trainer's and KServe's runtimes) | `<component>.runtimes.*` only, on the templates that run the runtime's container (`Source::Runtimes`) |
//!
//! so `global.nodeSelector` or `istio.nodeSelector` pins the platform's controllers without
//! also pinning the pods users' jobs and models run in, or a DaemonSet that must run on every
//! node (the CNI on only the nodes istiod runs on would leave every other node's pods without
//! their network set up).

use super::params::{Ctx, is_empty};
use crate::embedded;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

/// The `podScopes` table of `charts/catalog.yaml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PodScopes {
    #[serde(default)]
    pub runtimes: Vec<RuntimeKinds>,
    #[serde(default)]
    pub node_agents: NodeAgents,
}

/// The kinds whose pod templates are users' runtimes, of one component.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RuntimeKinds {
    pub component: String,
    pub api_group: String,
    pub kinds: Vec<String>,
    /// The runtime's main container: the pod templates running it get `runtimes.*`.
    pub container: String,
}

/// The kinds whose pods run on every node.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NodeAgents {
    pub kinds: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogScopes {
    #[serde(default)]
    pod_scopes: PodScopes,
}

/// The table, read once from the embedded catalog ([`super::Catalog::embedded`] refuses a
/// catalog whose table does not parse, so the default here is never met in a render).
pub(crate) fn scopes() -> &'static PodScopes {
    static SCOPES: OnceLock<PodScopes> = OnceLock::new();
    SCOPES.get_or_init(|| {
        let text = embedded::file("charts/catalog.yaml").unwrap_or_default();
        let doc = kfctl_yaml::parse_stream(text, "charts/catalog.yaml").ok().and_then(|d| d.into_iter().next());
        doc.and_then(|d| serde_json::from_value::<CatalogScopes>(d).ok()).map(|c| c.pod_scopes).unwrap_or_default()
    })
}

/// Where a pod template's scheduling values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The component's value, else the global one.
    Scoped,
    /// The component's `runtimes` values only.
    Runtimes,
}

impl Source {
    /// The name the Helm helpers take (`templates/chart/helpers/scheduling.tpl`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Scoped => "scoped",
            Source::Runtimes => "runtimes",
        }
    }
}

/// The scope of an object's pod templates.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PodScope {
    Platform,
    NodeAgent,
    Runtime(&'static RuntimeKinds),
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The scope `obj`'s pod templates have, by its kind (and API group, for runtimes).
pub(crate) fn pod_scope(obj: &Value) -> PodScope {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let group = group_of(obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default());
    let table = scopes();
    if let Some(r) = table.runtimes.iter().find(|r| r.api_group == group && r.kinds.iter().any(|k| k == kind)) {
        return PodScope::Runtime(r);
    }
    if table.node_agents.kinds.iter().any(|k| k == kind) {
        return PodScope::NodeAgent;
    }
    PodScope::Platform
}

/// The components whose section has `runtimes` values.
pub(crate) fn runtime_components() -> impl Iterator<Item = &'static str> {
    scopes().runtimes.iter().map(|r| r.component.as_str())
}

/// Whether a pod spec runs a container named `name`.
pub fn runs_container(spec: &Map<String, Value>, name: &str) -> bool {
    spec.get("containers")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c.get("name").and_then(Value::as_str) == Some(name)))
}

/// Visit the pod specs of `obj` that scheduling values reach, each with where its values
/// come from: every pod spec of a platform object, and the pod specs of a runtime that run
/// the runtime's container; a node agent's none.
pub(crate) fn for_each_scheduled_pod_spec(obj: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>, Source)) {
    match pod_scope(obj) {
        PodScope::Platform => super::params::for_each_pod_spec(obj, &mut |spec| f(spec, Source::Scoped)),
        PodScope::NodeAgent => {}
        PodScope::Runtime(r) => super::params::for_each_pod_spec(obj, &mut |spec| {
            if runs_container(spec, &r.container) {
                f(spec, Source::Runtimes)
            }
        }),
    }
}

/// Visit the main container (by name) of every pod template of a runtime.
pub(crate) fn for_each_runtime_container(
    obj: &mut Value,
    runtime: &RuntimeKinds,
    f: &mut dyn FnMut(&mut Map<String, Value>),
) {
    super::params::for_each_pod_spec(obj, &mut |spec| {
        let containers = spec.get_mut("containers").and_then(Value::as_array_mut).into_iter().flatten();
        for c in containers.filter_map(Value::as_object_mut) {
            if c.get("name").and_then(Value::as_str) == Some(runtime.container.as_str()) {
                f(c);
            }
        }
    });
}

/// The scheduling value `key` a pod template of `source` takes (see the module essay).
fn scheduling_value<'a>(ctx: &'a Ctx<'a>, source: Source, key: &str) -> Option<&'a Value> {
    match source {
        Source::Scoped => ctx.scoped(key),
        Source::Runtimes => ctx.own(&["runtimes", key]).filter(|v| !is_empty(v)),
    }
}

pub(crate) fn apply_scheduling(obj: &mut Value, ctx: &Ctx) {
    for_each_scheduled_pod_spec(obj, &mut |spec, source| {
        if let Some(Value::Object(sel)) = scheduling_value(ctx, source, "nodeSelector") {
            let target = spec.entry("nodeSelector").or_insert_with(|| json!({}));
            if let Value::Object(t) = target {
                t.extend(sel.clone());
            }
        }
        if let Some(Value::Array(tol)) = scheduling_value(ctx, source, "tolerations")
            && let Value::Array(t) = spec.entry("tolerations").or_insert_with(|| json!([]))
        {
            t.extend(tol.iter().cloned());
        }
        if let Some(aff) = scheduling_value(ctx, source, "affinity") {
            spec.insert("affinity".into(), aff.clone());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_catalog_scopes_trainer_and_kserve_runtimes_and_daemonsets() {
        let scope = |api: &str, kind: &str| pod_scope(&json!({"apiVersion": api, "kind": kind}));
        assert!(
            matches!(scope("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"), PodScope::Runtime(r) if r.container == "node")
        );
        assert!(
            matches!(scope("serving.kserve.io/v1alpha1", "ClusterServingRuntime"), PodScope::Runtime(r) if r.component == "kserve")
        );
        assert!(matches!(scope("apps/v1", "DaemonSet"), PodScope::NodeAgent));
        assert!(matches!(scope("apps/v1", "Deployment"), PodScope::Platform));
        assert!(matches!(scope("example.com/v1", "ClusterTrainingRuntime"), PodScope::Platform));
        assert_eq!(runtime_components().collect::<Vec<_>>(), ["trainer", "kserve"]);
    }

    #[test]
    fn runtimes_reach_only_the_pod_specs_running_their_container() {
        let mut runtime = json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "spec": {"template": {"spec": {"replicatedJobs": [
                {"name": "init", "template": {"spec": {"template": {"spec": {"containers": [{"name": "model-initializer"}]}}}}},
                {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node"}]}}}}}]}}}});
        let mut seen = Vec::new();
        for_each_scheduled_pod_spec(&mut runtime, &mut |spec, source| {
            seen.push((spec["containers"][0]["name"].as_str().unwrap_or_default().to_string(), source))
        });
        assert_eq!(seen, [("node".to_string(), Source::Runtimes)]);
    }
}
