//! Serving writes: create (POST), replace (PUT), and the four PATCH flavors.
//!
//! Every write is admitted like upstream admits it: the namespace must exist and not be
//! terminating, the body's name and namespace must agree with the URL, a stale
//! `metadata.resourceVersion` is an optimistic-lock conflict. Writes to the main resource of a
//! kind with a status subresource keep the live status; writes to `/status` change only the
//! status. `dryRun=All` runs everything and stores nothing. Field ownership is recorded through
//! `apply.rs` (server-side apply) or as an Update by the request's field manager.
//!
//! An update of an existing object (any of them, server-side apply and dry runs included) is
//! refused with upstream's 422 when it changes an immutable field (`immutable.rs`).
//!
//! Simplification: a strategic merge patch is applied as a JSON merge patch (lists replaced,
//! no `$patch` directives), which is what it does for every field without a patch strategy.

use std::time::Instant;

use serde_json::{Value, json};

use super::apply::{Writer, apply, conflict_error, record_update};
use super::discovery::ResourceType;
use super::errors::ApiError;
use super::handlers::{ApiRequest, Reply, present};
use super::immutable;
use super::state::{State, timestamp_now};
use super::store::{NamespaceState, ObjectKey};

const APPLY: &str = "application/apply-patch+yaml";
const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";

/// Parse a JSON (or, for apply, YAML) body. Protobuf bodies (typed clients of client-go, e.g.
/// `kubectl create namespace`) cannot be decoded without schemas and are refused with 415.
fn parse_body(req: &ApiRequest) -> Result<Value, ApiError> {
    if req.content_type.contains("protobuf") {
        return Err(ApiError::unsupported_media_type(&req.content_type));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v) => Ok(v),
        Err(_) if req.content_type.starts_with(APPLY) => {
            let text = String::from_utf8_lossy(&req.body);
            serde_saphyr::from_str::<Value>(&text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
        }
        Err(e) => Err(ApiError::bad_request(format!("the body of the request could not be decoded as JSON: {e}"))),
    }
}

/// Namespace admission for writes that may create content.
fn admit_namespace(state: &State, rt: &ResourceType, key: &ObjectKey) -> Result<(), ApiError> {
    let Some(ns) = key.namespace.as_deref() else { return Ok(()) };
    match state.store.namespace_state(ns) {
        NamespaceState::Active => Ok(()),
        NamespaceState::Missing => Err(ApiError::not_found("", "namespaces", ns)),
        NamespaceState::Terminating => Err(ApiError::namespace_terminating(ns, &rt.group, &rt.resource, &key.name)),
    }
}

/// The body must name the object the URL names.
fn check_identity(rt: &ResourceType, key: &ObjectKey, body: &Value) -> Result<(), ApiError> {
    if let Some(name) = body["metadata"]["name"].as_str()
        && name != key.name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            key.name
        )));
    }
    if let (Some(ns), Some(want)) = (body["metadata"]["namespace"].as_str(), key.namespace.as_deref())
        && ns != want
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if let Some(kind) = body["kind"].as_str()
        && kind != rt.kind
    {
        return Err(ApiError::bad_request(format!("{kind} in body does not match {} addressed by the URL", rt.kind)));
    }
    Ok(())
}

fn check_precondition(rt: &ResourceType, key: &ObjectKey, body: &Value, live: Option<&Value>) -> Result<(), ApiError> {
    let (Some(wanted), Some(live)) = (body["metadata"]["resourceVersion"].as_str(), live) else { return Ok(()) };
    if live["metadata"]["resourceVersion"].as_str() != Some(wanted) {
        return Err(ApiError::conflict_modified(&rt.group, &rt.resource, &key.name));
    }
    Ok(())
}

/// Server defaulting the test API server performs (a small subset of upstream's).
fn default_fields(rt: &ResourceType, object: &mut Value) {
    if rt.kind == "Namespace" && rt.group.is_empty() {
        let name = object["metadata"]["name"].clone();
        object["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
        if object["spec"]["finalizers"].is_null() {
            object["spec"]["finalizers"] = json!(["kubernetes"]);
        }
        if object["status"]["phase"].is_null() {
            object["status"]["phase"] = json!("Active");
        }
    }
}

/// Keep the live status on main-resource writes; keep everything but status on `/status` writes.
fn scope_to_subresource(rt: &ResourceType, req: &ApiRequest, live: Option<&Value>, mut candidate: Value) -> Value {
    if !rt.status_subresource {
        return candidate;
    }
    let map = candidate.as_object_mut().expect("objects are maps");
    if req.path.subresource.as_deref() == Some("status") {
        let mut out = live.cloned().unwrap_or_default();
        out["status"] = map.remove("status").unwrap_or(Value::Null);
        if out["status"].is_null() {
            out.as_object_mut().map(|m| m.remove("status"));
        }
        return out;
    }
    match live.and_then(|l| l.get("status")) {
        Some(status) => {
            map.insert("status".into(), status.clone());
        }
        None => {
            map.remove("status");
        }
    }
    candidate
}

/// Store a candidate (after admission), recording an Update by the request's manager.
fn commit(
    state: &mut State,
    rt: &ResourceType,
    req: &ApiRequest,
    key: &ObjectKey,
    mut candidate: Value,
    now: Instant,
    record: bool,
) -> Reply {
    let ts = timestamp_now();
    default_fields(rt, &mut candidate);
    let live = state.store.get(key).map(|e| e.object.clone());
    if let Some(old) = live.as_ref().filter(|_| req.path.subresource.is_none()) {
        immutable::check(rt, &key.name, old, &candidate)?;
    }
    if record {
        let manager = req.manager();
        let api_version = rt.api_version();
        let writer = Writer {
            manager: &manager,
            subresource: req.path.subresource.as_deref(),
            api_version: &api_version,
            now: &ts,
        };
        record_update(live.as_ref(), &mut candidate, &writer);
    }
    let written = state.store.write(key, candidate, now, &ts, req.query.dry_run());
    Ok((if written.created { 201 } else { 200 }, present(rt, &written.object)))
}

/// POST to a collection.
pub(crate) fn create(state: &mut State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    let mut body = parse_body(req)?;
    if !body["metadata"].is_object() {
        body["metadata"] = json!({});
    }
    if body["metadata"]["name"].as_str().is_none_or(str::is_empty) {
        let prefix = body["metadata"]["generateName"].as_str().ok_or_else(|| {
            ApiError::invalid(
                &rt.group,
                &rt.resource,
                "",
                "metadata.name: Required value: name or generateName is required",
            )
        })?;
        let mut seed = [0u8; 3];
        let _ = getrandom::fill(&mut seed);
        body["metadata"]["name"] = json!(format!("{prefix}{}", hex::encode(seed).chars().take(5).collect::<String>()));
    }
    let mut path = req.path.clone();
    path.name = body["metadata"]["name"].as_str().map(String::from);
    let req = ApiRequest { path, ..req.clone() };
    let key = req.key();
    check_identity(rt, &key, &body)?;
    admit_namespace(state, rt, &key)?;
    if state.store.get(&key).is_some() {
        return Err(ApiError::already_exists(&rt.group, &rt.resource, &key.name));
    }
    if rt.status_subresource {
        body.as_object_mut().map(|m| m.remove("status"));
    }
    commit(state, rt, &req, &key, body, now, true)
}

/// PUT to an object or its status.
pub(crate) fn replace(state: &mut State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    let body = parse_body(req)?;
    let key = req.key();
    check_identity(rt, &key, &body)?;
    let live = state
        .store
        .get(&key)
        .map(|e| e.object.clone())
        .ok_or_else(|| ApiError::not_found(&rt.group, &rt.resource, &key.name))?;
    check_precondition(rt, &key, &body, Some(&live))?;
    let candidate = scope_to_subresource(rt, req, Some(&live), body);
    commit(state, rt, req, &key, candidate, now, true)
}

/// PATCH in any of the four content types.
pub(crate) fn patch(state: &mut State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    let content_type = req.content_type.split(';').next().unwrap_or("").trim().to_string();
    if content_type == APPLY {
        return server_side_apply(state, rt, req, now);
    }
    let key = req.key();
    let live = state
        .store
        .get(&key)
        .map(|e| e.object.clone())
        .ok_or_else(|| ApiError::not_found(&rt.group, &rt.resource, &key.name))?;
    let patch = parse_body(req)?;
    let mut patched = live.clone();
    match content_type.as_str() {
        MERGE | STRATEGIC => json_patch::merge(&mut patched, &patch),
        JSON_PATCH => {
            let ops: json_patch::Patch =
                serde_json::from_value(patch).map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(&mut patched, &ops)
                .map_err(|e| ApiError::invalid(&rt.group, &rt.resource, &key.name, e.to_string()))?;
        }
        other => return Err(ApiError::unsupported_media_type(other)),
    }
    check_identity(rt, &key, &patched)?;
    check_precondition(rt, &key, &patched, Some(&live))?;
    let candidate = scope_to_subresource(rt, req, Some(&live), patched);
    commit(state, rt, req, &key, candidate, now, true)
}

fn server_side_apply(state: &mut State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    let manager = req.query.get("fieldManager").filter(|m| !m.is_empty()).ok_or_else(|| {
        ApiError::bad_request("PATCH, application/apply-patch+yaml: fieldManager is required for apply requests")
    })?;
    let mut config = parse_body(req)?;
    if !config.is_object() {
        return Err(ApiError::bad_request("apply configuration must be an object"));
    }
    let key = req.key();
    check_identity(rt, &key, &config)?;
    if config["apiVersion"].as_str().is_none() || config["kind"].as_str().is_none() {
        return Err(ApiError::bad_request("invalid object type: apiVersion and kind must be set for apply"));
    }
    let live = state.store.get(&key).map(|e| e.object.clone());
    if live.is_none() {
        admit_namespace(state, rt, &key)?;
    }
    check_precondition(rt, &key, &config, live.as_ref())?;
    let status_write = req.path.subresource.as_deref() == Some("status");
    if rt.status_subresource {
        let map = config.as_object_mut().expect("checked above");
        if status_write {
            map.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"));
            if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.retain(|k, _| k == "name" || k == "namespace");
            }
        } else {
            map.remove("status");
        }
    }
    let ts = timestamp_now();
    let api_version = rt.api_version();
    let writer = Writer { manager, subresource: req.path.subresource.as_deref(), api_version: &api_version, now: &ts };
    let merged = apply(live.as_ref(), &config, &writer, req.query.flag("force"))
        .map_err(|conflicts| conflict_error(&conflicts, &rt.group, &rt.resource, &key.name))?;
    commit(state, rt, req, &key, merged, now, false)
}
