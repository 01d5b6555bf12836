//! Deterministic interleavings: hold a request until other requests have been answered.
//!
//! A concurrency test must not hope that two clients overlap (on a fast idle machine the first
//! finishes before the second starts). A [`Hold`] is a fault action that scripts the overlap:
//! the matching request waits, before it is served, until `count` requests matching `until`
//! (optionally: answered with this status) have been answered by this test API server, counting
//! from server start, the held request's own predecessors included. The wait is bounded
//! ([`Hold::at_most`], 10 s unless set) so a test whose script never happens fails on its
//! assertions instead of hanging; a request released by the bound is marked
//! [`crate::RecordedRequest::hold_expired`]. The request log stays in arrival order, so a held
//! request appears before the answers that released it (its `elapsed` says how long it waited).
//! Mind that a create is POSTed to the collection: its path names no object, so a matcher
//! with [`RequestMatch::name`] never matches it.
//!
//! ```
//! use kfctl_testapi::{FaultAction, FaultRule, Hold, RequestMatch};
//! // the first PATCH of namespace `kf` waits until two Lease GETs were answered 200
//! let lease_reads = RequestMatch::any().method("GET").resource("leases");
//! let rule = FaultRule::new(
//!     RequestMatch::any().method("PATCH").resource("namespaces").name("kf"),
//!     FaultAction::Hold(Hold::until(lease_reads, 2).answered_with(200)),
//! )
//! .times(1);
//! # let _ = rule;
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::faults::{RequestInfo, RequestMatch};

/// How long a hold waits for its condition unless told otherwise.
pub const DEFAULT_HOLD_BOUND: Duration = Duration::from_secs(10);

/// How often a held request looks at its condition again.
const POLL: Duration = Duration::from_millis(2);

/// Hold a request until `count` requests matching `until` have been answered.
///
/// Clones share the count of answers seen, so the rule in the fault table and the copies
/// handed to held requests agree.
#[derive(Clone, Debug)]
pub struct Hold {
    /// Which answered requests count.
    pub until: RequestMatch,
    /// Only answers with this status count (`None`: any answer).
    pub status: Option<u16>,
    /// How many such answers release the held request.
    pub count: u32,
    /// The longest a request is held, whatever happens.
    pub at_most: Duration,
    answered: Arc<AtomicU32>,
}

impl PartialEq for Hold {
    fn eq(&self, other: &Self) -> bool {
        (&self.until, self.status, self.count, self.at_most) == (&other.until, other.status, other.count, other.at_most)
    }
}

impl Hold {
    /// Hold until `count` requests matching `until` have been answered (any status).
    pub fn until(until: RequestMatch, count: u32) -> Self {
        Hold { until, status: None, count, at_most: DEFAULT_HOLD_BOUND, answered: Arc::default() }
    }

    /// Count only answers with this status (`201`, `409`, ...).
    pub fn answered_with(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Release the held request after `bound` even if the condition never came true.
    pub fn at_most(mut self, bound: Duration) -> Self {
        self.at_most = bound;
        self
    }

    /// Note an answered request.
    pub fn observe(&self, request: &RequestInfo, status: u16) {
        if self.until.matches(request) && self.status.is_none_or(|s| s == status) {
            self.answered.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Counted answers so far.
    pub fn answered(&self) -> u32 {
        self.answered.load(Ordering::SeqCst)
    }

    /// Whether the held request may go.
    pub fn satisfied(&self) -> bool {
        self.answered() >= self.count
    }
}

/// Wait until every hold is satisfied or the first of their bounds passes; `true` when a bound
/// released the request.
pub(crate) async fn wait(holds: &[Hold]) -> bool {
    let Some(bound) = holds.iter().map(|h| h.at_most).min() else { return false };
    let end = Instant::now() + bound;
    loop {
        if holds.iter().all(Hold::satisfied) {
            return false;
        }
        if Instant::now() >= end {
            return true;
        }
        tokio::time::sleep(POLL.min(end.saturating_duration_since(Instant::now()))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease_get() -> RequestInfo {
        RequestInfo {
            method: "GET".into(),
            path: "/apis/coordination.k8s.io/v1/namespaces/kfctl-system/leases/lock".into(),
            group: "coordination.k8s.io".into(),
            resource: Some("leases".into()),
            namespace: Some("kfctl-system".into()),
            name: Some("lock".into()),
            ..RequestInfo::default()
        }
    }

    #[test]
    fn only_matching_answers_with_the_status_count_and_clones_share_the_count() {
        let hold = Hold::until(RequestMatch::any().resource("leases").method("GET"), 2).answered_with(200);
        let copy = hold.clone();
        hold.observe(&lease_get(), 404);
        hold.observe(&RequestInfo { method: "POST".into(), ..lease_get() }, 200);
        assert_eq!((copy.answered(), copy.satisfied()), (0, false));
        hold.observe(&lease_get(), 200);
        copy.observe(&lease_get(), 200);
        assert_eq!((hold.answered(), hold.satisfied()), (2, true));
        assert_eq!(hold, Hold::until(RequestMatch::any().resource("leases").method("GET"), 2).answered_with(200));
    }

    #[tokio::test]
    async fn a_held_request_goes_once_another_is_answered_and_never_waits_past_its_bound() {
        let hold = Hold::until(RequestMatch::any(), 1).at_most(Duration::from_secs(10));
        let answerer = hold.clone();
        let started = Instant::now();
        let (expired, ()) = tokio::join!(wait(std::slice::from_ref(&hold)), async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            answerer.observe(&lease_get(), 200);
        });
        assert!(!expired && started.elapsed() >= Duration::from_millis(20));

        let never = Hold::until(RequestMatch::any().name("nothing"), 1).at_most(Duration::from_millis(30));
        let started = Instant::now();
        assert!(wait(&[never]).await, "released by the bound");
        assert!(started.elapsed() >= Duration::from_millis(30) && started.elapsed() < Duration::from_secs(5));
        assert!(!wait(&[]).await);
    }
}
