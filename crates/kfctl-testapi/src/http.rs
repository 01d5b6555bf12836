//! The HTTP/1.1 front: accept loop, request parsing, fault injection, routing, request log.
//!
//! Plain HTTP on a loopback port (kube and kubectl both accept `http://` servers in a
//! kubeconfig). Each request is handled as: read the whole body → run the reconciler → record
//! it in the request log → consult the fault table (delays stack; an answer or a dropped
//! connection or a black hole replaces serving; holds wait for other answers) → serve → store the
//! answered status code in the log and count it for the hold rules. A
//! background task runs the reconciler on a tick so time-based rules fire without traffic, and
//! a `watch` channel tells open watches that the store changed.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};

use super::discovery::{AGGREGATED_CONTENT_TYPE, wants_aggregated};
use super::errors::ApiError;
use super::faults::{FaultAction, RequestInfo, evaluate, observe_answer};
use super::handlers::{ApiRequest, handle};
use super::openapi;
use super::reconcile::reconcile;
use super::route::{Query, Route, route};
use super::state::{RecordedRequest, State};

/// Response body type.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// State shared by the server task and the [`super::TestApiServer`] handle.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Everything, behind one lock (never held across an await).
    pub state: Mutex<State>,
    /// Store revision after the last change; watches wait on it.
    pub changes: watch::Sender<u64>,
}

impl Shared {
    /// Lock the state (a poisoned lock still yields the data: a panicking test must not wedge others).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reconcile and wake watches if anything changed.
    pub(crate) fn reconcile_now(&self) {
        let revision = {
            let mut state = self.lock();
            reconcile(&mut state, Instant::now());
            state.store.revision()
        };
        self.changes.send_if_modified(|r| std::mem::replace(r, revision) != revision);
    }
}

/// The error that makes hyper close the connection without answering.
#[derive(Debug)]
struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by an injected fault")
    }
}

impl std::error::Error for DropConnection {}

/// A JSON response.
pub(crate) fn json_response(code: u16, body: &Value, content_type: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = hyper::StatusCode::from_u16(code).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert("content-type", content_type.parse().expect("static content type"));
    response
}

/// An error response with its Status body (and `Retry-After` when set).
pub(crate) fn error_response(error: &ApiError) -> Response<Body> {
    let mut response = json_response(error.code, &error.to_status(), "application/json");
    if let Some(seconds) = error.retry_after {
        response.headers_mut().insert("retry-after", seconds.into());
    }
    response
}

/// Run the accept loop and the reconcile ticker until `shutdown` fires.
pub(crate) async fn serve(listener: tokio::net::TcpListener, shared: Arc<Shared>, mut shutdown: oneshot::Receiver<()>) {
    let ticker_shared = shared.clone();
    let interval = shared.lock().config.reconcile_interval;
    let ticker = tokio::spawn(async move {
        loop {
            tokio::time::sleep(interval).await;
            ticker_shared.reconcile_now();
        }
    });
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| serve_request(req, shared.clone()));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        }
    }
    ticker.abort();
}

fn header(req: &Request<Incoming>, name: &str) -> String {
    req.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}

/// Describe a request for the fault matcher (resolving the kind through the served catalog).
fn request_info(state: &State, method: &str, path_and_query: &str, route: &Route) -> RequestInfo {
    let mut info = RequestInfo { method: method.into(), path: path_and_query.into(), ..RequestInfo::default() };
    if let Route::Resource(p) = route {
        info.group = p.group.clone();
        info.resource = Some(p.resource.clone());
        info.namespace = p.namespace.clone();
        info.name = p.name.clone();
        info.kind =
            state.catalog(Instant::now(), false).find(&p.group, &p.version, &p.resource).map(|t| t.kind.clone());
    }
    info
}

async fn serve_request(req: Request<Incoming>, shared: Arc<Shared>) -> Result<Response<Body>, DropConnection> {
    let arrived = Instant::now();
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let path_and_query = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_else(|| path.clone());
    let query = Query::parse(req.uri().query());
    let (content_type, accept, user_agent) =
        (header(&req, "content-type"), header(&req, "accept"), header(&req, "user-agent"));
    let body = req.into_body().collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    let route = route(&path);
    shared.reconcile_now();
    let (index, outcome, latency) = {
        let mut state = shared.lock();
        let content_type = (!content_type.is_empty()).then(|| content_type.clone());
        state.requests.push(RecordedRequest {
            method: method.clone(),
            path: path_and_query.clone(),
            content_type,
            body: body.clone(),
            status: 0,
            elapsed: Default::default(),
            hold_expired: false,
        });
        let info = request_info(&state, &method, &path_and_query, &route);
        let outcome = evaluate(&mut state.config.faults, &info);
        (state.requests.len() - 1, (outcome, info), state.config.latency)
    };
    let (outcome, info) = outcome;
    let delay = latency + outcome.delay;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if super::hold::wait(&outcome.holds).await {
        shared.lock().requests[index].hold_expired = true;
    }
    let response = match &outcome.action {
        Some(FaultAction::DropConnection) => return Err(DropConnection),
        Some(FaultAction::NeverAnswer) => {
            std::future::pending::<()>().await;
            return Err(DropConnection);
        }
        Some(FaultAction::LoseResponse) => {
            let api = ApiRequest { method, path: Default::default(), query, content_type, accept, user_agent, body };
            let served = dispatch(&shared, route, api);
            answered(&shared, index, &info, served.status().as_u16(), arrived);
            let revision = shared.lock().store.revision();
            shared.changes.send_if_modified(|r| std::mem::replace(r, revision) != revision);
            return Err(DropConnection);
        }
        Some(action) => error_response(
            &action.error_for(&info).unwrap_or_else(|| ApiError::new(500, "InternalError", "injected fault")),
        ),
        None => {
            let api = ApiRequest { method, path: Default::default(), query, content_type, accept, user_agent, body };
            dispatch(&shared, route, api)
        }
    };
    answered(&shared, index, &info, response.status().as_u16(), arrived);
    let revision = shared.lock().store.revision();
    shared.changes.send_if_modified(|r| std::mem::replace(r, revision) != revision);
    Ok(response)
}

/// Log the status answered and tell the hold rules (the held requests waiting for it).
fn answered(shared: &Shared, index: usize, info: &RequestInfo, status: u16, arrived: Instant) {
    let mut state = shared.lock();
    state.requests[index].status = status;
    state.requests[index].elapsed = arrived.elapsed();
    observe_answer(&state.config.faults, info, status);
}

fn dispatch(shared: &Arc<Shared>, route: Route, mut api: ApiRequest) -> Response<Body> {
    let now = Instant::now();
    let aggregated = wants_aggregated(&api.accept);
    let state = shared.lock();
    let discovery = state.catalog(now, true);
    let found = |doc: Option<Value>| {
        doc.map(|d| json_response(200, &d, "application/json")).unwrap_or_else(|| error_response(&ApiError::no_route()))
    };
    match route {
        Route::Version => json_response(200, &version_doc(&state.config.git_version), "application/json"),
        Route::Health => json_response(200, &json!("ok"), "text/plain"),
        Route::CoreVersions if aggregated => json_response(200, &discovery.aggregated(true), AGGREGATED_CONTENT_TYPE),
        Route::CoreVersions => json_response(200, &discovery.api_versions(), "application/json"),
        Route::GroupList if aggregated => json_response(200, &discovery.aggregated(false), AGGREGATED_CONTENT_TYPE),
        Route::GroupList => json_response(200, &discovery.api_group_list(), "application/json"),
        Route::Group(group) => found(discovery.api_group(&group)),
        Route::ResourceList { group, version } => found(discovery.resource_list(&group, &version)),
        Route::OpenApiV2 => openapi::v2_response(),
        Route::OpenApiRoot => {
            json_response(200, &openapi::root(&discovery, &state.config.git_version), "application/json")
        }
        Route::OpenApiGroupVersion { group, version } => {
            found(openapi::group_version_doc(&discovery, &group, &version, &state.config.git_version))
        }
        Route::Unknown => error_response(&ApiError::no_route()),
        Route::Resource(path) => {
            let Some(rt) = state.catalog(now, false).find(&path.group, &path.version, &path.resource).cloned() else {
                return error_response(&ApiError::no_route());
            };
            if super::logs::is_log(&path) && api.method == "GET" {
                return super::logs::log_response(&state, &path, &api.query);
            }
            drop(state);
            api.path = path;
            if api.method == "GET" && api.query.flag("watch") {
                return super::watch::watch_response(shared.clone(), rt, api);
            }
            let mut state = shared.lock();
            match handle(&mut state, &rt, &api, now) {
                Ok((code, body)) => json_response(code, &body, "application/json"),
                Err(error) => error_response(&error),
            }
        }
    }
}

fn version_doc(git_version: &str) -> Value {
    let trimmed = git_version.trim_start_matches('v');
    let mut parts = trimmed.split('.');
    let major = parts.next().unwrap_or("1");
    let minor = parts.next().unwrap_or("0");
    json!({"major": major, "minor": minor, "gitVersion": git_version, "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean", "buildDate": "2025-05-15T08:00:00Z", "goVersion": "go1.24.2", "compiler": "gc",
        "platform": "linux/amd64", "emulationMajor": major, "emulationMinor": minor})
}
