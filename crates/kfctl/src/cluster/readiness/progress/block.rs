//! The pending list a person reads while a wave waits.
//!
//! A single status line cut at the terminal's width loses exactly what matters: which object
//! is still pending and why. [`pending_block`] lays the same facts out as a block instead: a
//! header with the counts, the time the run has taken and the time left until its `--timeout`
//! deadline, then one entry per pending object (its kind, namespace and name, what it waits
//! for, and for how long), each wrapped to the terminal's width with an indented continuation,
//! never cut. Past [`LISTED_PENDING`] entries the rest are counted on a last line.
//!
//! How long an object has been pending is the renderer's own observation ([`PendingSince`]:
//! the first time a waiting list named it), so the engine's events stay plain data.

use super::{Pending, RunClock};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How many pending objects the block lists before "… and N more".
pub(crate) const LISTED_PENDING: usize = 8;

/// The narrowest width the block wraps to (a smaller terminal gets lines of this width).
const MIN_WIDTH: usize = 40;

/// Continuation lines of an entry start with this.
const CONTINUATION: &str = "      ";

/// When each pending object was first seen pending, by its display name.
#[derive(Debug, Default)]
pub struct PendingSince {
    first_seen: HashMap<String, Instant>,
}

impl PendingSince {
    /// How long each of `pending` has been pending as of `now` (zero for one seen first now);
    /// objects no longer pending are forgotten.
    pub fn observe(&mut self, pending: &[Pending], now: Instant) -> Vec<Duration> {
        let names: Vec<String> = pending.iter().map(|p| p.object.to_string()).collect();
        self.first_seen.retain(|name, _| names.contains(name));
        names.into_iter().map(|name| now - *self.first_seen.entry(name).or_insert(now)).collect()
    }

    /// Forget everything (a new wave starts).
    pub fn reset(&mut self) {
        self.first_seen.clear();
    }
}

/// `1m05s`, `12s`, `1h02m`.
pub fn short_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// The header: `waiting for 2 of 42 · 3m12s elapsed · deadline in 16m48s (--timeout 20m00s)`.
pub(crate) fn header(pending: usize, total: usize, clock: &RunClock) -> String {
    let mut text = format!("waiting for {pending} of {total}");
    if let Some(left) = clock.left {
        text.push_str(&format!(
            " · {} elapsed · deadline in {} (--timeout {})",
            short_duration(clock.elapsed),
            short_duration(left),
            short_duration(clock.elapsed + left)
        ));
    }
    text
}

/// The block for one waiting list, every line at most `width` columns (at least
/// `MIN_WIDTH`, 40 columns): the header, then `  - Kind ns/name: reason (for 1m05s)` per object.
pub fn pending_block(
    pending: &[Pending],
    total: usize,
    clock: &RunClock,
    pending_for: &[Duration],
    width: usize,
) -> Vec<String> {
    let width = width.max(MIN_WIDTH);
    let mut lines = wrap(&header(pending.len(), total, clock), width, "  ");
    for (i, p) in pending.iter().take(LISTED_PENDING).enumerate() {
        let waited = pending_for.get(i).map_or(String::new(), |d| format!(" (for {})", short_duration(*d)));
        let reason = if p.message.is_empty() { "not checked yet" } else { &p.message };
        lines.extend(wrap(&format!("  - {}: {reason}{waited}", p.object), width, CONTINUATION));
    }
    if pending.len() > LISTED_PENDING {
        lines.push(format!("  … and {} more", pending.len() - LISTED_PENDING));
    }
    lines
}

/// `text` in lines of at most `width` characters, broken at spaces where it can be (a word
/// longer than a line is split), each line after the first starting with `indent`.
pub fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let room = |line: &String| width.saturating_sub(line.chars().count());
        let separator = usize::from(!line.is_empty() && line != indent);
        if word.chars().count() + separator > room(&line) && !line.trim().is_empty() {
            lines.push(std::mem::replace(&mut line, indent.to_string()));
        }
        if !line.is_empty() && line != indent {
            line.push(' ');
        }
        let mut rest: Vec<char> = word.chars().collect();
        while rest.len() > room(&line) && room(&line) > 0 {
            let head: String = rest.drain(..room(&line)).collect();
            line.push_str(&head);
            lines.push(std::mem::replace(&mut line, indent.to_string()));
        }
        line.extend(rest);
    }
    if !line.trim().is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::object::ObjectRef;

    fn pending(kind: &str, namespace: &str, name: &str, message: &str) -> Pending {
        let object = ObjectRef {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: Some(namespace.into()),
            name: name.into(),
        };
        Pending { object, message: message.into() }
    }

    fn clock() -> RunClock {
        RunClock { elapsed: Duration::from_secs(192), left: Some(Duration::from_secs(1008)) }
    }

    /// The block's text with the wrapping undone: continuation lines joined back.
    fn unwrapped(lines: &[String]) -> String {
        let mut text = String::new();
        for line in lines {
            if let Some(rest) = line.strip_prefix(CONTINUATION) {
                text.push(' ');
                text.push_str(rest);
            } else {
                text.push('\n');
                text.push_str(line);
            }
        }
        text
    }

    fn many() -> Vec<Pending> {
        vec![
            pending(
                "Deployment",
                "kubeflow",
                "ml-pipeline-persistenceagent-with-a-rather-long-name",
                "0/1 ready: container ml-pipeline-persistenceagent is waiting (CrashLoopBackOff: back-off 2m40s restarting failed container)",
            ),
            pending("StatefulSet", "kubeflow", "metadata-db", "0/1 ready"),
            pending("Deployment", "kubeflow", "katib-controller", ""),
        ]
    }

    #[test]
    fn at_80_and_120_columns_every_pending_object_its_reason_and_its_wait_are_shown_whole() {
        let list = many();
        let waited = [Duration::from_secs(65), Duration::from_secs(3), Duration::from_secs(0)];
        for width in [80, 120] {
            let lines = pending_block(&list, 42, &clock(), &waited, width);
            assert!(lines.iter().all(|l| l.chars().count() <= width), "{width}: {lines:#?}");
            let text = unwrapped(&lines);
            assert!(
                text.contains("waiting for 3 of 42 · 3m12s elapsed · deadline in 16m48s (--timeout 20m00s)"),
                "{text}"
            );
            for p in &list {
                let reason = if p.message.is_empty() { "not checked yet" } else { &p.message };
                assert!(text.contains(&format!("{}: {reason}", p.object)), "{width}: {text}");
            }
            assert!(
                text.contains("(CrashLoopBackOff: back-off 2m40s restarting failed container) (for 1m05s)"),
                "{text}"
            );
        }
        assert!(
            pending_block(&list, 42, &clock(), &waited, 80).len()
                > pending_block(&list, 42, &clock(), &waited, 120).len()
        );
    }

    #[test]
    fn more_than_the_listed_are_counted_and_a_run_without_deadline_shows_none() {
        let list: Vec<Pending> = (0..11).map(|i| pending("Deployment", "kf", &format!("d{i}"), "0/1 ready")).collect();
        let lines = pending_block(&list, 20, &RunClock::default(), &[], 100);
        assert_eq!(lines.first().unwrap(), "waiting for 11 of 20");
        assert_eq!(lines.last().unwrap(), "  … and 3 more");
        assert_eq!(lines.len(), 1 + LISTED_PENDING + 1);
    }

    #[test]
    fn a_word_longer_than_the_line_is_split_not_cut() {
        let long = "x".repeat(100);
        let lines = wrap(&format!("a {long} b"), 40, "  ");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        let joined: String = lines.iter().map(|l| l.trim_start()).collect::<Vec<_>>().join("");
        assert_eq!(joined.matches('x').count(), 100);
    }

    #[test]
    fn pending_since_counts_from_first_sight_and_forgets_the_ready() {
        let mut since = PendingSince::default();
        let start = Instant::now();
        let both = [pending("Deployment", "kf", "a", ""), pending("Deployment", "kf", "b", "")];
        assert_eq!(since.observe(&both, start), [Duration::ZERO, Duration::ZERO]);
        let later = start + Duration::from_secs(5);
        assert_eq!(since.observe(&both[1..], later), [Duration::from_secs(5)]);
        assert_eq!(since.observe(&both, later), [Duration::ZERO, Duration::from_secs(5)]);
    }

    #[test]
    fn durations_read_as_a_person_writes_them() {
        assert_eq!(short_duration(Duration::from_secs(7)), "7s");
        assert_eq!(short_duration(Duration::from_secs(65)), "1m05s");
        assert_eq!(short_duration(Duration::from_secs(3720)), "1h02m");
    }
}
