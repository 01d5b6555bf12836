//! `GET /api/v1/namespaces/{ns}/pods/{name}/log`: a stand-in for the kubelet's container log.
//!
//! The test double runs no containers, so every pod's log is a fixed text of [`LOG_LINES`]
//! numbered lines (`<pod>/<container> line N: <text>`), where `<text>` is the pod's
//! [`LOG_ANNOTATION`] annotation when it has one (so a test can make a log echo a value) and
//! `ok` otherwise. `tailLines` and `limitBytes` are honoured as upstream does (the last lines,
//! then at most that many bytes from their start); `container` picks the container (the first
//! one by default). A missing pod is upstream's 404.

use super::errors::ApiError;
use super::http::{Body, error_response};
use super::route::{Query, ResourcePath};
use super::state::State;
use super::store::ObjectKey;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;

/// Lines in every container's log.
pub const LOG_LINES: usize = 1000;

/// The pod annotation whose value every log line carries.
pub const LOG_ANNOTATION: &str = "testapi.kfctl-rs.dev/log-text";

/// Whether `path` is a pod's log.
pub(crate) fn is_log(path: &ResourcePath) -> bool {
    path.group.is_empty() && path.resource == "pods" && path.subresource.as_deref() == Some("log")
}

/// The log of the pod `path` names, bounded as the query asks.
pub(crate) fn log_response(state: &State, path: &ResourcePath, query: &Query) -> Response<Body> {
    let name = path.name.as_deref().unwrap_or("");
    let key = ObjectKey::new("", "pods", path.namespace.as_deref(), name);
    let Some(entry) = state.store.get(&key) else {
        return error_response(&ApiError::not_found("", "pods", name));
    };
    let pod = &entry.object;
    let first = pod.pointer("/spec/containers/0/name").and_then(|v| v.as_str()).unwrap_or("main");
    let container = query.get("container").unwrap_or(first);
    let text = pod.pointer("/metadata/annotations").and_then(|a| a.get(LOG_ANNOTATION)).and_then(|v| v.as_str());
    let lines: Vec<String> =
        (1..=LOG_LINES).map(|i| format!("{name}/{container} line {i}: {}\n", text.unwrap_or("ok"))).collect();
    let tail = query.get("tailLines").and_then(|n| n.parse::<usize>().ok()).unwrap_or(LOG_LINES).min(LOG_LINES);
    let mut body = lines[LOG_LINES - tail..].concat().into_bytes();
    if let Some(limit) = query.get("limitBytes").and_then(|n| n.parse::<usize>().ok()) {
        body.truncate(limit);
    }
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    response.headers_mut().insert("content-type", "text/plain".parse().expect("static content type"));
    response
}
