//! `global.existingSecrets`: credentials that live in Secrets you create, not in the values.
//!
//! A GitOps install (Argo CD, Flux) keeps its values in Git, and a credential in the values is
//! a credential in Git. Helm charts solve this with an "existing secret": the chart does not
//! render the Secret, and the workloads read one the user made (by hand, with Sealed Secrets,
//! the External Secrets Operator…). Here the Secrets that can be existing ones are exactly the
//! upstream Secrets holding a credential of [`CREDENTIALS`] (so the list follows the table),
//! named as upstream names them before kustomize's hash suffix.
//!
//! A listed Secret is not rendered. The Secret you create must have that name, that namespace
//! and the same keys. Where upstream's Secret is generated (`oauth2-proxy-<hash>`), every
//! reference to the hashed name points to the plain name instead — the name cannot follow a
//! content the render does not have, so rolling pods after you change the Secret is yours to
//! do (`kubectl rollout restart`, or a reloader). A credential value whose every Secret is an
//! existing one would be used nowhere, so giving it is refused ([`ExistingSecretsError`]); the
//! exported charts refuse it alike (`kfctl.existingSecret`, a Helm `fail`).

use super::params::CREDENTIALS;
use super::rehash::{HashedName, Rename};
use super::render::RenderedObject;
use super::schema::Schema;
use serde_json::Value;

/// Why `global.existingSecrets` cannot be used as given.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ExistingSecretsError {
    #[error(
        "values: `{value}` is set, but every Secret that holds it ({secrets}) is listed in global.existingSecrets, so it would be used nowhere; put the credential in your Secret and leave `{value}` empty"
    )]
    UnusedCredential { value: String, secrets: String },
}

/// One Secret that can be an existing one: its namespace, its name (before any hash suffix)
/// and the credential values it holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Holder {
    pub namespace: &'static str,
    pub name: &'static str,
    pub values: Vec<&'static str>,
}

/// The Secrets holding a credential, in [`CREDENTIALS`] order.
pub(crate) fn holders() -> Vec<Holder> {
    let mut out: Vec<Holder> = Vec::new();
    for cred in CREDENTIALS.iter().filter(|c| c.in_secret()) {
        match out.iter_mut().find(|h| Some(h.namespace) == cred.object.namespace && h.name == cred.object.name) {
            Some(h) if !h.values.contains(&cred.value) => h.values.push(cred.value),
            Some(_) => {}
            None => out.push(Holder {
                namespace: cred.object.namespace.unwrap_or_default(),
                name: cred.object.name,
                values: vec![cred.value],
            }),
        }
    }
    out
}

/// The Secrets a credential value is stored in.
pub(crate) fn secrets_of(value: &str) -> Vec<&'static str> {
    holders().into_iter().filter(|h| h.values.contains(&value)).map(|h| h.name).collect()
}

/// The schema of `global.existingSecrets`: a list of those Secrets' names.
pub(crate) fn schema() -> Schema {
    Schema::List(Box::new(Schema::Enum(holders().iter().map(|h| h.name).collect())))
}

/// What `global.existingSecrets` does, with the Secrets it can name.
pub(crate) fn description() -> String {
    let names: Vec<String> = holders()
        .iter()
        .map(|h| format!("`{}` (namespace {}; holds {})", h.name, h.namespace, h.values.join(", ")))
        .collect();
    format!(
        "Secrets you create instead of the chart, to keep credentials out of the values (and out of Git): a listed Secret is not rendered, and its workloads read the Secret of that name you made in that namespace, with the keys upstream's has (a default `kfctl-rs template` shows them); a generated one is referenced by its name without kustomize's hash suffix, so restart its pods after changing it. One of: {}.",
        names.join(", ")
    )
}

/// The names listed in `values`.
pub(crate) fn listed(values: &Value) -> Vec<String> {
    super::values::get(values, &["global", "existingSecrets"])
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Whether `values` list the Secret `name` (a value kept in that Secret has nowhere to go).
pub(crate) fn is_listed(values: &Value, name: &str) -> bool {
    listed(values).iter().any(|l| l == name)
}

/// Refuse a credential value every Secret of which is an existing one.
pub(crate) fn check(values: &Value) -> Result<(), ExistingSecretsError> {
    let listed = listed(values);
    for cred in CREDENTIALS.iter().filter(|c| c.in_secret()) {
        let set = super::values::get(values, &cred.value_path()).and_then(Value::as_str).is_some_and(|v| !v.is_empty());
        let secrets = secrets_of(cred.value);
        if set && secrets.iter().all(|s| listed.iter().any(|l| l == s)) {
            return Err(ExistingSecretsError::UnusedCredential {
                value: cred.value.to_string(),
                secrets: secrets.join(", "),
            });
        }
    }
    Ok(())
}

/// The holder `obj` is (a Secret named as upstream names it, or that name with kustomize's
/// hash of its content), if any.
pub(crate) fn holder_of(obj: &Value) -> Option<Holder> {
    if obj.get("kind").and_then(Value::as_str) != Some("Secret") {
        return None;
    }
    let namespace = obj.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
    let name = obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let base = HashedName::of(obj).map(|h| h.base);
    holders().into_iter().find(|h| h.namespace == namespace && (name == h.name || base.as_deref() == Some(h.name)))
}

/// The holder `obj` is, when `listed` names it.
pub(crate) fn existing_one(obj: &Value, listed: &[String]) -> Option<Holder> {
    if listed.is_empty() {
        return None;
    }
    holder_of(obj).filter(|h| listed.iter().any(|l| l == h.name))
}

/// Drop the listed Secrets from `objects`, and point every reference to a generated one's
/// hashed name at its plain name.
pub(crate) fn drop_listed(objects: &mut Vec<RenderedObject>, values: &Value) -> Result<(), super::CatalogError> {
    let listed = listed(values);
    if listed.is_empty() {
        return Ok(());
    }
    let mut renames = Vec::new();
    objects.retain(|o| match existing_one(&o.obj, &listed) {
        None => true,
        Some(holder) => {
            let name = o.obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            if name != holder.name {
                renames.push(Rename { namespace: holder.namespace.into(), old: name.into(), new: holder.name.into() });
            }
            false
        }
    });
    super::rehash::rename_references(objects, &renames)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn holders_follow_the_credentials_table() {
        let names: Vec<_> = holders().iter().map(|h| h.name).collect();
        for name in ["dex-passwords", "dex-oidc-client", "oauth2-proxy", "mlpipeline-minio-artifact"] {
            assert!(names.contains(&name), "{names:?}");
        }
        assert_eq!(secrets_of("global.oidcClientSecret"), vec!["dex-oidc-client", "oauth2-proxy"]);
    }

    #[test]
    fn a_credential_is_refused_only_when_all_its_secrets_are_existing() {
        let values = |list: Value| json!({"global": {"existingSecrets": list, "oidcClientSecret": "s3cret"}});
        assert!(check(&values(json!(["oauth2-proxy"]))).is_ok(), "dex-oidc-client still uses it");
        let err = check(&values(json!(["oauth2-proxy", "dex-oidc-client"]))).unwrap_err();
        assert!(err.to_string().contains("`global.oidcClientSecret` is set"), "{err}");
    }
}
