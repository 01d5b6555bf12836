//! Serving resource requests: dispatch by method, reads, lists, deletes and reviews.
//! Writes (create, replace, apply, patch) live in `writes.rs`.
//!
//! Handlers are synchronous functions over [`State`]: the HTTP layer locks the state, calls
//! [`handle`], and sends the [`Reply`]. Watches are the exception (they stream), see `watch.rs`.

use std::time::Instant;

use serde_json::{Value, json};

use super::discovery::ResourceType;
use super::errors::{ApiError, object_details};
use super::route::{Query, ResourcePath};
use super::selectors::{FieldSelector, LabelSelector};
use super::state::{State, timestamp_now};
use super::store::ObjectKey;
use super::table;
use super::webhooks;
use super::writes;

/// A resource request, as the HTTP layer parsed it.
#[derive(Clone, Debug)]
pub(crate) struct ApiRequest {
    /// HTTP method.
    pub method: String,
    /// What the path addresses.
    pub path: ResourcePath,
    /// Query parameters.
    pub query: Query,
    /// `Content-Type`.
    pub content_type: String,
    /// `Accept`.
    pub accept: String,
    /// `User-Agent`.
    pub user_agent: String,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// A successful answer: status code and JSON body.
pub(crate) type Reply = Result<(u16, Value), ApiError>;

impl ApiRequest {
    /// The object key the request addresses (requires a name).
    pub(crate) fn key(&self) -> ObjectKey {
        let name = self.path.name.clone().unwrap_or_default();
        ObjectKey::new(&self.path.group, &self.path.resource, self.path.namespace.as_deref(), &name)
    }

    /// `?fieldManager=`, else the user agent's product name, as upstream derives it.
    pub(crate) fn manager(&self) -> String {
        if let Some(m) = self.query.get("fieldManager").filter(|m| !m.is_empty()) {
            return m.to_string();
        }
        let product = self.user_agent.split('/').next().unwrap_or("").trim();
        if product.is_empty() { "unknown".into() } else { product.chars().take(128).collect() }
    }
}

/// Present a stored object at the requested version.
pub(crate) fn present(rt: &ResourceType, object: &Value) -> Value {
    let mut out = object.clone();
    out["apiVersion"] = json!(rt.api_version());
    out["kind"] = json!(rt.kind);
    out
}

/// Validate scope and subresource against the resource type.
fn check_shape(rt: &ResourceType, req: &ApiRequest) -> Result<(), ApiError> {
    let p = &req.path;
    if !rt.namespaced && p.namespace.is_some() {
        return Err(ApiError::no_route());
    }
    // across all namespaces, only lists and watches are served
    if rt.namespaced && p.namespace.is_none() && (p.name.is_some() || req.method != "GET") {
        return Err(ApiError::no_route());
    }
    match p.subresource.as_deref() {
        None => Ok(()),
        Some("status") if rt.status_subresource => Ok(()),
        Some(_) => Err(ApiError::no_route()),
    }
}

/// Serve a non-watch resource request.
pub(crate) fn handle(state: &mut State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    check_shape(rt, req)?;
    let has_name = req.path.name.is_some();
    let verb = match (req.method.as_str(), has_name) {
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", false) => "create",
        ("PUT", true) => "update",
        ("PATCH", true) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return Err(ApiError::method_not_allowed(&req.method, &rt.group, &rt.resource)),
    };
    if !rt.supports(verb) {
        return Err(ApiError::method_not_allowed(verb, &rt.group, &rt.resource));
    }
    if rt.verbs.len() > 1 {
        admit_write(state, rt, req, verb)?;
    }
    match verb {
        "get" => get(state, rt, req, now),
        "list" => list(state, rt, req, now),
        "create" if rt.verbs.len() == 1 => review(state, rt, req),
        "create" => writes::create(state, rt, req, now),
        "update" => writes::replace(state, rt, req, now),
        "patch" => writes::patch(state, rt, req, now),
        "delete" => delete(state, rt, req, now),
        _ => delete_collection(state, rt, req),
    }
}

/// Pass writes through the (simulated) admission webhooks.
fn admit_write(state: &State, rt: &ResourceType, req: &ApiRequest, verb: &str) -> Result<(), ApiError> {
    if !state.config.simulate_webhooks {
        return Ok(());
    }
    let live = req.path.name.as_ref().and_then(|_| state.store.get(&req.key())).map(|e| &e.object);
    let body = || {
        serde_json::from_slice::<Value>(&req.body).ok().or_else(|| serde_saphyr::from_slice::<Value>(&req.body).ok())
    };
    let (operation, object) = match verb {
        "create" => ("CREATE", body()),
        "update" | "patch" if live.is_some() => ("UPDATE", live.cloned()),
        "patch" => ("CREATE", body()),
        "delete" => ("DELETE", live.cloned()),
        _ => return Ok(()),
    };
    let admission = webhooks::Admission {
        operation,
        subresource: req.path.subresource.as_deref(),
        namespace: req.path.namespace.as_deref(),
        object: object.as_ref(),
    };
    webhooks::admit(state, rt, &admission)
}

fn get(state: &State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    let key = req.key();
    let entry = state.store.get(&key).ok_or_else(|| ApiError::not_found(&rt.group, &rt.resource, &key.name))?;
    if table::wants_table(&req.accept) {
        return Ok((200, table::table(&[(&entry.object, entry.created)], now, state.store.revision())));
    }
    Ok((200, present(rt, &entry.object)))
}

/// The objects a list or watch selects: resource, namespace, label and field selectors.
pub(crate) fn selected<'a>(
    state: &'a State,
    rt: &ResourceType,
    req: &ApiRequest,
) -> Result<Vec<(&'a ObjectKey, &'a super::store::Entry)>, ApiError> {
    let labels = LabelSelector::parse(req.query.get("labelSelector").unwrap_or("")).map_err(ApiError::bad_request)?;
    let fields = FieldSelector::parse(req.query.get("fieldSelector").unwrap_or("")).map_err(ApiError::bad_request)?;
    let items = state.store.list(&rt.group, &rt.resource, req.path.namespace.as_deref());
    Ok(items.into_iter().filter(|(_, e)| labels.matches(&e.object) && fields.matches(&e.object)).collect())
}

fn list(state: &State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    let items = selected(state, rt, req)?;
    let revision = state.store.revision();
    if table::wants_table(&req.accept) {
        let rows: Vec<(&Value, Instant)> = items.iter().map(|(_, e)| (&e.object, e.created)).collect();
        return Ok((200, table::table(&rows, now, revision)));
    }
    let items: Vec<Value> = items.iter().map(|(_, e)| present(rt, &e.object)).collect();
    Ok((
        200,
        json!({"kind": format!("{}List", rt.kind), "apiVersion": rt.api_version(),
        "metadata": {"resourceVersion": revision.to_string()}, "items": items}),
    ))
}

/// `DeleteOptions` from the body or the query.
fn delete_options(req: &ApiRequest) -> (String, bool) {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let policy =
        body["propagationPolicy"].as_str().or(req.query.get("propagationPolicy")).unwrap_or("Background").to_string();
    let dry_run = req.query.dry_run() || body["dryRun"].as_array().is_some_and(|d| d.iter().any(|v| v == "All"));
    (policy, dry_run)
}

fn success_status(rt: &ResourceType, name: &str, uid: &Value) -> Value {
    let mut details = object_details(&rt.group, &rt.resource, name);
    details["uid"] = uid.clone();
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

/// Objects whose ownerReferences name `uid`.
fn dependents(state: &State, uid: &str) -> Vec<ObjectKey> {
    state
        .store
        .iter()
        .filter(|(_, e)| {
            e.object["metadata"]["ownerReferences"].as_array().is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid))
        })
        .map(|(k, _)| k.clone())
        .collect()
}

fn delete(state: &mut State, rt: &ResourceType, req: &ApiRequest, now: Instant) -> Reply {
    let key = req.key();
    let (policy, dry_run) = delete_options(req);
    let live =
        state.store.get(&key).ok_or_else(|| ApiError::not_found(&rt.group, &rt.resource, &key.name))?.object.clone();
    let ts = timestamp_now();
    let uid = live["metadata"]["uid"].as_str().unwrap_or("").to_string();
    if !dry_run {
        for dependent in dependents(state, &uid) {
            match policy.as_str() {
                "Foreground" => {
                    state.store.delete(&dependent, &ts, false);
                }
                "Orphan" => {
                    let Some(mut object) = state.store.get(&dependent).map(|e| e.object.clone()) else { continue };
                    if let Some(refs) = object["metadata"]["ownerReferences"].as_array_mut() {
                        refs.retain(|r| r["uid"] != uid.as_str());
                    }
                    state.controller_write(&dependent, object, "garbage-collector", None, now);
                }
                _ => {}
            }
        }
    }
    let written = state
        .store
        .delete(&key, &ts, dry_run)
        .ok_or_else(|| ApiError::not_found(&rt.group, &rt.resource, &key.name))?;
    if written.removed {
        Ok((200, success_status(rt, &key.name, &live["metadata"]["uid"])))
    } else {
        Ok((200, present(rt, &written.object)))
    }
}

fn delete_collection(state: &mut State, rt: &ResourceType, req: &ApiRequest) -> Reply {
    let keys: Vec<ObjectKey> = selected(state, rt, req)?.into_iter().map(|(k, _)| k.clone()).collect();
    let (_, dry_run) = delete_options(req);
    let ts = timestamp_now();
    let mut items = Vec::new();
    for key in keys {
        if let Some(w) = state.store.delete(&key, &ts, dry_run) {
            items.push(present(rt, &w.object));
        }
    }
    Ok((
        200,
        json!({"kind": format!("{}List", rt.kind), "apiVersion": rt.api_version(),
        "metadata": {"resourceVersion": state.store.revision().to_string()}, "items": items}),
    ))
}

/// Create-only review kinds: access reviews are answered from the deny list; others echo.
fn review(state: &State, rt: &ResourceType, req: &ApiRequest) -> Reply {
    let mut body: Value =
        serde_json::from_slice(&req.body).map_err(|e| ApiError::bad_request(format!("invalid review body: {e}")))?;
    body["apiVersion"] = json!(rt.api_version());
    body["kind"] = json!(rt.kind);
    if !body["metadata"].is_object() {
        body["metadata"] = json!({"creationTimestamp": null});
    }
    match rt.kind.as_str() {
        "SelfSubjectAccessReview" | "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            let attrs = &body["spec"]["resourceAttributes"];
            let s = |k: &str| attrs[k].as_str().unwrap_or("").to_string();
            let denied = state
                .config
                .denied_access
                .iter()
                .any(|d| d.denies(&s("verb"), &s("group"), &s("resource"), &s("namespace")));
            body["status"] = if denied {
                json!({"allowed": false, "denied": true, "reason": "denied by the test API server's access rules"})
            } else {
                json!({"allowed": true, "reason": "allowed by the test API server"})
            };
        }
        "SelfSubjectRulesReview" => {
            body["status"] = json!({"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": false});
        }
        "SelfSubjectReview" => {
            body["status"] =
                json!({"userInfo": {"username": "test-admin", "groups": ["system:masters", "system:authenticated"]}})
        }
        _ => body["status"] = json!({"authenticated": true, "user": {"username": "test-admin"}}),
    }
    Ok((201, body))
}
