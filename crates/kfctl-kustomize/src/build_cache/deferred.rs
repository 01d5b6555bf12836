//! CRD schemas left in the entry until someone needs them.
//!
//! A platform's render is 93 % CustomResourceDefinitions by size, nearly all of it the
//! `openAPIV3Schema` of each version. The steps after a build (the catalog's parameters) never
//! read or change those schemas, and a render that leaves a CRD as the build made it writes
//! the same YAML every time. So an entry keeps, for each CRD whose versions carry schemas:
//!
//! - the object with every `spec.versions[i].schema` set to `null` (the *stub*: the record's
//!   value, decoded as usual);
//! - each schema as its own length-prefixed value, decoded only by [`Deferred::attach`];
//! - the whole object's YAML document as `kfctl_yaml::to_yaml` writes it, in the entry's
//!   *texts* region after the checked body, which a load never reads: [`Deferred::write_text`]
//!   copies it out while the stub is unchanged, once the region's own checksum holds
//!   ([`Texts`]).
//!
//! A reader that asks for deferral ([`super::build_kustomization_named`] with
//! `defer_schemas`) gets the stub in [`crate::Resource::obj`] and the rest in
//! [`crate::Resource::deferred`]; any other reader gets the whole object, as before. The
//! `null` placeholders keep each `schema` key at its place, so attaching restores the object
//! key for key, in order.

use super::binary::{Reader, write_len, write_str, write_value};
use crate::error::{KustomizeError, Result};
use serde_json::Value;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// What an entry keeps apart for one CRD (see the module docs).
pub struct Deferred {
    /// The entry's header and body, which the schema ranges point into.
    entry: Arc<Vec<u8>>,
    /// The entry file, named in the error a damaged schema gives.
    path: Arc<Path>,
    /// Each deferred schema: the index of its version and its encoded value.
    schemas: Vec<(usize, Range<usize>)>,
    /// The entry's texts region, and where the whole object's YAML document is in it.
    texts: Arc<Texts>,
    text: Range<u64>,
    /// The schemas' size as JSON, less the `null`s standing in for them ([`crate::json_size`]).
    json_size: u64,
    /// The stub as it was read: the text is the object's while the object equals it.
    stub: Value,
}

/// An entry's texts region: the open file (an entry is replaced by a rename, never written in
/// place, so what this file holds does not change), where the region starts, how long it is,
/// and its CRC-32, checked once, on the first use, by reading the region through.
pub(crate) struct Texts {
    pub file: File,
    pub start: u64,
    pub len: u64,
    pub crc: u32,
    pub verified: OnceLock<bool>,
}

impl Texts {
    /// Whether the region is whole: its length and checksum as the header says.
    fn verified(&self) -> bool {
        *self.verified.get_or_init(|| {
            let mut hasher = crc32fast::Hasher::new();
            let mut buf = vec![0; 1 << 20];
            let mut at = 0;
            while at < self.len {
                let n = (self.len - at).min(buf.len() as u64) as usize;
                if self.file.read_exact_at(&mut buf[..n], self.start + at).is_err() {
                    return false;
                }
                hasher.update(&buf[..n]);
                at += n as u64;
            }
            hasher.finalize() == self.crc
        })
    }
}

/// Where one record's deferred parts are: the schemas relative to the record, the text in the
/// texts region (as `binary` reads them).
#[derive(Debug, PartialEq)]
pub(crate) struct DeferredRanges {
    pub schemas: Vec<(usize, Range<usize>)>,
    pub text: Range<u64>,
    pub json_size: u64,
}

/// Where an entry's parts are, for the records read from it.
pub(crate) struct EntryParts {
    pub entry: Arc<Vec<u8>>,
    pub path: Arc<Path>,
    pub texts: Arc<Texts>,
}

impl Deferred {
    /// The deferred parts of a record at `offset` in `parts.entry`, whose decoded stub is
    /// `stub`.
    pub(crate) fn new(parts: &EntryParts, offset: usize, ranges: DeferredRanges, stub: &Value) -> Self {
        let shift = |r: &Range<usize>| r.start + offset..r.end + offset;
        Deferred {
            schemas: ranges.schemas.iter().map(|(i, r)| (*i, shift(r))).collect(),
            text: ranges.text,
            json_size: ranges.json_size,
            stub: stub.clone(),
            entry: parts.entry.clone(),
            path: parts.path.clone(),
            texts: parts.texts.clone(),
        }
    }

    /// The deferred schemas' size as JSON: what [`crate::json_size`] of the whole object adds
    /// to the stub's.
    pub fn json_size(&self) -> u64 {
        self.json_size
    }

    /// Whether a deferred schema may hold the string `text` (its bytes occur in the encoded
    /// schemas): a step that rewrites every string equal to a name attaches those first.
    pub fn may_hold(&self, text: &str) -> bool {
        let finder = memchr::memmem::Finder::new(text.as_bytes());
        self.schemas.iter().any(|(_, r)| finder.find(&self.entry[r.clone()]).is_some())
    }

    /// Put the schemas back into `obj` (the stub, changed or not), each at its `null`.
    pub fn attach(&self, obj: &mut Value) -> Result<()> {
        let damaged = || KustomizeError::DamagedCacheEntry { path: self.path.to_path_buf() };
        for (index, range) in &self.schemas {
            let bytes = &self.entry[range.clone()];
            let mut reader = Reader::new(bytes);
            let schema = reader.value(0).filter(|_| reader.at_end()).ok_or_else(damaged)?;
            let slot = obj.pointer_mut(&format!("/spec/versions/{index}/schema")).ok_or_else(damaged)?;
            *slot = schema;
        }
        Ok(())
    }

    /// Whether [`Deferred::write_text`] writes `obj`: it is still the stub as read, and the
    /// entry's texts region is whole. Else attach, and write the object.
    pub fn has_text_for(&self, obj: &Value) -> bool {
        self.text.end <= self.texts.len && *obj == self.stub && self.texts.verified()
    }

    /// Write the whole object's YAML document (as `kfctl_yaml::to_yaml` writes it) to `out`,
    /// through `buf`; only for an object [`Deferred::has_text_for`] said yes to.
    pub fn write_text(&self, out: &mut dyn std::io::Write, buf: &mut Vec<u8>) -> std::io::Result<()> {
        let len = usize::try_from(self.text.end - self.text.start).map_err(std::io::Error::other)?;
        buf.resize(len, 0);
        self.texts.file.read_exact_at(buf, self.texts.start + self.text.start)?;
        out.write_all(buf)
    }

    /// The indices of the versions whose `schema` is deferred.
    pub fn versions(&self) -> impl Iterator<Item = usize> + '_ {
        self.schemas.iter().map(|(index, _)| *index)
    }

    /// The whole object's YAML document, when `obj` is still the stub as read and the texts
    /// region is whole ([`Deferred::has_text_for`]).
    pub fn text(&self, obj: &Value) -> Option<String> {
        if !self.has_text_for(obj) {
            return None;
        }
        let mut buf = vec![0; usize::try_from(self.text.end - self.text.start).ok()?];
        self.texts.file.read_exact_at(&mut buf, self.texts.start + self.text.start).ok()?;
        String::from_utf8(buf).ok()
    }

    /// The encoded schemas, for comparing.
    fn parts(&self) -> Vec<&[u8]> {
        self.schemas.iter().map(|(_, r)| &self.entry[r.clone()]).collect()
    }
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("entry", &self.path)
            .field("schemas", &self.schemas.len())
            .field("text", &self.text)
            .finish()
    }
}

impl PartialEq for Deferred {
    fn eq(&self, other: &Self) -> bool {
        self.stub == other.stub && self.parts() == other.parts() && self.text == other.text
    }
}

/// The versions of `obj` whose schema an entry defers: those of a CRD of
/// `apiextensions.k8s.io` whose `spec.versions[i].schema` is a map.
pub(crate) fn deferrable(obj: &Value) -> Vec<usize> {
    let is_crd = obj.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && obj.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a.starts_with("apiextensions.k8s.io/"));
    let versions = obj.pointer("/spec/versions").and_then(Value::as_array).filter(|_| is_crd);
    let with_schema = |(i, v): (usize, &Value)| v.get("schema").is_some_and(Value::is_object).then_some(i);
    versions.map(|v| v.iter().enumerate().filter_map(with_schema).collect()).unwrap_or_default()
}

/// Append `obj` as its stub (each deferred version's `schema` written as `null`).
pub(crate) fn write_stub(out: &mut Vec<u8>, obj: &Value, deferred: &[usize]) {
    let Value::Object(map) = obj else { return write_value(out, obj) };
    out.push(8);
    write_len(out, map.len());
    for (key, item) in map {
        write_str(out, key);
        match (key.as_str(), item) {
            ("spec", Value::Object(spec)) => {
                out.push(8);
                write_len(out, spec.len());
                for (key, item) in spec {
                    write_str(out, key);
                    match (key.as_str(), item) {
                        ("versions", Value::Array(versions)) => write_versions(out, versions, deferred),
                        _ => write_value(out, item),
                    }
                }
            }
            _ => write_value(out, item),
        }
    }
}

fn write_versions(out: &mut Vec<u8>, versions: &[Value], deferred: &[usize]) {
    out.push(7);
    write_len(out, versions.len());
    for (i, version) in versions.iter().enumerate() {
        match version {
            Value::Object(fields) if deferred.contains(&i) => {
                out.push(8);
                write_len(out, fields.len());
                for (key, item) in fields {
                    write_str(out, key);
                    match key.as_str() {
                        "schema" => out.push(0),
                        _ => write_value(out, item),
                    }
                }
            }
            _ => write_value(out, version),
        }
    }
}

/// Append the deferred section of `obj` (flag, schemas, size, where its text is in the texts
/// region); a flag of 0 when nothing is deferred.
pub(crate) fn write_section(out: &mut Vec<u8>, obj: &Value, deferred: &[usize], text: Range<u64>) {
    if deferred.is_empty() {
        return out.push(0);
    }
    out.push(1);
    write_len(out, deferred.len());
    let mut size = 0;
    for index in deferred {
        let schema = &obj["spec"]["versions"][*index]["schema"];
        let mut encoded = Vec::new();
        write_value(&mut encoded, schema);
        write_len(out, *index);
        write_len(out, encoded.len());
        out.extend_from_slice(&encoded);
        size += crate::json_size(schema) - crate::json_size(&Value::Null);
    }
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&text.start.to_le_bytes());
    out.extend_from_slice(&text.end.to_le_bytes());
}

/// Read a deferred section at the reader's place (after the record's value).
pub(crate) fn read_section(reader: &mut Reader) -> Option<Option<DeferredRanges>> {
    match reader.byte()? {
        0 => Some(None),
        1 => {
            let count = reader.count()?;
            let mut schemas = Vec::with_capacity(count);
            for _ in 0..count {
                let index = reader.len()?;
                let len = reader.len()?;
                schemas.push((index, reader.span(len)?));
            }
            let json_size = u64::from_le_bytes(reader.eight()?);
            let start = u64::from_le_bytes(reader.eight()?);
            let end = u64::from_le_bytes(reader.eight()?);
            (start <= end).then_some(Some(DeferredRanges { schemas, text: start..end, json_size }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::binary::{read_record, records, write_record};
    use super::*;
    use serde_json::json;

    fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "versions": [
                {"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "description": "cm-abc"}}, "served": true},
                {"name": "v2", "served": false},
                {"name": "v3", "schema": {"openAPIV3Schema": {"type": "object"}}, "storage": true},
            ]},
        })
    }

    /// `obj` stored as an entry's one record, its text (if any) in a texts region of a file.
    fn stored(obj: &Value) -> (EntryParts, usize, Value, Option<DeferredRanges>, tempfile::NamedTempFile) {
        let text = kfctl_yaml::to_yaml(obj);
        let region = format!("other text\n{text}");
        let at = (region.len() - text.len()) as u64;
        let mut file = tempfile::NamedTempFile::new().expect("file");
        std::io::Write::write_all(&mut file, region.as_bytes()).expect("write");
        let mut body = Vec::new();
        let text_range = (!deferrable(obj).is_empty()).then_some(at..region.len() as u64);
        write_record(&mut body, Some("o"), obj, &[], text_range);
        let (offset, record) = records(&body).expect("records")[0];
        let (_, stub, _, ranges) = read_record(record).expect("reads");
        let texts = Texts {
            file: file.reopen().expect("reopen"),
            start: 0,
            len: region.len() as u64,
            crc: crc32fast::hash(region.as_bytes()),
            verified: OnceLock::new(),
        };
        let parts =
            EntryParts { entry: Arc::new(body), path: Arc::from(Path::new("cache/x.entry")), texts: Arc::new(texts) };
        (parts, offset, stub, ranges, file)
    }

    fn text_of(deferred: &Deferred) -> String {
        let (mut out, mut buf) = (Vec::new(), Vec::new());
        deferred.write_text(&mut out, &mut buf).expect("writes");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn a_crd_is_stored_as_its_stub_and_attaching_restores_it_key_for_key() {
        let obj = crd();
        assert_eq!(deferrable(&obj), [0, 2]);
        let (parts, offset, stub, ranges, _file) = stored(&obj);
        let ranges = ranges.expect("deferred");
        assert_eq!(stub["spec"]["versions"][0]["schema"], Value::Null);
        assert_eq!(stub["spec"]["versions"][1], json!({"name": "v2", "served": false}));
        assert_eq!(crate::json_size(&stub) + ranges.json_size, crate::json_size(&obj));
        let deferred = Deferred::new(&parts, offset, ranges, &stub);
        assert!(deferred.has_text_for(&stub));
        assert_eq!(text_of(&deferred), kfctl_yaml::to_yaml(&obj));
        let mut whole = stub.clone();
        deferred.attach(&mut whole).expect("attaches");
        assert_eq!(serde_json::to_string(&whole).unwrap(), serde_json::to_string(&obj).unwrap());
        let mut changed = stub.clone();
        changed["metadata"]["labels"] = json!({"a": "b"});
        assert!(!deferred.has_text_for(&changed), "a changed stub has no text");
        assert!(deferred.may_hold("cm-abc") && !deferred.may_hold("things.example.com"));
    }

    #[test]
    fn objects_without_schemas_are_stored_whole() {
        for obj in [json!({"apiVersion": "v1", "kind": "ConfigMap"}), {
            let mut c = crd();
            c["apiVersion"] = json!("example.com/v1");
            c
        }] {
            assert!(deferrable(&obj).is_empty());
            let (_, _, back, ranges, _file) = stored(&obj);
            assert_eq!((back, ranges), (obj, None));
        }
    }

    #[test]
    fn a_damaged_schema_is_an_error_naming_the_entry_and_damaged_texts_are_not_used() {
        let (parts, offset, stub, ranges, file) = stored(&crd());
        let mut ranges = ranges.expect("deferred");
        ranges.schemas[0].1.end -= 1;
        let deferred = Deferred::new(&parts, offset, ranges, &stub);
        let err = deferred.attach(&mut stub.clone()).expect_err("damaged");
        assert!(err.to_string().starts_with("cache/x.entry: "), "{err}");
        std::fs::write(file.path(), b"other text\nedited").expect("edit");
        let (parts, offset, stub, ranges, _keep) = stored(&crd());
        let edited = Texts { file: file.reopen().expect("reopen"), ..Arc::into_inner(parts.texts).expect("one") };
        let parts = EntryParts { texts: Arc::new(edited), ..parts };
        let deferred = Deferred::new(&parts, offset, ranges.expect("deferred"), &stub);
        assert!(!deferred.has_text_for(&stub), "a texts region whose checksum fails is never used");
    }
}
