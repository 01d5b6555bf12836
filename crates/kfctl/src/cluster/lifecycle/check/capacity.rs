//! The capacity item: the plan's CPU and memory requests against the nodes' allocatable.
//!
//! Requests are summed over every container of every Deployment, StatefulSet and Job template
//! in the plan, times its replicas (1 when unset); a DaemonSet counts once per node. Quantities
//! are Kubernetes' (`100m`, `2`, `512Mi`, `1G`, `1e3`).

use super::{Checked, Mark, item, preflight};
use crate::cluster::api::ApiClient;
use crate::cluster::plan::Plan;
use serde_json::Value;

/// CPU in millicores and memory in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Resources {
    pub cpu_milli: f64,
    pub memory: f64,
}

/// A Kubernetes quantity as a number (cores, bytes); `None` when it is not one.
pub(crate) fn quantity(text: &str) -> Option<f64> {
    let text = text.trim();
    let suffixes: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1024.0 * 1024.0),
        ("Gi", 1024.0 * 1024.0 * 1024.0),
        ("Ti", 1024f64.powi(4)),
        ("m", 0.001),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
    ];
    for (suffix, factor) in suffixes {
        if let Some(number) = text.strip_suffix(suffix) {
            return number.parse::<f64>().ok().map(|n| n * factor);
        }
    }
    text.parse::<f64>().ok()
}

fn requests_of(template: &Value) -> Resources {
    let containers = template.pointer("/spec/containers").and_then(Value::as_array).into_iter().flatten();
    let mut sum = Resources::default();
    for container in containers {
        let requests = container.pointer("/resources/requests");
        let get = |key: &str| requests.and_then(|r| r.get(key)).and_then(Value::as_str).and_then(quantity);
        sum.cpu_milli += get("cpu").unwrap_or(0.0) * 1000.0;
        sum.memory += get("memory").unwrap_or(0.0);
    }
    sum
}

/// What the plan's workloads request, with `nodes` nodes for DaemonSets.
pub(crate) fn requested(plan: &Plan, nodes: usize) -> Resources {
    let mut total = Resources::default();
    for object in plan.objects() {
        let body = &object.body;
        let (template, copies) = match object.reference.kind.as_str() {
            "Deployment" | "StatefulSet" | "ReplicaSet" => {
                (body.pointer("/spec/template"), body.pointer("/spec/replicas").and_then(Value::as_u64).unwrap_or(1))
            }
            "DaemonSet" => (body.pointer("/spec/template"), nodes as u64),
            _ => (None, 0),
        };
        if let Some(template) = template {
            let one = requests_of(template);
            total.cpu_milli += one.cpu_milli * copies as f64;
            total.memory += one.memory * copies as f64;
        }
    }
    total
}

/// What the nodes offer.
pub(crate) fn allocatable(nodes: &[Value]) -> Resources {
    let mut total = Resources::default();
    for node in nodes {
        let get =
            |key: &str| node.pointer(&format!("/status/allocatable/{key}")).and_then(Value::as_str).and_then(quantity);
        total.cpu_milli += get("cpu").unwrap_or(0.0) * 1000.0;
        total.memory += get("memory").unwrap_or(0.0);
    }
    total
}

fn shown(r: Resources) -> String {
    format!("{:.1} CPU and {:.1} GiB", r.cpu_milli / 1000.0, r.memory / 1024f64.powi(3))
}

/// The cluster's nodes, or why they cannot be listed.
pub(super) async fn nodes(api: &ApiClient) -> Result<Vec<Value>, String> {
    match api.list(&preflight::path("", "v1", "nodes", false), None, None).await {
        Ok(list) => Ok(list.get("items").and_then(Value::as_array).cloned().unwrap_or_default()),
        Err(f) => Err(f.to_string()),
    }
}

/// The capacity item.
pub(super) fn check(nodes: &Result<Vec<Value>, String>, plan: &Plan) -> Checked {
    let nodes = match nodes {
        Ok(nodes) => nodes,
        Err(f) => return item("capacity", Mark::Warn, format!("cannot list nodes: {f}"), None),
    };
    let offered = allocatable(nodes);
    let asked = requested(plan, nodes.len());
    let detail =
        format!("{} node(s) with {} allocatable; the plan requests {}", nodes.len(), shown(offered), shown(asked));
    let short = asked.cpu_milli > offered.cpu_milli || asked.memory > offered.memory;
    match (nodes.is_empty(), short) {
        (true, _) => item("capacity", Mark::Fail, "no nodes", Some("add nodes to the cluster".into())),
        (false, true) => item(
            "capacity",
            Mark::Fail,
            detail,
            Some("add nodes, or leave optional components out (`<component>.enabled=false`)".into()),
        ),
        (false, false) => item("capacity", Mark::Pass, detail, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities_read_as_kubernetes_writes_them() {
        assert_eq!(quantity("100m"), Some(0.1));
        assert_eq!(quantity("2"), Some(2.0));
        assert_eq!(quantity("512Mi"), Some(512.0 * 1024.0 * 1024.0));
        assert_eq!(quantity("1G"), Some(1e9));
        assert_eq!(quantity("lots"), None);
    }

    #[test]
    fn nodes_allocatable_is_summed() {
        let node = |cpu: &str, mem: &str| json!({"status": {"allocatable": {"cpu": cpu, "memory": mem}}});
        let sum = allocatable(&[node("2", "4Gi"), node("1500m", "2Gi")]);
        assert_eq!(sum.cpu_milli, 3500.0);
        assert_eq!(sum.memory, 6.0 * 1024f64.powi(3));
    }
}
