//! The retry table: which failures are races that settle, and which are mistakes.
//!
//! Upstream's install loop retries everything every 20 seconds. kfctl-rs classifies each failure
//! with `RETRY_RULES` (first match wins) and decides:
//!
//! - `Decision::Retry`: exponential backoff with jitter (`crate::backoff`) until the stage
//!   deadline. Webhooks whose pods are starting, connections refused or dropped, x509 errors
//!   while cert-manager injects a CA, 5xx, etcd leader changes and 409 optimistic-lock conflicts
//!   all settle.
//! - `Decision::RetryAfter`: 429, waiting what the server asks (`Retry-After`).
//! - `Decision::RetryWithinGrace`: "no matches for kind" for a kind whose CRD the plan
//!   installs: discovery lags behind a CRD's Established condition for a few seconds.
//! - `Decision::FailFast`: 422 invalid, 403 forbidden, 400 bad request, a field conflict with
//!   another manager, a kind nobody serves. Retrying these only delays the error.
//!
//! Each row says what it reads in its `Evidence` column. Rows decide on typed data of the
//! [`ApiFailure`]: the HTTP status, the `Status.reason`, `Status.details.causes` (a server-side
//! apply conflict is a 409 with `FieldManagerConflict` causes naming field and manager), the
//! reason kfctl's discovery sets for a kind it does not serve ([`Reason::NoKindMatch`]), or the
//! transport kind taken from the error's source chain (`TransportKind::of`). Three rows read
//! the message because the API gives nothing else — a failed webhook call, x509 errors during
//! CA injection and etcd leader changes all arrive as a 500 whose only specific part is the
//! text — and each says so in the table (`Evidence::MessageOnly` with `why`); a test keeps it
//! that way.

mod failure;

pub use crate::backoff::{Backoff, jitter_unit};
pub use failure::{ApiFailure, FieldConflict, Reason, StatusDetails, TransportKind};
use std::time::Duration;

/// The failure classes of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureClass {
    FieldConflict,
    WebhookUnavailable,
    CaNotYetTrusted,
    EtcdLeaderChange,
    KindNotYetServed,
    UnknownKind,
    Throttled,
    ServerError,
    AlreadyExists,
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
pub(crate) enum Decision {
    Retry,
    RetryAfter,
    RetryWithinGrace,
    FailFast,
}

/// What the classifier knows besides the failure: whether the plan installs the kind's CRD.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Context {
    pub crd_in_plan: bool,
}

/// What a row of the table reads to recognise its failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// The HTTP status code.
    Status,
    /// `Status.details.causes`: the field-manager conflicts of a server-side apply.
    Causes,
    /// A reason kfctl's own discovery sets ([`Reason::NoKindMatch`]); no server sends it.
    Discovery,
    /// The transport kind, from the error's source chain: no response arrived.
    Transport,
    /// Only the message tells: the API gives no typed data for it, and `why` says so.
    MessageOnly { why: &'static str },
}

/// One row of the retry table.
pub(crate) struct RetryRule {
    pub class: FailureClass,
    #[cfg_attr(not(test), allow(dead_code, reason = "only the unit tests read it, to check each rule's evidence"))]
    pub evidence: Evidence,
    pub matches: fn(&ApiFailure, Context) -> bool,
    pub decision: Decision,
}

fn message_has(f: &ApiFailure, needle: &str) -> bool {
    f.message.to_ascii_lowercase().contains(needle)
}

const WEBHOOK_WHY: &str = "a webhook the API server cannot call is a 500 InternalError; only the message says \
     \"failed calling webhook\"";
const X509_WHY: &str = "x509 errors of a webhook call while cert-manager injects the CA arrive inside a 500's \
     message, with no cause";
const ETCD_WHY: &str = "etcd errors pass through as a 500 with etcd's text and no Status reason";

/// The table, first match wins.
pub(crate) const RETRY_RULES: &[RetryRule] = &[
    RetryRule {
        class: FailureClass::FieldConflict,
        evidence: Evidence::Causes,
        matches: |f, _| f.status == Some(409) && !f.conflicts.is_empty(),
        decision: Decision::FailFast,
    },
    RetryRule {
        class: FailureClass::WebhookUnavailable,
        evidence: Evidence::MessageOnly { why: WEBHOOK_WHY },
        matches: |f, _| message_has(f, "failed calling webhook") || message_has(f, "failed to call webhook"),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::CaNotYetTrusted,
        evidence: Evidence::MessageOnly { why: X509_WHY },
        matches: |f, _| message_has(f, "x509:") || message_has(f, "certificate signed by unknown authority"),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::EtcdLeaderChange,
        evidence: Evidence::MessageOnly { why: ETCD_WHY },
        matches: |f, _| message_has(f, "leader changed") || message_has(f, "etcdserver: request timed out"),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::KindNotYetServed,
        evidence: Evidence::Discovery,
        matches: |f, ctx| f.is_no_kind_match() && ctx.crd_in_plan,
        decision: Decision::RetryWithinGrace,
    },
    RetryRule {
        class: FailureClass::UnknownKind,
        evidence: Evidence::Discovery,
        matches: |f, _| f.is_no_kind_match(),
        decision: Decision::FailFast,
    },
    RetryRule {
        class: FailureClass::Throttled,
        evidence: Evidence::Status,
        matches: |f, _| f.status == Some(429),
        decision: Decision::RetryAfter,
    },
    RetryRule {
        class: FailureClass::ServerError,
        evidence: Evidence::Status,
        matches: |f, _| f.status.is_some_and(|s| (500..600).contains(&s)),
        decision: Decision::Retry,
    },
    RetryRule {
        // a create (POST) of a name that exists: the same request can only fail again
        class: FailureClass::AlreadyExists,
        evidence: Evidence::Status,
        matches: |f, _| f.status == Some(409) && f.reason == Reason::AlreadyExists,
        decision: Decision::FailFast,
    },
    RetryRule {
        class: FailureClass::OptimisticLock,
        evidence: Evidence::Status,
        matches: |f, _| f.status == Some(409),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::ConnectionRefused,
        evidence: Evidence::Transport,
        matches: |f, _| f.transport() == Some(TransportKind::Refused),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::ConnectionDropped,
        evidence: Evidence::Transport,
        matches: |f, _| f.status.is_none(),
        decision: Decision::Retry,
    },
    RetryRule {
        class: FailureClass::Invalid,
        evidence: Evidence::Status,
        matches: |f, _| f.status == Some(422),
        decision: Decision::FailFast,
    },
    RetryRule {
        class: FailureClass::Forbidden,
        evidence: Evidence::Status,
        matches: |f, _| f.status == Some(403),
        decision: Decision::FailFast,
    },
    RetryRule {
        class: FailureClass::BadRequest,
        evidence: Evidence::Status,
        matches: |f, _| f.status == Some(400),
        decision: Decision::FailFast,
    },
];

/// Classify a failure: its class and what to do.
pub(crate) fn classify(f: &ApiFailure, ctx: Context) -> (FailureClass, Decision) {
    RETRY_RULES
        .iter()
        .find(|rule| (rule.matches)(f, ctx))
        .map_or((FailureClass::Other, Decision::FailFast), |rule| (rule.class, rule.decision))
}

impl Backoff {
    /// The delay for a decision: a server's Retry-After wins for [`Decision::RetryAfter`].
    pub(crate) fn delay_for(&self, decision: Decision, failure: &ApiFailure, attempt: u32) -> Duration {
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
        ApiFailure { status, reason: Reason::from_status(reason), message: message.into(), ..Default::default() }
    }

    /// No response: what `cluster::api` builds from a transport error's source chain.
    fn transport(kind: TransportKind, message: &str) -> ApiFailure {
        ApiFailure { reason: Reason::Transport(kind), message: message.into(), ..Default::default() }
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
        let f = transport(TransportKind::Refused, "tcp connect error: Connection refused (os error 111)");
        assert_eq!(decide(&f), (FailureClass::ConnectionRefused, Decision::Retry));
    }

    #[test]
    fn retry_rule_dropped_connection_is_retried() {
        let f = transport(TransportKind::Dropped, "connection closed before message completed");
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
        let f = crate::cluster::discovery::no_kind_match("cert-manager.io/v1", "Certificate");
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

    #[test]
    fn retry_rule_every_message_only_row_says_why() {
        let mut message_only = Vec::new();
        for rule in RETRY_RULES {
            if let Evidence::MessageOnly { why } = rule.evidence {
                assert!(why.len() > 20 && why.contains("500"), "{:?}: say what the API leaves out: {why}", rule.class);
                message_only.push(rule.class);
            }
        }
        let expected =
            [FailureClass::WebhookUnavailable, FailureClass::CaNotYetTrusted, FailureClass::EtcdLeaderChange];
        assert_eq!(message_only, expected, "a new message-matching row needs a reason the API gives nothing typed");
    }

    #[test]
    fn retry_rule_typed_rows_do_not_read_the_message() {
        let unknown = failure(Some(404), "NotFound", "no matches for kind \"Certificate\" in version \"v1\"");
        assert_eq!(decide(&unknown), (FailureClass::Other, Decision::FailFast));
        let lock = failure(Some(409), "Conflict", "Apply failed with 1 conflict");
        assert_eq!(decide(&lock), (FailureClass::OptimisticLock, Decision::Retry), "no causes: not a field conflict");
        let exists = failure(Some(409), "AlreadyExists", "leases \"kfctl-rs-lock\" already exists");
        assert_eq!(decide(&exists), (FailureClass::AlreadyExists, Decision::FailFast), "a create is not retried");
        let dropped = transport(TransportKind::Dropped, "tcp connect error: Connection refused");
        assert_eq!(decide(&dropped).0, FailureClass::ConnectionDropped);
        let refused = transport(TransportKind::Refused, "error trying to connect");
        assert_eq!(decide(&refused).0, FailureClass::ConnectionRefused);
        for kind in [TransportKind::TimedOut, TransportKind::Tls, TransportKind::Other] {
            assert_eq!(decide(&transport(kind, "")), (FailureClass::ConnectionDropped, Decision::Retry));
        }
    }

    #[test]
    fn retry_rule_field_conflict_reads_the_causes_of_a_real_status() {
        let body = serde_json::json!({"kind": "Status", "code": 409, "reason": "Conflict",
            "message": "Apply failed with 2 conflicts: conflicts with \"helm\" using apps/v1:\n- .spec.replicas\n- .spec.template",
            "details": {"name": "web", "group": "apps", "kind": "deployments", "causes": [
                {"reason": "FieldManagerConflict", "message": "conflict with \"helm\" using apps/v1", "field": ".spec.replicas"},
                {"reason": "FieldManagerConflict", "message": "conflict with \"helm\" using apps/v1", "field": ".spec.template"}]}});
        let f = crate::cluster::failure::status_failure(409, &body, "", None);
        assert_eq!((f.reason.clone(), f.conflicts.len()), (Reason::Conflict, 2));
        assert_eq!(decide(&f), (FailureClass::FieldConflict, Decision::FailFast));
    }
}
