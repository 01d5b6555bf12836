//! How every call of a client retries and how long it may wait: the retry switch, the
//! backoff, one attempt's wait, the budget of a call and the one deadline no call passes.

use crate::cluster::retry::Backoff;
use std::time::{Duration, Instant};

/// How every call of a client retries and how long it may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPolicy {
    /// Run the retry table (off for the engine's applies, which retry themselves).
    pub(crate) retries: bool,
    pub(crate) backoff: Backoff,
    /// The longest one attempt waits for an answer.
    pub(crate) request_timeout: Duration,
    /// How long after its start a call may begin another attempt.
    pub(crate) call_budget: Duration,
    /// No call goes past this (the install's `--timeout`).
    pub(crate) deadline: Option<Instant>,
}

/// The longest one request waits for an answer.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for CallPolicy {
    fn default() -> Self {
        CallPolicy {
            retries: true,
            backoff: Backoff::default(),
            request_timeout: REQUEST_TIMEOUT,
            call_budget: Duration::from_secs(120),
            deadline: None,
        }
    }
}

impl CallPolicy {
    /// Until when a call starting now may begin another attempt.
    pub(super) fn end_of_retries(&self) -> Instant {
        let budget = Instant::now() + self.call_budget;
        self.deadline.map_or(budget, |deadline| deadline.min(budget))
    }

    /// One deadline: no call goes past `deadline`, and none gives up before it either (the
    /// per-call budget does not end a call sooner, as it did with `status`'s default 5m: a
    /// silent server is then `NoAnswer` at the deadline, not a refusal after 2m).
    pub(super) fn until(mut self, deadline: Instant) -> Self {
        self.call_budget = self.call_budget.max(deadline.saturating_duration_since(Instant::now()));
        self.deadline = Some(self.deadline.map_or(deadline, |d| d.min(deadline)));
        self
    }

    /// How long an attempt starting now may wait for its answer.
    pub(super) fn attempt_wait(&self) -> Duration {
        let left = self.deadline.map_or(self.request_timeout, |d| d.saturating_duration_since(Instant::now()));
        self.request_timeout.min(left)
    }
}
