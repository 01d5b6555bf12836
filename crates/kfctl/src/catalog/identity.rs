//! Identity: the two ways upstream documents to log in with your own identity provider.
//!
//! - **Dex connectors** (`dex.connectors`): a passthrough list, each item `{type, id, name,
//!   config}` exactly as Dex's configuration file takes it (OIDC, LDAP, GitHub, …), appended to
//!   Dex's `config.yaml` as its `connectors:` (one flow mapping per item, the JSON Go's
//!   `encoding/json` writes, which is YAML too: the chart writes the same bytes with `toJson`).
//!   Empty (the default) leaves Dex's configuration as upstream has it, byte for byte.
//! - **oauth2-proxy straight to an external OIDC issuer** (`oauth2-proxy.oidc.issuerURL`,
//!   `.clientID`; the client secret is `global.oidcClientSecret`), upstream's "oauth2-proxy
//!   only" (`common/oauth2-proxy/README.md`): `oauth2_proxy.cfg` points at the issuer and
//!   discovers its endpoints ([`PROXY_CONFIG_LINES`]), oauth2-proxy's Secret gets the client
//!   id (both are generated, so they are renamed by their new hash, [`super::rehash`]), and
//!   every Istio `RequestAuthentication` rule trusting Dex's issuer ([`DEX_ISSUER`]) trusts the
//!   external one instead. Rules for other issuers (the Kubernetes issuer of the m2m overlays)
//!   stay. `oauth2-proxy.oidc.scope` replaces the scopes oauth2-proxy asks for, with Dex too.
//!
//! Secrets in a connector's `config` (an OIDC `clientSecret`, an LDAP `bindPW`) would land in
//! Dex's ConfigMap, readable by anyone who may read ConfigMaps in `auth`, and in every
//! values file and chart README that shows the value. So they are refused inline
//! ([`IdentityError::InlineSecret`], a `security:` refusal): the config names an environment
//! variable (`$GITHUB_CLIENT_SECRET`), which Dex expands in connector configs, and
//! `dex.env.dex.dex` gives Dex that variable from a Secret of your own.
//!
//! Setting the external issuer while Dex is enabled is refused ([`IdentityError::WithDex`],
//! by the umbrella chart too): nothing would log in through Dex any more, yet it would keep
//! serving `/dex/` with upstream's demo login; a user who wants both keeps the issuer in Dex
//! as a connector. Each check runs where the charts can make it: the connectors' while Dex is
//! enabled, the issuer's while oauth2-proxy is.

use super::object_id::text;
use super::schema::{Format, Schema};
use serde_json::{Value, json};

/// The issuer upstream's Dex has, and every object trusting it names.
pub(crate) const DEX_ISSUER: &str = "http://dex.auth.svc.cluster.local:5556/dex";

/// Words that make a connector `config` key a secret (matched in its lowercased name).
pub(crate) const SECRET_KEY_WORDS: &[&str] = &["secret", "password", "bindpw"];

/// What an external issuer does to a line of `oauth2_proxy.cfg` that starts with the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEdit {
    /// `<prefix>"<issuerURL>"`.
    Issuer,
    /// `<prefix>"<scope>"` (whenever `oauth2-proxy.oidc.scope` is set, with Dex too).
    Scope,
    /// `<prefix><text>`.
    Literal(&'static str),
    /// The line goes (Dex-only settings; the issuer's discovery document gives them).
    Drop,
}

impl LineEdit {
    /// The action's name in the Helm helper (`kfctl.oidcProxyConfig`).
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            LineEdit::Issuer => "issuer",
            LineEdit::Scope => "scope",
            LineEdit::Literal(_) => "literal",
            LineEdit::Drop => "drop",
        }
    }
    pub(crate) fn text(&self) -> &'static str {
        match self {
            LineEdit::Literal(text) => text,
            _ => "",
        }
    }
}

/// The lines of upstream's `oauth2_proxy.cfg` the values change: the issuer, discovery on
/// (Dex's in-cluster login, token and keys URLs go), no `prompt = "none"` (an external
/// provider would answer `login_required` instead of showing its login page) and no "Dex"
/// on the sign-in button.
pub(crate) const PROXY_CONFIG_LINES: &[(&str, LineEdit)] = &[
    ("oidc_issuer_url = ", LineEdit::Issuer),
    ("scope = ", LineEdit::Scope),
    ("skip_oidc_discovery = ", LineEdit::Literal("false")),
    ("login_url = ", LineEdit::Drop),
    ("redeem_url = ", LineEdit::Drop),
    ("oidc_jwks_url = ", LineEdit::Drop),
    ("prompt = ", LineEdit::Drop),
    ("provider_display_name = ", LineEdit::Drop),
];

/// The oauth2-proxy Secret's field holding the client id.
pub(crate) const CLIENT_ID_FIELD: &str = "client-id";

/// Why the identity values cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum IdentityError {
    #[error(
        "dex.connectors[{index}].id: `{id}` is also connectors[{first}]'s; every connector needs an id of its own (Dex routes logins by it)"
    )]
    DuplicateConnector { index: usize, first: usize, id: String },
    #[error(
        "security: dex.connectors[{index}].config.{key} holds a secret inline, which would be readable in Dex's ConfigMap and in values files; write `$SOME_NAME` there (Dex reads it from its environment) and give Dex that variable from your own Secret with dex.env.dex.dex: [{{name: SOME_NAME, valueFrom: {{secretKeyRef: {{name: …, key: …}}}}}}]"
    )]
    InlineSecret { index: usize, key: String },
    #[error(
        "oauth2-proxy.oidc.clientID is missing: with oauth2-proxy.oidc.issuerURL set, oauth2-proxy needs the id of its client at that issuer (and global.oidcClientSecret its secret)"
    )]
    MissingClientId,
    #[error(
        "oauth2-proxy.oidc.clientID: set, but the oauth2-proxy Secret is listed in global.existingSecrets, so the client id comes from your Secret; put it in its `client-id` key and leave oauth2-proxy.oidc.clientID empty"
    )]
    ClientIdInExistingSecret,
    #[error(
        "oauth2-proxy.oidc.clientID is set without oauth2-proxy.oidc.issuerURL: it is the client id at an external issuer (with Dex, oauth2-proxy and Dex share upstream's client); set the issuer too, or leave clientID empty"
    )]
    ClientIdWithoutIssuer,
    #[error(
        "oauth2-proxy.oidc.issuerURL is set while dex is enabled: oauth2-proxy and Istio would trust that issuer and nothing would log in through Dex; disable Dex (--set dex.enabled=false), or keep Dex and add the issuer to it as a connector (dex.connectors)"
    )]
    WithDex,
}

/// A Dex connector type (`oidc`, `ldap`, `github`, `mockCallback`…).
pub(crate) const CONNECTOR_TYPE: Format = Format {
    pattern: r"^[A-Za-z][A-Za-z0-9-]*$",
    max_len: 63,
    expected: "a Dex connector type (e.g. oidc, ldap, github, gitlab, microsoft, saml)",
};
/// A Dex connector id (it appears in Dex's URLs: `/dex/auth/<id>`).
pub(crate) const CONNECTOR_ID: Format = Format {
    pattern: r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
    max_len: 63,
    expected: "a connector id (letters, digits, `.`, `_` and `-`, e.g. github)",
};
/// An https URL without query or fragment, or empty (an OIDC issuer).
pub(crate) const HTTPS_URL_OR_EMPTY: Format = Format {
    pattern: r#"^$|^https://[^\s/?#"\\]+(/[^\s?#"\\]*)?$"#,
    max_len: 2048,
    expected: "empty or an https URL (the issuer's, e.g. https://login.example.com/realms/kubeflow)",
};
/// Space-separated OAuth scopes, or empty.
pub(crate) const SCOPES_OR_EMPTY: Format = Format {
    pattern: r#"^$|^[^\s"\\]+( [^\s"\\]+)*$"#,
    max_len: 1024,
    expected: "empty or space-separated scopes (e.g. openid email profile offline_access)",
};

/// The schema of `dex.connectors`.
pub(crate) fn connectors_schema() -> Schema {
    let inner = Schema::Map {
        known: vec![
            ("type".into(), Schema::Pattern(CONNECTOR_TYPE)),
            ("id".into(), Schema::Pattern(CONNECTOR_ID)),
            ("name".into(), Schema::String),
            ("config".into(), Schema::any_map()),
        ],
        extra: None,
    };
    let hint = "every connector needs a type and an id, as Dex's config.yaml has them (e.g. {type: github, id: github, name: GitHub, config: {…}})";
    Schema::ListOrText(Box::new(Schema::Required { keys: vec!["type", "id"], hint, inner: Box::new(inner) }))
}

/// The schema of `oauth2-proxy.oidc`.
pub(crate) fn oidc_schema() -> Schema {
    Schema::Map {
        known: vec![
            ("issuerURL".into(), Schema::Pattern(HTTPS_URL_OR_EMPTY)),
            ("clientID".into(), Schema::String),
            ("scope".into(), Schema::Pattern(SCOPES_OR_EMPTY)),
        ],
        extra: None,
    }
}

/// The defaults: no connectors, no external issuer.
pub(crate) fn set_defaults(root: &mut Value) {
    root["dex"]["connectors"] = json!([]);
    root["oauth2-proxy"]["oidc"] = json!({"issuerURL": "", "clientID": "", "scope": ""});
}

/// `oauth2-proxy.oidc` as given (empty strings when unset).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Oidc {
    pub issuer: String,
    pub client_id: String,
    pub scope: String,
}

pub(crate) fn oidc(values: &Value) -> Oidc {
    let s = |k: &str| {
        super::values::get(values, &["oauth2-proxy", "oidc", k]).and_then(Value::as_str).unwrap_or_default().to_string()
    };
    Oidc { issuer: s("issuerURL"), client_id: s("clientID"), scope: s("scope") }
}

/// `dex.connectors` as given: a list, or a file's text holding one (`--set-file
/// dex.connectors=connectors.yaml`, as the chart's `fromYamlArray` reads it).
pub(crate) fn connectors(values: &Value) -> Vec<Value> {
    match super::values::get(values, &["dex", "connectors"]) {
        Some(Value::Array(list)) => list.clone(),
        Some(Value::String(text)) => super::schema::list_in_text(text).unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn enabled(values: &Value, component: &str) -> bool {
    super::values::get(values, &[component, "enabled"]).and_then(Value::as_bool).unwrap_or(false)
}

/// Check what the schema cannot: unique ids, no inline secrets (with Dex enabled), the
/// issuer's client id (with oauth2-proxy enabled), no Dex beside an external issuer — where
/// the charts check them, which see a component's values only while it renders.
pub(crate) fn check(values: &Value) -> Result<(), IdentityError> {
    let list = if enabled(values, "dex") { connectors(values) } else { Vec::new() };
    let mut ids: Vec<&str> = Vec::new();
    for (index, connector) in list.iter().enumerate() {
        let id = connector.get("id").and_then(Value::as_str).unwrap_or_default();
        if let Some(first) = ids.iter().position(|seen| *seen == id) {
            return Err(IdentityError::DuplicateConnector { index, first, id: id.into() });
        }
        ids.push(id);
        if let Some(key) = connector.get("config").and_then(inline_secret) {
            return Err(IdentityError::InlineSecret { index, key });
        }
    }
    let oidc = oidc(values);
    // With oauth2-proxy's Secret an existing one, the client id is in it.
    let existing = super::existing_secrets::is_listed(values, "oauth2-proxy");
    match (oidc.issuer.is_empty(), oidc.client_id.is_empty(), enabled(values, "oauth2-proxy"), existing) {
        (_, false, true, true) => return Err(IdentityError::ClientIdInExistingSecret),
        (false, true, true, false) => return Err(IdentityError::MissingClientId),
        (true, false, true, _) => return Err(IdentityError::ClientIdWithoutIssuer),
        _ => {}
    }
    if !oidc.issuer.is_empty() && enabled(values, "dex") {
        return Err(IdentityError::WithDex);
    }
    Ok(())
}

/// The dotted path of the first key (at any depth) holding a secret as literal text: a
/// non-empty string not starting with `$` under a key naming a secret.
pub(crate) fn inline_secret(config: &Value) -> Option<String> {
    match config {
        Value::Object(map) => map.iter().find_map(|(key, value)| {
            let lower = key.to_lowercase();
            let secret_key = SECRET_KEY_WORDS.iter().any(|w| lower.contains(w));
            match value {
                Value::String(text) if secret_key && !text.is_empty() && !text.starts_with('$') => Some(key.clone()),
                other => inline_secret(other).map(|inner| format!("{key}.{inner}")),
            }
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| inline_secret(v).map(|k| format!("{i}.{k}"))),
        _ => None,
    }
}

pub(crate) use super::credentials::{DEX_CONFIG, PROXY_SECRET};

/// Dex's configuration: the ConfigMap `auth/dex` with its `config.yaml`.
pub(crate) fn is_dex_config(obj: &Value) -> bool {
    DEX_CONFIG.matches(obj) && obj.pointer("/data/config.yaml").is_some_and(Value::is_string)
}

/// oauth2-proxy's configuration (the generated ConfigMap holding `oauth2_proxy.cfg`).
pub(crate) fn is_proxy_config(obj: &Value) -> bool {
    text(obj, "/kind") == "ConfigMap"
        && text(obj, "/metadata/namespace") == "oauth2-proxy"
        && obj.pointer("/data/oauth2_proxy.cfg").is_some_and(Value::is_string)
}

/// oauth2-proxy's Secret holding the client id.
pub(crate) fn is_proxy_secret(obj: &Value) -> bool {
    PROXY_SECRET.matches(obj) && obj.pointer(&format!("/data/{CLIENT_ID_FIELD}")).is_some_and(Value::is_string)
}

/// The rules of an Istio `RequestAuthentication` that trust Dex's issuer.
pub(crate) fn for_each_dex_rule(obj: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    if text(obj, "/kind") != "RequestAuthentication" || !text(obj, "/apiVersion").starts_with("security.istio.io/") {
        return;
    }
    let rules = obj.pointer_mut("/spec/jwtRules").and_then(Value::as_array_mut).into_iter().flatten();
    for rule in rules.filter_map(Value::as_object_mut) {
        if rule.get("issuer").and_then(Value::as_str) == Some(DEX_ISSUER) {
            f(rule);
        }
    }
}

/// Dex's configuration text with `connectors:` appended (the chart's `kfctl.dexConnectors`
/// writes the same: one `- <toJson item>` line each).
pub(crate) fn with_connectors(text: &str, connectors: &[Value]) -> String {
    if connectors.is_empty() {
        return text.to_string();
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("connectors:\n");
    for connector in connectors {
        out.push_str("- ");
        out.push_str(&kfctl_kustomize::go_json(connector));
        out.push('\n');
    }
    out
}

/// `oauth2_proxy.cfg` with [`PROXY_CONFIG_LINES`] applied (lines split at `\n` only, every
/// other byte kept).
pub(crate) fn proxy_config(text: &str, oidc: &Oidc) -> String {
    let edit = |line: &str| -> Option<String> {
        let Some((prefix, edit)) = PROXY_CONFIG_LINES.iter().find(|(p, _)| line.starts_with(p)) else {
            return Some(line.to_string());
        };
        match edit {
            LineEdit::Scope if !oidc.scope.is_empty() => Some(format!("{prefix}\"{}\"", oidc.scope)),
            _ if oidc.issuer.is_empty() => Some(line.to_string()),
            LineEdit::Issuer => Some(format!("{prefix}\"{}\"", oidc.issuer)),
            LineEdit::Literal(text) => Some(format!("{prefix}{text}")),
            LineEdit::Drop => None,
            LineEdit::Scope => Some(line.to_string()),
        }
    };
    text.split('\n').filter_map(edit).collect::<Vec<_>>().join("\n")
}

/// The parameter row's native side.
pub(crate) fn apply(obj: &mut Value, values: &Value) {
    if is_dex_config(obj) {
        let list = connectors(values);
        if let Some(Value::String(text)) = obj.pointer_mut("/data/config.yaml")
            && !list.is_empty()
        {
            *text = with_connectors(text, &list);
        }
    }
    let oidc = oidc(values);
    if oidc.issuer.is_empty() && oidc.scope.is_empty() {
        return;
    }
    if is_proxy_config(obj)
        && let Some(Value::String(text)) = obj.pointer_mut("/data/oauth2_proxy.cfg")
    {
        *text = proxy_config(text, &oidc);
    }
    if oidc.issuer.is_empty() {
        return;
    }
    if is_proxy_secret(obj)
        && let Some(field) = obj.pointer_mut(&format!("/data/{CLIENT_ID_FIELD}"))
    {
        *field = json!(super::params::base64_encode(oidc.client_id.as_bytes()));
    }
    let issuer = oidc.issuer.clone();
    for_each_dex_rule(obj, &mut |rule| {
        rule.insert("issuer".into(), json!(issuer));
    });
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
