//! The only door to the API server: raw calls through `kube`'s client.
//!
//! Requests are built with `kube::core::Request` (server-side apply is `Patch::Apply` with
//! field manager `kfctl-rs`) and sent with `Client::send`, so this layer sees the raw response:
//! its status code (201 tells an apply created the object), its `Retry-After` header, and the
//! `Status` body of a failure. Every failure becomes an [`ApiFailure`] for the retry table,
//! typed (by the private `failure` module) from the `Status` (reason, details, causes) or,
//! without a response, from the transport error's source chain; kube's own retry layer is off
//! so that one table decides.
//!
//! Every call runs the retry table here, once for all callers (preflight, discovery, the
//! record, status, diff, uninstall, waits): a race (429, 5xx, a dropped connection, an answer
//! that never comes) is retried with the [`CallPolicy`]'s backoff until its deadline, a mistake
//! is returned at once. Each attempt waits at most `request_timeout` for an answer, and never
//! past the deadline, so a server that accepts connections and never answers fails in bounded
//! time with `no answer from <server> after 30s` (or, when the deadline cut the wait short,
//! `..., when the --timeout deadline (5m) came`). A failure that is finally returned names its
//! request (`GET /version`) in `ApiFailure::request` and has every known secret value
//! scrubbed from its message (the client's [`Redactor`]). The install engine's own apply loop,
//! which reports each retry as progress, uses [`ApiClient::without_retries`].

pub(crate) mod discovery;
pub mod object;
mod policy;
pub mod redact;
mod text;

pub use policy::CallPolicy;
pub(crate) use policy::REQUEST_TIMEOUT;

use crate::cluster::failure::{build_failure, status_failure, transport_failure};
use crate::cluster::redact::Redactor;
use crate::cluster::retry::{ApiFailure, Backoff, Context, Decision, Reason, TransportKind, classify};
use kube::core::Request;
use kube::core::params::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The field manager of every apply.
pub(crate) const FIELD_MANAGER: &str = "kfctl-rs";

/// Which cluster to talk to.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The kubeconfig file (`None`: `KUBECONFIG` or `~/.kube/config`).
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (`None`: its current context).
    pub context: Option<String>,
}

/// Where a kind's objects live on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// The API group (empty for the core group).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The resource's plural name.
    pub plural: String,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
}

impl ResourcePath {
    /// The collection URL (`/apis/apps/v1/namespaces/kf/deployments`).
    pub(crate) fn collection(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match (self.namespaced, namespace) {
            (true, Some(ns)) => format!("{base}/namespaces/{ns}/{}", self.plural),
            _ => format!("{base}/{}", self.plural),
        }
    }
}

/// The result of an apply.
#[derive(Debug, Clone)]
pub struct Applied {
    pub(crate) live: Value,
    /// The server answered 201: the object did not exist before.
    pub(crate) created: bool,
}

/// A connected client.
#[derive(Clone)]
pub struct ApiClient {
    client: kube::Client,
    pub(crate) server: String,
    pub(crate) policy: CallPolicy,
    redactor: Arc<Redactor>,
    /// The run's `--timeout`, when `ApiClient::within` set it (for messages).
    pub(crate) timeout: Option<Duration>,
    /// Every DELETE is a server-side dry run (`dryRun=All`): `uninstall --dry-run`.
    pub(crate) dry_run_deletes: bool,
}

/// A kubeconfig that could not be used: the user's input, so exit 2 whatever the cause.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The kubeconfig file is unreadable or over the input limit.
    #[error(transparent)]
    Input(Box<crate::input::InputError>),
    /// The kubeconfig could not be loaded.
    #[error("{origin}: cannot load kubeconfig: {message}; pass --kubeconfig FILE or set KUBECONFIG")]
    Load {
        /// Where it was looked for.
        origin: String,
        /// Why it could not be loaded.
        message: String,
    },
    /// The kubeconfig's server is not an `http://` or `https://` URL.
    #[error(
        "{origin}: the cluster's server {server:?} is not an http:// or https:// URL; fix the server address in the kubeconfig"
    )]
    Scheme {
        /// Where the kubeconfig came from.
        origin: String,
        /// The server address it names.
        server: String,
    },
}

impl ApiClient {
    /// Load the kubeconfig (`--kubeconfig`, else `KUBECONFIG`, else `~/.kube/config`) and connect.
    /// Only `http://` and `https://` servers are accepted (anything else is refused at once).
    pub async fn connect(target: &Target) -> Result<Self, ConnectError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let options = kube::config::KubeConfigOptions { context: target.context.clone(), ..Default::default() };
        let origin = target.kubeconfig.as_ref().map_or("kubeconfig".to_string(), |p| p.display().to_string());
        let fail = |e: &dyn std::fmt::Display| ConnectError::Load { origin: origin.clone(), message: e.to_string() };
        let mut config = match &target.kubeconfig {
            Some(path) => {
                // bounded like every file a user names (`--kubeconfig /dev/zero` fails at once)
                let text = crate::input::read_bounded(path, "kubeconfig", crate::input::MAX_INPUT_BYTES)
                    .map_err(|e| ConnectError::Input(Box::new(e)))?;
                let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).map_err(|e| fail(&e))?;
                kube::Config::from_custom_kubeconfig(kubeconfig, &options).await.map_err(|e| fail(&e))?
            }
            None => {
                crate::input::check_ambient_kubeconfigs().map_err(|e| ConnectError::Input(Box::new(e)))?;
                kube::Config::from_kubeconfig(&options).await.map_err(|e| fail(&e))?
            }
        };
        let server = config.cluster_url.to_string();
        if !matches!(config.cluster_url.scheme_str(), Some("http" | "https")) {
            return Err(ConnectError::Scheme { origin, server });
        }
        config.default_retry = false;
        config.connect_timeout = Some(Duration::from_secs(5));
        // A backstop only: each attempt's own timeout (shorter) is what fires, with its message.
        config.read_timeout = Some(REQUEST_TIMEOUT + Duration::from_secs(5));
        config.reset_reader_on_write = true;
        let client = kube::Client::try_from(config).map_err(|e| fail(&e))?;
        Ok(ApiClient {
            client,
            server,
            policy: CallPolicy::default(),
            redactor: Arc::default(),
            timeout: None,
            dry_run_deletes: false,
        })
    }

    /// The same client, its calls over within `timeout` from now: the run's one deadline
    /// (`--timeout`), named in the messages of calls it ends.
    pub(crate) fn within(self, timeout: Duration) -> Self {
        self.within_since(Instant::now(), timeout)
    }

    /// [`ApiClient::within`] for a run that started at `started` (its deadline is
    /// `started + timeout`, the work done before connecting counted).
    pub(crate) fn within_since(mut self, started: Instant, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self.policy = self.policy.until(started + timeout);
        self
    }

    /// The same client, its DELETEs server-side dry runs: the server checks each (admission,
    /// preconditions) and removes nothing.
    pub(crate) fn with_dry_run_deletes(mut self) -> Self {
        self.dry_run_deletes = true;
        self
    }

    /// The same client, retrying with this backoff (the install's, as for its applies).
    pub(crate) fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.policy.backoff = backoff;
        self
    }

    /// The same client; no call goes past `deadline` (nor past an earlier one already set).
    pub(crate) fn with_deadline(mut self, deadline: Instant) -> Self {
        self.policy.deadline = Some(self.policy.deadline.map_or(deadline, |d| d.min(deadline)));
        self
    }

    /// The same client, allowed at least `grace` from now even past its deadline: for the
    /// record of a run that timed out, which must still be written (its own bound, not none).
    pub(crate) fn with_grace(&self, grace: Duration) -> Self {
        let mut late = self.clone();
        let floor = Instant::now() + grace;
        late.policy.deadline = late.policy.deadline.map(|d| d.max(floor));
        late
    }

    /// The same client, its calls over within `bound` from now (the preflight's fixed bound).
    pub(crate) fn bounded(&self, bound: Duration) -> Self {
        self.clone().with_deadline(Instant::now() + bound)
    }

    /// The same client, its calls retrying for at most `budget` each.
    pub(crate) fn with_budget(&self, budget: Duration) -> Self {
        let mut short = self.clone();
        short.policy.call_budget = budget;
        short
    }

    /// The same client without the retry table: one attempt per call (still bounded in time).
    pub fn without_retries(&self) -> Self {
        let mut raw = self.clone();
        raw.policy.retries = false;
        raw
    }

    /// The same client, scrubbing these secret values from every failure message.
    pub(crate) fn with_redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = Arc::new(redactor);
        self
    }

    /// Send a request under the retry table; a 4xx/5xx or a transport error that does not
    /// settle (or settles too late) becomes an [`ApiFailure`] naming the request.
    pub async fn call(&self, request: http::Request<Vec<u8>>) -> Result<(u16, Value), ApiFailure> {
        let end = self.policy.end_of_retries();
        let mut attempt = 0;
        loop {
            let mut failure = match self.attempt(duplicate(&request)).await {
                Ok(answer) => return Ok(answer),
                Err(failure) => failure,
            };
            let (_, decision) = classify(&failure, Context::default());
            let retried = self.policy.retries && matches!(decision, Decision::Retry | Decision::RetryAfter);
            let delay = self.policy.backoff.delay_for(decision, &failure, attempt);
            if !retried || Instant::now() + delay >= end {
                let deadline_ends_it = self.policy.deadline.is_some_and(|d| Instant::now() + delay >= d);
                failure.out_of_time |= retried && deadline_ends_it;
                failure.message = self.redactor.scrub(&failure.message);
                failure.request = format!("{} {}", request.method(), request.uri().path());
                return Err(failure);
            }
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    /// One attempt, waiting for an answer at most `request_timeout` and never past the deadline.
    async fn attempt(&self, request: http::Request<Vec<u8>>) -> Result<(u16, Value), ApiFailure> {
        let wait = self.policy.attempt_wait();
        match tokio::time::timeout(wait, self.send(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(self.timed_out(wait)),
        }
    }

    /// An attempt that got no answer within `wait`.
    pub(crate) fn timed_out(&self, wait: Duration) -> ApiFailure {
        ApiFailure {
            reason: Reason::Transport(TransportKind::TimedOut),
            message: self.no_answer(wait),
            out_of_time: wait < self.policy.request_timeout,
            ..Default::default()
        }
    }

    /// The message of an attempt that got no answer within `wait`: the request timeout, or
    /// what was left of the run's deadline.
    fn no_answer(&self, wait: Duration) -> String {
        if wait < self.policy.request_timeout {
            let of = self.timeout.map_or(String::new(), |t| format!(" ({})", seconds(t)));
            format!(
                "no answer from {} after {:.1}s, when the --timeout deadline{of} came",
                self.server,
                wait.as_secs_f64()
            )
        } else {
            format!("no answer from {} after {}s", self.server, wait.as_secs_f64().round())
        }
    }

    /// Send one request; a 4xx/5xx or a transport error becomes an [`ApiFailure`].
    async fn send(&self, request: http::Request<Vec<u8>>) -> Result<(u16, Value), ApiFailure> {
        let response = self.client.send(request.map(kube::client::Body::from)).await.map_err(transport_failure)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let bytes = read_body(response.into_body(), status).await?;
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if status >= 400 {
            let text = String::from_utf8_lossy(&bytes);
            return Err(status_failure(status, &body, &text, retry_after));
        }
        Ok((status, body))
    }

    /// GET a path outside resources (`/version`, discovery documents).
    pub async fn get_path(&self, path: &str) -> Result<Value, ApiFailure> {
        let request = http::Request::get(path).body(Vec::new()).map_err(|e| build_failure(&e))?;
        Ok(self.call(request).await?.1)
    }

    /// Server-side apply.
    pub async fn apply(
        &self,
        path: &ResourcePath,
        namespace: Option<&str>,
        name: &str,
        body: &Value,
        force: bool,
        dry_run: bool,
    ) -> Result<Applied, ApiFailure> {
        let mut params = PatchParams::apply(FIELD_MANAGER);
        params.force = force;
        params.dry_run = dry_run;
        let request = Request::new(path.collection(namespace))
            .patch(name, &params, &Patch::Apply(body))
            .map_err(|e| build_failure(&e))?;
        let (status, live) = self.call(request).await?;
        Ok(Applied { live, created: status == 201 })
    }

    /// A JSON patch (RFC 6902) of an object, e.g. `replace /metadata/managedFields`.
    pub(crate) async fn patch_json(
        &self,
        path: &ResourcePath,
        namespace: Option<&str>,
        name: &str,
        ops: &Value,
    ) -> Result<Value, ApiFailure> {
        let url = format!("{}/{name}", path.collection(namespace));
        let request = http::Request::patch(url)
            .header(http::header::CONTENT_TYPE, "application/json-patch+json")
            .body(serde_json::to_vec(ops).unwrap_or_default())
            .map_err(|e| build_failure(&e))?;
        Ok(self.call(request).await?.1)
    }

    /// GET an object; `None` when it does not exist.
    pub async fn get(
        &self,
        path: &ResourcePath,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ApiFailure> {
        let request =
            Request::new(path.collection(namespace)).get(name, &GetParams::default()).map_err(|e| build_failure(&e))?;
        match self.call(request).await {
            Ok((_, live)) => Ok(Some(live)),
            Err(f) if f.status == Some(404) && f.reason == Reason::NotFound => Ok(None),
            Err(f) => Err(f),
        }
    }

    /// LIST a collection with an optional label selector.
    pub(crate) async fn list(
        &self,
        path: &ResourcePath,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Value, ApiFailure> {
        let mut params = ListParams::default();
        if let Some(selector) = labels {
            params = params.labels(selector);
        }
        let request = Request::new(path.collection(namespace)).list(&params).map_err(|e| build_failure(&e))?;
        Ok(self.call(request).await?.1)
    }

    /// POST a new object (used for SelfSubjectAccessReviews).
    pub(crate) async fn create(&self, path: &ResourcePath, body: &Value) -> Result<Value, ApiFailure> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let request =
            Request::new(path.collection(None)).create(&PostParams::default(), bytes).map_err(|e| build_failure(&e))?;
        Ok(self.call(request).await?.1)
    }

    /// DELETE an object in the background; `false` when it was already gone.
    pub async fn delete(&self, path: &ResourcePath, namespace: Option<&str>, name: &str) -> Result<bool, ApiFailure> {
        self.delete_with(path, namespace, name, None, false).await
    }

    /// DELETE an object in the background, only if its UID is `uid` (a precondition: 409
    /// otherwise); `false` when it was already gone.
    pub(crate) async fn delete_uid(
        &self,
        path: &ResourcePath,
        namespace: Option<&str>,
        name: &str,
        uid: Option<&str>,
    ) -> Result<bool, ApiFailure> {
        self.delete_with(path, namespace, name, uid, false).await
    }

    /// DELETE an object, in the background or orphaning its dependents (`propagationPolicy:
    /// Orphan`: a StatefulSet's pods and PVCs stay), only if its UID is `uid` when one is given;
    /// `false` when it was already gone.
    pub(crate) async fn delete_with(
        &self,
        path: &ResourcePath,
        namespace: Option<&str>,
        name: &str,
        uid: Option<&str>,
        orphan: bool,
    ) -> Result<bool, ApiFailure> {
        let mut params = if orphan { DeleteParams::orphan() } else { DeleteParams::background() };
        params.preconditions = uid.map(|uid| Preconditions { uid: Some(uid.into()), resource_version: None });
        params.dry_run = self.dry_run_deletes;
        let request = Request::new(path.collection(namespace)).delete(name, &params).map_err(|e| build_failure(&e))?;
        match self.call(request).await {
            Ok(_) => Ok(true),
            Err(f) if f.status == Some(404) => Ok(false),
            Err(f) => Err(f),
        }
    }
}

/// `3s`, `300s`, `1.5s`: a duration for a message.
pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0}s") } else { format!("{s:.1}s") }
}

/// A copy of a request for another attempt (`http::Request` is not `Clone`).
fn duplicate(request: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut copy = http::Request::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    copy
}

/// A response body, at most [`crate::input::MAX_API_BODY_BYTES`]: a larger one is a failure
/// (not retried) rather than memory without end.
async fn read_body(body: kube::client::Body, status: u16) -> Result<Vec<u8>, ApiFailure> {
    use http_body_util::BodyExt;
    let limit = crate::input::MAX_API_BODY_BYTES;
    match http_body_util::Limited::new(body, limit as usize).collect().await {
        Ok(collected) => Ok(Vec::from(collected.to_bytes())),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiFailure {
            status: Some(status),
            reason: Reason::Other("ResponseTooLarge".into()),
            message: format!(
                "the response body is larger than the {} MiB limit of an API answer; check that the kubeconfig names a Kubernetes API server",
                limit / (1024 * 1024)
            ),
            ..Default::default()
        }),
        Err(e) => match e.downcast::<kube::Error>() {
            Ok(e) => Err(transport_failure(*e)),
            Err(e) => Err(ApiFailure { message: e.to_string(), ..Default::default() }),
        },
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
