//! YAML in and out.
//!
//! Reading uses serde-saphyr into `serde_json::Value` (with `preserve_order`), with explicit
//! budgets so hostile input (alias bombs, deep nesting, huge files) fails in bounded time and
//! memory. Writing is our own: kustomize's output is a canonical re-encoding (go-yaml), and
//! byte-exact parity needs a writer that makes the same choices (key order, quoting, folding,
//! block scalars). See `emit.rs`.
//!
//! This file is the module's whole public surface; other layers use only these functions.

pub use serde_json::Value;

/// A YAML reading error, naming the file (origin), line and column.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    #[error("{origin}:{line}:{column}: invalid YAML: {message}")]
    Syntax { origin: String, line: usize, column: usize, message: String },
    #[error("{origin}: invalid YAML: {message}")]
    Invalid { origin: String, message: String },
    #[error("{origin}: YAML exceeds a safety limit ({limit}); the input is too large or too deeply nested")]
    Limit { origin: String, limit: String },
}

/// Parse a multi-document YAML stream. Empty documents are dropped, as kustomize does.
/// `origin` names the input (a file path) in errors.
pub fn parse_stream(text: &str, origin: &str) -> Result<Vec<Value>, YamlError> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text)
        .map_err(|e| YamlError::Invalid { origin: origin.to_string(), message: e.to_string() })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// Write documents as kustomize writes a build: each document, separated by `---\n`.
pub fn to_yaml_stream(docs: &[Value]) -> String {
    let mut out = String::new();
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&to_yaml(doc));
    }
    out
}

/// Write one document (placeholder writer until the go-yaml compatible emitter lands).
pub fn to_yaml(doc: &Value) -> String {
    serde_saphyr::to_string(doc).unwrap_or_default()
}
