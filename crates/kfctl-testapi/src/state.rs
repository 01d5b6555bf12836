//! The server's shared state: configuration (rule tables are live), store, request log.

use std::time::Instant;

use serde_json::{Value, json};

use super::apply::{Writer, record_update};
use super::config::TestApiConfig;
use super::discovery::Catalog;
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
pub fn timestamp_now() -> String {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(0);
    let now = k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

const CRD_GROUP: &str = "apiextensions.k8s.io";
const CRD_RESOURCE: &str = "customresourcedefinitions";

/// Whether a CRD object reports `Established=True`.
pub fn crd_established(crd: &Value) -> bool {
    crd["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Established" && c["status"] == "True"))
}

/// Everything the server knows, behind one mutex.
#[derive(Debug)]
pub struct State {
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
}

impl State {
    /// A fresh state with the configured initial namespaces.
    pub fn new(config: TestApiConfig) -> Self {
        let mut state = State {
            store: Store::new(config.watch_history),
            config,
            requests: Vec::new(),
            reconciled_revision: None,
            next_wakeup: None,
            collected_revision: 0,
            terminating_since: Default::default(),
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
    pub fn catalog(&self, now: Instant, discoverable: bool) -> Catalog {
        let lag = self.config.crd_established_after + self.config.discovery_lag;
        let crds = self.store.list(CRD_GROUP, CRD_RESOURCE, None);
        let visible = crds
            .iter()
            .filter(|(_, e)| crd_established(&e.object) && e.object["metadata"].get("deletionTimestamp").is_none())
            .filter(|(_, e)| !discoverable || now.duration_since(e.created) >= lag)
            .map(|(_, e)| &e.object);
        Catalog::builtin().with_crds(visible)
    }

    /// Ask for a reconcile pass at `at` (keeps the earliest request).
    pub fn wake_at(&mut self, at: Instant) {
        self.next_wakeup = Some(self.next_wakeup.map_or(at, |t| t.min(at)));
    }

    /// A write by a controller (status, endpoints, CA injection): an Update with managed fields.
    pub fn controller_write(
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
