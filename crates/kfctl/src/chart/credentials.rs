//! Credentials in an exported chart: where they may be written, and where never.
//!
//! Which values are credentials is [`CREDENTIALS`], the same table the native render, the
//! cluster's redaction (`values_digest`) and `kfctl-rs secrets` use; nothing here keeps a list
//! of its own. From it the export decides:
//!
//! - **file modes**: `holds_credentials` names the files that can hold a credential value
//!   (every `values.yaml`, and every Secret's template); [`super::write`] creates them 0600,
//!   everything else 0644;
//! - **README tables**: a credential's row shows `placeholder`, never its value;
//! - **subchart values**: `strip_unused` leaves in a subchart's `values.yaml` only the
//!   credentials its own objects hold (the umbrella's `values.yaml` keeps them all, and Helm
//!   hands `global:` to every subchart at render time, so rendering is unchanged);
//! - **the README's export command**: [`shown_set_flag`] prints a `--set` that gives a
//!   credential with `<secret>` in place of the value.

use super::params::chart_value_path;
use crate::catalog::params::{CREDENTIALS, Credential};
use crate::catalog::render::RenderedObject;
use crate::catalog::strvals::{SetFlag, SetKind, parse_into};
use serde_json::Value;
use std::collections::BTreeSet;

/// Whether the exported file at `rel` (relative to the output folder) can hold a credential
/// value: any `values.yaml`, and the template of a `Secret` (named `secret-…` by
/// [`super::unique_file_name`]; kinds hold no dash, so no other kind's file starts so).
pub(crate) fn holds_credentials(rel: &str) -> bool {
    let (dir, file) = rel.rsplit_once('/').unwrap_or(("", rel));
    file == "values.yaml" || (dir.ends_with("templates") && file.starts_with("secret-") && file.ends_with(".yaml"))
}

/// The credential whose value sits at `rel` (dotted, e.g. `staticUser.passwordHash`) in the
/// chart of `component` (`None`: the umbrella, whose keys are the full value paths).
pub(crate) fn credential_at(rel: &str, component: Option<&str>) -> Option<&'static Credential> {
    CREDENTIALS
        .iter()
        .find(|c| c.value == rel || component.and_then(|comp| chart_value_path(c.value, comp)).as_deref() == Some(rel))
}

/// What a README shows instead of a credential's value (`key` as the table names it).
pub(crate) fn placeholder(key: &str) -> String {
    format!("`<secret: set with --set-string {key}=… or -f>`")
}

/// The value paths (e.g. `global.oidcClientSecret`) of the credentials `objects` hold.
pub(crate) fn used_by<'a>(objects: impl IntoIterator<Item = &'a RenderedObject>) -> BTreeSet<&'static str> {
    let objects: Vec<&RenderedObject> = objects.into_iter().collect();
    CREDENTIALS.iter().filter(|c| objects.iter().any(|o| c.matches(&o.obj))).map(|c| c.value).collect()
}

/// Remove from `values` (a chart of `component`'s values, `global:` included) every credential
/// not in `used`, with any map that becomes empty by it.
pub(crate) fn strip_unused(values: &mut Value, component: &str, used: &BTreeSet<&str>) {
    for cred in CREDENTIALS.iter().filter(|c| !used.contains(c.value)) {
        if let Some(rel) = chart_value_path(cred.value, component) {
            remove_path(values, &rel.split('.').collect::<Vec<_>>());
        }
    }
}

/// Remove `path` from `value`; drop maps on the way that it leaves empty. Whether the map
/// at `value` is now empty.
fn remove_path(value: &mut Value, path: &[&str]) -> bool {
    let Some(map) = value.as_object_mut() else { return false };
    match path {
        [] => return false,
        [last] => {
            map.remove(*last);
        }
        [first, rest @ ..] => {
            if map.get_mut(*first).is_some_and(|inner| remove_path(inner, rest)) {
                map.remove(*first);
            }
        }
    }
    map.is_empty()
}

/// A `--set`-family flag as the README's export command shows it: as given, unless it sets a
/// credential, whose value becomes `<secret>` (`--set` and `--set-string` keep their other
/// assignments; the other kinds name only the keys).
pub fn shown_set_flag(flag: &SetFlag) -> String {
    let shown = format!("{} {}", flag.kind.flag(), flag.expression);
    if flag.kind == SetKind::File {
        return shown; // a file's name, not its contents
    }
    let mut tree = Value::Object(Default::default());
    if parse_into(flag, &mut tree).is_err() {
        return shown;
    }
    let given: Vec<(&str, String)> = CREDENTIALS
        .iter()
        .filter_map(|c| crate::catalog::values::get(&tree, &c.value_path()).map(|v| (c.value, secret_text(v))))
        .collect();
    if given.is_empty() {
        return shown;
    }
    if matches!(flag.kind, SetKind::Set | SetKind::String) {
        let redacted = format!("{} {}", flag.kind.flag(), redact_assignments(&flag.expression));
        if given.iter().all(|(_, text)| text.is_empty() || !redacted.contains(text.as_str())) {
            return redacted;
        }
    }
    let keys: BTreeSet<&str> = given.iter().map(|(k, _)| *k).collect();
    format!("{} <secret: {}>", flag.kind.flag(), keys.into_iter().collect::<Vec<_>>().join(","))
}

fn secret_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `a=1,dex.staticUser.passwordHash=x` → `a=1,dex.staticUser.passwordHash=<secret>`: each
/// comma-separated assignment whose key is, holds or lies inside a credential.
fn redact_assignments(expression: &str) -> String {
    split_unescaped(expression, ',')
        .into_iter()
        .map(|piece| match split_unescaped(piece, '=').first() {
            Some(key) if key.len() < piece.len() && touches_credential(&key.replace('\\', "")) => {
                format!("{key}=<secret>")
            }
            _ => piece.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn touches_credential(key: &str) -> bool {
    CREDENTIALS
        .iter()
        .any(|c| c.value == key || c.value.starts_with(&format!("{key}.")) || key.starts_with(&format!("{}.", c.value)))
}

/// `text` split at every `sep` not escaped with a backslash.
fn split_unescaped(text: &str, sep: char) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            pieces.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    pieces.push(&text[start..]);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_files_and_secret_templates_hold_credentials() {
        for private in ["values.yaml", "charts/dex/values.yaml", "charts/dex/templates/secret-auth-dex-passwords.yaml"]
        {
            assert!(holds_credentials(private), "{private}");
        }
        for public in [
            "README.md",
            "values.schema.json",
            "charts/dex/templates/secretproviderclass-auth-x.yaml",
            "charts/dex/templates/configmap-auth-dex.yaml",
            "argocd/apps/dex.yaml",
            "charts/secret-x/Chart.yaml",
        ] {
            assert!(!holds_credentials(public), "{public}");
        }
        let mut used = BTreeSet::new();
        let secret = json!({"kind": "Secret", "metadata": {"name": "s", "namespace": "n"}});
        assert!(holds_credentials(&format!("templates/{}", super::super::unique_file_name(&secret, &mut used))));
    }

    #[test]
    fn credentials_are_found_by_chart_relative_and_full_paths() {
        assert_eq!(credential_at("staticUser.passwordHash", Some("dex")).unwrap().value, "dex.staticUser.passwordHash");
        assert_eq!(credential_at("global.oidcClientSecret", None).unwrap().value, "global.oidcClientSecret");
        assert!(credential_at("staticUser.passwordHash", Some("katib")).is_none());
        assert!(credential_at("images.dex", Some("dex")).is_none());
    }

    #[test]
    fn unused_credentials_leave_a_subcharts_values() {
        let mut values = json!({"global": {"oidcClientSecret": "s", "imageRegistry": ""},
                                "objectStore": {"accessKey": "a", "secretKey": "b"}, "enabled": true});
        strip_unused(&mut values, "pipelines", &BTreeSet::new());
        assert_eq!(values, json!({"global": {"imageRegistry": ""}, "enabled": true}));
        let mut values = json!({"global": {"oidcClientSecret": "s"}, "cookieSecret": "c"});
        strip_unused(&mut values, "oauth2-proxy", &["global.oidcClientSecret"].into());
        assert_eq!(values, json!({"global": {"oidcClientSecret": "s"}}));
    }

    #[test]
    fn set_flags_giving_credentials_are_shown_without_their_values() {
        let shown = |kind, e: &str| shown_set_flag(&SetFlag::new(kind, e));
        assert_eq!(shown(SetKind::Set, "katib.enabled=false"), "--set katib.enabled=false");
        assert_eq!(
            shown(SetKind::String, "a=1,dex.staticUser.passwordHash=$2y$x,global.oidcClientSecret=s3"),
            "--set-string a=1,dex.staticUser.passwordHash=<secret>,global.oidcClientSecret=<secret>"
        );
        assert_eq!(
            shown(SetKind::Set, "dex.staticUser.passwordHash=a\\,b"),
            "--set dex.staticUser.passwordHash=<secret>"
        );
        assert_eq!(
            shown(SetKind::Json, r#"dex={"staticUser":{"passwordHash":"h"}}"#),
            "--set-json <secret: dex.staticUser.passwordHash>"
        );
        assert_eq!(
            shown(SetKind::File, "oauth2-proxy.cookieSecret=c.txt"),
            "--set-file oauth2-proxy.cookieSecret=c.txt"
        );
    }
}
