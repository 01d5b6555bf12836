//! Secrets stay secret: no Secret value in progress lines, logs, errors, diffs or reports.
//!
//! Two tools: [`redact_object`] replaces every `data`/`stringData` value of a Secret with
//! [`REDACTED`] (keys stay, so a person still sees what changed), and a [`Redactor`] remembers
//! every secret value of a plan (as written and, for `data`, base64-decoded) and scrubs them
//! from any text, such as a server message that echoes a rejected value.

use serde_json::Value;

/// What a secret value is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Shortest value scrubbed from free text (shorter ones would blank out ordinary words).
const MIN_SCRUBBED_LEN: usize = 3;

pub fn is_secret(doc: &Value) -> bool {
    doc.get("kind").and_then(Value::as_str) == Some("Secret")
        && doc.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// A copy of `doc` with Secret values replaced; other objects are returned unchanged.
pub fn redact_object(doc: &Value) -> Value {
    let mut out = doc.clone();
    if is_secret(doc) {
        for field in ["data", "stringData"] {
            if let Some(map) = out.get_mut(field).and_then(Value::as_object_mut) {
                for value in map.values_mut() {
                    *value = Value::String(REDACTED.into());
                }
            }
        }
        if let Some(annotations) = out.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    out
}

/// Scrubs known secret values from text.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    values: Vec<String>,
}

impl Redactor {
    /// Learn every secret value among `docs`.
    pub fn from_docs<'a>(docs: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut redactor = Redactor::default();
        for doc in docs.into_iter().filter(|d| is_secret(d)) {
            redactor.learn(doc);
        }
        redactor
    }

    /// Learn the values of one Secret.
    pub fn learn(&mut self, secret: &Value) {
        for (field, encoded) in [("data", true), ("stringData", false)] {
            let values = secret.get(field).and_then(Value::as_object).into_iter().flat_map(|m| m.values());
            for value in values.filter_map(Value::as_str) {
                self.add(value);
                if encoded && let Some(plain) = decode_base64(value) {
                    self.add(&plain);
                }
            }
        }
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    fn add(&mut self, value: &str) {
        if value.len() >= MIN_SCRUBBED_LEN && !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_string());
        }
    }

    /// `text` with every known secret value replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), REDACTED);
            }
        }
        out
    }
}

/// Standard base64 decoding to UTF-8 text (padding optional, line breaks ignored, as a
/// Secret's `data` may be written); `None` if not valid.
pub fn decode_base64(text: &str) -> Option<String> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::RequireNone)
            .with_decode_allow_trailing_bits(true),
    );
    let mut joined: String = text.trim_end_matches('=').chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
    // A lone last character holds no whole byte: dropped (once checked), as before the crate.
    if joined.len() % 4 == 1 && joined.pop().is_some_and(|c| !(c.is_ascii_alphanumeric() || c == '+' || c == '/')) {
        return None;
    }
    String::from_utf8(LENIENT.decode(joined).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret() -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"password": "aHVudGVyMg=="}, "stringData": {"token": "s3cr3t-token"}})
    }

    #[test]
    fn secret_values_are_replaced_and_keys_kept() {
        let out = redact_object(&secret());
        assert_eq!(out["data"], json!({"password": REDACTED}));
        assert_eq!(out["stringData"], json!({"token": REDACTED}));
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        assert_eq!(redact_object(&cm), cm);
    }

    #[test]
    fn text_is_scrubbed_of_encoded_and_decoded_values() {
        let r = Redactor::from_docs(&[secret()]);
        let message = "Secret \"s\" is invalid: data[password]: hunter2 (aHVudGVyMg==), token s3cr3t-token";
        let scrubbed = r.scrub(message);
        for leaked in ["hunter2", "aHVudGVyMg==", "s3cr3t-token"] {
            assert!(!scrubbed.contains(leaked), "{scrubbed}");
        }
        assert!(scrubbed.starts_with("Secret \"s\" is invalid"));
    }

    #[test]
    fn base64_decoding() {
        assert_eq!(decode_base64("aHVudGVyMg==").as_deref(), Some("hunter2"));
        assert_eq!(decode_base64("not base64!"), None);
    }
}
