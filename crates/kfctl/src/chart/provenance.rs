//! Provenance: the `<archive>.prov` file `helm package --sign` writes beside a chart archive,
//! which `helm verify` and `helm install --verify` check.
//!
//! Its text is Helm's (`pkg/provenance`): the chart's metadata as Helm marshals it (the
//! `Chart.yaml` fields Helm knows, keys sorted, a dependency's `repository` always present),
//! then `...` (YAML's document end: `---` is not allowed in a clear-signed block), then
//! `files:` with the archive's name and `sha256:` digest. That text is OpenPGP clear-signed
//! with SHA-512, as Helm signs it.
//!
//! Signing shells out to GnuPG (`gpg --clearsign`) with the key the user names, from the
//! keyring GnuPG itself uses (`GNUPGHOME`): an OpenPGP implementation is far more code than
//! the rest of this crate's archive handling, and the keys live in GnuPG already. A `.prov`
//! signed this way verifies with Helm (the test suite checks it with Helm's own verifier).

use super::package::Package;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Why a chart could not be signed.
#[derive(Debug, thiserror::Error)]
pub enum ProvenanceError {
    /// Chart.yaml could not be read.
    #[error("Chart.yaml: {message}; expected the Chart.yaml of `kfctl-rs chart export`")]
    BadChart {
        /// What is wrong.
        message: String,
    },
    /// GnuPG could not be run.
    #[error("--sign: cannot run `{program}`: {message}; install GnuPG (gpg) or package without --sign")]
    NoGpg {
        /// The program tried.
        program: String,
        /// The operating system's error.
        message: String,
    },
    /// GnuPG refused to sign.
    #[error(
        "--sign --key {key}: gpg could not sign: {message}; check `gpg --list-secret-keys {key}` (and GNUPGHOME), and give --passphrase-file for a protected key"
    )]
    Refused {
        /// The key named.
        key: String,
        /// GnuPG's own message.
        message: String,
    },
}

/// How to sign: the key (a user id or fingerprint GnuPG knows) and, for a protected key, a
/// file whose first line is its passphrase.
#[derive(Debug, Clone)]
pub struct SignOptions {
    /// `gpg --local-user`.
    pub key: String,
    /// `gpg --passphrase-file`, with loopback pinentry (never a prompt).
    pub passphrase_file: Option<std::path::PathBuf>,
    /// The gpg program (default `gpg`).
    pub gpg: String,
}

/// The text Helm signs for `package` (whose Chart.yaml is `chart_yaml`).
pub fn message(chart_yaml: &str, package: &Package) -> Result<String, ProvenanceError> {
    let docs = kfctl_yaml::parse_stream(chart_yaml, "Chart.yaml")
        .map_err(|e| ProvenanceError::BadChart { message: e.to_string() })?;
    let doc = docs
        .first()
        .and_then(Value::as_object)
        .ok_or_else(|| ProvenanceError::BadChart { message: "not a mapping".into() })?;
    let mut text = kfctl_yaml::to_yaml(&Value::Object(helm_metadata(doc)));
    text.push_str("\n...\n");
    let digest = package.digest();
    let hex = digest.trim_start_matches("sha256:");
    let sums = serde_json::json!({ "files": { package.file_name.clone(): format!("sha256:{hex}") } });
    text.push_str(&kfctl_yaml::to_yaml(&sums));
    Ok(text)
}

/// The `.prov` file: [`message`] clear-signed by GnuPG.
pub fn sign(chart_yaml: &str, package: &Package, options: &SignOptions) -> Result<String, ProvenanceError> {
    let text = message(chart_yaml, package)?;
    clearsign(&text, options)
}

/// The `Chart.yaml` fields Helm's `chart.Metadata` has, as `sigs.k8s.io/yaml` marshals them:
/// empty ones left out, keys sorted; a dependency keeps `repository` even when empty.
fn helm_metadata(doc: &Map<String, Value>) -> Map<String, Value> {
    const FIELDS: [&str; 17] = [
        "annotations",
        "apiVersion",
        "appVersion",
        "condition",
        "dependencies",
        "deprecated",
        "description",
        "home",
        "icon",
        "keywords",
        "kubeVersion",
        "maintainers",
        "name",
        "sources",
        "tags",
        "type",
        "version",
    ];
    let mut out = Map::new();
    for field in FIELDS {
        let Some(value) = doc.get(field).filter(|v| !is_empty(v)) else { continue };
        let value = match (field, value) {
            ("dependencies", Value::Array(deps)) => Value::Array(deps.iter().map(helm_dependency).collect()),
            _ => sorted(value),
        };
        out.insert(field.to_string(), value);
    }
    out
}

fn helm_dependency(dep: &Value) -> Value {
    let Some(map) = dep.as_object() else { return sorted(dep) };
    let mut out: Map<String, Value> =
        map.iter().filter(|(_, v)| !is_empty(v)).map(|(k, v)| (k.clone(), sorted(v))).collect();
    out.entry("repository").or_insert_with(|| Value::String(String::new()));
    sorted(&Value::Object(out))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(_) => false,
    }
}

/// `value` with every mapping's keys in Go's YAML order.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| kfctl_yaml::go_yaml_key_cmp(a, b));
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// `gpg --clearsign` of `text`, SHA-512 as Helm signs, with the named key.
fn clearsign(text: &str, options: &SignOptions) -> Result<String, ProvenanceError> {
    let mut cmd = Command::new(&options.gpg);
    // loopback pinentry: a protected key's passphrase comes from the file or not at all, never
    // from a prompt (gpg-agent would otherwise ask on the terminal even with --batch)
    cmd.args(["--batch", "--yes", "--armor", "--digest-algo", "SHA512", "--pinentry-mode", "loopback"]);
    cmd.args(["--local-user", &options.key]);
    if let Some(file) = &options.passphrase_file {
        cmd.arg("--passphrase-file").arg(file);
    }
    cmd.arg("--clearsign").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let no_gpg = |e: std::io::Error| ProvenanceError::NoGpg { program: options.gpg.clone(), message: e.to_string() };
    let mut child = cmd.spawn().map_err(no_gpg)?;
    if let Some(mut stdin) = child.stdin.take() {
        // gpg takes the input's last line break as the one before the signature; Helm signs
        // the text with its own final line break, so give gpg one more.
        stdin.write_all(text.as_bytes()).and_then(|()| stdin.write_all(b"\n")).map_err(no_gpg)?;
    }
    let out = child.wait_with_output().map_err(no_gpg)?;
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr).trim().replace('\n', "; ");
        return Err(ProvenanceError::Refused { key: options.key.clone(), message });
    }
    String::from_utf8(out.stdout)
        .map_err(|e| ProvenanceError::Refused { key: options.key.clone(), message: e.to_string() })
}

/// The `.prov` file's name beside `archive`.
pub fn prov_path(archive: &Path) -> std::path::PathBuf {
    let mut name = archive.as_os_str().to_owned();
    name.push(".prov");
    name.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package() -> Package {
        Package { file_name: "kf-1.0.0.tgz".into(), name: "kf".into(), version: "1.0.0".into(), bytes: b"x".to_vec() }
    }

    #[test]
    fn the_message_is_helms_metadata_then_the_archive_digest() {
        let chart = "# Written by kfctl-rs\napiVersion: v2\nname: kf\ndescription: \"The platform\"\ntype: application\nversion: \"1.0.0\"\nappVersion: \"26.03\"\nkeywords:\n- kubeflow\nunknownField: x\ndependencies:\n- name: a\n  version: \"1.0.0\"\n  condition: a.enabled\n";
        let text = message(chart, &package()).unwrap();
        let digest = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881";
        assert_eq!(
            text,
            format!(
                "apiVersion: v2\nappVersion: \"26.03\"\ndependencies:\n- condition: a.enabled\n  name: a\n  repository: \"\"\n  version: 1.0.0\ndescription: The platform\nkeywords:\n- kubeflow\nname: kf\ntype: application\nversion: 1.0.0\n\n...\nfiles:\n  kf-1.0.0.tgz: sha256:{digest}\n"
            )
        );
    }

    #[test]
    fn a_missing_gpg_is_a_clear_error() {
        let options = SignOptions { key: "k".into(), passphrase_file: None, gpg: "/nonexistent/gpg".into() };
        let err = sign("name: kf\nversion: 1.0.0\n", &package(), &options).unwrap_err().to_string();
        assert!(err.starts_with("--sign: cannot run `/nonexistent/gpg`"), "{err}");
    }

    #[test]
    fn prov_sits_beside_the_archive() {
        assert_eq!(prov_path(Path::new("/o/kf-1.0.0.tgz")), Path::new("/o/kf-1.0.0.tgz.prov"));
    }
}
