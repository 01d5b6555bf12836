//! YAML in and out, byte for byte as kustomize reads and writes it.
//!
//! kustomize (v5.6) reads manifests with go-yaml v3 and writes its build output with go-yaml v2
//! (through JSON and `sigs.k8s.io/yaml`). This module reproduces both ends:
//!
//! - [`parse_stream`] reads a multi-document stream into `serde_json::Value`s (with
//!   `preserve_order`), typing plain scalars as go-yaml v3 does (`read.rs`, `typing.rs`,
//!   `resolve.rs`). Reading is bounded (input size, nesting depth, node count with aliases
//!   expanded) so hostile input fails fast with [`YamlError::Limit`]. Large streams are split at
//!   `---` lines and their documents parsed in parallel (`split.rs`). The block-style YAML
//!   manifests are written in is read by a line-based fast reader (`fast/`) that feeds the same
//!   value builder; it declines anything outside its subset, and granit then reads the text.
//! - [`to_yaml`] / [`to_yaml_stream`] write documents as kustomize prints them: keys in go-yaml's
//!   natural order ([`go_yaml_key_cmp`]), 2-space indentation, sequences not indented under a
//!   key, quoting, folding at 80 columns and block scalars decided by a port of libyaml's emitter
//!   (`emit.rs`, `analyze.rs`, `scalar.rs`), numbers spelled as Go's JSON-then-YAML round trip
//!   spells them.
//!
//! Parsing a kustomize output and writing it back reproduces it byte for byte; the integration
//! test `tests/yaml_golden.rs` checks that on every golden build of the Kubeflow snapshot.

#![deny(missing_docs, unreachable_pub)]

mod analyze;
mod emit;
#[cfg(test)]
mod emit_tests;
mod fast;
mod gonum;
mod keyorder;
mod read;
#[cfg(test)]
mod read_tests;
mod resolve;
#[cfg(test)]
mod roundtrip_tests;
mod scalar;
mod split;
mod timestamp;
mod typing;

pub mod compare;

pub use keyorder::go_yaml_key_cmp;
pub use serde_json::Value;

/// A YAML reading error, naming the input (origin).
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// Malformed YAML, or YAML go-yaml would refuse (duplicate keys, a tag that does not fit its
    /// value, a bad merge), with the line and column (1-based) where it was noticed.
    #[error("{origin}:{line}:{column}: invalid YAML: {message}")]
    Syntax {
        /// The input's name (a file path, `-f values.yaml`, `helm template output`).
        origin: String,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong, in the parser's words.
        message: String,
    },
    /// A resource bound was hit: input size, nesting depth, node count or alias expansion.
    #[error(
        "{origin}: YAML exceeds a safety limit ({limit}); the input is too large or too deeply nested, or its aliases expand too much"
    )]
    Limit {
        /// The input's name.
        origin: String,
        /// Which bound, and its value.
        limit: String,
    },
}

/// A short name for a YAML node's type, for error messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// Parse a multi-document YAML stream. Empty (and null) documents are dropped, as kustomize
/// does. `origin` names the input (a file path) in errors.
pub fn parse_stream(text: &str, origin: &str) -> Result<Vec<Value>, YamlError> {
    split::parse_stream_with(text, origin, read::LIMITS).map(|(docs, _)| docs)
}

/// [`parse_stream`] as go-yaml v2 reads (kustomize's reader of kustomization files): a
/// duplicate mapping key is not an error, its last value counts.
pub fn parse_stream_last_key_wins(text: &str, origin: &str) -> Result<Vec<Value>, YamlError> {
    let limits = read::Limits { last_key_wins: true, ..read::LIMITS };
    split::parse_stream_with(text, origin, limits).map(|(docs, _)| docs)
}

/// [`parse_stream_with_bare_nulls`] for Kubernetes objects as kustomize loads them: each
/// object's `metadata.annotations` values keep their source text as strings.
pub fn parse_resources(text: &str, origin: &str) -> Result<Vec<(Value, Vec<String>)>, YamlError> {
    let limits = read::Limits { annotation_text: true, ..read::LIMITS };
    let (docs, bare) = split::parse_stream_with(text, origin, limits)?;
    Ok(docs.into_iter().zip(bare).collect())
}

/// [`parse_stream`], also giving for each document the JSON pointers of its *bare* nulls
/// (`key:` with nothing after it). They read as null like `key: null`, but kustomize's
/// strategic merge drops a bare null from the object it patches and keeps an explicit one.
pub fn parse_stream_with_bare_nulls(text: &str, origin: &str) -> Result<Vec<(Value, Vec<String>)>, YamlError> {
    let (docs, bare) = split::parse_stream_with(text, origin, read::LIMITS)?;
    Ok(docs.into_iter().zip(bare).collect())
}

/// Read a Helm values file as `helm` reads `-f` files: its first document, with YAML 1.1's
/// booleans (`yes`, `on`, `off`, …) typed as booleans. An empty file is an empty map.
pub fn parse_helm_values(text: &str, origin: &str) -> Result<Value, YamlError> {
    let (docs, _) = read::parse_documents_as(text, origin, 0, read::LIMITS, read::Dialect::HelmValues)?;
    Ok(docs.into_iter().next().unwrap_or_else(|| Value::Object(serde_json::Map::new())))
}

/// Parse a stream of whole objects document by document (at top-level `---` lines), so the
/// reader's per-stream safety budgets apply to each object rather than to a whole platform
/// (`install --objects`, `compare` of two platform renders).
pub fn parse_objects(text: &str, origin: &str) -> Result<Vec<Value>, YamlError> {
    let mut objects = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            objects.extend(parse_stream(&current, origin)?);
            current.clear();
        } else {
            current.push_str(line);
        }
    }
    objects.extend(parse_stream(&current, origin)?);
    Ok(objects)
}

/// Write documents as kustomize writes a build: each document, separated by `---\n`.
/// Large streams are written on all cores, a document per task, then joined in order.
pub fn to_yaml_stream(docs: &[Value]) -> String {
    let parts = document_texts(docs);
    let mut out = String::with_capacity(parts.iter().map(|p| p.len() + 4).sum());
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(part);
    }
    out
}

/// [`to_yaml_stream`] written to `out` as it is made, without the whole stream in memory: 128
/// documents at a time (written in parallel), so the texts of one chunk reuse the memory of
/// the last instead of 10 MB of fresh pages for the platform's render.
pub fn write_yaml_stream(docs: &[Value], out: &mut impl std::io::Write) -> std::io::Result<()> {
    for (c, chunk) in docs.chunks(WRITE_CHUNK).enumerate() {
        for (i, part) in document_texts(chunk).iter().enumerate() {
            if c > 0 || i > 0 {
                out.write_all(b"---\n")?;
            }
            out.write_all(part.as_bytes())?;
        }
    }
    Ok(())
}

/// Documents [`write_yaml_stream`] writes at a time.
const WRITE_CHUNK: usize = 128;

/// Each document's text, written in parallel for long streams.
fn document_texts(docs: &[Value]) -> Vec<String> {
    use rayon::prelude::*;
    if docs.len() >= 64 { docs.par_iter().map(to_yaml).collect() } else { docs.iter().map(to_yaml).collect() }
}

/// Write one document as kustomize writes a resource (ends with a line break).
pub fn to_yaml(doc: &Value) -> String {
    let mut out = String::new();
    write_yaml(&mut out, doc);
    out
}

/// Append one document, as [`to_yaml`] writes it, to `out`.
pub fn write_yaml(out: &mut String, doc: &Value) {
    emit::write_document(out, doc);
}
