//! The server's shared state: configuration (rule tables are live), store, request log.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use super::apply::{Writer, record_update};
use super::config::TestApiConfig;
use super::discovery::{Catalog, ResourceType, crd_resource_types};
use super::store::{ObjectKey, Store, Written};

/// One request as the server saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    /// `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// Request body bytes.
    pub body: Vec<u8>,
    /// Status code answered (0 while in flight or when the connection was dropped).
    pub status: u16,
    /// Time from arrival to the answer (injected delays included).
    pub elapsed: std::time::Duration,
    /// A [`crate::Hold`] released this request at its bound, not by its condition (the
    /// interleaving a test scripted did not happen).
    pub hold_expired: bool,
}

/// RFC 3339 time at second precision, as upstream serializes `metav1.Time` (from the system
/// clock: jiff's `Timestamp::now` needs its `std` feature, which only feature unification with
/// other crates turns on, so `cargo test -p kfctl-testapi` alone would not build).
pub(crate) fn timestamp_now() -> String {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(0);
    let now = k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

const CRD_GROUP: &str = "apiextensions.k8s.io";
const CRD_RESOURCE: &str = "customresourcedefinitions";

/// Whether a CRD object reports `Established=True`.
pub(crate) fn crd_established(crd: &Value) -> bool {
    crd["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Established" && c["status"] == "True"))
}

/// Everything the server knows, behind one mutex.
#[derive(Debug)]
pub(crate) struct State {
    /// Live configuration; fault and status tables change at run time.
    pub config: TestApiConfig,
    /// Objects.
    pub store: Store,
    /// Every request, in arrival order.
    pub requests: Vec<RecordedRequest>,
    /// Store revision after the last reconcile pass (`None`: a pass is due regardless).
    pub reconciled_revision: Option<u64>,
    /// Earliest instant a timed rule becomes due (a pass is due then even without changes).
    pub next_wakeup: Option<Instant>,
    /// Store revision the garbage collector last looked at.
    pub collected_revision: u64,
    /// When each terminating namespace was first seen terminating (for its finalization delay).
    pub terminating_since: std::collections::HashMap<String, Instant>,
    /// Store revision after the endpoint controller's last pass (`None`: a pass is due).
    pub endpoints_synced: Option<u64>,
    /// The CRDs' kinds, read from the CRD objects once per change of any CRD: every request
    /// asks for the catalog, and walking ~100 CRDs' JSON each time was a seventh of the
    /// server's CPU in a whole-platform install.
    crd_kinds: Mutex<CrdKindsCache>,
}

/// [`State::crd_kinds`]: the CRDs' `resourceVersion`s it was read at, and what it read.
#[derive(Debug, Default)]
struct CrdKindsCache {
    versions: Vec<String>,
    kinds: Arc<Vec<CrdKinds>>,
}

/// One CRD's kinds, and what decides whether they are served or discoverable.
#[derive(Debug)]
struct CrdKinds {
    created: Instant,
    /// Established and not being deleted.
    served: bool,
    types: Vec<Arc<ResourceType>>,
}

impl State {
    /// A fresh state with the configured initial namespaces.
    pub(crate) fn new(config: TestApiConfig) -> Self {
        let mut state = State {
            store: Store::new(config.watch_history),
            config,
            requests: Vec::new(),
            reconciled_revision: None,
            next_wakeup: None,
            collected_revision: 0,
            terminating_since: Default::default(),
            endpoints_synced: None,
            crd_kinds: Mutex::default(),
        };
        let now = Instant::now();
        let ts = timestamp_now();
        for ns in state.config.initial_namespaces.clone() {
            let key = ObjectKey::new("", "namespaces", None, &ns);
            let object = json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
            state.store.write(&key, object, now, &ts, false);
        }
        state
    }

    /// The catalog of served kinds (`discoverable`: as discovery shows them, after the lag).
    pub(crate) fn catalog(&self, now: Instant, discoverable: bool) -> Catalog {
        let lag = self.config.crd_established_after + self.config.discovery_lag;
        let visible = self
            .crd_kinds()
            .iter()
            .filter(|c| c.served && (!discoverable || now.duration_since(c.created) >= lag))
            .flat_map(|c| c.types.clone())
            .collect::<Vec<_>>();
        Catalog::builtin().with_types(visible.into_iter())
    }

    /// Every CRD's kinds, read again only when a CRD changed (its `resourceVersion`).
    fn crd_kinds(&self) -> Arc<Vec<CrdKinds>> {
        let crds = self.store.list(CRD_GROUP, CRD_RESOURCE, None);
        let version =
            |e: &super::store::Entry| e.object["metadata"]["resourceVersion"].as_str().unwrap_or("").to_string();
        let mut cache = self.crd_kinds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let unchanged = cache.versions.len() == crds.len()
            && cache.versions.iter().zip(&crds).all(|(v, (_, e))| e.object["metadata"]["resourceVersion"] == **v);
        if !unchanged {
            let kinds = crds.iter().map(|(_, e)| CrdKinds {
                created: e.created,
                served: crd_established(&e.object) && e.object["metadata"].get("deletionTimestamp").is_none(),
                types: crd_resource_types(&e.object).into_iter().map(Arc::new).collect(),
            });
            cache.kinds = Arc::new(kinds.collect());
            cache.versions = crds.iter().map(|(_, e)| version(e)).collect();
        }
        cache.kinds.clone()
    }

    /// Ask for a reconcile pass at `at` (keeps the earliest request).
    pub(crate) fn wake_at(&mut self, at: Instant) {
        self.next_wakeup = Some(self.next_wakeup.map_or(at, |t| t.min(at)));
    }

    /// A write by a controller (status, endpoints, CA injection): an Update with managed fields.
    pub(crate) fn controller_write(
        &mut self,
        key: &ObjectKey,
        mut object: Value,
        manager: &str,
        subresource: Option<&str>,
        now: Instant,
    ) -> Written {
        let ts = timestamp_now();
        let old = self.store.get(key).map(|e| e.object.clone());
        let api_version = object["apiVersion"].as_str().unwrap_or("v1").to_string();
        let writer = Writer { manager, subresource, api_version: &api_version, now: &ts };
        record_update(old.as_ref(), &mut object, &writer);
        self.store.write(key, object, now, &ts, false)
    }
}
