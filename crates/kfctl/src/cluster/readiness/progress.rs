//! Showing what the install is doing and what it is waiting for.
//!
//! The engine reports [`Event`]s to a [`Progress`]; it never prints. Two sinks here:
//! [`LineProgress`] (plain lines, for logs and CI) and [`RecordingProgress`] (tests); the binary
//! adds a terminal bar over [`plain_line`]. Every waiting line names what is still pending:
//! `waiting for 3 of 12: Deployment kubeflow/ml-pipeline (0/1 ready), ...`.

mod block;

pub use block::{PendingSince, pending_block, short_duration, wrap};

use crate::cluster::object::ObjectRef;
use std::io::Write;
use std::time::{Duration, Instant};

/// Where the run stands in time when a waiting list is reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunClock {
    /// Since the run started.
    pub(crate) elapsed: Duration,
    /// Until the run's `--timeout` deadline; `None` for a run without one.
    pub(crate) left: Option<Duration>,
}

impl RunClock {
    /// The clock of a run with `timeout` whose deadline is `deadline`, read now.
    pub(crate) fn of(deadline: Instant, timeout: Duration) -> Self {
        let left = deadline.saturating_duration_since(Instant::now());
        RunClock { elapsed: timeout.saturating_sub(left), left: Some(left) }
    }
}

/// An object still pending, with the last thing known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub(crate) object: ObjectRef,
    pub(crate) message: String,
}

/// An object that failed: waiting will not make it ready (see the readiness table's failure
/// facts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedObject {
    pub(crate) object: ObjectRef,
    /// The controller's reason (`ProgressDeadlineExceeded`, `BackoffLimitExceeded`, ...).
    pub(crate) reason: String,
    pub(crate) message: String,
}

/// What the engine reports.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// A preflight finding or hint.
    Notice(&'a str),
    /// A wave starts applying.
    WaveStarted {
        /// Its number, from 1.
        index: usize,
        /// How many waves the plan has.
        total: usize,
        /// Its name.
        name: &'a str,
        /// How many objects it applies.
        objects: usize,
    },
    /// An object was applied.
    Applied {
        /// The object applied.
        object: &'a ObjectRef,
        /// Whether the apply created it.
        created: bool,
    },
    /// An apply failed in a way worth retrying, and will be retried after `delay`.
    Retrying {
        /// The object whose apply is retried.
        object: &'a ObjectRef,
        /// The attempt count as the retry loop keeps it (the line prints it plus one).
        attempt: u32,
        /// How long until the next attempt.
        delay: Duration,
        /// Why it failed.
        reason: &'a str,
    },
    /// Objects of the wave are not ready yet.
    Waiting {
        /// The objects still pending, each with why.
        pending: &'a [Pending],
        /// How many objects the wave waits for.
        total: usize,
        /// Where the run stands in time.
        clock: RunClock,
    },
    /// A wave's objects all became ready.
    WaveDone {
        /// Its number, from 1.
        index: usize,
        /// Its name.
        name: &'a str,
        /// How long the wave took.
        elapsed: Duration,
    },
}

/// A sink for progress events.
pub trait Progress {
    /// Take one event.
    fn event(&mut self, event: &Event<'_>);
}

/// How many pending objects a waiting line names before "and N more".
const NAMED_PENDING: usize = 5;

/// `waiting for 3 of 12: Deployment kubeflow/ml-pipeline (0/1 ready), ...`
pub(crate) fn waiting_line(pending: &[Pending], total: usize) -> String {
    let named: Vec<String> =
        pending.iter().take(NAMED_PENDING).map(|p| format!("{} ({})", p.object, p.message)).collect();
    let more = pending.len().saturating_sub(NAMED_PENDING);
    let tail = if more > 0 { format!(", and {more} more") } else { String::new() };
    format!("waiting for {} of {total}: {}{tail}", pending.len(), named.join(", "))
}

/// One plain line for an event (`None`: the event prints nothing).
pub fn plain_line(event: &Event<'_>) -> Option<String> {
    Some(match event {
        Event::Notice(text) => (*text).to_string(),
        Event::WaveStarted { index, total, name, objects } => {
            format!("[{index}/{total}] {name}: applying {objects} objects")
        }
        Event::Applied { .. } => return None,
        Event::Retrying { object, attempt, delay, reason } => {
            format!("retrying {object} in {:.1}s (attempt {}): {reason}", delay.as_secs_f64(), attempt + 1)
        }
        Event::Waiting { pending, total, clock } => {
            let line = waiting_line(pending, *total);
            match clock.left {
                Some(left) => {
                    format!("{line} [{} elapsed, deadline in {}]", short_duration(clock.elapsed), short_duration(left))
                }
                None => line,
            }
        }
        Event::WaveDone { index, name, elapsed } => format!("[{index}] {name}: done in {:.1}s", elapsed.as_secs_f64()),
    })
}

/// Plain lines to a writer; waiting lines at most every `every` (and whenever they change size).
pub struct LineProgress<W: Write> {
    out: W,
    every: Duration,
    last_wait: Option<(Instant, usize)>,
}

impl<W: Write> LineProgress<W> {
    /// Lines to `out`; a waiting line at most every `every` unless the number of pending objects
    /// changed.
    pub fn new(out: W, every: Duration) -> Self {
        LineProgress { out, every, last_wait: None }
    }
}

impl<W: Write> Progress for LineProgress<W> {
    fn event(&mut self, event: &Event<'_>) {
        if let Event::Waiting { pending, .. } = event {
            let now = Instant::now();
            let due = self.last_wait.is_none_or(|(at, count)| count != pending.len() || now - at >= self.every);
            if !due {
                return;
            }
            self.last_wait = Some((now, pending.len()));
        }
        if matches!(event, Event::WaveStarted { .. }) {
            self.last_wait = None;
        }
        if let Some(line) = plain_line(event) {
            let _ = writeln!(self.out, "{line}");
        }
    }
}

/// Keeps every line (and every applied object) for tests.
#[derive(Debug, Default)]
pub struct RecordingProgress {
    /// Every line, as [`plain_line`] words it.
    pub lines: Vec<String>,
    pub(crate) applied: Vec<ObjectRef>,
}

impl Progress for RecordingProgress {
    fn event(&mut self, event: &Event<'_>) {
        if let Event::Applied { object, .. } = event {
            self.applied.push((*object).clone());
        }
        if let Some(line) = plain_line(event) {
            self.lines.push(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(name: &str, message: &str) -> Pending {
        let object = ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("kubeflow".into()),
            name: name.into(),
        };
        Pending { object, message: message.into() }
    }

    #[test]
    fn waiting_line_names_what_is_pending() {
        let line = waiting_line(&[pending("ml-pipeline", "0/1 ready")], 12);
        assert_eq!(line, "waiting for 1 of 12: Deployment kubeflow/ml-pipeline (0/1 ready)");
        let many: Vec<Pending> = (0..7).map(|i| pending(&format!("d{i}"), "0/1 ready")).collect();
        assert!(waiting_line(&many, 9).ends_with(", and 2 more"));
    }

    #[test]
    fn line_progress_throttles_repeated_waiting_lines() {
        let mut out = Vec::new();
        {
            let mut p = LineProgress::new(&mut out, Duration::from_secs(60));
            let list = [pending("a", "0/1 ready")];
            for _ in 0..3 {
                p.event(&Event::Waiting { pending: &list, total: 2, clock: RunClock::default() });
            }
        }
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1);
    }
}
