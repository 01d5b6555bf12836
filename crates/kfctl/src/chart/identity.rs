//! The identity row's Helm side ([`crate::catalog::identity`]): Dex's configuration text
//! (`kfctl.dexConnectors`), oauth2-proxy's (`kfctl.oidcProxyConfig`, given the line table
//! [`identity::PROXY_CONFIG_LINES`] as arguments, so the table stays the one place), its
//! client id (`kfctl.oidcClientID`) and every `RequestAuthentication` rule trusting Dex's
//! issuer (`kfctl.oidcIssuer`). The helpers live in `templates/chart/helpers/identity.tpl`;
//! they `fail` on what kfctl-rs refuses beyond the schema (duplicate connector ids, inline
//! secrets, an issuer without its client id and the reverse).

use super::gotmpl::go_quote;
use super::params::{Marks, Scope, Step};
use crate::catalog::identity::{self, CLIENT_ID_FIELD, PROXY_CONFIG_LINES, SECRET_KEY_WORDS};
use serde_json::Value;

/// One action of the identity row on a point.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IdentityStep {
    /// `dex.connectors` appended to Dex's `config.yaml`.
    DexConnectors,
    /// `oauth2-proxy.oidc` on `oauth2_proxy.cfg`.
    ProxyConfig,
    /// `oauth2-proxy.oidc.issuerURL` on a rule's `issuer`.
    Issuer,
    /// `oauth2-proxy.oidc.clientID` on the Secret's `client-id`.
    ClientId,
}

impl IdentityStep {
    /// The Helm expression for this step applied to `inner` (an expression giving JSON).
    pub(crate) fn wrap(&self, inner: &str) -> String {
        match self {
            IdentityStep::DexConnectors => {
                let words: Vec<String> = SECRET_KEY_WORDS.iter().map(|w| go_quote(w)).collect();
                format!("include \"kfctl.dexConnectors\" (list $ {inner} (list {}))", words.join(" "))
            }
            IdentityStep::ProxyConfig => {
                let rules: Vec<String> = PROXY_CONFIG_LINES
                    .iter()
                    .map(|(prefix, edit)| {
                        format!("(list {} {} {})", go_quote(prefix), go_quote(edit.as_str()), go_quote(edit.text()))
                    })
                    .collect();
                format!("include \"kfctl.oidcProxyConfig\" (list $ {inner} (list {}))", rules.join(" "))
            }
            IdentityStep::Issuer => format!("include \"kfctl.oidcIssuer\" (list $ {inner})"),
            IdentityStep::ClientId => format!("include \"kfctl.oidcClientID\" (list $ {inner})"),
        }
    }
}

/// `identity::apply`'s points: the same objects and fields it changes.
pub(crate) fn mark_identity(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    let step = |s: IdentityStep| Step::Identity(s);
    if identity::is_dex_config(obj)
        && let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut)
    {
        marks.mark(data, "config.yaml", step(IdentityStep::DexConnectors));
    }
    if identity::is_proxy_config(obj)
        && let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut)
    {
        marks.mark(data, "oauth2_proxy.cfg", step(IdentityStep::ProxyConfig));
    }
    if identity::is_proxy_secret(obj)
        && let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut)
    {
        marks.mark(data, CLIENT_ID_FIELD, step(IdentityStep::ClientId));
    }
    identity::for_each_dex_rule(obj, &mut |rule| marks.mark(rule, "issuer", step(IdentityStep::Issuer)));
}
