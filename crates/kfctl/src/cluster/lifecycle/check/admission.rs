//! The Pod Security admission labels of namespaces the plan puts pods in (the nodes'
//! architectures are `arch`'s item).
//!
//! A namespace that exists with `pod-security.kubernetes.io/enforce` set to `baseline` or
//! `restricted` refuses the pods of upstream's components that need more (Istio's init
//! containers, for one), unless the plan's own Namespace object sets the label itself.

use super::{Checked, Mark, item, preflight};
use crate::cluster::api::ApiClient;
use crate::cluster::plan::Plan;
use serde_json::Value;
use std::collections::BTreeSet;

/// The enforce label of Pod Security admission.
const ENFORCE: &str = "pod-security.kubernetes.io/enforce";

/// Existing namespaces whose Pod Security level refuses pods the plan puts there.
pub(super) async fn pod_security(api: &ApiClient, plan: &Plan) -> Checked {
    let own_label: BTreeSet<&str> = plan
        .objects()
        .filter(|o| {
            o.reference.kind == "Namespace" && o.body.pointer("/metadata/labels").and_then(|l| l.get(ENFORCE)).is_some()
        })
        .map(|o| o.reference.name.as_str())
        .collect();
    let with_pods: BTreeSet<&str> = plan
        .objects()
        .filter(|o| matches!(o.reference.kind.as_str(), "Deployment" | "StatefulSet" | "DaemonSet" | "Job"))
        .filter_map(|o| o.reference.namespace.as_deref())
        .filter(|ns| !own_label.contains(ns))
        .collect();
    let namespaces = preflight::path("", "v1", "namespaces", false);
    let mut strict = Vec::new();
    for ns in with_pods {
        let Ok(Some(live)) = api.get(&namespaces, None, ns).await else { continue };
        let level = live.pointer("/metadata/labels").and_then(|l| l.get(ENFORCE)).and_then(Value::as_str);
        if let Some(level @ ("baseline" | "restricted")) = level {
            strict.push(format!("{ns} ({ENFORCE}={level})"));
        }
    }
    match strict.is_empty() {
        true => item("pod-security", Mark::Pass, "no namespace of the plan enforces a stricter level", None),
        false => item(
            "pod-security",
            Mark::Warn,
            format!("these namespaces may refuse the plan's pods: {}", strict.join(", ")),
            Some(format!(
                "label them `{ENFORCE}=privileged` for Kubeflow's components, or check each pod meets the level"
            )),
        ),
    }
}
