//! A test double of the Kubernetes API server, for testing the install engine without a cluster.
//!
//! No real API server, Kind or Docker can run where kfctl-rs is developed and tested, so the
//! install engine (kube + k8s-openapi clients) is exercised against this **test API server**:
//! an in-process HTTP server on a random loopback port that speaks enough of the Kubernetes API
//! for kube's `Client`, `Api<DynamicObject>`, discovery and watchers, and for a real `kubectl`,
//! to work against it unchanged. It is compiled into the library so integration tests and the
//! `kfctl-test-apiserver` dev binary can share it; nothing in the CLI uses it.
//!
//! What it does faithfully: discovery (legacy and aggregated) for the built-in kinds plus
//! established CRDs; CRUD on an in-memory store with `resourceVersion`/`generation` bumped only
//! on real changes; server-side apply with per-manager field ownership, conflicts worded like
//! upstream, `force` and `dryRun=All`; namespace admission (missing → 404, terminating → 403);
//! immutable fields refused with upstream's 422 (selectors, a Job's template, `roleRef`, a
//! set cluster IP, StatefulSet and PVC specs, a CRD's scope: `immutable.rs`);
//! finalizers and namespace termination; owner-reference garbage collection; watches (with
//! 410 Expired past the history); SelfSubjectAccessReview; errors as `Status` objects; pod
//! logs with `tailLines`, `limitBytes` and `container` (a fixed text: `logs.rs`).
//!
//! What it simplifies, and how (each module tells more):
//! * field ownership treats lists as atomic (`apply.rs`); there are no schemas, so no
//!   validation (`fieldValidation=Strict` is accepted and ignored), no defaulting beyond
//!   namespaces, no conversion between versions (the `apiVersion` is rewritten);
//! * every object gets `metadata.generation` (upstream sets it only for some kinds);
//! * strategic merge patch behaves as JSON merge patch; protobuf request bodies (client-go's
//!   typed clients, e.g. `kubectl create namespace`) are refused with 415 (`writes.rs`);
//! * lists ignore `limit` and return everything without a `continue` token; tables print
//!   `Name` and `Age` only (`table.rs`);
//! * plain HTTP without authentication; admission webhooks are never called, but (opt-in) a
//!   write they cover fails as upstream's would while the webhook's Service has no ready
//!   endpoint or its `caBundle` is empty (`webhooks.rs`); controllers are replaced by the
//!   reconcile pass (`reconcile.rs`).
//!
//! Tests steer it with three tables: **status rules** (when workloads become ready, scripted
//! statuses, CA bundle injection: `status_rules.rs`), **faults** (error answers, dropped
//! connections, latency, requests held until others were answered: `faults.rs`, `hold.rs`),
//! and **timing** (CRD establishment, discovery lag: [`TestApiConfig`]). Every request is
//! logged with its body for byte-level assertions.
//!
//! ```no_run
//! use kfctl_testapi::{TestApiConfig, TestApiServer};
//! let server = TestApiServer::start(TestApiConfig::default());
//! std::fs::write("/tmp/kubeconfig", server.kubeconfig_yaml()).unwrap();
//! // ... point kube or kubectl at it, then:
//! assert!(server.requests().iter().all(|r| r.status < 500));
//! server.shutdown();
//! ```

#![deny(unreachable_pub)]

mod apply;
mod config;
mod discovery;
mod errors;
mod faults;
mod handlers;
mod hold;
mod http;
mod immutable;
mod kubeconfig;
mod logs;
mod openapi;
mod profiles;
mod reconcile;
mod route;
mod selectors;
mod state;
mod status_rules;
mod store;
mod table;
mod watch;
mod webhooks;
mod writes;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::{oneshot, watch as tokio_watch};

pub use config::{AccessDenial, TestApiConfig, WORKLOAD_KINDS};
pub use errors::ApiError;
pub use faults::{FaultAction, FaultRule, RequestMatch};
pub use hold::{DEFAULT_HOLD_BOUND, Hold};
pub use logs::{LOG_ANNOTATION, LOG_LINES};
pub use state::RecordedRequest;
pub use status_rules::{StatusBehavior, StatusRule, Target};
pub use store::ObjectKey;

/// Why the test API server could not start or write its kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum TestApiError {
    /// The loopback listener could not be bound.
    #[error("test API server: cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    /// The runtime thread could not be started.
    #[error("test API server: cannot start its runtime thread: {0}")]
    Runtime(std::io::Error),
    /// The kubeconfig could not be written.
    #[error("{path}: cannot write the test API server's kubeconfig: {source}")]
    Kubeconfig {
        /// Target file.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// A seeded object names no served kind.
    #[error("seeded object: {0}")]
    Seed(ApiError),
}

/// One object in a [`TestApiServer::objects`] snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredObject {
    /// Its identity.
    pub key: ObjectKey,
    /// The object as stored.
    pub object: Value,
}

/// A running test API server; dropped or [`shutdown`](Self::shutdown), it stops.
#[derive(Debug)]
pub struct TestApiServer {
    url: String,
    shared: Arc<http::Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestApiServer {
    /// Start on a random loopback port, on a runtime thread of its own (usable from sync and
    /// async tests alike). Panics if the port cannot be bound: use [`Self::try_start`] to handle it.
    pub fn start(config: TestApiConfig) -> TestApiServer {
        Self::try_start(config).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start, reporting bind and thread failures.
    pub fn try_start(config: TestApiConfig) -> Result<TestApiServer, TestApiError> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(TestApiError::Bind)?;
        listener.set_nonblocking(true).map_err(TestApiError::Bind)?;
        let url = format!("http://{}", listener.local_addr().map_err(TestApiError::Bind)?);
        let state = state::State::new(config);
        let (changes, _) = tokio_watch::channel(state.store.revision());
        let shared = Arc::new(http::Shared { state: Mutex::new(state), changes });
        let (stop, stopped) = oneshot::channel();
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(TestApiError::Runtime)?;
        let task_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("test-apiserver".into())
            .spawn(move || {
                runtime.block_on(async move {
                    if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                        http::serve(listener, task_shared, stopped).await;
                    }
                });
            })
            .map_err(TestApiError::Runtime)?;
        Ok(TestApiServer { url, shared, stop: Some(stop), thread: Some(thread) })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A kubeconfig pointing at this server.
    pub fn kubeconfig_yaml(&self) -> String {
        kubeconfig::kubeconfig_yaml(&self.url)
    }

    /// Write [`Self::kubeconfig_yaml`] to a file.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), TestApiError> {
        std::fs::write(path, self.kubeconfig_yaml())
            .map_err(|source| TestApiError::Kubeconfig { path: path.display().to_string(), source })
    }

    /// A snapshot of every stored object (after letting due status rules fire).
    pub fn objects(&self) -> Vec<StoredObject> {
        self.shared.reconcile_now();
        let state = self.shared.lock();
        state.store.iter().map(|(k, e)| StoredObject { key: k.clone(), object: e.object.clone() }).collect()
    }

    /// One stored object.
    pub fn object(&self, key: &ObjectKey) -> Option<Value> {
        self.shared.reconcile_now();
        self.shared.lock().store.get(key).map(|e| e.object.clone())
    }

    /// The store's current revision (the `resourceVersion` lists report); unchanged when
    /// nothing was written.
    pub fn revision(&self) -> u64 {
        self.shared.reconcile_now();
        self.shared.lock().store.revision()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Forget the request log.
    pub fn clear_requests(&self) {
        self.shared.lock().requests.clear();
    }

    /// Add a fault rule (evaluated after the existing ones).
    pub fn set_fault(&self, rule: FaultRule) {
        self.shared.lock().config.faults.push(rule);
    }

    /// Remove every fault rule.
    pub fn clear_faults(&self) {
        self.shared.lock().config.faults.clear();
    }

    /// Change the latency added to every request.
    pub fn set_latency(&self, latency: std::time::Duration) {
        self.shared.lock().config.latency = latency;
    }

    /// Add a status rule (it wins over earlier ones).
    pub fn set_status_rule(&self, rule: StatusRule) {
        let mut state = self.shared.lock();
        state.config.status_rules.push(rule);
        state.reconciled_revision = None;
    }

    /// Store an object directly, as if another client (manager `test-seed`) had created it.
    pub fn seed(&self, object: Value) -> Result<Value, TestApiError> {
        let mut state = self.shared.lock();
        let now = Instant::now();
        let api_version = object["apiVersion"].as_str().unwrap_or("");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let kind = object["kind"].as_str().unwrap_or("");
        let catalog = state.catalog(now, false);
        let rt =
            catalog.types().find(|t| t.group == group && t.version == version && t.kind == kind).ok_or_else(|| {
                TestApiError::Seed(ApiError::new(
                    404,
                    "NotFound",
                    format!("no matches for kind \"{kind}\" in version \"{api_version}\""),
                ))
            })?;
        let namespace = rt.namespaced.then(|| object["metadata"]["namespace"].as_str().unwrap_or("default"));
        let key = ObjectKey::new(group, &rt.resource, namespace, object["metadata"]["name"].as_str().unwrap_or(""));
        let written = state.controller_write(&key, object, "test-seed", None, now);
        drop(state);
        self.shared.reconcile_now();
        Ok(written.object)
    }

    /// Stop serving and join the runtime thread.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for TestApiServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}
