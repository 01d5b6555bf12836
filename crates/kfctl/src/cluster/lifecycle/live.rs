//! What `kfctl-rs analyze` reads of a live cluster: the objects the install record lists, as
//! the cluster holds them now, and the facts about the cluster itself (its Kubernetes version
//! against the recorded release's range).

use crate::analyze::{ClusterFacts, Supported};
use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Target};
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::scoped;
use serde_json::Value;
use std::time::Duration;

/// The recorded objects (those still there) and the cluster's facts; a cluster without a
/// record gives no objects and the facts of no release.
pub async fn live_objects(target: &Target, timeout: Duration) -> Result<(Vec<Value>, ClusterFacts), ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout);
    let version = super::preflight::server_version(&api).await?;
    let record = super::install::read_record(&api).await?;
    let resolver = Resolver::new(api.clone());
    let mut objects = Vec::new();
    for entry in record.iter().flat_map(|r| &r.inventory) {
        let r = &entry.reference;
        let Ok(path) = resolver.resolve(&r.api_version, &r.kind).await else { continue };
        if let Ok(Some(live)) = api.get(&path, scoped(&path, r), &r.name).await {
            objects.push(live);
        }
    }
    let release = record.as_ref().map(|r| r.meta.upstream_version.clone()).unwrap_or_default();
    let known = crate::source::releases::known().iter().find(|r| r.version == release);
    let nodes = api.list(&super::preflight::path("", "v1", "nodes", false), None, None).await.unwrap_or_default();
    let architectures = nodes["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.pointer("/status/nodeInfo/architecture").and_then(Value::as_str).map(String::from))
        .collect();
    let facts = ClusterFacts {
        architectures,
        kubernetes: super::preflight::parse_server_version(&version).map(|v| (v.major, v.minor)),
        supported: known.map(|r| Supported { oldest: r.min_kubernetes, newest: r.max_kubernetes }),
        release,
    };
    Ok((objects, facts))
}
