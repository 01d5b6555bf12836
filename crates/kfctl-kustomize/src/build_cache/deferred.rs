//! CRD schemas left in the entry until someone needs them.
//!
//! A platform's render is 93 % CustomResourceDefinitions by size, nearly all of it the
//! `openAPIV3Schema` of each version. The steps after a build (the catalog's parameters) never
//! read or change those schemas, and a render that leaves a CRD as the build made it writes
//! the same YAML every time. So an entry keeps, for each CRD whose versions carry schemas:
//!
//! - in its record, the object with every `spec.versions[i].schema` set to `null` (the
//!   *stub*, decoded as usual), and where the rest is;
//! - each schema, encoded, in the entry's *schemas* region after the checked body, with its own
//!   CRC-32: read and decoded only by [`Deferred::attach`] (and searched by
//!   [`Deferred::may_hold`]);
//! - the whole object's YAML document as `kfctl_yaml::to_yaml` writes it, in the *texts*
//!   region after that: [`Deferred::write_text`] copies it out while the stub is unchanged,
//!   once the region's checksum (in the entry's header) holds ([`Regions`]).
//!
//! A load reads the header and the body only: a tenth of a platform's entry. A reader that asks
//! for deferral ([`super::build_kustomization_named`] with `defer_schemas`) gets the stub in
//! [`crate::Resource::obj`] and the rest in [`crate::Resource::deferred`]; any other reader
//! gets the whole object, as before. The `null` placeholders keep each `schema` key at its
//! place, so attaching restores the object key for key, in order.

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
    /// The entry's regions.
    regions: Arc<Regions>,
    /// The entry file, named in the error a damaged schema gives.
    path: Arc<Path>,
    /// Where the object's deferred parts are.
    placed: Placed,
    /// The stub as it was read: the text is the object's while the object equals it.
    stub: Value,
}

/// Where an entry's regions are. The file stays open: an entry is replaced by a rename, never
/// written in place, so what it holds does not change under a reader.
pub(crate) struct Regions {
    pub file: File,
    /// Where the schemas region starts.
    pub schemas_at: u64,
    /// Where the texts region starts, its length and its CRC-32 (checked once, on first use,
    /// by reading the region through).
    pub texts_at: u64,
    pub texts_len: u64,
    pub texts_crc: u32,
    pub texts_whole: OnceLock<bool>,
}

impl Regions {
    /// Whether the texts region is whole: its length and checksum as the header says.
    fn texts_whole(&self) -> bool {
        *self.texts_whole.get_or_init(|| {
            // read and summed a megabyte at a time on all cores, the sums combined in order
            use rayon::prelude::*;
            const PART: u64 = 1 << 20;
            let parts: Vec<u64> = (0..self.texts_len.div_ceil(PART)).collect();
            let sums: Option<Vec<crc32fast::Hasher>> = parts
                .par_iter()
                .map(|part| {
                    let (at, end) = (part * PART, ((part + 1) * PART).min(self.texts_len));
                    let mut buf = vec![0; usize::try_from(end - at).ok()?];
                    self.file.read_exact_at(&mut buf, self.texts_at + at).ok()?;
                    let mut hasher = crc32fast::Hasher::new();
                    hasher.update(&buf);
                    Some(hasher)
                })
                .collect();
            let Some(sums) = sums else { return false };
            let mut whole = crc32fast::Hasher::new();
            sums.iter().for_each(|sum| whole.combine(sum));
            whole.finalize() == self.texts_crc
        })
    }
}

/// One deferred schema: its version's index, where its encoding is in the schemas region, and
/// the encoding's CRC-32.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SchemaPlace {
    pub version: usize,
    pub range: Range<u64>,
    pub crc: u32,
}

/// Where a record's deferred parts are (its section, as `binary` reads and writes it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    pub schemas: Vec<SchemaPlace>,
    /// The whole object's YAML document in the texts region, and its CRC-32.
    pub text: Range<u64>,
    pub text_crc: u32,
    /// The schemas' size as JSON, less the `null`s standing in for them ([`crate::json_size`]).
    pub json_size: u64,
}

impl Deferred {
    /// The deferred parts of a record, whose decoded stub is `stub`.
    pub(crate) fn new(regions: Arc<Regions>, path: Arc<Path>, placed: Placed, stub: &Value) -> Self {
        Deferred { regions, path, placed, stub: stub.clone() }
    }

    /// The deferred schemas' size as JSON: what [`crate::json_size`] of the whole object adds
    /// to the stub's.
    pub fn json_size(&self) -> u64 {
        self.placed.json_size
    }

    /// The indices of the versions whose `schema` is deferred.
    pub fn versions(&self) -> impl Iterator<Item = usize> + '_ {
        self.placed.schemas.iter().map(|s| s.version)
    }

    /// One schema's encoding, if it reads back whole.
    fn encoded(&self, schema: &SchemaPlace) -> Option<Vec<u8>> {
        let mut bytes = vec![0; usize::try_from(schema.range.end.checked_sub(schema.range.start)?).ok()?];
        self.regions.file.read_exact_at(&mut bytes, self.regions.schemas_at + schema.range.start).ok()?;
        (crc32fast::hash(&bytes) == schema.crc).then_some(bytes)
    }

    /// Whether a deferred schema may hold the string `text` (its bytes occur in the encoded
    /// schemas, or a schema does not read back): a step that rewrites every string equal to a
    /// name attaches those first.
    pub fn may_hold(&self, text: &str) -> bool {
        let finder = memchr::memmem::Finder::new(text.as_bytes());
        self.placed.schemas.iter().any(|s| self.encoded(s).is_none_or(|bytes| finder.find(&bytes).is_some()))
    }

    /// Put the schemas back into `obj` (the stub, changed or not), each at its `null`.
    pub fn attach(&self, obj: &mut Value) -> Result<()> {
        let damaged = || KustomizeError::DamagedCacheEntry { path: self.path.to_path_buf() };
        for place in &self.placed.schemas {
            let bytes = self.encoded(place).ok_or_else(damaged)?;
            let mut reader = Reader::new(&bytes);
            let schema = reader.value(0).filter(|_| reader.at_end()).ok_or_else(damaged)?;
            let slot = obj.pointer_mut(&format!("/spec/versions/{}/schema", place.version)).ok_or_else(damaged)?;
            *slot = schema;
        }
        Ok(())
    }

    /// Whether [`Deferred::write_text`] writes `obj`: it is still the stub as read, and the
    /// entry's texts region is whole. Else attach, and write the object.
    pub fn has_text_for(&self, obj: &Value) -> bool {
        self.placed.text.end <= self.regions.texts_len && *obj == self.stub && self.regions.texts_whole()
    }

    /// Write the whole object's YAML document (as `kfctl_yaml::to_yaml` writes it) to `out`;
    /// only for an object [`Deferred::has_text_for`] said yes to. Copied with
    /// [`std::io::copy`], which the kernel does itself (`copy_file_range`, `sendfile`,
    /// `splice`) when `out` is standard output or a file, buffered or not, instead of through
    /// this process's memory. Only the thread writing the stream moves the entry file's
    /// offset; every other read of it is positioned (`pread`).
    pub fn write_text<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let text = &self.placed.text;
        let mut file = &self.regions.file;
        file.seek(SeekFrom::Start(self.regions.texts_at + text.start))?;
        let want = text.end - text.start;
        match std::io::copy(&mut file.take(want), out)? {
            copied if copied == want => Ok(()),
            _ => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }

    /// The whole object's YAML document, when `obj` is still the stub as read and the text
    /// reads back whole (its own checksum: one read, where [`Deferred::has_text_for`] checks the
    /// whole region before anything is written).
    pub fn text(&self, obj: &Value) -> Option<String> {
        let text = &self.placed.text;
        if *obj != self.stub || text.end > self.regions.texts_len {
            return None;
        }
        let mut buf = vec![0; usize::try_from(text.end - text.start).ok()?];
        self.regions.file.read_exact_at(&mut buf, self.regions.texts_at + text.start).ok()?;
        (crc32fast::hash(&buf) == self.placed.text_crc).then_some(())?;
        String::from_utf8(buf).ok()
    }
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred").field("entry", &self.path).field("placed", &self.placed).finish()
    }
}

impl PartialEq for Deferred {
    fn eq(&self, other: &Self) -> bool {
        self.stub == other.stub && self.placed == other.placed && self.path == other.path
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

/// What an entry stores apart for one CRD, before its place in the regions is known.
pub(crate) struct Apart {
    /// Each deferred version's index and its schema's encoding.
    pub schemas: Vec<(usize, Vec<u8>)>,
    /// The whole object's YAML document.
    pub text: String,
    pub json_size: u64,
}

/// The parts of `obj` an entry stores apart, when it is a CRD with schemas ([`deferrable`]).
pub(crate) fn apart(obj: &Value) -> Option<Apart> {
    let versions = deferrable(obj);
    if versions.is_empty() {
        return None;
    }
    let mut json_size = 0;
    let schemas = versions
        .into_iter()
        .map(|index| {
            let schema = &obj["spec"]["versions"][index]["schema"];
            json_size += crate::json_size(schema) - crate::json_size(&Value::Null);
            let mut encoded = Vec::new();
            write_value(&mut encoded, schema);
            (index, encoded)
        })
        .collect();
    Some(Apart { schemas, text: kfctl_yaml::to_yaml(obj), json_size })
}

/// Where `apart`'s schemas go, at the end of a schemas region `schemas` bytes long, and its
/// text, at the end of a texts region `texts` bytes long (both lengths grow by them).
pub(crate) fn place(apart: &Apart, schemas: &mut u64, texts: &mut u64) -> Placed {
    let places = apart
        .schemas
        .iter()
        .map(|(version, encoded)| {
            let start = *schemas;
            *schemas += encoded.len() as u64;
            SchemaPlace { version: *version, range: start..*schemas, crc: crc32fast::hash(encoded) }
        })
        .collect();
    let start = *texts;
    *texts += apart.text.len() as u64;
    Placed {
        schemas: places,
        text: start..*texts,
        text_crc: crc32fast::hash(apart.text.as_bytes()),
        json_size: apart.json_size,
    }
}

/// Make `obj` its stub in place: each version `placed` defers has its `schema` set to `null`
/// (what [`write_stub`] writes, and [`Deferred::attach`] undoes).
pub(crate) fn make_stub(obj: &mut Value, placed: &Placed) {
    for schema in &placed.schemas {
        if let Some(slot) = obj.pointer_mut(&format!("/spec/versions/{}/schema", schema.version)) {
            *slot = Value::Null;
        }
    }
}

/// Append `obj` as its stub (each deferred version's `schema` written as `null`).
pub(crate) fn write_stub(out: &mut Vec<u8>, obj: &Value, placed: &Placed) {
    let deferred: Vec<usize> = placed.schemas.iter().map(|s| s.version).collect();
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
                        ("versions", Value::Array(versions)) => write_versions(out, versions, &deferred),
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

/// Append a record's deferred section: a flag (0: nothing deferred), then each schema's
/// version, place and checksum, the size, and the text's place.
pub(crate) fn write_section(out: &mut Vec<u8>, placed: Option<&Placed>) {
    let Some(placed) = placed else { return out.push(0) };
    out.push(1);
    write_len(out, placed.schemas.len());
    for schema in &placed.schemas {
        write_len(out, schema.version);
        out.extend_from_slice(&schema.range.start.to_le_bytes());
        out.extend_from_slice(&schema.range.end.to_le_bytes());
        out.extend_from_slice(&schema.crc.to_le_bytes());
    }
    for n in [placed.json_size, placed.text.start, placed.text.end] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out.extend_from_slice(&placed.text_crc.to_le_bytes());
}

/// Read a deferred section at the reader's place (after the record's head).
pub(crate) fn read_section(reader: &mut Reader) -> Option<Option<Placed>> {
    match reader.byte()? {
        0 => Some(None),
        1 => {
            let count = reader.count()?;
            let mut schemas = Vec::with_capacity(count);
            for _ in 0..count {
                let version = reader.len()?;
                let range = u64::from_le_bytes(reader.eight()?)..u64::from_le_bytes(reader.eight()?);
                let crc = u32::from_le_bytes(reader.four()?);
                (range.start <= range.end).then_some(())?;
                schemas.push(SchemaPlace { version, range, crc });
            }
            let json_size = u64::from_le_bytes(reader.eight()?);
            let text = u64::from_le_bytes(reader.eight()?)..u64::from_le_bytes(reader.eight()?);
            let text_crc = u32::from_le_bytes(reader.four()?);
            (text.start <= text.end).then_some(Some(Placed { schemas, text, text_crc, json_size }))
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "deferred_tests.rs"]
mod tests;
