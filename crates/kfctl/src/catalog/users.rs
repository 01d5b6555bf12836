//! `global.users`: the Kubeflow users a render sets up, replacing upstream's demo user.
//!
//! The value sits under `global` because two components act on it — `user-namespace` (one
//! Profile per user) and `dex` (a static login per user with a `passwordHash`) — and `global:`
//! is what Helm hands every subchart, as with `global.oidcClientSecret` (Dex and oauth2-proxy).
//!
//! Empty (the default) keeps upstream's objects as they are. Set, it
//! - replaces upstream's demo Profile with one Profile per user, a copy of the demo one
//!   (same apiVersion and kind) named by the user's namespace and owned by `{kind: User, name: email}`;
//! - replaces the demo entry of Dex's `staticPasswords` with one entry per user that has a
//!   `passwordHash` (the bcrypt hash inline, `hash:`, so one text field holds every login
//!   whatever the number of users), and empties the demo hash in the `dex-passwords` Secret,
//!   which no entry reads any more.
//!
//! `dex.staticUser` changes the demo user; with `global.users` set there is no demo user, so
//! giving both is refused ([`UsersError::WithStaticUser`]).

use super::credentials::{DEFAULT_EMAIL, DEX_PASSWORD_FIELD};
use super::render::RenderedObject;
use super::schema::{self, Format, Schema};
use serde_json::{Value, json};

/// Upstream's demo entry of Dex's `staticPasswords`, as its `config.yaml` has it.
pub(crate) const DEMO_DEX_ENTRY: &str =
    "- email: user@example.com\n  hashFromEnv: DEX_USER_PASSWORD\n  username: user\n  userID: \"15841185641784\"\n";

/// Why `global.users` cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum UsersError {
    #[error(
        "global.users[{index}].namespace: `{namespace}` (derived from the email) is not a DNS-1123 label; set namespace explicitly (lowercase letters, digits and `-`, at most 63 characters)"
    )]
    BadDerivedNamespace { index: usize, namespace: String },
    #[error(
        "global.users[{index}].namespace: `{namespace}` is also users[{first}]'s; every user needs a namespace of their own"
    )]
    DuplicateNamespace { index: usize, first: usize, namespace: String },
    #[error(
        "global.users and dex.staticUser are both set: global.users replaces the demo user that dex.staticUser changes; put that login in global.users (with passwordHash) and leave dex.staticUser empty"
    )]
    WithStaticUser,
}

/// One user.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct User {
    pub email: String,
    pub namespace: String,
    pub password_hash: Option<String>,
}

/// The schema of `global.users`.
pub(crate) fn schema() -> Schema {
    let field = |f: Format| Schema::Pattern(f);
    let inner = Schema::Map {
        known: vec![
            ("email".into(), field(schema::EMAIL)),
            ("namespace".into(), field(schema::DNS_LABEL_OR_EMPTY)),
            ("passwordHash".into(), field(schema::BCRYPT_OR_EMPTY)),
        ],
        extra: None,
    };
    let hint = "every user needs an email (e.g. {email: alice@example.com})";
    Schema::List(Box::new(Schema::Required { keys: vec!["email"], hint, inner: Box::new(inner) }))
}

/// Upstream's namespace for a user: the email lowercased, `@` and `.` as `-`
/// (`user@example.com` → `kubeflow-user-example-com`, the demo Profile's name).
pub(crate) fn namespace_of(email: &str) -> String {
    format!("kubeflow-{}", email.to_lowercase().replace(['@', '.'], "-"))
}

/// The users `values` gives (schema-checked), each with its namespace; empty when unset.
pub(crate) fn users(values: &Value) -> Result<Vec<User>, UsersError> {
    let list = super::values::get(values, &["global", "users"]).and_then(Value::as_array).cloned().unwrap_or_default();
    let mut out: Vec<User> = Vec::new();
    for (index, item) in list.iter().enumerate() {
        let s = |k: &str| item.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let email = s("email").unwrap_or_default();
        let namespace = match s("namespace") {
            Some(ns) => ns,
            None => {
                let ns = namespace_of(&email);
                if !schema::DNS_LABEL_OR_EMPTY.matches(&ns) {
                    return Err(UsersError::BadDerivedNamespace { index, namespace: ns });
                }
                ns
            }
        };
        if let Some(first) = out.iter().position(|u| u.namespace == namespace) {
            return Err(UsersError::DuplicateNamespace { index, first, namespace });
        }
        out.push(User { email, namespace, password_hash: s("passwordHash") });
    }
    let static_user = ["email", "passwordHash"].iter().any(|k| {
        super::values::get(values, &["dex", "staticUser", k]).and_then(Value::as_str).is_some_and(|s| !s.is_empty())
    });
    if !out.is_empty() && static_user {
        return Err(UsersError::WithStaticUser);
    }
    Ok(out)
}

/// Whether `obj` is upstream's demo Profile (owned by the demo user).
pub(crate) fn is_demo_profile(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("Profile")
        && obj.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a.starts_with("kubeflow.org/"))
        && obj.pointer("/spec/owner/name").and_then(Value::as_str) == Some(DEFAULT_EMAIL)
}

/// Whether `obj` is Dex's configuration ([`super::identity::is_dex_config`]) still holding
/// upstream's demo login, the entry `global.users` replaces.
pub(crate) fn is_dex_config_with_demo_login(obj: &Value) -> bool {
    super::identity::is_dex_config(obj)
        && obj.pointer("/data/config.yaml").and_then(Value::as_str).is_some_and(|t| t.contains(DEMO_DEX_ENTRY))
}

/// Whether `obj` is the Secret holding the demo user's hash.
pub(crate) fn is_dex_passwords(obj: &Value) -> bool {
    super::credentials::DEX_PASSWORDS.matches(obj) && obj.pointer(DEX_PASSWORD_FIELD).is_some()
}

/// Replace upstream's demo Profile by one per user (the render's step after the table).
pub(crate) fn expand_profiles(objects: &mut Vec<RenderedObject>, users: &[User]) {
    if users.is_empty() {
        return;
    }
    let Some(at) = objects.iter().position(|o| is_demo_profile(&o.obj)) else { return };
    let demo = objects.remove(at);
    let profiles = users.iter().map(|u| RenderedObject::new(demo.component.clone(), profile(&demo.obj, u)));
    objects.splice(at..at, profiles.collect::<Vec<_>>());
}

fn profile(demo: &Value, user: &User) -> Value {
    let mut obj = demo.clone();
    obj["metadata"]["name"] = json!(user.namespace);
    obj["spec"]["owner"]["name"] = json!(user.email);
    obj
}

/// A YAML single-quoted scalar.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Dex's `staticPasswords` entries for the users with a password hash (the Helm side,
/// `kfctl.dexUsers`, writes the same text).
pub(crate) fn dex_entries(users: &[User]) -> String {
    let mut out = String::new();
    for u in users {
        let Some(hash) = &u.password_hash else { continue };
        let name = u.email.split('@').next().unwrap_or_default();
        out.push_str(&format!(
            "- email: {}\n  hash: {}\n  username: {}\n  userID: {}\n",
            quoted(&u.email),
            quoted(hash),
            quoted(name),
            quoted(&u.namespace)
        ));
    }
    out
}

/// Dex's configuration with the demo entry replaced by `users`' entries.
pub(crate) fn dex_config(text: &str, users: &[User]) -> String {
    let entries = dex_entries(users);
    match entries.is_empty() {
        true => text.replace(&format!("staticPasswords:\n{DEMO_DEX_ENTRY}"), "staticPasswords: []\n"),
        false => text.replace(DEMO_DEX_ENTRY, &entries),
    }
}

/// The parameter row's native side: Dex's configuration and the demo hash (emptied: no
/// entry reads it any more). Profiles multiply, so they are [`expand_profiles`]' job.
pub(crate) fn apply_dex(obj: &mut Value, values: &Value) {
    let Ok(users) = users(values) else { return };
    if users.is_empty() {
        return;
    }
    if is_dex_config_with_demo_login(obj)
        && let Some(Value::String(text)) = obj.pointer_mut("/data/config.yaml")
    {
        *text = dex_config(text, &users);
    }
    if is_dex_passwords(obj)
        && let Some(field) = obj.pointer_mut(DEX_PASSWORD_FIELD)
    {
        *field = json!("");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72";

    #[test]
    fn the_demo_users_namespace_follows_upstreams_rule() {
        assert_eq!(namespace_of(DEFAULT_EMAIL), "kubeflow-user-example-com");
        assert_eq!(namespace_of("Alice.B@Corp.io"), "kubeflow-alice-b-corp-io");
    }

    #[test]
    fn users_get_profiles_and_dex_logins() {
        let demo = json!({"apiVersion": "kubeflow.org/v1beta1", "kind": "Profile", "metadata": {"name": "kubeflow-user-example-com"}, "spec": {"owner": {"kind": "User", "name": DEFAULT_EMAIL}}});
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "dex-passwords", "namespace": "auth"}, "stringData": {"DEX_USER_PASSWORD": HASH}});
        let mut config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dex", "namespace": "auth"}, "data": {"config.yaml": format!("staticPasswords:\n{DEMO_DEX_ENTRY}staticClients:\n")}});
        let mut objects = vec![RenderedObject::new("c", demo)];
        let values = json!({"global": {"users": [{"email": "a@x.io", "passwordHash": HASH}, {"email": "b@x.io", "namespace": "team-b"}]}});
        expand_profiles(&mut objects, &users(&values).unwrap());
        assert_eq!(objects[0].obj.pointer("/metadata/name").unwrap(), "kubeflow-a-x-io");
        assert_eq!(objects[1].obj.pointer("/spec/owner").unwrap(), &json!({"kind": "User", "name": "b@x.io"}));
        apply_dex(&mut secret, &values);
        apply_dex(&mut config, &values);
        assert_eq!(secret["stringData"], json!({"DEX_USER_PASSWORD": ""}));
        assert_eq!(
            config.pointer("/data/config.yaml").unwrap().as_str().unwrap(),
            format!(
                "staticPasswords:\n- email: 'a@x.io'\n  hash: '{HASH}'\n  username: 'a'\n  userID: 'kubeflow-a-x-io'\nstaticClients:\n"
            )
        );
        let only_sso = users(&json!({"global": {"users": [{"email": "a@x.io"}]}})).unwrap();
        assert_eq!(
            dex_config(&format!("staticPasswords:\n{DEMO_DEX_ENTRY}x\n"), &only_sso),
            "staticPasswords: []\nx\n"
        );
    }

    #[test]
    fn bad_users_are_refused_naming_the_value() {
        let check = |v: Value| schema().check(&v).unwrap_err().to_string();
        assert!(check(json!([{"namespace": "x"}])).contains("`[0].email` is missing"));
        assert!(check(json!([{"email": "a@b.c"}, {"email": "nope"}])).contains("`[1].email` must be an email"));
        assert!(check(json!([{"email": "a@b.c", "namespace": "Bad_NS"}])).contains("DNS-1123 label"));
        assert!(check(json!([{"email": "a@b.c", "passwordHash": "plain"}])).contains("bcrypt"));
        let derived = users(&json!({"global": {"users": [{"email": "a_b@c.d"}]}})).unwrap_err();
        assert!(derived.to_string().starts_with("global.users[0].namespace: `kubeflow-a_b-c-d`"), "{derived}");
        let both = json!({"global": {"users": [{"email": "a@b.c"}]}, "dex": {"staticUser": {"email": "x@y.z"}}});
        assert_eq!(users(&both).unwrap_err(), UsersError::WithStaticUser);
    }
}
