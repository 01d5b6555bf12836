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

/// One place upstream keeps a well-known default credential.
#[derive(Debug, Clone, Copy)]
pub struct Credential {
    /// The value path, e.g. `dex.staticUser.passwordHash`.
    pub value: &'static str,
    /// What it is (for warnings; never the secret itself).
    pub what: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) namespace: &'static str,
    /// The object's name, or its name before kustomize's hash suffix.
    pub(crate) name: &'static str,
    /// JSON pointer of the field.
    pub(crate) field: &'static str,
    pub(crate) encoding: Encoding,
}

/// Where upstream's well-known default credentials live.
pub const CREDENTIALS: &[Credential] = &[
    Credential {
        value: "dex.staticUser.email",
        what: concat!("the Dex demo user's email (", default_email!(), ")"),
        kind: "ConfigMap",
        namespace: "auth",
        name: "dex",
        field: "/data/config.yaml",
        encoding: Encoding::InText { needle: concat!("- email: ", default_email!()), prefix: "- email: " },
    },
    Credential {
        value: "dex.staticUser.passwordHash",
        what: concat!("the Dex demo user's password hash (password ", default_password!(), ")"),
        kind: "Secret",
        namespace: "auth",
        name: "dex-passwords",
        field: "/stringData/DEX_USER_PASSWORD",
        encoding: Encoding::Plain,
    },
    Credential {
        value: "global.oidcClientSecret",
        what: "the OIDC client secret shared by Dex and oauth2-proxy",
        kind: "Secret",
        namespace: "auth",
        name: "dex-oidc-client",
        field: "/data/OIDC_CLIENT_SECRET",
        encoding: Encoding::Base64,
    },
    Credential {
        value: "global.oidcClientSecret",
        what: "the OIDC client secret shared by Dex and oauth2-proxy",
        kind: "Secret",
        namespace: "oauth2-proxy",
        name: "oauth2-proxy",
        field: "/data/client-secret",
        encoding: Encoding::Base64,
    },
    Credential {
        value: "oauth2-proxy.cookieSecret",
        what: "oauth2-proxy's cookie secret",
        kind: "Secret",
        namespace: "oauth2-proxy",
        name: "oauth2-proxy",
        field: "/data/cookie-secret",
        encoding: Encoding::Base64,
    },
    Credential {
        value: "pipelines.objectStore.accessKey",
        what: "the Pipelines object store access key (minio)",
        kind: "Secret",
        namespace: "kubeflow",
        name: "mlpipeline-minio-artifact",
        field: "/stringData/accesskey",
        encoding: Encoding::Plain,
    },
    Credential {
        value: "pipelines.objectStore.secretKey",
        what: "the Pipelines object store secret key (minio123)",
        kind: "Secret",
        namespace: "kubeflow",
        name: "mlpipeline-minio-artifact",
        field: "/stringData/secretkey",
        encoding: Encoding::Plain,
    },
    Credential {
        value: "pipelines.database.password",
        what: "the Pipelines database password (upstream's in-cluster MySQL: empty)",
        kind: "Secret",
        namespace: "kubeflow",
        name: "mysql-secret",
        field: "/stringData/password",
        encoding: Encoding::Plain,
    },
];

impl Credential {
    /// Does this credential live in `obj`?
    pub fn matches(&self, obj: &Value) -> bool {
        self.object().matches(obj) && obj.pointer(self.field).is_some()
    }

    /// The object holding it: its name as upstream writes it, or with the hash of a generated one.
    pub(crate) fn object(&self) -> ObjectId<'static> {
        ObjectId::new(self.kind, self.name).in_namespace(self.namespace).or_hashed()
    }

    /// The value's path in the values, split at dots.
    pub fn value_path(&self) -> Vec<&'static str> {
        self.value.split('.').collect()
    }
}
