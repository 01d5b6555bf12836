//! Two items about what the cluster will run: the nodes' architectures, and the Pod Security
//! admission labels of namespaces the plan puts pods in.
//!
//! kfctl-rs's catalog records no image platforms, and most upstream images are published for
//! amd64 (some for arm64 too). So a node of another architecture is a warning, with how to find
//! out. A namespace that exists with `pod-security.kubernetes.io/enforce` set to `baseline` or
//! `restricted` refuses the pods of upstream's components that need more (Istio's init
//! containers, for one), unless the plan's own Namespace object sets the label itself.

use super::{Checked, Mark, item, preflight};
use crate::cluster::api::ApiClient;
use crate::cluster::plan::Plan;
use serde_json::Value;
use std::collections::BTreeSet;

/// The enforce label of Pod Security admission.
const ENFORCE: &str = "pod-security.kubernetes.io/enforce";

/// The nodes' architectures.
pub(super) fn architectures(nodes: &[Value]) -> Checked {
    let archs: BTreeSet<&str> =
        nodes.iter().filter_map(|n| n.pointer("/status/nodeInfo/architecture").and_then(Value::as_str)).collect();
    let shown = archs.iter().copied().collect::<Vec<_>>().join(", ");
    let others: Vec<&str> = archs.iter().copied().filter(|a| *a != "amd64").collect();
    match (archs.is_empty(), others.is_empty()) {
        (true, _) => item("architectures", Mark::Warn, "the nodes report no architecture", None),
        (false, true) => item("architectures", Mark::Pass, format!("nodes: {shown}"), None),
        (false, false) => item(
            "architectures",
            Mark::Warn,
            format!("nodes: {shown}; upstream publishes most images for amd64, and the catalog records no platforms"),
            Some(format!(
                "check each image of `kfctl-rs images --profile P` has a {} build (`docker manifest inspect IMAGE`), or pin such pods to amd64 nodes (`global.nodeSelector`)",
                others.join("/")
            )),
        ),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn amd64_nodes_pass_and_others_warn_with_how_to_find_out() {
        let node = |arch: &str| json!({"status": {"nodeInfo": {"architecture": arch}}});
        assert_eq!(architectures(&[node("amd64")]).mark, Mark::Pass);
        let mixed = architectures(&[node("amd64"), node("arm64")]);
        assert_eq!(mixed.mark, Mark::Warn);
        assert!(mixed.detail.contains("amd64, arm64") && mixed.hint.unwrap().contains("arm64 build"));
    }
}
