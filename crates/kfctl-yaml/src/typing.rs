//! Typing on the way in: what a scalar (or a key) becomes, given its style and tag.
//!
//! go-yaml v3, decoding into `map[string]interface{}` as kustomize does:
//! - an untagged (or `!`-tagged) plain scalar is typed by [`resolve_plain`]; a timestamp becomes
//!   the RFC 3339 text Go's JSON writes for a `time.Time` (`2024-01-01` →
//!   `2024-01-01T00:00:00Z`); `.inf`/`.nan`, which JSON cannot carry, keep their text;
//! - quoted and block scalars are strings;
//! - `!!str` forces a string, `!!int`/`!!float`/`!!bool`/`!!null`/`!!timestamp` must match what
//!   the text resolves to (an integer may stand for a float: `!!float 1` is `1.0`), `!!binary`
//!   is base64-decoded, any other tag makes a string of the text;
//! - a key keeps its source text (`0x1F: a` has the key `"0x1F"`), a key that resolves to null
//!   drops its entry, a plain `<<` (or `!!merge`) key merges maps in.

use std::borrow::Cow;

use granit_parser::ScalarStyle;
use serde_json::{Map, Number, Value};

use super::resolve::{Plain, resolve_plain};

const CORE_TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// What the next node of an open mapping is for.
pub(super) enum KeySlot {
    /// The next node is a key.
    Expecting,
    /// The next node is the value of this key.
    Key(String),
    /// The next node is a `<<` merge source.
    Merge,
    /// The next node is the value of a null key; v3 drops the entry.
    Dropped,
}

/// The value of a scalar event. `tag` is the full tag (handle and suffix) if any.
pub(super) fn scalar_value(text: Cow<'_, str>, style: ScalarStyle, tag: Option<&str>) -> Result<Value, String> {
    match tag {
        None | Some("!") if style == ScalarStyle::Plain => Ok(plain_to_value(text, resolve_plain)),
        None | Some("!") => Ok(Value::String(text.into_owned())),
        Some(tag) => match tag.strip_prefix(CORE_TAG_PREFIX) {
            Some("str") => Ok(Value::String(text.into_owned())),
            Some("binary") => {
                decode_binary(&text).ok_or_else(|| "!!binary value contains invalid base64 data".to_string())
            }
            Some(short @ ("null" | "bool" | "int" | "float" | "timestamp")) => tagged_value(text, short),
            _ => Ok(Value::String(text.into_owned())),
        },
    }
}

/// v3's resolve with an explicit core tag: the text must resolve to that type (an integer
/// may stand for a float).
fn tagged_value(text: Cow<'_, str>, tag: &str) -> Result<Value, String> {
    let plain = resolve_plain(&text);
    let resolved_tag = match plain {
        Plain::Null => "null",
        Plain::Bool(_) => "bool",
        Plain::Int(_) | Plain::Uint(_) => "int",
        Plain::Float(_) | Plain::NonFinite => "float",
        Plain::Timestamp(_) => "timestamp",
        Plain::Str => "str",
    };
    match (tag, plain) {
        (_, plain) if resolved_tag == tag => Ok(plain_to_value(text, |_| plain)),
        ("float", Plain::Int(i)) => Ok(plain_to_value(text, |_| Plain::Float(i as f64))),
        _ => Err(format!("cannot decode !!{resolved_tag} `{text}` as a !!{tag}")),
    }
}

/// What a scalar in key position means: a key text, a merge, or a dropped (null) key.
pub(super) fn key_slot(text: Cow<'_, str>, style: ScalarStyle, tag: Option<&str>) -> KeySlot {
    let is_merge_tag = tag == Some("tag:yaml.org,2002:merge");
    if text == "<<" && (is_merge_tag || (tag.is_none() && style == ScalarStyle::Plain)) {
        return KeySlot::Merge;
    }
    let null_key = match tag {
        None => style == ScalarStyle::Plain && resolve_plain(&text) == Plain::Null,
        Some(t) => t == "tag:yaml.org,2002:null",
    };
    if null_key { KeySlot::Dropped } else { KeySlot::Key(text.into_owned()) }
}

/// The value of a scalar typed by `typing`; strings reuse the parser's buffer when it owns one.
fn plain_to_value(text: Cow<'_, str>, typing: impl FnOnce(&str) -> Plain) -> Value {
    match typing(&text) {
        Plain::Null => Value::Null,
        Plain::Bool(b) => Value::Bool(b),
        Plain::Int(i) => Value::Number(i.into()),
        Plain::Uint(u) => Value::Number(u.into()),
        Plain::Float(f) => Number::from_f64(f).map_or_else(|| Value::String(text.into_owned()), Value::Number),
        Plain::Timestamp(t) => Value::String(t.to_rfc3339_nano()),
        Plain::NonFinite | Plain::Str => Value::String(text.into_owned()),
    }
}

pub(super) fn is_merge_source(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().all(Value::is_object),
        _ => false,
    }
}

/// Merge keys fill in what the mapping does not define; earlier sources win over later ones.
pub(super) fn apply_merge(map: &mut Map<String, Value>, source: Value) {
    let sources = match source {
        Value::Object(m) => vec![m],
        Value::Array(items) => items
            .into_iter()
            .filter_map(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for source in sources {
        for (key, value) in source {
            map.entry(key).or_insert(value);
        }
    }
}

/// `!!binary`: padded standard base64 (line breaks ignored, as Go's `DecodeString` does,
/// and non-zero trailing bits accepted as Go's non-strict `StdEncoding` does); the decoded
/// bytes are read as UTF-8 with replacement characters, as Go's JSON encoder writes an
/// invalid string.
fn decode_binary(text: &str) -> Option<Value> {
    use base64::Engine as _;
    use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
    const GO_STD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    let joined: Vec<u8> = text.bytes().filter(|c| !matches!(c, b'\r' | b'\n')).collect();
    let bytes = GO_STD.decode(joined).ok()?;
    Some(Value::String(String::from_utf8_lossy(&bytes).into_owned()))
}
