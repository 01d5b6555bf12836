//! Errors as the real API server reports them: a `metav1.Status` object with a code, a reason
//! and a message worded like upstream's, so clients (kube, kubectl) classify them the same way.
//!
//! Each constructor mirrors one of `k8s.io/apimachinery/pkg/api/errors`: `not_found` builds
//! `configmaps "x" not found`, `conflict_modified` the optimistic-lock message, and so on.

use serde_json::{Value, json};

/// A failed API call, rendered as a `Status` body by [`ApiError::to_status`].
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code (404, 409, ...).
    pub code: u16,
    /// `Status.reason` (`NotFound`, `Conflict`, ...).
    pub reason: String,
    /// `Status.message`, worded like the real server's.
    pub message: String,
    /// `Status.details`, when the real server fills it.
    pub details: Option<Box<Value>>,
    /// Seconds for a `Retry-After` header (429 and some 5xx).
    pub retry_after: Option<u32>,
}

/// The `details` block of a Status naming one object (`group` empty for the core group).
pub(crate) fn object_details(group: &str, resource: &str, name: &str) -> Value {
    let mut details = json!({ "name": name, "kind": resource });
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    details
}

/// `deployments.apps` or `configmaps`: the qualified resource name used in messages.
pub(crate) fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() { resource.to_string() } else { format!("{resource}.{group}") }
}

impl ApiError {
    /// An error with no details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        ApiError { code, reason: reason.into(), message: message.into(), details: None, retry_after: None }
    }

    /// `configmaps "x" not found` (404).
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        let message = format!("{} \"{name}\" not found", qualified(group, resource));
        ApiError {
            details: Some(Box::new(object_details(group, resource, name))),
            ..Self::new(404, "NotFound", message)
        }
    }

    /// A path the server does not serve (unknown group, version or resource).
    pub fn no_route() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource")
    }

    /// `configmaps "x" already exists` (409).
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        let message = format!("{} \"{name}\" already exists", qualified(group, resource));
        ApiError {
            details: Some(Box::new(object_details(group, resource, name))),
            ..Self::new(409, "AlreadyExists", message)
        }
    }

    /// The optimistic-lock failure (409) upstream returns on a stale `resourceVersion`.
    pub fn conflict_modified(group: &str, resource: &str, name: &str) -> Self {
        let message = format!(
            "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
            qualified(group, resource)
        );
        ApiError {
            details: Some(Box::new(object_details(group, resource, name))),
            ..Self::new(409, "Conflict", message)
        }
    }

    /// A malformed request (400).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// An invalid object (422), e.g. a body whose name disagrees with the URL.
    pub fn invalid(group: &str, resource: &str, name: &str, message: impl Into<String>) -> Self {
        let message = format!("{} \"{name}\" is invalid: {}", qualified(group, resource), message.into());
        ApiError {
            details: Some(Box::new(object_details(group, resource, name))),
            ..Self::new(422, "Invalid", message)
        }
    }

    /// A verb the resource does not support (405).
    pub fn method_not_allowed(verb: &str, group: &str, resource: &str) -> Self {
        let message = format!("{verb} is not supported on resources of kind \"{}\"", qualified(group, resource));
        Self::new(405, "MethodNotAllowed", message)
    }

    /// Creating content in a namespace that is being deleted (403), as upstream's lifecycle plugin.
    pub fn namespace_terminating(namespace: &str, group: &str, resource: &str, name: &str) -> Self {
        let message = format!(
            "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
            qualified(group, resource)
        );
        Self::new(403, "Forbidden", message)
    }

    /// A 415 for a patch content type the server does not accept.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json; got {content_type:?}"
            ),
        )
    }

    /// 500 from an admission webhook whose service accepts no connections (`url` is what was called).
    pub fn webhook_refused(webhook: &str, url: &str) -> Self {
        Self::new(
            500,
            "InternalError",
            format!(
                "Internal error occurred: failed calling webhook \"{webhook}\": failed to call webhook: Post \"{url}\": dial tcp 10.96.0.10:443: connect: connection refused"
            ),
        )
    }

    /// 500 from an admission webhook whose serving certificate is not trusted (no `caBundle` yet).
    pub fn webhook_untrusted(webhook: &str, url: &str) -> Self {
        Self::new(
            500,
            "InternalError",
            format!(
                "Internal error occurred: failed calling webhook \"{webhook}\": failed to call webhook: Post \"{url}\": tls: failed to verify certificate: x509: certificate signed by unknown authority"
            ),
        )
    }

    /// The `Status` object sent as the response body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = (**details).clone();
        }
        if let Some(seconds) = self.retry_after {
            let details = status["details"].as_object().cloned().unwrap_or_default();
            let mut details = Value::Object(details);
            details["retryAfterSeconds"] = json!(seconds);
            status["details"] = details;
        }
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_qualified_resource_like_upstream() {
        let e = ApiError::not_found("apps", "deployments", "web");
        assert_eq!(e.message, "deployments.apps \"web\" not found");
        let status = e.to_status();
        assert_eq!(status["code"], 404);
        assert_eq!(status["details"]["group"], "apps");
        assert_eq!(ApiError::not_found("", "configmaps", "c").message, "configmaps \"c\" not found");
    }

    #[test]
    fn retry_after_lands_in_details() {
        let mut e = ApiError::new(429, "TooManyRequests", "slow down");
        e.retry_after = Some(3);
        assert_eq!(e.to_status()["details"]["retryAfterSeconds"], 3);
    }
}
