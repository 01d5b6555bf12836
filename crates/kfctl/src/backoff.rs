//! Exponential backoff with jitter, written once for every retry loop of the crate.
//!
//! The delay before retry `attempt` (0-based) grows from `initial`, doubling each time, and is
//! capped at `max` ([`Backoff::ceiling`]). Two jitter shapes spread it:
//!
//! - [`Backoff::delay`]: ±25 % around the ceiling (never above `max`). The cluster loops use it:
//!   server-side apply (`cluster::engine`, 250 ms to 10 s by default), preflight's `/version`
//!   (300 ms to 2 s, without jitter: `unit` 0.5) and uninstall's deletes (200 ms to 2 s).
//! - [`Backoff::full_jitter`]: anywhere in `[0, ceiling]`. HTTPS downloads use it
//!   (`source::fetch`, 500 ms to 10 s by default), so clients retrying one mirror spread out.
//!
//! The functions are pure: the random `unit` in [0, 1) comes from the caller, [`jitter_unit`]
//! in production and a constant in tests. No backoff crate: the arithmetic is a few lines.

use std::time::Duration;

/// Exponential backoff: `initial`, doubled per attempt, capped at `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The delay before the first retry.
    pub initial: Duration,
    /// The longest delay.
    pub max: Duration,
}

/// Attempts beyond this double no further (2^30 × any initial delay exceeds every cap we use).
const MAX_DOUBLINGS: u32 = 30;

impl Default for Backoff {
    /// The install engine's: 250 ms doubling to 10 s.
    fn default() -> Self {
        Backoff { initial: Duration::from_millis(250), max: Duration::from_secs(10) }
    }
}

impl Backoff {
    /// The delay before retry number `attempt` (0-based) without jitter.
    pub(crate) fn ceiling(&self, attempt: u32) -> Duration {
        self.initial.saturating_mul(1u32 << attempt.min(MAX_DOUBLINGS)).min(self.max)
    }

    /// The ceiling spread by ±25 %: `unit` in [0, 1) maps to 0.75×…1.25×, never above `max`.
    pub(crate) fn delay(&self, attempt: u32, unit: f64) -> Duration {
        let spread = 0.75 + unit.clamp(0.0, 1.0) * 0.5;
        self.ceiling(attempt).mul_f64(spread).min(self.max)
    }

    /// Full jitter: `unit` in [0, 1] maps to a wait in [0, ceiling].
    pub(crate) fn full_jitter(&self, attempt: u32, unit: f64) -> Duration {
        self.ceiling(attempt).mul_f64(unit.clamp(0.0, 1.0))
    }
}

/// A random number in [0, 1) for jitter; 0.5 when the system has no randomness to give.
pub fn jitter_unit() -> f64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let b = Backoff { initial: Duration::from_millis(100), max: Duration::from_secs(1) };
        assert_eq!(b.delay(0, 0.5), Duration::from_millis(100));
        assert_eq!(b.delay(2, 0.5), Duration::from_millis(400));
        assert_eq!(b.delay(10, 0.5), Duration::from_secs(1));
        assert!(b.delay(1, 0.0) < b.delay(1, 0.99));
        let unit = jitter_unit();
        assert!((0.0..1.0).contains(&unit));
    }

    #[test]
    fn spread_stays_within_a_quarter_and_under_the_cap() {
        let b = Backoff { initial: Duration::from_millis(200), max: Duration::from_millis(500) };
        assert_eq!(b.delay(0, 0.0), Duration::from_millis(150));
        assert_eq!(b.delay(0, 1.0), Duration::from_millis(250));
        assert_eq!(b.delay(1, 1.0), Duration::from_millis(500), "400 ms × 1.25 is capped");
        assert_eq!(b.delay(u32::MAX, 0.5), Duration::from_millis(500), "no overflow");
    }

    #[test]
    fn full_jitter_spans_zero_to_the_ceiling() {
        let b = Backoff { initial: Duration::from_millis(100), max: Duration::from_millis(250) };
        assert_eq!(b.full_jitter(0, 0.0), Duration::ZERO);
        assert_eq!(b.full_jitter(0, 1.0), Duration::from_millis(100));
        assert_eq!(b.full_jitter(1, 0.5), Duration::from_millis(100));
        assert_eq!(b.full_jitter(4, 1.0), Duration::from_millis(250));
        assert_eq!(Backoff::default().ceiling(0), Duration::from_millis(250));
    }
}
