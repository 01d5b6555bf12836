//! Values given at export under `global:`, set apart in each chart's `exportedGlobal:`.
//!
//! A value given at `chart export` (profile values, `-f`, `--set`) becomes a default of the
//! charts, and an install's values replace or merge over it as over any default; a `null`
//! removes it, as `kfctl-rs template` removes a default the null stands on. A default under
//! `global:` cannot be removed so in Helm: loading an umbrella chart's dependencies, Helm copies
//! its `global:` defaults into each subchart's values (`<subchart>.global`, helm/helm#6277)
//! before the install's values apply, so a `--set global.commonLabels=null` deletes the
//! umbrella's key and leaves every copy; and a subchart's own `global:` default is a table a
//! parent's null skips (helm/helm#9806).
//!
//! So each top-level key under `global` the user's layers give ([`keys`]) leaves `global:` in
//! every chart's `values.yaml` and goes, with its whole effective value, under
//! `exportedGlobal:` ([`set_apart`]), a key Helm copies nowhere. The templates read `global`
//! through `kfctl.globals` (`templates/chart/helpers/globals.tpl`), which coalesces the
//! install's `global:` over `exportedGlobal:` as Helm coalesces values over defaults: a null
//! there (which now reaches every subchart, no default standing under it) removes the value.
//! The schemas let those keys, and the defaulted keys inside them, be null ([`nullable_globals`]).

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The key of a chart's values holding the globals given at export.
pub(crate) use crate::catalog::docs::EXPORTED_GLOBAL_KEY as KEY;

/// The top-level keys under `global` the user's layers give a value: a null (nothing to keep)
/// and an empty map (it changes no default) give none.
pub(crate) fn keys(user: &Value) -> BTreeSet<String> {
    let Some(global) = user.get("global").and_then(Value::as_object) else {
        return BTreeSet::new();
    };
    global
        .iter()
        .filter(|(_, value)| !value.is_null() && value.as_object().is_none_or(|m| !m.is_empty()))
        .map(|(key, _)| key.clone())
        .collect()
}

/// Move `keys` (with their values) from `values`' `global:` to its `exportedGlobal:`, which is
/// written only when it holds something.
pub(crate) fn set_apart(values: &mut Value, keys: &BTreeSet<String>) {
    let Some(map) = values.as_object_mut() else { return };
    let Some(global) = map.get_mut("global").and_then(Value::as_object_mut) else { return };
    let moved: Map<String, Value> = keys.iter().filter_map(|k| global.remove(k).map(|v| (k.clone(), v))).collect();
    if !moved.is_empty() {
        map.insert(KEY.into(), Value::Object(moved));
    }
}

/// `schema` (the full one, whose `global` property is at `/properties/global`) with a null
/// allowed for each of `keys`, the globals set apart, and for every key with a default inside
/// them (the `properties` of their maps): an install's null there reaches the schema, no
/// default standing under it in `values.yaml`, where kfctl-rs removes the default it stands on.
/// Inside a free-form map (a label's value) or a list a null stays refused, as kfctl-rs refuses
/// it there. A null over any other global removes its default before the schema sees it, so
/// nothing else changes.
pub(crate) fn nullable_globals(schema: &mut Value, keys: &BTreeSet<String>) {
    let Some(globals) = schema.pointer_mut("/properties/global/properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (_, property) in globals.iter_mut().filter(|(k, _)| keys.contains(*k)) {
        nullable_with_defaults(property);
    }
}

/// `property` and every property under it that has a default allow `null`.
fn nullable_with_defaults(property: &mut Value) {
    nullable(property);
    let inner = property.get_mut("properties").and_then(Value::as_object_mut);
    for child in inner.into_iter().flat_map(|p| p.values_mut()) {
        nullable_with_defaults(child);
    }
}

/// A property schema that also allows `null`.
fn nullable(property: &mut Value) {
    let Some(map) = property.as_object_mut() else { return };
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.contains(&json!("null")) => types.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(allowed)) = map.get_mut("enum")
        && !allowed.contains(&Value::Null)
    {
        allowed.push(Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_top_level_keys_are_set_apart_whole() {
        let user = json!({"global": {
            "commonLabels": {"team": "ml"}, "imageRegistry": "r.example.com", "users": [{"email": "a@b.c"}],
            "nodeSelector": {}, "storageClass": null,
        }, "dex": {"enabled": true}});
        let keys = keys(&user);
        assert_eq!(keys.iter().map(String::as_str).collect::<Vec<_>>(), ["commonLabels", "imageRegistry", "users"]);
        let mut values = json!({"global": {
            "commonLabels": {"team": "ml", "a": "b"}, "imageRegistry": "r.example.com", "users": [{"email": "a@b.c"}],
            "nodeSelector": {}, "crds": "",
        }, "replicas": {}});
        set_apart(&mut values, &keys);
        assert_eq!(
            values,
            json!({
                "global": {"nodeSelector": {}, "crds": ""},
                "exportedGlobal": {"commonLabels": {"team": "ml", "a": "b"}, "imageRegistry": "r.example.com", "users": [{"email": "a@b.c"}]},
                "replicas": {},
            })
        );
    }

    #[test]
    fn nothing_given_sets_nothing_apart() {
        assert!(keys(&json!({"dex": {"enabled": false}})).is_empty());
        assert!(keys(&json!({"global": "x"})).is_empty());
        let mut values = json!({"global": {"crds": ""}});
        set_apart(&mut values, &keys(&json!({"global": {}})));
        assert_eq!(values, json!({"global": {"crds": ""}}));
    }

    #[test]
    fn globals_set_apart_and_their_defaulted_keys_allow_null_and_nothing_else_does() {
        let mut schema = json!({"properties": {"global": {"type": "object", "properties": {
            "crds": {"type": "string", "enum": ["", "only"]},
            "commonLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "users": {"type": ["array"], "items": {"type": "object", "properties": {"email": {"type": "string"}}}},
            "gateway": {"type": "object", "properties": {"tls": {"type": "object", "properties": {
                "issuer": {"type": "string"}}}}, "additionalProperties": false},
        }}}});
        let apart = ["crds", "commonLabels", "users", "gateway"].map(String::from).into();
        let mut others = schema.clone();
        nullable_globals(&mut schema, &apart);
        let global = &schema["properties"]["global"];
        assert_eq!(global["type"], "object");
        assert_eq!(global["properties"]["crds"], json!({"type": ["string", "null"], "enum": ["", "only", null]}));
        assert_eq!(global["properties"]["commonLabels"]["type"], json!(["object", "null"]));
        assert_eq!(global["properties"]["commonLabels"]["additionalProperties"], json!({"type": "string"}));
        assert_eq!(global["properties"]["users"]["type"], json!(["array", "null"]));
        assert_eq!(global["properties"]["users"]["items"]["properties"]["email"]["type"], "string");
        let gateway = &global["properties"]["gateway"];
        assert_eq!(gateway["properties"]["tls"]["properties"]["issuer"]["type"], json!(["string", "null"]));
        assert_eq!(gateway["additionalProperties"], json!(false));
        let before = others.clone();
        nullable_globals(&mut others, &["imageRegistry".to_string()].into());
        assert_eq!(others, before);
    }
}
