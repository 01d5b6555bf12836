//! The objects of a cache entry in a compact binary form, read without a text parser.
//!
//! A warm render spent a third of its CPU parsing the entry's JSON back into values: scanning
//! for escapes, reading numbers from text, serde's visitor for every node. Here each object is
//! a record: its length (4 bytes, little-endian), then its origin, the entries that influenced
//! it, and the object itself, each value a tag byte and its payload:
//!
//! | tag | value | payload |
//! |---|---|---|
//! | 0, 1, 2 | null, false, true | none |
//! | 3, 4, 5 | a number held as i64, u64 or f64 | 8 bytes, little-endian |
//! | 6 | a string | its length (LEB128), its UTF-8 bytes |
//! | 7 | a list | its length (LEB128), the items |
//! | 8 | a map | its length (LEB128), then each key (length, bytes) and value, in order |
//!
//! A CustomResourceDefinition's version schemas follow the object in a section of their own,
//! the object holding `null` in their place (`deferred.rs`); every other record ends with a
//! 0 byte.
//!
//! Strings are stored as they are, so a record holds the bytes of every name in it: the
//! entry's loader can look for a name in the raw record before decoding it. Decoding checks
//! everything it reads (lengths within the record, UTF-8, finite floats, nesting under
//! [`MAX_DEPTH`]); anything else is `None`, and the entry is rebuilt as a torn one would be.

use serde_json::{Map, Number, Value};

/// The deepest nesting a record may hold (a build's objects are far shallower).
const MAX_DEPTH: usize = 512;

/// Append one record: `origin`, `influenced_by` and `obj`.
/// With `placed` (where a CRD's schemas and text are in the entry's regions), the object is
/// written as its stub.
pub(crate) fn write_record(
    out: &mut Vec<u8>,
    origin: Option<&str>,
    obj: &Value,
    influenced_by: &[&str],
    placed: Option<&super::deferred::Placed>,
) {
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    write_str(out, obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default());
    match origin {
        None => out.push(0),
        Some(origin) => {
            out.push(1);
            write_str(out, origin);
        }
    }
    write_len(out, influenced_by.len());
    for entry in influenced_by {
        write_str(out, entry);
    }
    match placed {
        None => write_value(out, obj),
        Some(placed) => super::deferred::write_stub(out, obj, placed),
    }
    let head = u32::try_from(out.len() - start - 8).unwrap_or(u32::MAX);
    out[start + 4..start + 8].copy_from_slice(&head.to_le_bytes());
    super::deferred::write_section(out, placed);
    let len = u32::try_from(out.len() - start - 4).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
}

/// A record's head: the object's name, its origin, influencing entries and the object (a
/// CRD's stub), without the deferred schemas.
fn record_head(record: &[u8]) -> Option<&[u8]> {
    let (len, rest) = record.split_first_chunk::<4>()?;
    rest.get(..u32::from_le_bytes(*len) as usize)
}

/// The object's `metadata.name` a record holds first (empty when it has none), read without
/// decoding the object.
pub(crate) fn record_name(record: &[u8]) -> Option<&str> {
    Reader::new(record_head(record)?).str()
}

/// The records of `body`, or `None` if a length runs past its end.
pub(crate) fn records(mut body: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let (len, rest) = body.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return None;
        }
        let (record, rest) = rest.split_at(len);
        out.push(record);
        body = rest;
    }
    Some(out)
}

/// One record: origin, object, influencing entries, and where its deferred parts are.
pub(crate) type Record = (Option<String>, Value, Vec<String>, Option<super::deferred::Placed>);

/// One record's origin, object (a CRD's stub), influencing entries and deferred parts.
pub(crate) fn read_record(bytes: &[u8]) -> Option<Record> {
    let head = record_head(bytes)?.len();
    let mut reader = Reader { bytes, at: 4 };
    reader.str()?;
    let origin = match reader.byte()? {
        0 => None,
        1 => Some(reader.string()?),
        _ => return None,
    };
    let count = reader.count()?;
    let influenced_by = (0..count).map(|_| reader.string()).collect::<Option<Vec<_>>>()?;
    let obj = reader.value(0)?;
    if reader.at != 4 + head {
        return None;
    }
    let deferred = super::deferred::read_section(&mut reader)?;
    reader.at_end().then_some((origin, obj, influenced_by, deferred))
}

pub(super) fn write_len(out: &mut Vec<u8>, mut len: usize) {
    loop {
        let low = (len & 0x7f) as u8;
        len >>= 7;
        if len == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

pub(super) fn write_str(out: &mut Vec<u8>, text: &str) {
    write_len(out, text.len());
    out.extend_from_slice(text.as_bytes());
}

pub(super) fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0),
        Value::Bool(false) => out.push(1),
        Value::Bool(true) => out.push(2),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push(3);
                out.extend_from_slice(&i.to_le_bytes());
            } else if let Some(u) = n.as_u64() {
                out.push(4);
                out.extend_from_slice(&u.to_le_bytes());
            } else {
                out.push(5);
                out.extend_from_slice(&n.as_f64().unwrap_or(0.0).to_le_bytes());
            }
        }
        Value::String(s) => {
            out.push(6);
            write_str(out, s);
        }
        Value::Array(items) => {
            out.push(7);
            write_len(out, items.len());
            items.iter().for_each(|item| write_value(out, item));
        }
        Value::Object(map) => {
            out.push(8);
            write_len(out, map.len());
            for (key, item) in map {
                write_str(out, key);
                write_value(out, item);
            }
        }
    }
}

pub(super) struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    pub(super) fn new(bytes: &'b [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    pub(super) fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    pub(super) fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn take(&mut self, len: usize) -> Option<&'b [u8]> {
        let end = self.at.checked_add(len)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    pub(super) fn four(&mut self) -> Option<[u8; 4]> {
        self.take(4)?.try_into().ok()
    }

    pub(super) fn eight(&mut self) -> Option<[u8; 8]> {
        self.take(8)?.try_into().ok()
    }

    pub(super) fn len(&mut self) -> Option<usize> {
        let mut len = 0usize;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            len |= usize::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(len);
            }
        }
        None
    }

    /// A count of items, each at least a byte: never more than the bytes left.
    pub(super) fn count(&mut self) -> Option<usize> {
        self.len().filter(|n| *n <= self.bytes.len() - self.at)
    }

    fn str(&mut self) -> Option<&'b str> {
        let len = self.len()?;
        std::str::from_utf8(self.take(len)?).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.str().map(str::to_string)
    }

    pub(super) fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match self.byte()? {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => Value::from(i64::from_le_bytes(self.eight()?)),
            4 => Value::from(u64::from_le_bytes(self.eight()?)),
            5 => Value::Number(Number::from_f64(f64::from_le_bytes(self.eight()?))?),
            6 => Value::String(self.string()?),
            7 => {
                let count = self.count()?;
                let items = (0..count).map(|_| self.value(depth + 1)).collect::<Option<Vec<_>>>()?;
                Value::Array(items)
            }
            8 => {
                let count = self.count()?;
                let mut map = Map::with_capacity(count);
                for _ in 0..count {
                    let key = self.string()?;
                    let item = self.value(depth + 1)?;
                    map.insert(key, item);
                }
                Value::Object(map)
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(
        origin: Option<&str>,
        obj: &Value,
        influenced_by: &[&str],
    ) -> Option<(Option<String>, Value, Vec<String>)> {
        let mut body = Vec::new();
        write_record(&mut body, origin, obj, influenced_by, None);
        write_record(&mut body, None, &json!(null), &[], None);
        let records = records(&body)?;
        assert_eq!(records.len(), 2);
        read_record(records[0]).map(|(o, v, by, deferred)| {
            assert_eq!(deferred, None);
            (o, v, by)
        })
    }

    fn read(bytes: &[u8]) -> Option<(Option<String>, Value, Vec<String>)> {
        read_record(bytes).map(|(o, v, by, _)| (o, v, by))
    }

    #[test]
    fn every_kind_of_value_reads_back_as_it_was_written() {
        let obj = json!({
            "z": null, "a": [true, false, 0, -1, i64::MIN, i64::MAX, u64::MAX, 1.5, -0.25, 1e300, 2.0],
            "s": ["", "ünïcödé ✓", "line\nbreak", "\u{0}", "x".repeat(300)],
            "nested": {"empty": {}, "list": [], "deep": {"deeper": [{"k": "v"}]}},
            "order": {"b": 1, "a": 2, "c": 3},
        });
        let (origin, back, by) = round_trip(Some("apps/x"), &obj, &["common/y", "z"]).expect("reads");
        assert_eq!(back, obj);
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&obj).unwrap(),
            "same order, same numbers"
        );
        assert_eq!(origin.as_deref(), Some("apps/x"));
        assert_eq!(by, ["common/y", "z"]);
        assert_eq!(round_trip(None, &json!("x"), &[]), Some((None, json!("x"), Vec::new())));
    }

    #[test]
    fn damaged_records_are_refused_not_trusted() {
        let mut body = Vec::new();
        write_record(&mut body, Some("o"), &json!({"a": ["b", 1, 2.5]}), &["e"], None);
        let whole = records(&body).unwrap()[0].to_vec();
        for cut in 0..whole.len() {
            assert_eq!(read(&whole[..cut]), None, "cut at {cut}");
        }
        assert!(records(&body[..body.len() - 1]).is_none(), "a length past the end");
        assert_eq!(read(&[4, 0, 0, 0, 0, 0, 0, 9, 0]), None, "an unknown tag");
        assert_eq!(read(&[4, 0, 0, 0, 0, 0, 0, 0, 2]), None, "an unknown section flag");
        assert_eq!(read(&[4, 0, 0, 0, 0, 0, 0, 0, 0, 0]), None, "bytes after the record");
        assert_eq!(read(&[3, 0, 0, 0, 0, 0, 0, 0, 0]), None, "a head that ends before its object");
        // A record: its head's length, the head (name, origin, entries, object), the flag.
        let record = |head: &[u8]| [&(head.len() as u32 + 1).to_le_bytes()[..], &[0], head, &[0]].concat();
        assert_eq!(read(&record(&[0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0x0f])), None, "a count past the bytes left");
        let mut deep = vec![0u8, 0];
        deep.extend(std::iter::repeat_n([7u8, 1], MAX_DEPTH + 2).flatten());
        deep.push(0);
        assert_eq!(read(&record(&deep)), None, "nesting past the bound");
        assert_eq!(read(&record(&[0, 0, 6, 1, 0xff])), None, "not UTF-8");
        assert_eq!(read(&record(&[0, 0, 6, 1, b'a'])), Some((None, json!("a"), Vec::new())));
    }
}
