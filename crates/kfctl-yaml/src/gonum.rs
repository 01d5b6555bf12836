//! Go's number grammar, as go-yaml sees it.
//!
//! go-yaml decides whether a plain scalar is a number by calling Go's `strconv.ParseInt`,
//! `ParseUint` and `ParseFloat` and by matching a "YAML style float" regular expression. Rust's
//! parsers accept a different language (no `0x`/`0o`/`0b` prefixes, no legacy `0755` octal, no
//! `_` separators, Rust accepts `inf`), so this module re-implements exactly the Go grammar the
//! resolvers depend on:
//!
//! - [`parse_int`] / [`parse_uint`]: `strconv.ParseInt(s, base, 64)` / `ParseUint`, including
//!   base 0 prefix detection (`0x`, `0o`, `0b`, leading `0` = octal) and the int64/uint64 ranges;
//! - [`parse_float_ok`]: whether `strconv.ParseFloat(s, 64)` succeeds for a decimal spelling
//!   (underscores allowed only between digits; overflow to ±Inf is an error, underflow is not);
//! - [`is_yaml_style_float`]: go-yaml's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`;
//! - [`is_base60_float`]: go-yaml's YAML 1.1 sexagesimal check (`1:20`), quoted on output;
//! - [`format_float_g`]: `strconv.FormatFloat(f, 'g', -1, 64)`, the spelling of floats in
//!   kustomize output (`1.2345675e+06`, `1e-05`, `0.1`).

/// What `strconv.ParseUint(s, base, 64)` returns: `None` on a syntax or range error.
pub(crate) fn parse_uint(s: &str, base: u32) -> Option<u64> {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    let (base, digits) = if base == 0 { detect_base(bytes) } else { (base, bytes) };
    let mut n: u64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'z' | b'A'..=b'Z' => u32::from(c.to_ascii_lowercase() - b'a') + 10,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Base-0 prefix detection of `strconv.ParseUint`: `0b`, `0o`, `0x` need at least one more
/// byte; any other leading `0` selects octal.
fn detect_base(s: &[u8]) -> (u32, &[u8]) {
    if s[0] != b'0' {
        return (10, s);
    }
    match s.get(1).map(u8::to_ascii_lowercase) {
        Some(b'b') if s.len() >= 3 => (2, &s[2..]),
        Some(b'o') if s.len() >= 3 => (8, &s[2..]),
        Some(b'x') if s.len() >= 3 => (16, &s[2..]),
        _ => (8, &s[1..]),
    }
}

/// What `strconv.ParseInt(s, base, 64)` returns: `None` on a syntax or range error.
pub(crate) fn parse_int(s: &str, base: u32) -> Option<i64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_uint(rest, base)?;
    if negative {
        if magnitude <= 1u64 << 63 { Some(0i64.wrapping_sub_unsigned(magnitude)) } else { None }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Whether `strconv.ParseFloat(s, 64)` succeeds on a decimal spelling (the only kind the
/// resolvers pass it: strings starting with `.`, or strings matching the YAML float shape).
/// Hexadecimal floats and `inf`/`nan` words are never reached there and are rejected here.
pub(crate) fn parse_float_ok(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let (mut saw_digits, mut saw_dot, mut underscores) = (false, false, false);
    while i < b.len() {
        match b[i] {
            b'_' => underscores = true,
            b'.' if !saw_dot => saw_dot = true,
            b'0'..=b'9' => saw_digits = true,
            _ => break,
        }
        i += 1;
    }
    if !saw_digits {
        return None;
    }
    if i < b.len() && (b[i] | 0x20) == b'e' {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !matches!(b.get(i), Some(b'0'..=b'9')) {
            return None;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            underscores |= b[i] == b'_';
            i += 1;
        }
    }
    if i != b.len() || (underscores && !underscore_ok(b)) {
        return None;
    }
    let cleaned: String = s.chars().filter(|&c| c != '_').collect();
    let value: f64 = cleaned.parse().ok()?;
    value.is_finite().then_some(value)
}

/// Go's `underscoreOK`: underscores only between digits (or after a base prefix).
fn underscore_ok(s: &[u8]) -> bool {
    let mut saw = b'^';
    let mut i = usize::from(matches!(s.first(), Some(b'+' | b'-')));
    let mut hex = false;
    if s.len() >= i + 2 && s[i] == b'0' && matches!(s[i + 1] | 0x20, b'b' | b'o' | b'x') {
        hex = (s[i + 1] | 0x20) == b'x';
        i += 2;
        saw = b'0';
    }
    for &c in &s[i..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub(crate) fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_digits = count_digits(&b[i..]);
    i += int_digits;
    if int_digits == 0 {
        if b.get(i) != Some(&b'.') {
            return false;
        }
        let frac = count_digits(&b[i + 1..]);
        if frac == 0 {
            return false;
        }
        i += 1 + frac;
    } else if b.get(i) == Some(&b'.') {
        i += 1 + count_digits(&b[i + 1..]);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp = count_digits(&b[i..]);
        if exp == 0 {
            return false;
        }
        i += exp;
    }
    i == b.len()
}

fn count_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// go-yaml's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
pub(crate) fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    if !(first == b'+' || first == b'-' || first.is_ascii_digit()) || !s.contains(':') {
        return false;
    }
    let mut i = usize::from(first == b'+' || first == b'-');
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1 + b[i + 1..].iter().take_while(|c| c.is_ascii_digit() || **c == b'_').count();
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        let group = sexagesimal_group(&b[i + 1..]);
        if group == 0 {
            return false;
        }
        i += 1 + group;
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1 + b[i + 1..].iter().take_while(|c| c.is_ascii_digit() || **c == b'_').count();
    }
    i == b.len()
}

/// Length of a `[0-5]?[0-9]` match at the start of `b` (greedy, as the regexp engine would
/// settle it given what may follow: a digit pair when the first is 0-5 and a digit follows).
fn sexagesimal_group(b: &[u8]) -> usize {
    match (b.first(), b.get(1)) {
        (Some(b'0'..=b'5'), Some(c)) if c.is_ascii_digit() => 2,
        (Some(c), _) if c.is_ascii_digit() => 1,
        _ => 0,
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits that round-trip, in `%e` form
/// when the decimal exponent is below -4 or at least 6 (the "shortest" precision rule), else
/// in `%f` form.
pub(crate) fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exponent.parse().unwrap_or(0);
    let mut out = String::with_capacity(digits.len() + 8);
    if f < 0.0 {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(if exp < 0 { "e-" } else { "e+" });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    } else {
        push_fixed(&mut out, &digits, exp + 1);
    }
    out
}

/// `%f` layout of `0.DIGITS × 10^point`, with no trailing zeros beyond the shortest digits.
fn push_fixed(out: &mut String, digits: &str, point: i32) {
    let nd = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(digits);
    } else if point >= nd {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (point - nd) as usize));
    } else {
        let (int_part, frac_part) = digits.split_at(point as usize);
        out.push_str(int_part);
        out.push('.');
        out.push_str(frac_part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_uint_detects_go_base_prefixes() {
        assert_eq!(parse_uint("0x1F", 0), Some(31));
        assert_eq!(parse_uint("0o17", 0), Some(15));
        assert_eq!(parse_uint("017", 0), Some(15));
        assert_eq!(parse_uint("0b101", 0), Some(5));
        assert_eq!(parse_uint("0", 0), Some(0));
        assert_eq!(parse_uint("08", 0), None, "8 is not an octal digit");
        assert_eq!(parse_uint("0x", 0), None, "a prefix needs digits after it");
        assert_eq!(parse_uint("+1", 0), None, "ParseUint takes no sign");
        assert_eq!(parse_uint("18446744073709551615", 0), Some(u64::MAX));
        assert_eq!(parse_uint("18446744073709551616", 0), None);
    }

    #[test]
    fn parse_int_applies_sign_and_int64_range() {
        assert_eq!(parse_int("-0x10", 0), Some(-16));
        assert_eq!(parse_int("+7", 0), Some(7));
        assert_eq!(parse_int("-9223372036854775808", 0), Some(i64::MIN));
        assert_eq!(parse_int("9223372036854775808", 0), None);
        assert_eq!(parse_int("-101", 2), Some(-5));
        assert_eq!(parse_int("-", 0), None);
    }

    #[test]
    fn parse_float_follows_go_decimal_syntax() {
        assert_eq!(parse_float_ok(".5"), Some(0.5));
        assert_eq!(parse_float_ok(".5_5"), Some(0.55));
        assert_eq!(parse_float_ok("._5"), None);
        assert_eq!(parse_float_ok(".5_"), None);
        assert_eq!(parse_float_ok("."), None);
        assert_eq!(parse_float_ok(".e1"), None);
        assert_eq!(parse_float_ok(".1e400"), None, "overflow is a range error");
        assert_eq!(parse_float_ok(".1e-400"), Some(0.0), "underflow is not an error");
        assert_eq!(parse_float_ok(".inf"), None);
    }

    #[test]
    fn yaml_style_float_shape() {
        for yes in ["1", "1.", "1.5", ".5", "-1e3", "+1.5E-7", "08"] {
            assert!(is_yaml_style_float(yes), "{yes}");
        }
        for no in ["", ".", "1e", "e1", "1.5.5", "0x1", "1_0", "+", ".e3"] {
            assert!(!is_yaml_style_float(no), "{no}");
        }
    }

    #[test]
    fn base60_float_shape() {
        for yes in ["1:20", "-1:20:30", "190:20:30.15", "1_0:5", "1:5."] {
            assert!(is_base60_float(yes), "{yes}");
        }
        for no in ["1:60", "1:", ":1", "a:1", "1:2:x", "1", "12:345"] {
            assert!(!is_base60_float(no), "{no}");
        }
    }

    #[test]
    fn format_float_g_matches_go() {
        let cases = [
            (1.5, "1.5"),
            (1_234_567.5, "1.2345675e+06"),
            (123_456.5, "123456.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e21, "1e+21"),
            (1e-7, "1e-07"),
            (123_456_789.123, "1.23456789123e+08"),
            (-2.5e-300, "-2.5e-300"),
            (0.1, "0.1"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_float_g(value), expected, "{value}");
        }
    }
}
