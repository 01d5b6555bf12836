//! Injected faults: a rule table that makes the test API server misbehave on purpose.
//!
//! A [`FaultRule`] matches requests by method, path fragment, resource, kind, namespace and
//! name, and fires a [`FaultAction`] a limited number of times (or forever): answer with an
//! error status instead of serving the request (worded like the real server's: optimistic-lock
//! conflicts, failing admission webhooks, x509 errors, etcd leader changes, 429 with
//! `Retry-After`), close the socket without answering, never answer at all, add latency before
//! serving, or hold the request until other requests have been answered ([`Hold`]: a scripted,
//! deterministic interleaving for concurrency tests); a rule may fire on every `n`th matching
//! request only ([`FaultRule::every`]). Delays and holds stack with the first matching
//! answer/drop rule, so "slow and then failing" is expressible.

use std::time::Duration;

use super::errors::ApiError;
use super::hold::Hold;

/// The webhook URL named in canned webhook failures.
const DEFAULT_WEBHOOK_URL: &str = "https://webhook-service.default.svc:443/validate?timeout=10s";

/// What a request looks like to the fault matcher.
#[derive(Clone, Debug, Default)]
pub struct RequestInfo {
    /// HTTP method (`PATCH`).
    pub method: String,
    /// Path with query.
    pub path: String,
    /// API group of the addressed resource.
    pub group: String,
    /// Plural resource, if the path addresses one.
    pub resource: Option<String>,
    /// Kind of the addressed resource, if known.
    pub kind: Option<String>,
    /// Namespace in the path.
    pub namespace: Option<String>,
    /// Object name in the path.
    pub name: Option<String>,
}

/// Which requests a rule applies to; unset fields match anything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestMatch {
    /// HTTP method, case-insensitive.
    pub method: Option<String>,
    /// A substring of the path (with query).
    pub path_contains: Option<String>,
    /// Plural resource (`deployments`).
    pub resource: Option<String>,
    /// Kind (`Deployment`).
    pub kind: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
}

impl RequestMatch {
    /// Match every request.
    pub fn any() -> Self {
        Self::default()
    }
    /// Only this method.
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_uppercase());
        self
    }
    /// Only paths containing this text.
    pub fn path_contains(mut self, fragment: &str) -> Self {
        self.path_contains = Some(fragment.into());
        self
    }
    /// Only this plural resource.
    pub fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.into());
        self
    }
    /// Only this kind.
    pub fn kind(mut self, kind: &str) -> Self {
        self.kind = Some(kind.into());
        self
    }
    /// Only this namespace.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.into());
        self
    }
    /// Only this object name.
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Whether a request matches.
    pub fn matches(&self, req: &RequestInfo) -> bool {
        let eq = |want: &Option<String>, got: Option<&str>| want.as_deref().is_none_or(|w| Some(w) == got);
        self.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(&req.method))
            && self.path_contains.as_deref().is_none_or(|f| req.path.contains(f))
            && eq(&self.resource, req.resource.as_deref())
            && eq(&self.kind, req.kind.as_deref())
            && eq(&self.namespace, req.namespace.as_deref())
            && eq(&self.name, req.name.as_deref())
    }
}

/// What a matching rule does.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultAction {
    /// Answer with this error instead of serving.
    Respond(ApiError),
    /// Answer 409 "the object has been modified" for the addressed object.
    ConflictModified,
    /// Close the connection without answering.
    DropConnection,
    /// Keep the connection open and never answer (a black hole: a wedged server or a proxy
    /// that accepts and forwards nowhere).
    NeverAnswer,
    /// Serve the request (the write happens), then close the connection without answering:
    /// the client never learns the outcome ("lose the response of request N").
    LoseResponse,
    /// Wait this long, then serve (or apply the next matching fault).
    Delay(Duration),
    /// Wait until other requests have been answered (bounded), then serve (or apply the next
    /// matching fault): see [`Hold`].
    Hold(Hold),
}

impl FaultAction {
    /// Any status code with a reason and message.
    pub fn status(code: u16, reason: &str, message: &str) -> Self {
        FaultAction::Respond(ApiError::new(code, reason, message))
    }
    /// 500 `Internal error occurred: <message>`.
    pub fn internal_error(message: &str) -> Self {
        Self::status(500, "InternalError", &format!("Internal error occurred: {message}"))
    }
    /// 429 from API priority and fairness, with `Retry-After`.
    pub fn too_many_requests(retry_after_seconds: u32) -> Self {
        let mut error = ApiError::new(429, "TooManyRequests", "Too many requests, please try again later.");
        error.retry_after = Some(retry_after_seconds);
        FaultAction::Respond(error)
    }
    /// 500 from a validating/mutating webhook whose service refuses connections.
    pub fn webhook_refused(webhook: &str) -> Self {
        FaultAction::Respond(ApiError::webhook_refused(webhook, DEFAULT_WEBHOOK_URL))
    }
    /// 500 from a webhook whose serving certificate is not (yet) trusted: caBundle not injected.
    pub fn x509_unknown_authority(webhook: &str) -> Self {
        FaultAction::Respond(ApiError::webhook_untrusted(webhook, DEFAULT_WEBHOOK_URL))
    }
    /// 500 passed through from etcd during a leader election.
    pub fn etcd_leader_changed() -> Self {
        Self::status(500, "", "etcdserver: leader changed")
    }
    /// 503 while the server is overloaded or restarting.
    pub fn service_unavailable() -> Self {
        Self::status(503, "ServiceUnavailable", "the server is currently unable to handle the request")
    }

    /// The concrete error for a request (resolving [`FaultAction::ConflictModified`]).
    pub fn error_for(&self, req: &RequestInfo) -> Option<ApiError> {
        match self {
            FaultAction::Respond(e) => Some(e.clone()),
            FaultAction::ConflictModified => {
                let resource = req.resource.as_deref().unwrap_or("");
                let name = req.name.as_deref().unwrap_or("");
                Some(ApiError::conflict_modified(&req.group, resource, name))
            }
            _ => None,
        }
    }
}

/// One fault: a matcher, an action and how many more times it fires (`None`: forever).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRule {
    /// Which requests.
    pub matcher: RequestMatch,
    /// What happens.
    pub action: FaultAction,
    /// Remaining firings; `None` fires forever.
    pub remaining: Option<u32>,
    /// Fire on every `n`th matching request only (`1`: every one). Deterministic, so "20 % of
    /// requests answer 429" is `every(5)` and a test sees the same sequence each run.
    pub period: u32,
    /// Matching requests seen so far (for `period`).
    pub seen: u32,
}

impl FaultRule {
    /// A rule that fires on every matching request.
    pub fn new(matcher: RequestMatch, action: FaultAction) -> Self {
        FaultRule { matcher, action, remaining: None, period: 1, seen: 0 }
    }
    /// Limit the rule to `n` firings.
    pub fn times(mut self, n: u32) -> Self {
        self.remaining = Some(n);
        self
    }
    /// Fire on every `n`th matching request only (the `n`th, `2n`th, ...).
    pub fn every(mut self, n: u32) -> Self {
        self.period = n.max(1);
        self
    }

    /// Count a matching request; whether this one is due under `period`.
    fn due(&mut self) -> bool {
        self.seen = self.seen.wrapping_add(1);
        self.seen.is_multiple_of(self.period)
    }
}

/// What the fault table decided for one request.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FaultOutcome {
    /// Total added latency.
    pub delay: Duration,
    /// Holds to wait out (after the delay) before serving.
    pub holds: Vec<Hold>,
    /// The answer/drop action, if any rule fired one.
    pub action: Option<FaultAction>,
}

/// Run the table against a request, consuming one firing of each rule that fires: every matching
/// delay and hold rule, and the first matching answer/drop rule.
pub(crate) fn evaluate(rules: &mut [FaultRule], req: &RequestInfo) -> FaultOutcome {
    let mut outcome = FaultOutcome::default();
    for rule in rules.iter_mut() {
        if rule.remaining == Some(0) || !rule.matcher.matches(req) || !rule.due() {
            continue;
        }
        let fires = match &rule.action {
            FaultAction::Delay(d) => {
                outcome.delay += *d;
                true
            }
            FaultAction::Hold(hold) => {
                outcome.holds.push(hold.clone());
                true
            }
            action if outcome.action.is_none() => {
                outcome.action = Some(action.clone());
                true
            }
            _ => false,
        };
        if fires && let Some(n) = rule.remaining.as_mut() {
            *n -= 1;
        }
    }
    outcome
}

/// Tell every hold rule of the table that a request was answered with `status`.
pub(crate) fn observe_answer(rules: &[FaultRule], req: &RequestInfo, status: u16) {
    for rule in rules {
        if let FaultAction::Hold(hold) = &rule.action {
            hold.observe(req, status);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch_deploy(name: &str) -> RequestInfo {
        RequestInfo {
            method: "PATCH".into(),
            path: format!("/apis/apps/v1/namespaces/kf/deployments/{name}?fieldManager=x"),
            group: "apps".into(),
            resource: Some("deployments".into()),
            kind: Some("Deployment".into()),
            namespace: Some("kf".into()),
            name: Some(name.into()),
        }
    }

    #[test]
    fn respond_rule_fires_its_count_then_stops() {
        let mut rules =
            vec![FaultRule::new(RequestMatch::any().kind("Deployment"), FaultAction::internal_error("boom")).times(2)];
        assert!(evaluate(&mut rules, &patch_deploy("a")).action.is_some());
        assert!(evaluate(&mut rules, &patch_deploy("a")).action.is_some());
        assert!(evaluate(&mut rules, &patch_deploy("a")).action.is_none());
    }

    #[test]
    fn every_nth_rule_fires_on_every_nth_matching_request() {
        let mut rules = vec![FaultRule::new(RequestMatch::any(), FaultAction::service_unavailable()).every(4)];
        let fired: Vec<bool> = (0..8).map(|_| evaluate(&mut rules, &patch_deploy("a")).action.is_some()).collect();
        assert_eq!(fired, [false, false, false, true, false, false, false, true]);
    }

    #[test]
    fn matcher_fields_all_must_match() {
        let m = RequestMatch::any().method("patch").name("a").namespace("kf").path_contains("fieldManager");
        assert!(m.matches(&patch_deploy("a")));
        assert!(!m.matches(&patch_deploy("b")));
        assert!(!RequestMatch::any().method("GET").matches(&patch_deploy("a")));
    }

    #[test]
    fn delays_stack_with_the_first_answer() {
        let mut rules = vec![
            FaultRule::new(RequestMatch::any(), FaultAction::Delay(Duration::from_millis(5))),
            FaultRule::new(RequestMatch::any(), FaultAction::DropConnection).times(1),
            FaultRule::new(RequestMatch::any(), FaultAction::etcd_leader_changed()),
        ];
        let first = evaluate(&mut rules, &patch_deploy("a"));
        assert_eq!((first.delay, first.action), (Duration::from_millis(5), Some(FaultAction::DropConnection)));
        let second = evaluate(&mut rules, &patch_deploy("a"));
        assert_eq!(second.action, Some(FaultAction::etcd_leader_changed()));
    }

    #[test]
    fn holds_stack_with_the_first_answer_and_every_hold_rule_hears_of_every_answer() {
        let hold = Hold::until(RequestMatch::any().method("GET"), 1);
        let mut rules = vec![
            FaultRule::new(RequestMatch::any().name("a"), FaultAction::Hold(hold)).times(1),
            FaultRule::new(RequestMatch::any(), FaultAction::DropConnection).times(1),
        ];
        let first = evaluate(&mut rules, &patch_deploy("a"));
        assert_eq!((first.holds.len(), first.action), (1, Some(FaultAction::DropConnection)));
        let get = RequestInfo { method: "GET".into(), ..patch_deploy("b") };
        observe_answer(&rules, &get, 200);
        assert!(first.holds[0].satisfied(), "the rule in the table and the held copy share the count");
        assert!(evaluate(&mut rules, &patch_deploy("a")).holds.is_empty(), "fired its one time");
    }

    #[test]
    fn conflict_modified_names_the_addressed_object() {
        let e = FaultAction::ConflictModified.error_for(&patch_deploy("web")).unwrap();
        assert_eq!(e.code, 409);
        assert!(
            e.message
                .starts_with("Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified")
        );
    }

    #[test]
    fn canned_errors_are_worded_like_upstream() {
        let webhook = FaultAction::webhook_refused("x").error_for(&RequestInfo::default()).unwrap();
        assert!(webhook.message.starts_with("Internal error occurred: failed calling webhook \"x\""));
        assert!(webhook.message.ends_with("connection refused"));
        let x509 = FaultAction::x509_unknown_authority("x").error_for(&RequestInfo::default()).unwrap();
        assert!(x509.message.contains("x509: certificate signed by unknown authority"));
        let throttled = FaultAction::too_many_requests(2).error_for(&RequestInfo::default()).unwrap();
        assert_eq!((throttled.code, throttled.retry_after), (429, Some(2)));
        assert_eq!(FaultAction::etcd_leader_changed().error_for(&RequestInfo::default()).unwrap().code, 500);
    }
}
