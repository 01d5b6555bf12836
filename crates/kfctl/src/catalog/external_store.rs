//! `pipelines.database`: Kubeflow Pipelines on an external MySQL instead of the in-cluster one.
//!
//! Every Pipelines server that talks to MySQL (the API server, the cache server, the metadata
//! gRPC server) reads where it is from the `pipeline-install-config` ConfigMap (`dbHost`,
//! `dbPort`, and the newer `mysqlHost`, `mysqlPort`) and how to log in from the `mysql-secret`
//! Secret (`username`, `password`): the two objects upstream's install config names as the
//! place to change (its `ConMaxLifeTime` comment is about external databases), and the ones
//! its `env/gcp` overlay points at Cloud SQL. Empty (the default) keeps upstream's objects as
//! they are. Set, `host` goes to `dbHost` and `mysqlHost`, `port` (when given; upstream's 3306
//! otherwise) to `dbPort` and `mysqlPort`, `user` to `username`, and `password` — a credential,
//! [`super::params::CREDENTIALS`] — to `password`.
//!
//! `host`, `user` and `password` go together: a password alone would lock the pods out of
//! the in-cluster MySQL (which runs with an empty root password), a host alone would send
//! upstream's `root` with no password to it ([`DatabaseError`]). The in-cluster MySQL
//! (`third-party/mysql`) is kept: upstream's multi-user overlays include it, and dropping its
//! claim is not this value's call; scale it to 0 (`pipelines.replicas.mysql=0`) once the data
//! is elsewhere.

use super::object_id::ObjectId;
use super::schema::Format;
use serde_json::{Value, json};

/// The ConfigMap holding where the database is.
pub(crate) const INSTALL_CONFIG: ObjectId =
    ObjectId::new("ConfigMap", "pipeline-install-config").in_group("").in_namespace("kubeflow");
pub(crate) use super::credentials::DB_SECRET;
/// The install config's keys for the host and the port.
pub(crate) const HOST_KEYS: [&str; 2] = ["dbHost", "mysqlHost"];
pub(crate) const PORT_KEYS: [&str; 2] = ["dbPort", "mysqlPort"];

/// A host name or IPv4 address, no port, or empty.
pub(crate) const HOST_OR_EMPTY: Format = Format {
    pattern: r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    max_len: 253,
    expected: "empty or a host name or IPv4 address without a port (lowercase, e.g. mysql.example.com; the port goes in `port`)",
};

/// Why `pipelines.database` cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DatabaseError {
    #[error(
        "pipelines.database: {given} set but {missing} missing; an external database needs host, user and password together (port is optional: 3306)"
    )]
    Incomplete { given: String, missing: String },
    #[error("pipelines.database.port: {port} is not a TCP port (1 to 65535)")]
    BadPort { port: u64 },
    #[error(
        "pipelines.database.user: set, but mysql-secret is listed in global.existingSecrets, so the login comes from your Secret; put the user in its `username` key and leave pipelines.database.user empty"
    )]
    UserInExistingSecret,
}

/// The checked settings; `None` when no external database is set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Database {
    pub host: String,
    pub port: Option<u64>,
    pub user: String,
}

/// The external database `values` gives (schema-checked first).
pub(crate) fn database(values: &Value) -> Result<Option<Database>, DatabaseError> {
    let get = |key: &str| super::values::get(values, &["pipelines", "database", key]);
    let text = |key: &str| get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let port = get("port").and_then(super::schema::whole_count);
    if let Some(port) = port.filter(|p| !(1..=65535).contains(p)) {
        return Err(DatabaseError::BadPort { port });
    }
    // With mysql-secret an existing Secret, the login (user and password) is in it.
    let existing_login = super::existing_secrets::is_listed(values, DB_SECRET.name);
    if existing_login && text("user").is_some() {
        return Err(DatabaseError::UserInExistingSecret);
    }
    let all =
        [("host", text("host").is_some()), ("user", text("user").is_some()), ("password", text("password").is_some())];
    let fields = if existing_login { &all[..1] } else { &all[..] };
    let names = |set: bool| fields.iter().filter(|(_, s)| *s == set).map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    let given = names(true);
    let port_given = if port.is_some() { "port" } else { "" };
    let missing = names(false);
    match (given.is_empty() && port_given.is_empty(), missing.is_empty()) {
        (true, _) => Ok(None),
        (false, true) => {
            Ok(Some(Database { host: text("host").unwrap_or_default(), port, user: text("user").unwrap_or_default() }))
        }
        (false, false) => {
            let given =
                [given.as_str(), port_given].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(", ");
            Err(DatabaseError::Incomplete { given, missing })
        }
    }
}

/// Whether `obj` is the Pipelines install config (with the database keys).
pub(crate) fn is_install_config(obj: &Value) -> bool {
    INSTALL_CONFIG.matches(obj) && obj.pointer("/data/dbHost").is_some_and(Value::is_string)
}

/// Whether `obj` is the Pipelines database login.
pub(crate) fn is_db_secret(obj: &Value) -> bool {
    DB_SECRET.matches(obj) && obj.pointer("/stringData/username").is_some_and(Value::is_string)
}

/// The parameter row's native side (the password is a credential: `apply_credentials`).
pub(crate) fn apply(obj: &mut Value, values: &Value) {
    let Ok(Some(db)) = database(values) else { return };
    if is_install_config(obj)
        && let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut)
    {
        for key in HOST_KEYS {
            data.insert(key.into(), json!(db.host));
        }
        for key in PORT_KEYS.iter().filter(|_| db.port.is_some()) {
            data.insert((*key).into(), json!(db.port.unwrap_or_default().to_string()));
        }
    }
    if is_db_secret(obj)
        && let Some(data) = obj.get_mut("stringData").and_then(Value::as_object_mut)
    {
        data.insert("username".into(), json!(db.user));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_external_database_changes_the_install_config_and_the_login() {
        let mut config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pipeline-install-config", "namespace": "kubeflow"},
                                "data": {"dbHost": "mysql", "dbPort": "3306", "mysqlHost": "mysql", "mysqlPort": "3306", "bucketName": "mlpipeline"}});
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mysql-secret", "namespace": "kubeflow"},
                                "stringData": {"username": "root", "password": ""}});
        let values = json!({"pipelines": {"database": {"host": "db.example.com", "port": 3307, "user": "kfp", "password": "p"}}});
        apply(&mut config, &values);
        apply(&mut secret, &values);
        assert_eq!(
            config["data"],
            json!({"dbHost": "db.example.com", "dbPort": "3307", "mysqlHost": "db.example.com", "mysqlPort": "3307", "bucketName": "mlpipeline"})
        );
        assert_eq!(secret["stringData"]["username"], "kfp");
        let no_port = json!({"pipelines": {"database": {"host": "db", "port": null, "user": "kfp", "password": "p"}}});
        let mut config2 = config.clone();
        config2["data"]["dbPort"] = json!("3306");
        apply(&mut config2, &no_port);
        assert_eq!(config2["data"]["dbPort"], "3306", "upstream's port kept");
    }

    #[test]
    fn half_given_settings_are_refused_naming_what_is_missing() {
        let check = |db: Value| database(&json!({"pipelines": {"database": db}}));
        assert_eq!(check(json!({"host": "", "user": "", "password": "", "port": null})), Ok(None));
        assert_eq!(
            check(json!({"password": "p"})).unwrap_err().to_string(),
            "pipelines.database: password set but host, user missing; an external database needs host, user and password together (port is optional: 3306)"
        );
        assert_eq!(
            check(json!({"host": "db", "port": 3306})),
            Err(DatabaseError::Incomplete { given: "host, port".into(), missing: "user, password".into() })
        );
        assert_eq!(check(json!({"port": 70000})), Err(DatabaseError::BadPort { port: 70000 }));
        assert!(!HOST_OR_EMPTY.matches("db.example.com:3306"));
        assert!(HOST_OR_EMPTY.matches("10.0.0.7"));
    }
}
