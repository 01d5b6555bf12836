//! The checks of [`super::RULES`], one function per code.

use super::{ClusterFacts, Finding, finding, label};
use crate::catalog::RenderedObject;
use crate::catalog::credentials::CREDENTIALS;
use crate::catalog::{images, platforms};
use serde_json::Value;

/// KF001: upstream's well-known credentials, wherever the credentials table says they live.
pub(super) fn default_credentials(objects: &[Value], found: &mut Vec<Finding>) {
    for obj in objects {
        for cred in CREDENTIALS.iter().filter(|c| c.holds_upstream_value(obj)) {
            let message = format!("holds {} (value `{}`)", cred.what, cred.value);
            found.push(finding("KF001", label(obj), message));
        }
    }
}

/// KF002: an Istio Gateway with an HTTP server and no server with TLS.
pub(super) fn plain_http_gateways(objects: &[Value], found: &mut Vec<Finding>) {
    let gateways = objects.iter().filter(|o| {
        o["kind"] == "Gateway" && o["apiVersion"].as_str().is_some_and(|v| v.starts_with("networking.istio.io/"))
    });
    for gateway in gateways {
        let servers = gateway.pointer("/spec/servers").and_then(Value::as_array).cloned().unwrap_or_default();
        let protocol = |s: &Value| s.pointer("/port/protocol").and_then(Value::as_str).unwrap_or("").to_uppercase();
        let plain = servers.iter().any(|s| protocol(s) == "HTTP");
        let tls = servers.iter().any(|s| s.get("tls").is_some() && protocol(s) != "HTTP");
        if plain && !tls {
            found.push(finding("KF002", label(gateway), "serves HTTP and has no TLS server".into()));
        }
    }
}

/// KF003: a PodDisruptionBudget whose `maxUnavailable` is 0, or whose `minAvailable` is at
/// least the replicas of a Deployment or StatefulSet it selects in its namespace.
pub(super) fn blocking_disruption_budgets(objects: &[Value], found: &mut Vec<Finding>) {
    for pdb in objects.iter().filter(|o| o["kind"] == "PodDisruptionBudget") {
        let spec = &pdb["spec"];
        if spec.get("maxUnavailable").is_some_and(is_zero) {
            found.push(finding("KF003", label(pdb), "maxUnavailable is 0: no pod may ever be evicted".into()));
            continue;
        }
        let Some(min) = spec.get("minAvailable").and_then(Value::as_u64) else { continue };
        let selector = spec.pointer("/selector/matchLabels").and_then(Value::as_object);
        let namespace = pdb.pointer("/metadata/namespace");
        let selected = objects.iter().filter(|w| {
            matches!(w["kind"].as_str(), Some("Deployment" | "StatefulSet"))
                && w.pointer("/metadata/namespace") == namespace
                && selector.is_some_and(|sel| {
                    let labels = w.pointer("/spec/template/metadata/labels");
                    sel.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
                })
        });
        for workload in selected {
            let replicas = workload.pointer("/spec/replicas").and_then(Value::as_u64).unwrap_or(1);
            if min >= replicas {
                let message = format!(
                    "minAvailable {min} with {replicas} replica(s) of {}: no pod may be evicted",
                    label(workload)
                );
                found.push(finding("KF003", label(pdb), message));
            }
        }
    }
}

fn is_zero(v: &Value) -> bool {
    v.as_u64() == Some(0) || v.as_str() == Some("0%") || v.as_str() == Some("0")
}

/// KF004: namespaced objects without a namespace.
pub(super) fn missing_namespaces(objects: &[Value], found: &mut Vec<Finding>) {
    let tagged: Vec<RenderedObject> = objects.iter().map(|o| RenderedObject::new("", o.clone())).collect();
    for object in crate::catalog::default_namespace::missing_namespace(&tagged) {
        found.push(finding("KF004", label(&object.obj), "names no namespace: it lands in `default`".into()));
    }
}

/// KF005: the cluster's Kubernetes outside the release's range.
pub(super) fn kubernetes_range(facts: &ClusterFacts, found: &mut Vec<Finding>) {
    let (Some(version), Some(range)) = (facts.kubernetes, facts.supported) else { return };
    let (min, max) = (range.oldest, range.newest);
    let below = version < min;
    let above = max.is_some_and(|max| version > max);
    if below || above {
        let range = match max {
            Some(max) => format!("{}.{} to {}.{}", min.0, min.1, max.0, max.1),
            None => format!("{}.{} and newer", min.0, min.1),
        };
        let message =
            format!("Kubernetes {}.{} is outside release {}'s range ({range})", version.0, version.1, facts.release);
        found.push(finding("KF005", "the cluster".into(), message));
    }
}

/// KF006: images the catalog's platform data (`charts/image-platforms.yaml`) says have no
/// build for an architecture the nodes run, one finding per object and image; and, on the
/// cluster, how many images the data does not know (nothing is assumed of them).
pub(super) fn node_architectures(objects: &[Value], facts: &ClusterFacts, found: &mut Vec<Finding>) {
    let mut archs = facts.architectures.clone();
    archs.sort();
    archs.dedup();
    if archs.is_empty() {
        return;
    }
    let entries = match platforms::entries() {
        Ok(entries) => entries,
        Err(e) => return found.push(finding("KF006", "the cluster".into(), e.to_string())),
    };
    for obj in objects {
        let images: Vec<String> = images::collect(std::slice::from_ref(obj));
        for m in platforms::coverage(entries, &images, &archs).missing {
            let message = format!(
                "image {} has no build for {} (published for {}; source: {})",
                m.image,
                m.architectures.join(", "),
                m.platforms.join(", "),
                m.source
            );
            found.push(finding("KF006", label(obj), message));
        }
    }
    let all = images::collect(objects);
    let unknown = platforms::coverage(entries, &all, &archs).unknown.len();
    if unknown > 0 {
        let message = format!(
            "nodes run {}; the catalog's platform data does not know {unknown} of {} image(s)",
            archs.join(", "),
            all.len()
        );
        found.push(finding("KF006", "the cluster".into(), message));
    }
}
