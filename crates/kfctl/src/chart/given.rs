//! Values given at export under `global`, and the umbrella's refusal of a null over one.
//!
//! A value given at `chart export` (profile values, `-f`, `--set`) becomes a default of the
//! charts. Helm copies the umbrella's `global:` into each subchart's values as it loads the
//! chart's dependencies (`<subchart>.global`, helm/helm#6277), before the install's values
//! apply, so `--set global.commonLabels=null` deletes the umbrella's key and leaves every
//! copy, where `kfctl-rs template` drops the value. Rather than diverge silently, the umbrella's
//! `templates/checks.yaml` calls `kfctl.exportedGlobal` (`templates/chart/helpers/globals.tpl`)
//! once per path [`paths`] finds: it fails, naming the key and the per-subchart nulls that undo
//! it as kfctl-rs does, when the umbrella lost the path while a subchart's copy still holds it.
//! With every copy nulled too, Helm renders what kfctl-rs renders with the null. Only paths are
//! written, never values (credentials such as `global.oidcClientSecret` live under `global`).

use serde_json::Value;

/// The paths under `global` the user's layers give a value at, in their order. A non-empty map
/// is walked into; a scalar or a list (replaced whole) is a leaf; a null or an empty map gives
/// nothing (a map merges, so `{}` changes no default).
pub(crate) fn paths(user: &Value) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    leaves(user.get("global").unwrap_or(&Value::Null), &mut Vec::new(), &mut found);
    found
}

fn leaves(value: &Value, prefix: &mut Vec<String>, found: &mut Vec<Vec<String>>) {
    match value {
        Value::Null => {}
        Value::Object(map) => {
            for (key, inner) in map {
                prefix.push(key.clone());
                leaves(inner, prefix, found);
                prefix.pop();
            }
        }
        _ if prefix.is_empty() => {}
        _ => found.push(prefix.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_leaf_under_global_is_a_path_lists_whole() {
        let user = json!({
            "global": {
                "commonLabels": {"team": "ml", "app.kubernetes.io/part-of": "kf"},
                "imageRegistry": "registry.example.com",
                "users": [{"email": "a@example.com"}],
                "nodeSelector": {},
                "storageClass": null,
            },
            "dex": {"enabled": true},
        });
        let want = [vec!["commonLabels", "team"], vec!["commonLabels", "app.kubernetes.io/part-of"]];
        let want: Vec<Vec<&str>> = want.into_iter().chain([vec!["imageRegistry"], vec!["users"]]).collect();
        assert_eq!(paths(&user), want);
    }

    #[test]
    fn no_global_gives_no_path() {
        assert!(paths(&json!({"dex": {"enabled": false}})).is_empty());
        assert!(paths(&json!({"global": {}})).is_empty());
        assert!(paths(&json!({"global": "x"})).is_empty());
    }
}
