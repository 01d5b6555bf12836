//! `pipelines.database`, Helm side: the points of [`crate::catalog::external_store`] — the
//! install config's host and port keys and the login's `username` (`kfctl.databaseField`, which
//! checks the settings as kfctl-rs does, `fail` with the same words); the password is a
//! credential, marked by `mark_credentials`.

use super::params::{Marks, Scope, Step};
use crate::catalog::external_store::{self, HOST_KEYS, PORT_KEYS};
use serde_json::Value;

/// `external_store::apply`: the fields it changes.
pub(crate) fn mark_database(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    if external_store::is_install_config(obj)
        && let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut)
    {
        for key in HOST_KEYS {
            marks.mark(data, key, Step::DatabaseField { field: "host" });
        }
        for key in PORT_KEYS {
            marks.mark(data, key, Step::DatabaseField { field: "port" });
        }
    }
    if external_store::is_db_secret(obj)
        && let Some(data) = obj.get_mut("stringData").and_then(Value::as_object_mut)
    {
        marks.mark(data, "username", Step::DatabaseField { field: "user" });
    }
}
