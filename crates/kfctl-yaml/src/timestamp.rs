//! go-yaml's timestamp recognition, needed to quote date-like strings on output.
//!
//! go-yaml v2 (the encoder behind kustomize's output) resolves a plain scalar to
//! `!!timestamp` when Go's `time.Parse` accepts it in one of four layouts:
//!
//! | layout | example |
//! |---|---|
//! | `2006-1-2T15:4:5.999999999Z07:00` | `2024-01-02T03:04:05.5Z`, `2024-1-2T3:4:5+01:00` |
//! | `2006-1-2t15:4:5.999999999Z07:00` | the same with a lowercase `t` |
//! | `2006-1-2 15:4:5.999999999` | `2024-01-02 03:04:05` (one or more spaces) |
//! | `2006-1-2` | `2024-01-02` |
//!
//! A string that resolves to a timestamp is written double-quoted (`"2024-01-01"`), while an
//! invalid date such as `2024-13-01` stays plain. On the way in, kustomize decodes a plain
//! timestamp into a Go `time.Time`, which its JSON step writes in RFC 3339 form:
//! `2024-01-01` in a manifest comes out as `"2024-01-01T00:00:00Z"`
//! ([`Timestamp::to_rfc3339_nano`]). This module re-implements exactly the parts of
//! `time.Parse` those layouts exercise: one- or two-digit fields, the range checks (month 1-12,
//! hour < 24, minute and second < 60, day within the month, leap years included), an optional
//! `.`/`,` fraction of any length, and the `Z`/`±hh:mm` zone (hour ≤ 24, minute ≤ 60).

/// A timestamp as Go's `time.Parse` understood it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timestamp {
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
    /// Zone offset in minutes east of UTC (`Z` and zone-less layouts are UTC, offset 0).
    offset_minutes: i32,
}

/// Whether go-yaml would read `s` (as a plain scalar) as a timestamp.
pub(crate) fn is_go_timestamp(s: &str) -> bool {
    parse_go_timestamp(s).is_some()
}

/// Parse `s` with go-yaml's four timestamp layouts.
pub(crate) fn parse_go_timestamp(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let (year, month, day, rest) = parse_date(b)?;
    if !day_in_month(year, month, day) {
        return None;
    }
    let date = Timestamp { year, month, day, hour: 0, minute: 0, second: 0, nanos: 0, offset_minutes: 0 };
    match rest.first() {
        None => Some(date),
        Some(b'T' | b't') => {
            let (clock, rest) = parse_clock(&rest[1..])?;
            let offset_minutes = parse_zone(rest)?;
            Some(Timestamp { offset_minutes, ..clock.on(date) })
        }
        Some(b' ') => {
            let after_spaces = &rest[rest.iter().take_while(|c| **c == b' ').count()..];
            let (clock, rest) = parse_clock(after_spaces)?;
            rest.is_empty().then(|| clock.on(date))
        }
        Some(_) => None,
    }
}

impl Timestamp {
    /// Go's `time.Time` JSON form (RFC 3339 with nanoseconds, trailing zeros trimmed, `Z` for a
    /// zero offset): what kustomize writes for a plain timestamp in its input.
    pub(crate) fn to_rfc3339_nano(self) -> String {
        let mut out = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        );
        if self.nanos != 0 {
            let fraction = format!("{:09}", self.nanos);
            out.push('.');
            out.push_str(fraction.trim_end_matches('0'));
        }
        if self.offset_minutes == 0 {
            out.push('Z');
        } else {
            let sign = if self.offset_minutes < 0 { '-' } else { '+' };
            let minutes = self.offset_minutes.unsigned_abs();
            out.push_str(&format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60));
        }
        out
    }
}

/// `2006-1-2`: four-digit year, then one- or two-digit month (1-12) and day.
fn parse_date(b: &[u8]) -> Option<(u32, u32, u32, &[u8])> {
    let year = digits_value(&b[..4]);
    let (month, rest) = get_num(expect(&b[4..], b'-')?)?;
    if !(1..=12).contains(&month) {
        return None;
    }
    let (day, rest) = get_num(expect(rest, b'-')?)?;
    Some((year, month, day, rest))
}

struct Clock {
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
}

impl Clock {
    fn on(self, date: Timestamp) -> Timestamp {
        Timestamp { hour: self.hour, minute: self.minute, second: self.second, nanos: self.nanos, ..date }
    }
}

/// `15:4:5.999999999`: hour < 24, minute < 60, second < 60, optional fraction.
fn parse_clock(b: &[u8]) -> Option<(Clock, &[u8])> {
    let (hour, rest) = get_num(b)?;
    let (minute, rest) = get_num(expect(rest, b':')?)?;
    let (second, rest) = get_num(expect(rest, b':')?)?;
    if hour >= 24 || minute >= 60 || second >= 60 {
        return None;
    }
    let (nanos, rest) = parse_fraction(rest);
    Some((Clock { hour, minute, second, nanos }, rest))
}

/// `.999999999`: a `.` or `,` followed by at least one digit starts a fraction of any length
/// (digits past the ninth are ignored); anything else means the fraction is omitted.
fn parse_fraction(b: &[u8]) -> (u32, &[u8]) {
    if b.len() < 2 || !matches!(b[0], b'.' | b',') || !b[1].is_ascii_digit() {
        return (0, b);
    }
    let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    let kept = &b[1..1 + digits.min(9)];
    let nanos = digits_value(kept) * 10u32.pow(9 - kept.len() as u32);
    (nanos, &b[1 + digits..])
}

/// `Z07:00`: `Z`, or a sign with two-digit hours (≤ 24) and minutes (≤ 60); nothing may follow.
/// Returns the offset in minutes.
fn parse_zone(b: &[u8]) -> Option<i32> {
    if b == b"Z" {
        return Some(0);
    }
    if b.len() != 6 || b[3] != b':' || !matches!(b[0], b'+' | b'-') {
        return None;
    }
    let two_digits = |p: &[u8]| p.iter().all(u8::is_ascii_digit).then(|| digits_value(p));
    let (hours, minutes) = (two_digits(&b[1..3])?, two_digits(&b[4..6])?);
    if hours > 24 || minutes > 60 {
        return None;
    }
    let offset = (hours * 60 + minutes) as i32;
    Some(if b[0] == b'-' { -offset } else { offset })
}

/// Go's `getnum(s, false)`: one digit, or two when a second digit follows.
fn get_num(b: &[u8]) -> Option<(u32, &[u8])> {
    let first = b.first().filter(|c| c.is_ascii_digit())?;
    match b.get(1) {
        Some(second) if second.is_ascii_digit() => Some((digits_value(&b[..2]), &b[2..])),
        _ => Some((u32::from(first - b'0'), &b[1..])),
    }
}

fn expect(b: &[u8], literal: u8) -> Option<&[u8]> {
    (b.first() == Some(&literal)).then(|| &b[1..])
}

fn digits_value(b: &[u8]) -> u32 {
    b.iter().fold(0, |n, c| n * 10 + u32::from(c - b'0'))
}

fn day_in_month(year: u32, month: u32, day: u32) -> bool {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&day)
}

#[cfg(test)]
mod tests {
    use super::{is_go_timestamp, parse_go_timestamp};

    #[test]
    fn dates_in_every_layout_are_timestamps() {
        for yes in [
            "2024-01-01",
            "2024-1-2",
            "2024-02-29",
            "2001-12-14t21:59:43.10Z",
            "2001-12-14T21:59:43.10-05:00",
            "2001-12-14T21:59:43,5+24:00",
            "2001-12-14T1:2:3Z",
            "2001-12-14 21:59:43.10",
            "2001-12-14   21:59:43",
        ] {
            assert!(is_go_timestamp(yes), "{yes}");
        }
    }

    #[test]
    fn timestamps_are_written_as_go_json_writes_time() {
        let rfc = |s: &str| parse_go_timestamp(s).map(|t| t.to_rfc3339_nano());
        assert_eq!(rfc("2024-01-01").as_deref(), Some("2024-01-01T00:00:00Z"));
        assert_eq!(rfc("2001-12-14t21:59:43.10-05:00").as_deref(), Some("2001-12-14T21:59:43.1-05:00"));
        assert_eq!(rfc("2001-2-3 4:5:6").as_deref(), Some("2001-02-03T04:05:06Z"));
        assert_eq!(rfc("2001-12-14T21:59:43.1234567891Z").as_deref(), Some("2001-12-14T21:59:43.123456789Z"));
        assert_eq!(rfc("2001-12-14T21:59:43.000+00:00").as_deref(), Some("2001-12-14T21:59:43Z"));
        assert_eq!(rfc("2001-12-14T21:59:43+05:30").as_deref(), Some("2001-12-14T21:59:43+05:30"));
    }

    #[test]
    fn invalid_dates_and_shapes_are_not_timestamps() {
        for no in [
            "2024-13-01",
            "2023-02-29",
            "2024-04-31",
            "2024-00-10",
            "2024-01-00",
            "2024-001-01",
            "2024-01-01T",
            "2024-01-01T10:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T10:00:00",
            "2024-01-01T10:00:00+1:00",
            "2024-01-01T10:00:00+25:00",
            "2024-01-01 10:00:00Z",
            "2024-01-01x",
            "20240-01-01",
            "v2024-01-01",
        ] {
            assert!(!is_go_timestamp(no), "{no}");
        }
    }
}
