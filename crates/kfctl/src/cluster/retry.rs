//! The retry table: which failures are races that settle, and which are mistakes.
//!
//! Upstream's install loop retries everything every 20 seconds. kfctl-rs classifies each failure
//! with [`RETRY_RULES`] (first match wins) and decides:
//!
//! - [`Decision::Retry`]: exponential backoff with jitter ([`crate::backoff`]) until the stage
//!   deadline. Webhooks whose pods are starting, connections refused or dropped, x509 errors
//!   while cert-manager injects a CA, 5xx, etcd leader changes and 409 optimistic-lock conflicts
//!   all settle.
//! - [`Decision::RetryAfter`]: 429, waiting what the server asks (`Retry-After`).
//! - [`Decision::RetryWithinGrace`]: "no matches for kind" for a kind whose CRD the plan
//!   installs: discovery lags behind a CRD's Established condition for a few seconds.
//! - [`Decision::FailFast`]: 422 invalid, 403 forbidden, 400 bad request, a field conflict with
//!   another manager, a kind nobody serves. Retrying these only delays the error.

pub use crate::backoff::{Backoff, jitter_unit};
use std::time::Duration;

/// One failed API call, reduced to what classification and messages need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiFailure {
    /// HTTP status; `None` when no response arrived (connection refused, dropped, timed out).
    pub status: Option<u16>,
    /// The Kubernetes `Status.reason` (`Conflict`, `Invalid`...), or the transport error kind.
    pub reason: String,
    pub message: String,
    /// From the `Retry-After` header, or `Status.details.retryAfterSeconds`.
    pub retry_after: Option<Duration>,
    /// Field conflicts of a server-side apply: (field, other manager).
    pub conflicts: Vec<FieldConflict>,
}

/// A field another manager owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldConflict {
    pub field: String,
    pub manager: String,
}

impl std::fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(code) if !self.reason.is_empty() => {
                write!(f, "{code} {}: {}", self.reason, self.message)
            }
            Some(code) => write!(f, "{code}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// The failure classes of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureClass {
    FieldConflict,
    WebhookUnavailable,
    CaNotYetTrusted,
    EtcdLeaderChange,
    KindNotYetServed,
    UnknownKind,
    Throttled,
    ServerError,
    OptimisticLock,
    ConnectionRefused,
    ConnectionDropped,
    Invalid,
    Forbidden,
    BadRequest,
    Other,
}

/// What to do about a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Retry,
    RetryAfter,
    RetryWithinGrace,
    FailFast,
}

/// What the classifier knows besides the failure: whether the plan installs the kind's CRD.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    pub crd_in_plan: bool,
}

/// One row of the retry table.
pub struct RetryRule {
    pub class: FailureClass,
    pub matches: fn(&ApiFailure, Context) -> bool,
    pub decision: Decision,
}

fn message_has(f: &ApiFailure, needle: &str) -> bool {
    f.message.to_ascii_lowercase().contains(needle)
}

fn is_no_kind_match(f: &ApiFailure) -> bool {
    f.reason == "NoKindMatch" || message_has(f, "no matches for kind")
}

/// The table, first match wins.
pub const RETRY_RULES: &[RetryRule] = &[
    RetryRule {
        class: FailureClass::FieldConflict,
        matches: |f, _| f.status == Some(409) && (!f.conflicts.is_empty() || message_has(f, "apply failed with")),
        decision: Decision::FailFast,
    },
    RetryRule {
        class: FailureClass::WebhookUnavailable,
        matches: |f, _| message_has(f, "failed calling webhook") || message_has(f, "failed to call webhook"),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::CaNotYetTrusted,
        matches: |f, _| message_has(f, "x509:") || message_has(f, "certificate signed by unknown authority"),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::EtcdLeaderChange,
        matches: |f, _| message_has(f, "leader changed") || message_has(f, "etcdserver: request timed out"),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::KindNotYetServed,
        matches: |f, ctx| is_no_kind_match(f) && ctx.crd_in_plan,
        decision: Decision::RetryWithinGrace,
    },
    RetryRule { class: FailureClass::UnknownKind, matches: |f, _| is_no_kind_match(f), decision: Decision::FailFast },
    RetryRule { class: FailureClass::Throttled, matches: |f, _| f.status == Some(429), decision: Decision::RetryAfter },
    RetryRule {
        class: FailureClass::ServerError,
        matches: |f, _| f.status.is_some_and(|s| (500..600).contains(&s)),
        decision: Decision::Retry,
    },
    RetryRule { class: FailureClass::OptimisticLock, matches: |f, _| f.status == Some(409), decision: Decision::Retry },
    RetryRule {
        class: FailureClass::ConnectionRefused,
        matches: |f, _| f.status.is_none() && message_has(f, "connection refused"),
        decision: Decision::Retry,
    },
    RetryRule { class: FailureClass::ConnectionDropped, matches: |f, _| f.status.is_none(), decision: Decision::Retry },
    RetryRule { class: FailureClass::Invalid, matches: |f, _| f.status == Some(422), decision: Decision::FailFast },
    RetryRule { class: FailureClass::Forbidden, matches: |f, _| f.status == Some(403), decision: Decision::FailFast },
    RetryRule { class: FailureClass::BadRequest, matches: |f, _| f.status == Some(400), decision: Decision::FailFast },
];

/// Classify a failure: its class and what to do.
pub fn classify(f: &ApiFailure, ctx: Context) -> (FailureClass, Decision) {
    RETRY_RULES
        .iter()
        .find(|rule| (rule.matches)(f, ctx))
        .map_or((FailureClass::Other, Decision::FailFast), |rule| (rule.class, rule.decision))
}

impl Backoff {
    /// The delay for a decision: a server's Retry-After wins for [`Decision::RetryAfter`].
    pub fn delay_for(&self, decision: Decision, failure: &ApiFailure, attempt: u32) -> Duration {
        match (decision, failure.retry_after) {
            (Decision::RetryAfter, Some(wait)) => wait,
            _ => self.delay(attempt, jitter_unit()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(status: Option<u16>, reason: &str, message: &str) -> ApiFailure {
        ApiFailure { status, reason: reason.into(), message: message.into(), ..Default::default() }
    }

    fn decide(f: &ApiFailure) -> (FailureClass, Decision) {
        classify(f, Context::default())
    }

    #[test]
    fn retry_rule_failed_calling_webhook_is_retried() {
        let f = failure(
            Some(500),
            "InternalError",
            "Internal error occurred: failed calling webhook \"webhook.cert-manager.io\": connect: connection refused",
        );
        assert_eq!(decide(&f), (FailureClass::WebhookUnavailable, Decision::Retry));
    }

    #[test]
    fn retry_rule_connection_refused_is_retried() {
        let f = failure(None, "transport", "tcp connect error: Connection refused (os error 111)");
        assert_eq!(decide(&f), (FailureClass::ConnectionRefused, Decision::Retry));
    }

    #[test]
    fn retry_rule_dropped_connection_is_retried() {
        let f = failure(None, "transport", "connection closed before message completed");
        assert_eq!(decide(&f), (FailureClass::ConnectionDropped, Decision::Retry));
    }

    #[test]
    fn retry_rule_x509_while_ca_injected_is_retried() {
        let f = failure(
            Some(500),
            "InternalError",
            "tls: failed to verify certificate: x509: certificate signed by unknown authority",
        );
        assert_eq!(decide(&f).1, Decision::Retry);
        assert_eq!(decide(&failure(Some(400), "", "x509: certificate has expired")).0, FailureClass::CaNotYetTrusted);
    }

    #[test]
    fn retry_rule_no_kind_match_waits_only_for_planned_crds() {
        let f =
            failure(Some(404), "NoKindMatch", "no matches for kind \"Certificate\" in version \"cert-manager.io/v1\"");
        assert_eq!(
            classify(&f, Context { crd_in_plan: true }),
            (FailureClass::KindNotYetServed, Decision::RetryWithinGrace)
        );
        assert_eq!(classify(&f, Context { crd_in_plan: false }), (FailureClass::UnknownKind, Decision::FailFast));
    }

    #[test]
    fn retry_rule_429_honours_retry_after() {
        let mut f = failure(Some(429), "TooManyRequests", "slow down");
        f.retry_after = Some(Duration::from_secs(3));
        let (_, decision) = decide(&f);
        assert_eq!(decision, Decision::RetryAfter);
        assert_eq!(Backoff::default().delay_for(decision, &f, 0), Duration::from_secs(3));
    }

    #[test]
    fn retry_rule_5xx_is_retried() {
        assert_eq!(
            decide(&failure(Some(503), "ServiceUnavailable", "unavailable")),
            (FailureClass::ServerError, Decision::Retry)
        );
    }

    #[test]
    fn retry_rule_etcd_leader_change_is_retried() {
        let f = failure(Some(500), "InternalError", "etcdserver: leader changed");
        assert_eq!(decide(&f), (FailureClass::EtcdLeaderChange, Decision::Retry));
    }

    #[test]
    fn retry_rule_409_optimistic_lock_is_retried_but_field_conflict_fails_fast() {
        let lock = failure(
            Some(409),
            "Conflict",
            "the object has been modified; please apply your changes to the latest version",
        );
        assert_eq!(decide(&lock), (FailureClass::OptimisticLock, Decision::Retry));
        let mut apply = failure(Some(409), "Conflict", "Apply failed with 1 conflict");
        apply.conflicts.push(FieldConflict { field: ".spec.replicas".into(), manager: "helm".into() });
        assert_eq!(decide(&apply), (FailureClass::FieldConflict, Decision::FailFast));
    }

    #[test]
    fn retry_rule_422_403_400_fail_fast() {
        assert_eq!(
            decide(&failure(Some(422), "Invalid", "spec.x: Invalid value")),
            (FailureClass::Invalid, Decision::FailFast)
        );
        assert_eq!(decide(&failure(Some(403), "Forbidden", "no")), (FailureClass::Forbidden, Decision::FailFast));
        assert_eq!(decide(&failure(Some(400), "BadRequest", "bad")), (FailureClass::BadRequest, Decision::FailFast));
        assert_eq!(decide(&failure(Some(404), "NotFound", "gone")), (FailureClass::Other, Decision::FailFast));
    }
}
