//! Helm-style values: a tree of YAML data, layered with the helm CLI's rules.
//!
//! The user's layers — the profile's values, each `-f` file, then the `--set` family in the
//! helm CLI's order (`--set-json`, `--set`, `--set-string`, `--set-file`, `--set-literal`,
//! parsed by [`super::strvals`]) — stack with [`merge_layer`]: maps merge key by key, anything
//! else is replaced, and a `null` is kept as a value. Only when the user's tree meets the
//! defaults ([`merge`], Helm's coalescing) does a `null` delete the key it stands on.

use serde_json::Value;

pub(crate) use super::strvals::SetError;

/// Stack a user layer onto the layers below it (Helm's `mergeMaps`): nulls are kept, so that
/// they delete the default later.
pub fn merge_layer(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (key, value) in o {
                match b.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => merge_layer(existing, value),
                    _ => {
                        b.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// Merge the user's values onto the defaults (Helm's coalescing): a null deletes the default
/// it stands on; where there is no default, the user's value stays as it is, nulls included.
pub fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (key, value) in o {
                match b.get_mut(key) {
                    Some(_) if value.is_null() => {
                        b.remove(key);
                    }
                    Some(existing) if existing.is_object() && value.is_object() => merge(existing, value),
                    _ => {
                        b.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// The value at a dotted path, if present.
pub fn get<'a>(values: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(values, |v, k| v.get(*k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn later_layers_win_and_null_deletes() {
        let mut base = json!({"a": {"x": 1, "y": 2}, "keep": true});
        merge(&mut base, &json!({"a": {"x": 9, "y": null}, "new": [1]}));
        assert_eq!(base, json!({"a": {"x": 9}, "keep": true, "new": [1]}));
    }

    #[test]
    fn user_layers_keep_nulls_for_the_defaults_to_lose() {
        let mut user = json!({"a": {"x": 1, "y": 2}});
        merge_layer(&mut user, &json!({"a": {"y": null}, "b": null}));
        assert_eq!(user, json!({"a": {"x": 1, "y": null}, "b": null}));
        let mut effective = json!({"a": {"x": 0, "y": 0, "z": 0}, "b": 1});
        merge(&mut effective, &user);
        assert_eq!(effective, json!({"a": {"x": 1, "z": 0}}));
    }
}
