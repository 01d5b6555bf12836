//! Watches: `GET ...?watch=1` streams `{"type": ..., "object": ...}` lines.
//!
//! Without a `resourceVersion` (or with `0`) the stream starts with a synthetic ADDED event per
//! selected object, as upstream does; with one, it replays the store's history after that
//! revision, or sends an ERROR event carrying a 410 `Expired` Status when the history no longer
//! reaches back that far (clients such as kube's watcher then re-list). The stream ends after
//! `timeoutSeconds` (default 30 minutes) or when the client goes away. With
//! `sendInitialEvents=true` (streaming lists, kube's `watcher::Config::streaming_lists`) the
//! initial events are always sent, followed by the BOOKMARK annotated
//! `k8s.io/initial-events-end` that tells the client the initial state is complete. Events of objects that
//! stop matching a label selector are not turned into DELETED events (a simplification).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::channel::Channel;
use hyper::Response;
use serde_json::{Value, json};

use super::discovery::ResourceType;
use super::handlers::{ApiRequest, present, selected};
use super::http::{Body, Shared, error_response};
use super::selectors::{FieldSelector, LabelSelector};
use super::store::Event;

fn line(kind: &str, object: &Value) -> Bytes {
    let mut text = json!({"type": kind, "object": object}).to_string();
    text.push('\n');
    Bytes::from(text)
}

fn expired(revision: u64, current: u64) -> Bytes {
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("too old resource version: {revision} ({current})"), "reason": "Expired", "code": 410});
    line("ERROR", &status)
}

/// The bookmark that ends the initial events of a streaming list.
fn initial_events_end(rt: &ResourceType, revision: u64) -> Bytes {
    let object = json!({"kind": rt.kind, "apiVersion": rt.api_version(),
        "metadata": {"resourceVersion": revision.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}});
    line("BOOKMARK", &object)
}

/// Whether a history event belongs to this watch.
fn relevant(
    event: &Event,
    rt: &ResourceType,
    req: &ApiRequest,
    labels: &LabelSelector,
    fields: &FieldSelector,
) -> bool {
    event.key.group == rt.group
        && event.key.resource == rt.resource
        && (req.path.namespace.is_none() || event.key.namespace == req.path.namespace)
        && labels.matches(&event.object)
        && fields.matches(&event.object)
}

/// Start a watch: the response streams while a task feeds it.
pub(crate) fn watch_response(shared: Arc<Shared>, rt: ResourceType, req: ApiRequest) -> Response<Body> {
    let labels = LabelSelector::parse(req.query.get("labelSelector").unwrap_or(""));
    let fields = FieldSelector::parse(req.query.get("fieldSelector").unwrap_or(""));
    let (Ok(labels), Ok(fields)) = (labels, fields) else {
        return error_response(&super::errors::ApiError::bad_request("invalid selector"));
    };
    let streaming = req.query.flag("sendInitialEvents");
    let start =
        req.query.get("resourceVersion").filter(|v| !v.is_empty() && *v != "0" && !streaming).map(|v| v.parse::<u64>());
    let timeout = req.query.get("timeoutSeconds").and_then(|t| t.parse::<u64>().ok()).unwrap_or(1800);
    let (mut sender, channel) = Channel::<Bytes, std::convert::Infallible>::new(64);
    let mut initial = Vec::new();
    let mut cursor = {
        let state = shared.lock();
        match start {
            Some(Ok(revision)) => revision,
            Some(Err(_)) => return error_response(&super::errors::ApiError::bad_request("invalid resourceVersion")),
            None => {
                if let Ok(items) = selected(&state, &rt, &req) {
                    initial = items.iter().map(|(_, e)| line("ADDED", &present(&rt, &e.object))).collect();
                }
                if streaming {
                    initial.push(initial_events_end(&rt, state.store.revision()));
                }
                state.store.revision()
            }
        }
    };
    let mut changes = shared.changes.subscribe();
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);
        for bytes in initial {
            if sender.send_data(bytes).await.is_err() {
                return;
            }
        }
        loop {
            let (batch, expired_history) = {
                let state = shared.lock();
                match state.store.events_after(cursor) {
                    None => (vec![expired(cursor, state.store.revision())], true),
                    Some(events) => {
                        cursor = state.store.revision();
                        let lines = events.iter().filter(|e| relevant(e, &rt, &req, &labels, &fields));
                        (lines.map(|e| line(e.kind.wire(), &present(&rt, &e.object))).collect(), false)
                    }
                }
            };
            for bytes in batch {
                if sender.send_data(bytes).await.is_err() {
                    return;
                }
            }
            if expired_history {
                return;
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    });
    let mut response = Response::new(channel.boxed());
    response.headers_mut().insert("content-type", "application/json".parse().expect("static content type"));
    response
}
