//! Which upstream object a catalog rule means.
//!
//! The gateway, database and identity rows, the credentials table and the image locations
//! each pick objects out of a render by kind, namespace and name. [`ObjectId`] is that pick,
//! written once. Two facts differ from rule to rule, and each rule states them:
//!
//! - the API group: `in_group("")` is the core group (`apiVersion: v1`), `in_group("cert-manager.io")`
//!   any version of that group; without it any group matches;
//! - whether the name may carry kustomize's content hash (`-` and ten characters), as a
//!   generated ConfigMap or Secret does. The suffix is matched by its shape and not
//!   recomputed: a row may already have changed the content the hash was taken of
//!   (`rehash` renames it afterwards).

use super::rehash::HASH_LEN;
use serde_json::Value;

/// The string at `pointer` in `obj`; empty when it is absent or not a string.
pub(crate) fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    lookup(obj, pointer).and_then(Value::as_str).unwrap_or_default()
}

/// [`Value::pointer`] without its two string replacements per token: a pointer without `~`
/// (every pointer the catalog's rules use) is walked as it is. The rules match every object of
/// a render this way, and the copies were a twentieth of a warm `template`'s instructions.
fn lookup<'a>(obj: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() || pointer.contains('~') {
        return obj.pointer(pointer);
    }
    pointer.strip_prefix('/')?.split('/').try_fold(obj, |value, token| match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => array_index(token).and_then(|i| items.get(i)),
        _ => None,
    })
}

/// An array index as [`Value::pointer`] reads one: digits, no sign, no leading zero.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// Whether `actual` is `base`, or `base` with kustomize's hash suffix.
pub(crate) fn is_name_or_hashed(actual: &str, base: &str) -> bool {
    actual == base
        || actual.strip_prefix(base).and_then(|rest| rest.strip_prefix('-')).is_some_and(|hash| hash.len() == HASH_LEN)
}

/// An object as a rule names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ObjectId<'a> {
    /// The API group (`""`: core); `None`: any.
    pub group: Option<&'a str>,
    pub kind: &'a str,
    /// `None`: any namespace.
    pub namespace: Option<&'a str>,
    pub name: &'a str,
    /// Whether the name may carry kustomize's hash suffix.
    pub hashed: bool,
}

impl<'a> ObjectId<'a> {
    /// `kind` named `name`, in any group and namespace, without a hash suffix.
    pub(crate) const fn new(kind: &'a str, name: &'a str) -> Self {
        ObjectId { group: None, kind, namespace: None, name, hashed: false }
    }

    pub(crate) const fn in_group(self, group: &'a str) -> Self {
        ObjectId { group: Some(group), ..self }
    }

    pub(crate) const fn in_namespace(self, namespace: &'a str) -> Self {
        ObjectId { namespace: Some(namespace), ..self }
    }

    /// The name as is, or with kustomize's hash suffix.
    pub(crate) const fn or_hashed(self) -> Self {
        ObjectId { hashed: true, ..self }
    }

    /// Whether `obj` is this object.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let name = text(obj, "/metadata/name");
        text(obj, "/kind") == self.kind
            && self.group.is_none_or(|group| in_group(text(obj, "/apiVersion"), group))
            && self.namespace.is_none_or(|namespace| text(obj, "/metadata/namespace") == namespace)
            && if self.hashed { is_name_or_hashed(name, self.name) } else { name == self.name }
    }
}

/// Whether `api_version` is of `group` (`""`: the core group's `v1`).
fn in_group(api_version: &str, group: &str) -> bool {
    match api_version.split_once('/') {
        Some((g, _)) => g == group,
        None => group.is_empty() && api_version == "v1",
    }
}

/// Whether `obj` is a CustomResourceDefinition (of `apiextensions.k8s.io`): the one rule the
/// render's walks, `global.crds`, the chart export and the install's waves share.
pub(crate) fn is_crd(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && obj.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a.starts_with("apiextensions.k8s.io/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_reads_as_json_pointers_do() {
        let obj = serde_json::json!({"a": {"b/c": "x", "l": ["p", "q"], "n": 1}, "": "e"});
        for pointer in ["/a/b~1c", "/a/l/1", "/a/l/01", "/a/l/+1", "/a/l/2", "/a/n", "/a/x/y", "a", "/", "", "/a/l/0"] {
            assert_eq!(
                text(&obj, pointer),
                obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default(),
                "{pointer}"
            );
        }
    }
    use serde_json::json;

    fn secret(api_version: &str, namespace: &str, name: &str) -> Value {
        json!({"apiVersion": api_version, "kind": "Secret", "metadata": {"namespace": namespace, "name": name}})
    }

    #[test]
    fn object_id_matches_kind_group_namespace_and_name() {
        let id = ObjectId::new("Secret", "mysql-secret").in_group("").in_namespace("kubeflow");
        assert!(id.matches(&secret("v1", "kubeflow", "mysql-secret")));
        assert!(!id.matches(&secret("v1beta1", "kubeflow", "mysql-secret")), "not the core group");
        assert!(!id.matches(&secret("example.io/v1", "kubeflow", "mysql-secret")));
        assert!(!id.matches(&secret("v1", "auth", "mysql-secret")));
        assert!(!id.matches(&secret("v1", "kubeflow", "mysql-secret-5t8bdkhm2g")), "no hash unless allowed");
        assert!(ObjectId::new("Secret", "mysql-secret").matches(&secret("x.io/v2", "any", "mysql-secret")));
    }

    #[test]
    fn object_id_or_hashed_takes_only_a_ten_character_suffix() {
        let id = ObjectId::new("Secret", "oauth2-proxy").in_namespace("oauth2-proxy").or_hashed();
        assert!(id.matches(&secret("v1", "oauth2-proxy", "oauth2-proxy")));
        assert!(id.matches(&secret("v1", "oauth2-proxy", "oauth2-proxy-5t8bdkhm2g")));
        assert!(!id.matches(&secret("v1", "oauth2-proxy", "oauth2-proxy-extra")));
        assert!(!id.matches(&secret("v1", "oauth2-proxy", "oauth2-proxyx5t8bdkhm2g")));
    }

    #[test]
    fn object_id_group_is_the_api_version_before_the_slash() {
        let id = ObjectId::new("Certificate", "tls").in_group("cert-manager.io");
        let cert = |v: &str| json!({"apiVersion": v, "kind": "Certificate", "metadata": {"name": "tls"}});
        assert!(id.matches(&cert("cert-manager.io/v1")));
        assert!(!id.matches(&cert("cert-manager.io.evil/v1")));
    }
}
