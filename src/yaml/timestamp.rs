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
//! invalid date such as `2024-13-01` stays plain. This module re-implements exactly the parts of
//! `time.Parse` those layouts exercise: one- or two-digit fields, the range checks (month 1-12,
//! hour < 24, minute and second < 60, day within the month, leap years included), an optional
//! `.`/`,` fraction of any length, and the `Z`/`±hh:mm` zone (hour ≤ 24, minute ≤ 60).

/// Whether go-yaml would read `s` (as a plain scalar) as a timestamp.
pub(crate) fn is_go_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let Some((year, month, day, rest)) = parse_date(b) else { return false };
    if !day_in_month(year, month, day) {
        return false;
    }
    match rest.first() {
        None => true,
        Some(b'T' | b't') => parse_clock(&rest[1..]).is_some_and(parse_zone),
        Some(b' ') => {
            let after_spaces = &rest[rest.iter().take_while(|c| **c == b' ').count()..];
            parse_clock(after_spaces).is_some_and(<[u8]>::is_empty)
        }
        Some(_) => false,
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

/// `15:4:5.999999999`: hour < 24, minute < 60, second < 60, optional fraction.
/// Returns what follows.
fn parse_clock(b: &[u8]) -> Option<&[u8]> {
    let (hour, rest) = get_num(b)?;
    let (minute, rest) = get_num(expect(rest, b':')?)?;
    let (second, rest) = get_num(expect(rest, b':')?)?;
    if hour >= 24 || minute >= 60 || second >= 60 {
        return None;
    }
    Some(skip_fraction(rest))
}

/// `.999999999`: a `.` or `,` followed by at least one digit starts a fraction of any length;
/// anything else means the fraction is omitted.
fn skip_fraction(b: &[u8]) -> &[u8] {
    if b.len() >= 2 && matches!(b[0], b'.' | b',') && b[1].is_ascii_digit() {
        let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        &b[1 + digits..]
    } else {
        b
    }
}

/// `Z07:00`: `Z`, or a sign with two-digit hours (≤ 24) and minutes (≤ 60); nothing may follow.
fn parse_zone(b: &[u8]) -> bool {
    if b == b"Z" {
        return true;
    }
    if b.len() != 6 || b[3] != b':' || !matches!(b[0], b'+' | b'-') {
        return false;
    }
    let two_digits = |p: &[u8]| p.iter().all(u8::is_ascii_digit).then(|| digits_value(p));
    matches!((two_digits(&b[1..3]), two_digits(&b[4..6])), (Some(h), Some(m)) if h <= 24 && m <= 60)
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
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
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
    use super::is_go_timestamp;

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
