//! Which URL serves a kind: discovery, cached per group/version and refreshed on demand.
//!
//! The resolver reads `/api/v1` and `/apis/<group>/<version>` (the per-group documents every
//! API server serves) and caches them. A kind that is missing answers like kubectl does,
//! "no matches for kind", with the typed reason [`Reason::NoKindMatch`] that only this code
//! sets, so the retry table can tell a kind whose CRD was just installed (discovery lags a few
//! seconds behind Established) from a kind nobody serves. A miss drops the cached document, so
//! the next attempt asks the server again.

use crate::cluster::api::{ApiClient, ResourcePath};
use crate::cluster::retry::{ApiFailure, Reason};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;

/// One served resource of a discovery document.
#[derive(Debug, Clone)]
struct Served {
    kind: String,
    plural: String,
    namespaced: bool,
}

/// One cached discovery document; its own lock, so different groups are fetched concurrently
/// and one group is fetched once.
type Slot = Arc<Mutex<Option<Arc<Vec<Served>>>>>;

/// Cached discovery.
#[derive(Clone)]
pub(crate) struct Resolver {
    api: ApiClient,
    cache: Arc<std::sync::Mutex<HashMap<String, Slot>>>,
}

impl Resolver {
    pub(crate) fn new(api: ApiClient) -> Self {
        Resolver { api, cache: Arc::default() }
    }

    /// The path serving `kind` at `api_version`.
    pub(crate) async fn resolve(&self, api_version: &str, kind: &str) -> Result<ResourcePath, ApiFailure> {
        let served = self.document(api_version).await?;
        let found = served.iter().find(|s| s.kind == kind).cloned();
        match found {
            Some(s) => {
                let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
                Ok(ResourcePath {
                    group: group.into(),
                    version: version.into(),
                    plural: s.plural,
                    namespaced: s.namespaced,
                })
            }
            None => {
                self.forget(api_version).await;
                Err(no_kind_match(api_version, kind))
            }
        }
    }

    /// Drop a cached document.
    pub(crate) async fn forget(&self, api_version: &str) {
        *self.slot(api_version).lock().await = None;
    }

    fn slot(&self, api_version: &str) -> Slot {
        let mut cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        cache.entry(api_version.to_string()).or_default().clone()
    }

    async fn document(&self, api_version: &str) -> Result<Arc<Vec<Served>>, ApiFailure> {
        let slot = self.slot(api_version);
        let mut cached = slot.lock().await;
        if let Some(doc) = cached.as_ref() {
            return Ok(doc.clone());
        }
        let path =
            if api_version.contains('/') { format!("/apis/{api_version}") } else { format!("/api/{api_version}") };
        let served = match self.api.get_path(&path).await {
            Ok(doc) => Arc::new(parse_resource_list(&doc)),
            Err(f) if f.status == Some(404) => Arc::new(Vec::new()),
            Err(f) => return Err(f),
        };
        if !served.is_empty() {
            *cached = Some(served.clone());
        }
        Ok(served)
    }
}

/// The failure kubectl reports for a kind discovery does not serve.
pub(crate) fn no_kind_match(api_version: &str, kind: &str) -> ApiFailure {
    ApiFailure {
        status: Some(404),
        reason: Reason::NoKindMatch,
        message: format!("no matches for kind \"{kind}\" in version \"{api_version}\""),
        ..Default::default()
    }
}

/// The top-level resources of an `APIResourceList` (subresources like `deployments/status` skipped).
fn parse_resource_list(doc: &Value) -> Vec<Served> {
    doc.get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let plural = r.get("name")?.as_str()?;
            if plural.contains('/') {
                return None;
            }
            Some(Served {
                kind: r.get("kind")?.as_str()?.to_string(),
                plural: plural.to_string(),
                namespaced: r.get("namespaced").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resource_lists_skip_subresources() {
        let doc = json!({"resources": [
            {"name": "deployments", "kind": "Deployment", "namespaced": true},
            {"name": "deployments/status", "kind": "Deployment", "namespaced": true}]});
        let served = parse_resource_list(&doc);
        assert_eq!(served.len(), 1);
        assert_eq!((served[0].plural.as_str(), served[0].namespaced), ("deployments", true));
    }

    #[test]
    fn missing_kind_reads_like_kubectl() {
        let f = no_kind_match("cert-manager.io/v1", "Certificate");
        assert_eq!(f.message, "no matches for kind \"Certificate\" in version \"cert-manager.io/v1\"");
        assert_eq!((f.reason.as_str(), f.is_no_kind_match()), ("NoKindMatch", true));
    }
}
