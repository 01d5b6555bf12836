//! Upstream's well-known credentials: where each lives ([`CREDENTIALS`], the table the
//! parameter table's credential row, the chart export, `global.existingSecrets`, the
//! redaction of cluster messages and `secrets generate` read), and the demo login, Dex's
//! static user in `common/dex` (email `user@example.com`, password `12341234`). This is the
//! one place kfctl-rs knows them; the install's refusal and the detection in pre-rendered
//! streams read them from here. Whether a profile may keep the demo login is the profile's
//! `allowDefaultCredentials` (see [`super::profile`]).

use super::object_id::ObjectId;
use serde_json::Value;

/// The demo user's email, as a literal (for `concat!`).
macro_rules! default_email {
    () => {
        "user@example.com"
    };
}

/// The demo user's password, as a literal (for `concat!`).
macro_rules! default_password {
    () => {
        "12341234"
    };
}

/// The demo user's email.
pub const DEFAULT_EMAIL: &str = default_email!();
/// How messages name the login: `user@example.com / 12341234`.
pub(crate) const DEFAULT_LOGIN: &str = concat!(default_email!(), " / ", default_password!());

/// How a credential is stored in its upstream object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Encoding {
    /// The field holds the value as is (`stringData`).
    Plain,
    /// The field holds the value base64-encoded (`data`).
    Base64,
    /// The field is a text in which `needle` is replaced by `prefix` + value.
    InText {
        /// The text replaced.
        needle: &'static str,
        /// What goes before the value in its place.
        prefix: &'static str,
    },
}

/// What `kfctl-rs secrets generate` writes for a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fresh {
    /// A new random token.
    Token,
    /// The email the user gives (`--email`).
    Email,
    /// The bcrypt hash of a new random password, shown once.
    PasswordHash,
    /// Nothing: upstream's value works as long as the component is upstream's own (the
    /// in-cluster MySQL's empty password); an external one brings its own.
    Keep,
}

/// One place upstream keeps a well-known default credential.
#[derive(Debug, Clone, Copy)]
pub struct Credential {
    /// The value path, e.g. `dex.staticUser.passwordHash`.
    pub value: &'static str,
    /// What it is (for warnings; never the secret itself).
    pub what: &'static str,
    /// The upstream object holding it (one of the constants above).
    pub(crate) object: ObjectId<'static>,
    /// JSON pointer of the field.
    pub(crate) field: &'static str,
    pub(crate) encoding: Encoding,
    /// What `secrets generate` writes for it.
    pub fresh: Fresh,
    /// Upstream's well-known value, as the field holds it once decoded (`kfctl-rs analyze`'s
    /// KF001 finds it in any stream).
    pub(crate) upstream: Upstream,
}

/// How upstream's well-known value of a credential is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upstream {
    /// The field holds this value (decoded; for a text, the needle is there).
    Value(&'static str),
    /// The field holds a bcrypt hash of this password.
    PasswordHash(&'static str),
    /// Nothing to recognise: upstream's value is safe where it is used (an empty password of a
    /// database no one reaches from outside).
    Harmless,
}

/// Dex's configuration (`common/dex`): its static users and OIDC clients.
pub(crate) const DEX_CONFIG: ObjectId<'static> = ObjectId::new("ConfigMap", "dex").in_group("").in_namespace("auth");
/// The demo user's password hash, read by Dex.
pub(crate) const DEX_PASSWORDS: ObjectId<'static> =
    ObjectId::new("Secret", "dex-passwords").in_group("").in_namespace("auth").or_hashed();
/// Dex's copy of the OIDC client secret.
pub(crate) const DEX_OIDC_CLIENT: ObjectId<'static> =
    ObjectId::new("Secret", "dex-oidc-client").in_group("").in_namespace("auth").or_hashed();
/// oauth2-proxy's client and cookie secrets.
pub(crate) const PROXY_SECRET: ObjectId<'static> =
    ObjectId::new("Secret", "oauth2-proxy").in_group("").in_namespace("oauth2-proxy").or_hashed();
/// The Pipelines object store's keys.
pub(crate) const OBJECT_STORE_SECRET: ObjectId<'static> =
    ObjectId::new("Secret", "mlpipeline-minio-artifact").in_group("").in_namespace("kubeflow").or_hashed();
/// The Pipelines database login.
pub(crate) const DB_SECRET: ObjectId<'static> =
    ObjectId::new("Secret", "mysql-secret").in_group("").in_namespace("kubeflow").or_hashed();

/// The field of [`DEX_PASSWORDS`] holding the demo user's hash.
pub(crate) const DEX_PASSWORD_FIELD: &str = "/stringData/DEX_USER_PASSWORD";

/// Where upstream's well-known default credentials live.
pub const CREDENTIALS: &[Credential] = &[
    Credential {
        value: "dex.staticUser.email",
        what: concat!("the Dex demo user's email (", default_email!(), ")"),
        object: DEX_CONFIG,
        field: "/data/config.yaml",
        encoding: Encoding::InText { needle: concat!("- email: ", default_email!()), prefix: "- email: " },
        fresh: Fresh::Email,
        upstream: Upstream::Value(default_email!()),
    },
    Credential {
        value: "dex.staticUser.passwordHash",
        what: concat!("the Dex demo user's password hash (password ", default_password!(), ")"),
        object: DEX_PASSWORDS,
        field: DEX_PASSWORD_FIELD,
        encoding: Encoding::Plain,
        fresh: Fresh::PasswordHash,
        upstream: Upstream::PasswordHash(default_password!()),
    },
    Credential {
        value: "global.oidcClientSecret",
        what: "the OIDC client secret shared by Dex and oauth2-proxy",
        object: DEX_OIDC_CLIENT,
        field: "/data/OIDC_CLIENT_SECRET",
        encoding: Encoding::Base64,
        fresh: Fresh::Token,
        upstream: Upstream::Value("pUBnBOY80SnXgjibTYM9ZWNzY2xreNGQok"),
    },
    Credential {
        value: "global.oidcClientSecret",
        what: "the OIDC client secret shared by Dex and oauth2-proxy",
        object: PROXY_SECRET,
        field: "/data/client-secret",
        encoding: Encoding::Base64,
        fresh: Fresh::Token,
        upstream: Upstream::Value("pUBnBOY80SnXgjibTYM9ZWNzY2xreNGQok"),
    },
    Credential {
        value: "oauth2-proxy.cookieSecret",
        what: "oauth2-proxy's cookie secret",
        object: PROXY_SECRET,
        field: "/data/cookie-secret",
        encoding: Encoding::Base64,
        fresh: Fresh::Token,
        upstream: Upstream::Value("7d16fee92f8d11b8940b081b3f8b8acb"),
    },
    Credential {
        value: "pipelines.objectStore.accessKey",
        what: "the Pipelines object store access key (minio)",
        object: OBJECT_STORE_SECRET,
        field: "/stringData/accesskey",
        encoding: Encoding::Plain,
        fresh: Fresh::Token,
        upstream: Upstream::Value("minio"),
    },
    Credential {
        value: "pipelines.objectStore.secretKey",
        what: "the Pipelines object store secret key (minio123)",
        object: OBJECT_STORE_SECRET,
        field: "/stringData/secretkey",
        encoding: Encoding::Plain,
        fresh: Fresh::Token,
        upstream: Upstream::Value("minio123"),
    },
    Credential {
        value: "pipelines.database.password",
        what: "the Pipelines database password (upstream's in-cluster MySQL: empty)",
        object: DB_SECRET,
        field: "/stringData/password",
        encoding: Encoding::Plain,
        fresh: Fresh::Keep,
        upstream: Upstream::Harmless,
    },
];

/// A values file of fresh credentials, as `secrets generate` writes it: each value path of
/// [`CREDENTIALS`] once, in the table's order, filled as its [`Fresh`] says (`token` makes each
/// new token).
pub fn fresh_values(email: &str, password_hash: &str, mut token: impl FnMut() -> String) -> Value {
    let mut out = Value::Object(serde_json::Map::new());
    for cred in CREDENTIALS {
        let path = cred.value_path();
        if super::values::get(&out, &path).is_some() {
            continue;
        }
        let value = match cred.fresh {
            Fresh::Token => token(),
            Fresh::Email => email.to_string(),
            Fresh::PasswordHash => password_hash.to_string(),
            Fresh::Keep => continue,
        };
        let mut at = &mut out;
        for key in &path[..path.len() - 1] {
            at = at.as_object_mut().expect("a map").entry(*key).or_insert_with(|| Value::Object(Default::default()));
        }
        at[path[path.len() - 1]] = Value::String(value);
    }
    out
}

impl Credential {
    /// Does this credential live in `obj`?
    pub fn matches(&self, obj: &Value) -> bool {
        self.object.matches(obj) && obj.pointer(self.field).is_some()
    }

    /// Whether `obj` holds upstream's well-known value of this credential.
    pub fn holds_upstream_value(&self, obj: &Value) -> bool {
        if !self.matches(obj) {
            return false;
        }
        let field = obj.pointer(self.field).and_then(Value::as_str).unwrap_or_default();
        let decoded = match self.encoding {
            Encoding::Base64 => decode_base64(field),
            Encoding::Plain | Encoding::InText { .. } => Some(field.to_string()),
        };
        let Some(decoded) = decoded else { return false };
        match (self.upstream, self.encoding) {
            (Upstream::Value(_), Encoding::InText { needle, .. }) => decoded.contains(needle),
            (Upstream::Value(value), _) => decoded == value,
            (Upstream::PasswordHash(password), _) => bcrypt::verify(password, &decoded).unwrap_or(false),
            (Upstream::Harmless, _) => false,
        }
    }

    /// Whether it lives in a Secret (not in a ConfigMap's text).
    pub(crate) fn in_secret(&self) -> bool {
        self.object.kind == "Secret"
    }

    /// The value's path in the values, split at dots.
    pub fn value_path(&self) -> Vec<&'static str> {
        self.value.split('.').collect()
    }
}

fn decode_base64(text: &str) -> Option<String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fresh_values_fill_each_value_path_once_as_the_table_says() {
        let mut n = 0;
        let values = fresh_values("me@example.org", "$2y$12$hash", || {
            n += 1;
            format!("token{n}")
        });
        assert_eq!(
            values,
            json!({
                "dex": {"staticUser": {"email": "me@example.org", "passwordHash": "$2y$12$hash"}},
                "global": {"oidcClientSecret": "token1"},
                "oauth2-proxy": {"cookieSecret": "token2"},
                "pipelines": {"objectStore": {"accessKey": "token3", "secretKey": "token4"}},
            })
        );
    }

    #[test]
    fn upstream_values_are_recognised_and_fresh_ones_are_not() {
        let store = |key: &str| {
            json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "mlpipeline-minio-artifact", "namespace": "kubeflow"},
            "stringData": {"accesskey": key, "secretkey": "x"}})
        };
        let access = CREDENTIALS.iter().find(|c| c.value == "pipelines.objectStore.accessKey").unwrap();
        assert!(access.holds_upstream_value(&store("minio")));
        assert!(!access.holds_upstream_value(&store("fresh")));
        let proxy = |cookie: &str| {
            json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "oauth2-proxy", "namespace": "oauth2-proxy"}, "data": {"cookie-secret": cookie}})
        };
        let cookie = CREDENTIALS.iter().find(|c| c.value == "oauth2-proxy.cookieSecret").unwrap();
        assert!(cookie.holds_upstream_value(&proxy("N2QxNmZlZTkyZjhkMTFiODk0MGIwODFiM2Y4YjhhY2I=")));
        assert!(!cookie.holds_upstream_value(&proxy("Zm9v")));
        let hash = bcrypt::hash(default_password!(), 4).unwrap();
        let dex = |h: &str| {
            json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "dex-passwords", "namespace": "auth"}, "stringData": {"DEX_USER_PASSWORD": h}})
        };
        let password = CREDENTIALS.iter().find(|c| c.value == "dex.staticUser.passwordHash").unwrap();
        assert!(password.holds_upstream_value(&dex(&hash)));
        assert!(!password.holds_upstream_value(&dex(&bcrypt::hash("another", 4).unwrap())));
    }

    #[test]
    fn every_credential_lives_in_a_core_object_of_a_named_namespace() {
        for cred in CREDENTIALS {
            assert!(cred.object.namespace.is_some() && cred.object.group == Some(""), "{}", cred.value);
        }
    }
}
