//! kustomize's hashed names, computed by the chart: the Helm side of [`crate::catalog::rehash`].
//!
//! A generated ConfigMap or Secret is named `<base>-<hash>` from its content. When values can
//! change that content (a point in its `data`, `binaryData`, `stringData` or `type`), the chart
//! cannot print the default render's name: it computes it, as the native render does after
//! values. For each such object the export writes
//!
//! - a named template `kfctl.hashdoc.<chart>.<kind>.<namespace>.<base>` giving the hashed
//!   fields as JSON, with each point's expression in place (every point returns JSON), and
//! - `kfctl.hashedName` calls (in `templates/chart/helpers/hash.tpl`) wherever the old name
//!   stands as a YAML scalar in the chart's templates: the object's own `metadata.name` and
//!   every reference kustomize's name-reference fix-up wrote (a volume's `secretName`, an
//!   `envFrom` entry…), in objects of the same namespace or cluster-scoped ones.
//!
//! A reference from another component's chart cannot see the values of this one, so it is an
//! export error rather than a name that silently stops matching.

use super::gotmpl::{escape_actions, go_quote};
use super::object::expression;
use super::params::{Point, PointError, Scope, TOKEN_PREFIX, has_token, mark_all};
use crate::catalog::CatalogError;
use crate::catalog::rehash::{HASH_LEN, HashedName};
use crate::catalog::render::RenderedObject;
use serde_json::Value;

/// The fields kustomize's hasher reads, by kind.
const HASHED_FIELDS: &[&str] = &["binaryData", "data", "stringData", "type"];

/// One generated object whose hashed name depends on values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HashedObject {
    pub namespace: String,
    /// The default render's name (`<base>-<hash>`).
    pub name: String,
    /// The `define` giving the hashed fields as JSON.
    pub define: String,
    /// The define's text.
    pub define_text: String,
    /// The Helm expression of the name.
    pub expression: String,
}

/// The object's hashed-name template, when its name is hashed and values can change the hash.
pub(crate) fn hashed_object(obj: &Value, scope: &Scope, chart: &str) -> Result<Option<HashedObject>, PointError> {
    let Some(hashed) = HashedName::of(obj) else { return Ok(None) };
    let mut copy = obj.clone();
    let points = mark_all(&mut copy, scope)?;
    let fields: serde_json::Map<String, Value> =
        HASHED_FIELDS.iter().filter_map(|f| copy.get(*f).map(|v| (f.to_string(), v.clone()))).collect();
    let fields = Value::Object(fields);
    if !has_token(&fields.to_string()) {
        return Ok(None);
    }
    let namespace = obj.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default().to_string();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    // The kind too: a ConfigMap and a Secret may share a base name (oauth2-proxy's do).
    let define = format!("kfctl.hashdoc.{chart}.{}.{namespace}.{}", kind.to_lowercase(), hashed.base);
    let mut body = String::new();
    json_template(&fields, &points, &mut body)?;
    let define_text = format!("{{{{- define {} -}}}}\n{body}\n{{{{- end -}}}}\n", go_quote(&define));
    let expression = format!(
        "include \"kfctl.hashedName\" (list {} {} (include {} $))",
        go_quote(&hashed.base),
        go_quote(kind),
        go_quote(&define)
    );
    // A Secret `global.existingSecrets` can name is referenced by its plain name when listed.
    let expression = match crate::catalog::existing_secrets::holder_of(obj) {
        Some(holder) => format!("include \"kfctl.secretName\" (list $ {} ({expression}))", go_quote(holder.name)),
        None => expression,
    };
    Ok(Some(HashedObject { namespace, name: hashed.name(), define, define_text, expression }))
}

/// `value` as JSON text with each point's expression where its marker stands. A marker as a
/// map key (a field upstream lacks) or inside a longer text has no JSON form here.
fn json_template(value: &Value, points: &[Point], out: &mut String) -> Result<(), PointError> {
    match value {
        Value::String(s) if has_token(s) => {
            let point = point_of(s, points).ok_or(PointError::MarkerInData)?;
            out.push_str(&format!("{{{{ {} }}}}", expression(point)));
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if has_token(key) {
                    return Err(PointError::HashedFieldAdded);
                }
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&escape_actions(&Value::String(key.clone()).to_string()));
                out.push(':');
                json_template(item, points, out)?;
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_template(item, points, out)?;
            }
            out.push(']');
        }
        other => out.push_str(&escape_actions(&other.to_string())),
    }
    Ok(())
}

fn point_of<'p>(text: &str, points: &'p [Point]) -> Option<&'p Point> {
    let index: usize = text.strip_prefix(TOKEN_PREFIX)?.strip_suffix('Z')?.parse().ok()?;
    points.get(index)
}

/// `template` (one object's template text) with every YAML scalar equal to a hashed object's
/// default name made into its name expression, for objects of `namespace` (or cluster-scoped).
/// A line can only end with such a name when it ends with `-` and a hash: other lines (nearly
/// all of a CRD's) are passed over without a comparison, and an unchanged text is not copied.
pub(crate) fn rewrite_references(template: String, namespace: &str, hashed: &[HashedObject]) -> String {
    let relevant: Vec<&HashedObject> =
        hashed.iter().filter(|h| namespace.is_empty() || h.namespace == namespace).collect();
    if relevant.is_empty() {
        return template;
    }
    let mut out = String::new();
    let (mut start, mut copied) = (0, 0);
    let ends = memchr::memchr_iter(b'\n', template.as_bytes()).chain(std::iter::once(template.len()));
    for end in ends {
        let text = &template[start..end];
        let hashed_tail = text.len() > HASH_LEN && text.as_bytes()[text.len() - HASH_LEN - 1] == b'-';
        let found = hashed_tail.then(|| relevant.iter().find_map(|h| scalar_prefix(text, &h.name).map(|l| (l, h))));
        if let Some(Some((lead, h))) = found {
            out.push_str(&template[copied..start]);
            out.push_str(&format!("{lead}{{{{ {} }}}}", h.expression));
            copied = end;
        }
        start = end + 1;
    }
    if copied == 0 {
        return template;
    }
    out.push_str(&template[copied..]);
    out
}

/// The part of `line` before `name`, when the line is `<key>: name` or `- name` (any indent).
fn scalar_prefix<'l>(line: &'l str, name: &str) -> Option<&'l str> {
    let lead = line.strip_suffix(name)?;
    (lead.ends_with(": ") || lead.trim_start().trim_start_matches("- ").is_empty() && lead.ends_with("- "))
        .then_some(lead)
}

/// The first object of another component that names a hashed object (an export error): the
/// first by component (the order of `hashed`: each component with its hashed objects), then
/// by object (the order of `objects`), as the component's index, the name and the object's
/// component. Every object is walked once, on all cores, against every component's names; a
/// CRD whose schemas stayed in the render cache and may hold one of the names is walked whole.
pub(crate) fn first_foreign_reference<'o>(
    hashed: &[(&str, Vec<HashedObject>)],
    objects: &'o [RenderedObject],
) -> Result<Option<(usize, String, &'o str)>, CatalogError> {
    use rayon::prelude::*;
    let names: Vec<(usize, &str, &HashedObject)> =
        hashed.iter().enumerate().flat_map(|(i, (c, found))| found.iter().map(move |h| (i, *c, h))).collect();
    if names.is_empty() {
        return Ok(None);
    }
    let walked = |o: &RenderedObject| -> Result<Option<RenderedObject>, CatalogError> {
        let Some(deferred) = &o.deferred else { return Ok(None) };
        if !names.iter().any(|(_, c, h)| *c != o.component && deferred.may_hold(&h.name)) {
            return Ok(None);
        }
        let mut whole = o.clone();
        crate::catalog::deferred::attach(&mut whole)?;
        Ok(Some(whole))
    };
    let found = objects.par_iter().enumerate().map(|(index, o)| {
        let whole = walked(o)?;
        let obj = whole.as_ref().map_or(&o.obj, |w| &w.obj);
        let namespace = obj.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
        let mut first: Option<(usize, &str)> = None;
        visit_strings(obj, &mut |s| {
            let named = names.iter().filter(|(_, c, h)| {
                *c != o.component && h.name == s && (namespace.is_empty() || h.namespace == namespace)
            });
            if let Some((i, _, h)) = named.min_by_key(|(i, _, _)| *i)
                && first.is_none_or(|(best, _)| *i < best)
            {
                first = Some((*i, h.name.as_str()));
            }
        });
        Ok(first.map(|(i, name)| ((i, index), name.to_string(), o.component.as_str())))
    });
    let found: Vec<_> = found.collect::<Result<Vec<_>, CatalogError>>()?.into_iter().flatten().collect();
    Ok(found.into_iter().min_by_key(|(order, _, _)| *order).map(|((i, _), name, other)| (i, name, other)))
}

/// Call `visit` with every string in `value`, in order.
fn visit_strings(value: &Value, visit: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => visit(s),
        Value::Array(items) => items.iter().for_each(|v| visit_strings(v, visit)),
        Value::Object(map) => map.values().for_each(|v| visit_strings(v, visit)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfctl_kustomize::content_hash;
    use serde_json::json;

    fn hashed_secret() -> Value {
        let mut obj = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "oauth2-proxy", "namespace": "oauth2-proxy"},
            "type": "Opaque", "data": {"cookie-secret": "YQ==", "extra": "Yg=="}});
        obj["metadata"]["name"] = json!(format!("oauth2-proxy-{}", content_hash(&obj)));
        obj
    }

    #[test]
    fn the_first_foreign_reference_is_by_component_then_by_object() {
        let hashed = |name: &str, namespace: &str| HashedObject {
            namespace: namespace.into(),
            name: name.into(),
            define: String::new(),
            define_text: String::new(),
            expression: String::new(),
        };
        let object = |component: &str, namespace: &str, env: &str| {
            RenderedObject::new(
                component,
                json!({"kind": "Deployment", "metadata": {"name": "d", "namespace": namespace},
                "spec": {"env": [{"value": "x"}, {"valueFrom": {"name": env}}]}}),
            )
        };
        let by_component = vec![("a", vec![hashed("cm-a", "ns")]), ("b", vec![hashed("cm-b", "ns")])];
        let own = [object("a", "ns", "cm-a"), object("b", "ns", "cm-b"), object("c", "other", "cm-a")];
        assert_eq!(
            first_foreign_reference(&by_component, &own).expect("whole objects"),
            None,
            "its own, or another namespace's"
        );
        let objects = [object("c", "ns", "cm-b"), object("c", "", "cm-a"), object("b", "ns", "cm-a")];
        assert_eq!(
            first_foreign_reference(&by_component, &objects).expect("whole objects"),
            Some((0, "cm-a".into(), "c"))
        );
        assert_eq!(
            first_foreign_reference(&by_component[1..], &objects).expect("whole objects"),
            Some((0, "cm-b".into(), "c"))
        );
        assert_eq!(first_foreign_reference(&[], &objects).expect("whole objects"), None);
    }

    #[test]
    fn a_secret_with_a_credential_gets_a_computed_name() {
        let obj = hashed_secret();
        let defaults = json!({});
        let scope = Scope { component: "oauth2-proxy", defaults: &defaults };
        let h = hashed_object(&obj, &scope, "oauth2-proxy").unwrap().expect("the cookie secret is a credential");
        assert_eq!(h.name, obj["metadata"]["name"]);
        assert!(h.define_text.contains("\"extra\":\"Yg==\""), "{}", h.define_text);
        assert!(h.define_text.contains("\"cookie-secret\":{{ include \"kfctl.credential\""), "{}", h.define_text);
        assert!(h.define_text.contains(",\"type\":\"Opaque\"}"), "{}", h.define_text);
        // oauth2-proxy's Secret can be an existing one: its references take the plain name then.
        let hashed = "(include \"kfctl.hashedName\" (list \"oauth2-proxy\" \"Secret\"";
        assert!(h.expression.starts_with("include \"kfctl.secretName\" (list $ \"oauth2-proxy\" "), "{}", h.expression);
        assert!(h.expression.contains(hashed), "{}", h.expression);
    }

    #[test]
    fn an_object_values_cannot_change_keeps_its_literal_name() {
        let mut obj = hashed_secret();
        obj["metadata"]["namespace"] = json!("elsewhere");
        let defaults = json!({});
        let scope = Scope { component: "oauth2-proxy", defaults: &defaults };
        assert_eq!(hashed_object(&obj, &scope, "oauth2-proxy").unwrap(), None);
    }

    #[test]
    fn references_are_rewritten_only_as_whole_scalars_in_the_same_namespace() {
        let h = HashedObject {
            namespace: "ns".into(),
            name: "app-h675gf55ht".into(),
            define: "d".into(),
            define_text: String::new(),
            expression: "EXPR".into(),
        };
        let text =
            "  name: app-h675gf55ht\n  - app-h675gf55ht\n  note: uses app-h675gf55ht\n  other: app-h675gf55htx\n";
        let out = rewrite_references(text.to_string(), "ns", std::slice::from_ref(&h));
        assert_eq!(out, "  name: {{ EXPR }}\n  - {{ EXPR }}\n  note: uses app-h675gf55ht\n  other: app-h675gf55htx\n");
        assert_eq!(rewrite_references(text.to_string(), "other", std::slice::from_ref(&h)), text);
        assert_eq!(
            rewrite_references(text.to_string(), "", std::slice::from_ref(&h)),
            out,
            "cluster-scoped objects too"
        );
    }
}
