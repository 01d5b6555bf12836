//! Plain-scalar typing, the two ways kustomize does it.
//!
//! kustomize reads with go-yaml **v3** and writes with go-yaml **v2** (kyaml decodes a resource
//! into Go values, `encoding/json` serializes them, and `sigs.k8s.io/yaml.JSONToYAML` re-encodes
//! with v2). The two resolvers differ, and both matter:
//!
//! - [`resolve_plain`] (reading, v3): `true`/`false` in three spellings are booleans, `null`,
//!   `~` and the empty scalar are null, integers follow Go's `ParseInt(s, 0, 64)` after removing
//!   `_` (so `0x1F`, `0o17`, legacy octal `017` and `1_000` are integers), then `ParseUint`,
//!   then floats in the "YAML style" shape (`08` is the float 8), then explicit `0b`/`0o` forms.
//!   Timestamps (`2024-01-01`) are recognized first. `yes`, `on`, `1:20` stay strings.
//! - [`plain_is_safe`] (writing, v2): a string can be written plain only if v2 would read it
//!   back as a string. v2 additionally treats the YAML 1.1 booleans (`y`, `yes`, `on`, `off`,
//!   `n`, `no` in three casings) and timestamps as typed, and kustomize's encoder also quotes
//!   base-60 numbers (`1:20`). Such strings are written double-quoted.
//!
//! Both share the first-byte "hint" table of go-yaml: only strings starting with a sign, a
//! digit, `.` or one of `yYnNtTfFoO~` (or the empty string) can resolve to anything but a string.

use super::gonum::{is_base60_float, is_yaml_style_float, parse_float_ok, parse_int, parse_uint};
use super::timestamp::{Timestamp, is_go_timestamp, parse_go_timestamp};

/// The typed value of a plain scalar, as go-yaml v3 decodes it into an `interface{}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// `.inf`, `-.inf`, `.nan`: a float JSON cannot carry (kustomize itself fails on them).
    NonFinite,
    /// A date or date-time in one of go-yaml's timestamp layouts.
    Timestamp(Timestamp),
    Str,
}

/// go-yaml's resolve-table hint for the first byte of a scalar.
#[derive(Clone, Copy, PartialEq)]
enum Hint {
    /// Cannot be anything but a string.
    None,
    /// `yYnNtTfFoO~`: a word from the table, or a string.
    Word,
    /// `.`: a table entry (`.inf`, `.nan`) or a float like `.5`.
    Dot,
    /// Digit or sign: int, float, timestamp or string.
    Number,
}

fn hint(s: &str) -> Hint {
    match s.as_bytes().first() {
        None => Hint::Word,
        Some(b'+' | b'-' | b'0'..=b'9') => Hint::Number,
        Some(b'.') => Hint::Dot,
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => Hint::Word,
        Some(_) => Hint::None,
    }
}

/// The v3 resolve table (booleans are YAML 1.2's three spellings only).
fn v3_table(s: &str) -> Option<Plain> {
    Some(match s {
        "true" | "True" | "TRUE" => Plain::Bool(true),
        "false" | "False" | "FALSE" => Plain::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => Plain::Null,
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf"
        | "-.INF" => Plain::NonFinite,
        _ => return None,
    })
}

/// The extra v2 table words that are not strings: YAML 1.1 booleans.
fn v2_extra_word(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF"
    )
}

/// How go-yaml v3 types an untagged plain scalar.
pub(crate) fn resolve_plain(s: &str) -> Plain {
    let h = hint(s);
    if h == Hint::None {
        return Plain::Str;
    }
    if let Some(found) = v3_table(s) {
        return found;
    }
    match h {
        Hint::Dot => parse_float_ok(s).map_or(Plain::Str, Plain::Float),
        Hint::Number => parse_go_timestamp(s).map_or_else(|| resolve_number(s, true), Plain::Timestamp),
        Hint::None | Hint::Word => Plain::Str,
    }
}

/// The digit/sign branch shared by both versions, after the timestamp check. `octal_prefix` enables v3's explicit
/// `0o`/`-0o` fallback, which v2 lacks.
fn resolve_number(s: &str, octal_prefix: bool) -> Plain {
    let plain: std::borrow::Cow<str> = if s.contains('_') { s.replace('_', "").into() } else { s.into() };
    if let Some(i) = parse_int(&plain, 0) {
        return Plain::Int(i);
    }
    if let Some(u) = parse_uint(&plain, 0) {
        return Plain::Uint(u);
    }
    if is_yaml_style_float(&plain)
        && let Some(f) = parse_float_ok(&plain)
    {
        return Plain::Float(f);
    }
    let explicit = |prefix: &str, base: u32| -> Option<Plain> {
        if let Some(digits) = plain.strip_prefix(prefix) {
            return parse_int(digits, base).map(Plain::Int).or_else(|| parse_uint(digits, base).map(Plain::Uint));
        }
        let negative = plain.strip_prefix('-')?.strip_prefix(prefix)?;
        parse_int(&format!("-{negative}"), base).map(Plain::Int)
    };
    if let Some(found) = explicit("0b", 2) {
        return found;
    }
    if octal_prefix && let Some(found) = explicit("0o", 8) {
        return found;
    }
    Plain::Str
}

/// Whether kustomize's encoder (go-yaml v2 plus its base-60 rule) may write `s` as a plain
/// scalar, i.e. v2 would read it back as the same string.
pub(crate) fn plain_is_safe(s: &str) -> bool {
    let h = hint(s);
    if h == Hint::None {
        return true;
    }
    if v3_table(s).is_some() || v2_extra_word(s) {
        return false;
    }
    match h {
        Hint::Dot => parse_float_ok(s).is_none(),
        Hint::Number => !is_go_timestamp(s) && resolve_number(s, false) == Plain::Str && !is_base60_float(s),
        Hint::None | Hint::Word => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_reads_yaml_1_2_booleans_and_go_integers() {
        assert_eq!(resolve_plain("true"), Plain::Bool(true));
        assert_eq!(resolve_plain("FALSE"), Plain::Bool(false));
        assert_eq!(resolve_plain("yes"), Plain::Str);
        assert_eq!(resolve_plain("on"), Plain::Str);
        assert_eq!(resolve_plain("~"), Plain::Null);
        assert_eq!(resolve_plain(""), Plain::Null);
        assert_eq!(resolve_plain("0x1F"), Plain::Int(31));
        assert_eq!(resolve_plain("017"), Plain::Int(15));
        assert_eq!(resolve_plain("0o17"), Plain::Int(15));
        assert_eq!(resolve_plain("0o-7"), Plain::Int(-7));
        assert_eq!(resolve_plain("1_000"), Plain::Int(1000));
        assert_eq!(resolve_plain("08"), Plain::Float(8.0));
        assert_eq!(resolve_plain("1e3"), Plain::Float(1000.0));
        assert_eq!(resolve_plain("12345678901234567890"), Plain::Uint(12_345_678_901_234_567_890));
        assert_eq!(resolve_plain(".5"), Plain::Float(0.5));
        assert_eq!(resolve_plain(".inf"), Plain::NonFinite);
        assert!(matches!(resolve_plain("2024-01-01"), Plain::Timestamp(_)));
        assert_eq!(resolve_plain("2024-13-01"), Plain::Str);
        assert_eq!(resolve_plain("1.16.2"), Plain::Str);
        assert_eq!(resolve_plain("0xFFFFFFFFFFFFFFFFFFFF"), Plain::Str);
        assert_eq!(resolve_plain("1e400"), Plain::Str);
        assert_eq!(resolve_plain("-"), Plain::Str);
    }

    #[test]
    fn v2_quotes_what_it_would_read_as_another_type() {
        for typed in [
            "true",
            "yes",
            "Y",
            "n",
            "Off",
            "null",
            "~",
            "",
            "8080",
            "-1",
            "0x1F",
            "08",
            "1e3",
            ".5",
            ".5_5",
            "+.5",
            "2024-01-01",
            "1:20",
            "0b1010",
            "0b-101",
            ".inf",
        ] {
            assert!(!plain_is_safe(typed), "{typed}");
        }
        for text in [
            "1.16.2",
            "yess",
            "<<",
            "2024-13-01",
            "0xFFFFFFFFFFFFFFFFFFFFFFFF",
            "1e400",
            "v1",
            "-",
            "a b",
            "0o17x",
            "1:60",
        ] {
            assert!(plain_is_safe(text), "{text}");
        }
    }
}
