//! A failed call, typed for the retry table: a response's `Status` body (reason, details,
//! field conflicts, `Retry-After`) or, without a response, the transport error's source chain,
//! each an [`ApiFailure`]. [`super::api`] sends the requests; this module only reads what came back.

use super::retry::{ApiFailure, FieldConflict, Reason, StatusDetails, TransportKind};
use serde_json::Value;
use std::time::Duration;

/// A request that could not be built: a usage mistake, never retried.
pub(crate) fn build_failure(e: &dyn std::fmt::Display) -> ApiFailure {
    ApiFailure {
        status: Some(400),
        reason: Reason::BadRequest,
        message: format!("cannot build request: {e}"),
        ..Default::default()
    }
}

/// A transport error: its kind from the source chain, its whole chain as the message ("connection
/// refused" is deep inside).
pub(crate) fn transport_failure(e: kube::Error) -> ApiFailure {
    let kind = TransportKind::of(&e);
    let mut message = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    ApiFailure { status: None, reason: Reason::Transport(kind), message, ..Default::default() }
}

/// A failure response: the `Status` body when there is one, the raw text otherwise.
///
/// Field conflicts come from `details.causes` (each a `StatusCause`, whose type is serialized as
/// `reason`); a 409 whose Status has no causes falls back to the conflicts its message lists.
pub(crate) fn status_failure(status: u16, body: &Value, text: &str, retry_after: Option<Duration>) -> ApiFailure {
    let field = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let message = if body.get("message").is_some() { field("message") } else { text.trim().to_string() };
    let details_wait = body.pointer("/details/retryAfterSeconds").and_then(Value::as_u64).filter(|s| *s > 0);
    let conflicts = body
        .pointer("/details/causes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("reason").and_then(Value::as_str) == Some("FieldManagerConflict"))
        .map(|c| FieldConflict {
            field: c.get("field").and_then(Value::as_str).unwrap_or("").to_string(),
            manager: conflict_manager(c.get("message").and_then(Value::as_str).unwrap_or("")),
        })
        .collect::<Vec<_>>();
    let conflicts = if conflicts.is_empty() && status == 409 { conflicts_in_message(&message) } else { conflicts };
    ApiFailure {
        status: Some(status),
        reason: Reason::from_status(&field("reason")),
        message,
        retry_after: retry_after.or(details_wait.map(Duration::from_secs)),
        conflicts,
        details: status_details(body),
        request: String::new(),
        out_of_time: false,
    }
}

/// `details.group`, `.kind` (the resource) and `.name`; empty when the Status has none.
fn status_details(body: &Value) -> StatusDetails {
    let text = |key: &str| body.pointer(&format!("/details/{key}")).and_then(Value::as_str).unwrap_or("").to_string();
    StatusDetails { group: text("group"), kind: text("kind"), name: text("name") }
}

/// Conflicts from an apply message when the Status has no causes:
/// `Apply failed with 1 conflict: conflict with "helm" using apps/v1: .spec.replicas`.
fn conflicts_in_message(message: &str) -> Vec<FieldConflict> {
    message
        .split("conflict with \"")
        .skip(1)
        .filter_map(|part| {
            let (manager, rest) = part.split_once('"')?;
            let field = rest.rsplit(": ").next()?.trim().trim_end_matches(',').to_string();
            field.starts_with('.').then(|| FieldConflict { field, manager: manager.to_string() })
        })
        .collect()
}

/// `conflict with "helm" using apps/v1` → `helm`.
fn conflict_manager(message: &str) -> String {
    message.split('"').nth(1).unwrap_or(message).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_failure_reads_conflicts_and_retry_after() {
        let body = json!({"kind": "Status", "reason": "Conflict", "message": "Apply failed with 1 conflict: conflict with \"helm\" using apps/v1: .spec.replicas",
            "details": {"retryAfterSeconds": 2, "causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"helm\" using apps/v1", "field": ".spec.replicas"}]}});
        let f = status_failure(409, &body, "", None);
        assert_eq!(f.conflicts, vec![FieldConflict { field: ".spec.replicas".into(), manager: "helm".into() }]);
        assert_eq!(f.retry_after, Some(Duration::from_secs(2)));
        let text = json!({"reason": "Conflict", "message": "Apply failed with 1 conflict: conflict with \"cainjector\" using admissionregistration.k8s.io/v1 at 2026-01-01T00:00:00Z: .webhooks"});
        let f = status_failure(409, &text, "", None);
        assert_eq!(f.conflicts, vec![FieldConflict { field: ".webhooks".into(), manager: "cainjector".into() }]);
        let plain = status_failure(502, &Value::Null, " bad gateway \n", Some(Duration::from_secs(1)));
        assert_eq!((plain.message.as_str(), plain.retry_after), ("bad gateway", Some(Duration::from_secs(1))));
    }

    #[test]
    fn status_failure_reads_details_like_a_real_server() {
        let route = json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404,
            "message": "the server could not find the requested resource"});
        let f = status_failure(404, &route, "", None);
        assert!(f.is_unserved_resource() && f.reason == Reason::NotFound);
        let object = json!({"kind": "Status", "reason": "NotFound", "code": 404, "message": "deployments.apps \"web\" not found",
            "details": {"name": "web", "group": "apps", "kind": "deployments"}});
        let f = status_failure(404, &object, "", None);
        assert_eq!(f.details, StatusDetails { group: "apps".into(), kind: "deployments".into(), name: "web".into() });
        assert!(!f.is_unserved_resource() && !f.is_missing_namespace());
        let namespace = json!({"kind": "Status", "reason": "NotFound", "code": 404, "message": "namespaces \"kf\" not found",
            "details": {"name": "kf", "kind": "namespaces"}});
        assert!(status_failure(404, &namespace, "", None).is_missing_namespace());
    }
}
