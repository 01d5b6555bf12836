//! Secrets stay secret: no Secret value in progress lines, logs, errors, diffs or reports.
//!
//! Two tools: `redact_object` replaces every `data`/`stringData` value of a Secret with
//! `REDACTED` (keys stay, so a person still sees what changed), and a [`Redactor`] remembers
//! every secret value of a plan (as written and, for `data`, base64-decoded; each also
//! JSON-escaped, base64-encoded and line by line) and scrubs them from any text, such as a
//! server message that echoes a rejected value. `cluster::api` scrubs every failure with the
//! client's redactor, so no caller has to remember to.

use serde_json::Value;

/// What a secret value is replaced with.
pub(crate) const REDACTED: &str = "<redacted>";

/// Shortest value scrubbed from free text (shorter ones would blank out ordinary words).
const MIN_SCRUBBED_LEN: usize = 3;

/// Shortest line of a multi-line value scrubbed on its own (`-----END`, a PEM body line).
const MIN_SCRUBBED_LINE_LEN: usize = 8;

/// The JSON string form of `value`, without its quotes (`a"b\nc` → `a\"b\\nc`).
fn json_escaped(value: &str) -> String {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or("").to_string()
}

pub(crate) fn is_secret(doc: &Value) -> bool {
    doc.get("kind").and_then(Value::as_str) == Some("Secret")
        && doc.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// A copy of `doc` with Secret values replaced; other objects are returned unchanged.
pub(crate) fn redact_object(doc: &Value) -> Value {
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
    pub(crate) fn learn(&mut self, secret: &Value) {
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

    /// Learn one secret value (a credential from the values, say) in every form it may be
    /// echoed in.
    #[cfg(test)]
    pub(crate) fn learn_value(&mut self, value: &str) {
        self.add(value);
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    /// A value as written, JSON-escaped (once and twice: a server quotes a rejected value with
    /// Go's `%q`, and a Status message inside JSON text escapes it again), base64-encoded
    /// (a Secret's `data` as the server echoes it), and each long line of a multi-line value
    /// (a PEM key cut into lines by a message).
    fn add(&mut self, value: &str) {
        use base64::Engine as _;
        let escaped = json_escaped(value);
        let twice = json_escaped(&escaped);
        let encoded = base64::engine::general_purpose::STANDARD.encode(value);
        let lines = value.lines().map(str::trim).filter(|line| line.len() >= MIN_SCRUBBED_LINE_LEN);
        let forms: Vec<String> =
            [value.to_string(), escaped, twice, encoded].into_iter().chain(lines.map(str::to_string)).collect();
        for form in forms {
            if form.len() >= MIN_SCRUBBED_LEN && !self.values.contains(&form) {
                self.values.push(form);
            }
        }
    }

    /// `text` with every known secret value replaced by `REDACTED`.
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

/// The record's digest of the effective values, computed without any credential: every value
/// path [`crate::catalog::params::CREDENTIALS`] names is blanked first, so the digest changes
/// when ordinary values change and cannot be brute-forced back to a password.
pub fn values_digest(values: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut blanked = values.clone();
    for credential in crate::catalog::params::CREDENTIALS {
        let pointer = format!("/{}", credential.value.replace('.', "/"));
        if let Some(value) = blanked.pointer_mut(&pointer) {
            *value = Value::String(REDACTED.into());
        }
    }
    format!("sha256:{}", hex::encode(Sha256::digest(blanked.to_string().as_bytes())))
}

/// Standard base64 decoding to UTF-8 text (padding optional, line breaks ignored, as a
/// Secret's `data` may be written); `None` if not valid.
pub(crate) fn decode_base64(text: &str) -> Option<String> {
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
    fn multi_line_quoted_values_are_scrubbed_in_every_echoed_form() {
        let canary = "-----BEGIN KEY-----\nMIIcanary\"quoted\"line0123\n-----END KEY-----";
        let mut r = Redactor::default();
        r.learn_value(canary);
        let escaped = serde_json::to_string(canary).unwrap();
        let twice = serde_json::to_string(&escaped).unwrap();
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(canary);
        for text in [canary.to_string(), escaped, twice, encoded, "line: MIIcanary\"quoted\"line0123".into()] {
            let scrubbed = r.scrub(&format!("Secret \"s\" is invalid: {text}"));
            assert!(!scrubbed.contains("MIIcanary") && !scrubbed.contains("quoted"), "{scrubbed}");
        }
    }

    #[test]
    fn values_digest_does_not_depend_on_credentials() {
        let with = |password: &str, replicas: u32| json!({"dex": {"staticUser": {"email": "a@b.c", "passwordHash": password}}, "trainer": {"replicas": replicas}});
        assert_eq!(values_digest(&with("$2y$10$one", 1)), values_digest(&with("$2y$10$two", 1)));
        assert_ne!(values_digest(&with("$2y$10$one", 1)), values_digest(&with("$2y$10$one", 2)));
    }

    #[test]
    fn base64_decoding() {
        assert_eq!(decode_base64("aHVudGVyMg==").as_deref(), Some("hunter2"));
        assert_eq!(decode_base64("not base64!"), None);
    }
}
