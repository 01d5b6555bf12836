//! One object as one Helm template file.
//!
//! The object is marked ([`super::params::mark_all`]), the marked copy is written with the
//! project's YAML writer (the same bytes `kfctl-rs template` prints, markers aside), every
//! `{{` of upstream text is escaped, and each marker becomes Helm template text:
//!
//! - a field upstream has (`key: MARKER`) stays on its line: `key: {{ EXPR }}`, where `EXPR`
//!   returns the field's final value as JSON (valid YAML flow syntax);
//! - a field upstream lacks (a marker *key*, `MARKER: null`) becomes a conditional line,
//!   present only when the values give it a value:
//!
//!   ```text
//!   {{- with EXPR }}
//!   <indent>key: {{ . }}
//!   {{- end }}
//!   ```
//!
//!   When the marker key is the first key of a sequence item (`- MARKER: null`), the dash goes
//!   on a line of its own, so the item stays well-formed whether or not the line renders.
//!
//! - a list's splice point (a marker item `- MARKER: null` at its end, [`SPLICE_KEY`]) becomes
//!   a `range` over the helper's JSON list, one `- {{ toJson . }}` item each (extra `env`).
//!
//! The demo Profile's template repeats once per user of `global.users` (a `range` over
//! `kfctl.users`, one `---` document each; once, as upstream's, when it is unset).
//!
//! The whole document is wrapped in `kfctl.enabled`, which implements `<component>.enabled`
//! and `global.crds` (the native `params::keep`).

use super::gotmpl::{escape_actions, go_literal};
use super::params::{
    Point, PointError, SPLICE_KEY, Scope, TOKEN_PREFIX, USER_VAR, find_token, has_token, mark_all, repeats_per_user,
    token,
};
use crate::catalog::RenderedObject;
use serde_json::Value;

/// The template text of `obj` (one document), for `component`'s chart.
/// `kept`: one of Kubeflow's own objects a provided dependency's folders hold (it renders even
/// when the dependency is `provided`, see [`crate::catalog::provided`]).
pub(crate) fn template(obj: &Value, scope: &Scope, header: &str, kept: bool) -> Result<String, PointError> {
    template_with(obj, obj.clone(), &[], scope, header, kept)
}

/// [`template`] of a rendered object: a CRD whose schemas stayed in the render cache is
/// templated from its stub, its schema lines spliced from its cached text
/// ([`super::crd_text`]); when they cannot be, from the whole CRD, its schemas attached.
pub(crate) fn template_rendered(
    object: &RenderedObject,
    scope: &Scope,
    header: &str,
    kept: bool,
) -> Result<String, TemplateError> {
    let Some(deferred) = &object.deferred else { return Ok(template(&object.obj, scope, header, kept)?) };
    if let Some(spliced) = super::crd_text::splice(&object.obj, deferred) {
        let blocks: Vec<(String, &str)> =
            spliced.blocks.iter().map(|(line, range)| (line.clone(), &spliced.text[range.clone()])).collect();
        return Ok(template_with(&object.obj, spliced.copy, &blocks, scope, header, kept)?);
    }
    let mut whole = object.clone();
    crate::catalog::deferred::attach(&mut whole)?;
    Ok(template(&whole.obj, scope, header, kept)?)
}

/// Why [`template_rendered`] failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TemplateError {
    #[error(transparent)]
    Point(#[from] PointError),
    #[error(transparent)]
    Cache(#[from] crate::catalog::CatalogError),
}

/// [`template`] of `obj` as `copy` (the object, or a CRD stub with placeholders), each
/// `blocks` line (a placeholder's) replaced by its text.
fn template_with(
    obj: &Value,
    mut copy: Value,
    blocks: &[(String, &str)],
    scope: &Scope,
    header: &str,
    kept: bool,
) -> Result<String, PointError> {
    let points = mark_all(&mut copy, scope)?;
    let yaml = escape_actions(&kfctl_yaml::to_yaml(&copy));
    let mut out = String::with_capacity(yaml.len() + 256 + blocks.iter().map(|(_, b)| b.len()).sum::<usize>());
    let is_crd = crate::catalog::object_id::is_crd(obj);
    out.push_str(&format!("{{{{- /* {} */}}}}\n", header.replace("*/", "* /")));
    let enabled = match kept {
        true => format!("(list $ {is_crd} true)"),
        false => format!("(list $ {is_crd})"),
    };
    out.push_str(&format!("{{{{- if include \"kfctl.enabled\" {enabled} }}}}\n"));
    let existing = existing_secret_guard(obj, scope);
    if let Some(guard) = &existing {
        out.push_str(guard);
    }
    let per_user = repeats_per_user(&points);
    if per_user {
        out.push_str(&format!(
            "{{{{- range {USER_VAR} := include \"kfctl.users\" (list $) | fromJsonArray }}}}\n---\n"
        ));
    }
    let mut seen = 0;
    for line in yaml.lines() {
        match find_token(line) {
            None => match blocks.iter().find(|(placeholder, _)| placeholder == line) {
                Some((_, block)) if has_token(block) => return Err(PointError::MarkerInData),
                Some((_, block)) if memchr::memmem::find(block.as_bytes(), b"{{").is_none() => out.push_str(block),
                Some((_, block)) => out.push_str(&escape_actions(block)),
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            },
            Some(at) => {
                let index = point_index(&line[at..]).ok_or(PointError::MarkerInData)?;
                let point = points.get(index).ok_or(PointError::MarkerInData)?;
                if has_token(&line[at + token(index).len()..]) {
                    return Err(PointError::MarkerInData);
                }
                write_point(&mut out, line, at, index, point)?;
                seen += 1;
            }
        }
    }
    if seen != points.len() {
        return Err(PointError::MarkerInData);
    }
    if per_user {
        out.push_str("{{- end }}\n");
    }
    if existing.is_some() {
        out.push_str("{{- end }}\n");
    }
    out.push_str("{{- end }}\n");
    Ok(out)
}

/// For a Secret `global.existingSecrets` can name, the `if` that leaves it out when listed
/// (the native `existing_secrets::drop_listed`), with the credentials it checks.
fn existing_secret_guard(obj: &Value, scope: &Scope) -> Option<String> {
    let holder = crate::catalog::existing_secrets::holder_of(obj)?;
    let checks: Vec<String> = holder
        .values
        .iter()
        .filter_map(|value| {
            let path = super::params::chart_value_path(value, scope.component)?;
            let secrets = crate::catalog::existing_secrets::secrets_of(value);
            let quoted: Vec<String> = secrets.iter().map(|s| go_literal(s)).collect();
            Some(format!("(list {} {} {})", go_literal(&path), go_literal(value), quoted.join(" ")))
        })
        .collect();
    Some(format!(
        "{{{{- if not (include \"kfctl.existingSecret\" (list $ {} (list {}))) }}}}\n",
        go_literal(holder.name),
        checks.join(" ")
    ))
}

fn point_index(text: &str) -> Option<usize> {
    let digits: String = text.strip_prefix(TOKEN_PREFIX)?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The expression giving the point's final value as JSON (`""` when absent). The raw value
/// goes in as a Go literal: a text for steps that take text, a multi-line text through
/// `toJson` (so configuration files keep their lines), anything else as JSON.
pub(crate) fn expression(point: &Point) -> String {
    let text_input = point.steps.first().is_some_and(|s| s.takes_text());
    let mut expr = match &point.raw {
        None => "\"\"".to_string(),
        Some(Value::String(s)) if text_input => go_literal(s),
        Some(Value::String(s)) if s.contains('\n') => format!("(toJson {})", go_literal(s)),
        Some(v) => go_literal(&serde_json::to_string(v).unwrap_or_default()),
    };
    for (i, step) in point.steps.iter().enumerate() {
        let inner = if i == 0 { expr.clone() } else { format!("({expr})") };
        expr = step.wrap(&inner);
    }
    expr
}

fn write_point(out: &mut String, line: &str, at: usize, index: usize, point: &Point) -> Result<(), PointError> {
    let marker = token(index);
    let lead = &line[..at];
    let after = &line[at + marker.len()..];
    let expr = expression(point);
    if point.raw.is_some() {
        out.push_str(&format!("{lead}{{{{ {expr} }}}}{after}\n"));
        return Ok(());
    }
    let indent = lead.len() - lead.trim_start_matches(' ').len();
    let dashes = &lead[indent..];
    if point.key == SPLICE_KEY {
        if dashes != "- " || after != ": null" {
            return Err(PointError::MarkerInData);
        }
        let items = format!("{{{{- range {expr} | fromJsonArray }}}}");
        out.push_str(&format!("{items}\n{lead}{{{{ toJson . }}}}\n{{{{- end }}}}\n"));
        return Ok(());
    }
    if !after.starts_with(':') || !dashes.split_inclusive("- ").all(|d| d == "- ") {
        return Err(PointError::MarkerInData);
    }
    if !dashes.is_empty() {
        out.push_str(&format!("{}{}\n", &lead[..indent], dashes.trim_end()));
    }
    let column = " ".repeat(lead.len());
    out.push_str(&format!("{{{{- with {expr} }}}}\n{column}{}: {{{{ . }}}}\n{{{{- end }}}}\n", point.key));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::scheduling::Source;
    use serde_json::json;

    fn render(obj: &Value) -> String {
        let defaults = json!({"katib": {"images": {"w": "ghcr.io/k/w:v1"}}});
        template(obj, &Scope { component: "katib", defaults: &defaults }, "test", false).unwrap()
    }

    #[test]
    fn present_fields_become_inline_expressions() {
        let t = render(
            &json!({"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "ghcr.io/k/w:v1"}]}}),
        );
        assert!(
            t.contains("  labels: {{ include \"kfctl.commonMetadata\" (list $ \"commonLabels\" `{\"a\":\"b\"}`) }}\n"),
            "{t}"
        );
        assert!(t.contains("image: {{ include \"kfctl.image\" (list $ \"w\" `ghcr.io/k/w:v1`) }}"), "{t}");
    }

    #[test]
    fn multi_line_texts_keep_their_lines() {
        let point = Point {
            key: "config.yaml".into(),
            raw: Some(json!("a: 1\nb: `x`\n")),
            steps: vec![super::super::params::Step::PssProfiles],
        };
        assert_eq!(expression(&point), "include \"kfctl.pssProfiles\" (list $ (toJson \"a: 1\\nb: `x`\\n\"))");
        let point = Point { raw: Some(json!("a: 1\nb: 2\n")), ..point };
        assert_eq!(expression(&point), "include \"kfctl.pssProfiles\" (list $ (toJson `a: 1\nb: 2\n`))");
    }

    #[test]
    fn absent_fields_become_conditional_lines_at_the_key_column() {
        let t = render(&json!({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}));
        assert!(
            t.contains("{{- with include \"kfctl.commonMetadata\" (list $ \"commonLabels\" \"\") }}\n  labels: {{ . }}\n{{- end }}\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "{{- with include \"kfctl.nodeSelector\" (list $ \"\" \"scoped\") }}\n  nodeSelector: {{ . }}\n{{- end }}\n"
            ),
            "{t}"
        );
    }

    #[test]
    fn a_conditional_first_key_of_a_list_item_gets_its_dash_on_its_own_line() {
        let mut out = String::new();
        let point = Point {
            key: "nodeSelector".into(),
            raw: None,
            steps: vec![super::super::params::Step::NodeSelector { from: Source::Scoped }],
        };
        write_point(&mut out, &format!("  - {}: null", token(3)), 4, 3, &point).unwrap();
        assert_eq!(
            out,
            "  -\n{{- with include \"kfctl.nodeSelector\" (list $ \"\" \"scoped\") }}\n    nodeSelector: {{ . }}\n{{- end }}\n"
        );
    }

    #[test]
    fn upstream_template_text_is_escaped_and_crds_are_flagged() {
        let t = render(
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"}, "spec": {"d": "{{ .Values.x }}"}}),
        );
        assert!(t.contains("{{\"{{\"}} .Values.x }}"), "{t}");
        assert!(t.contains("{{- if include \"kfctl.enabled\" (list $ true) }}"), "{t}");
        assert!(t.ends_with("{{- end }}\n"));
    }
}
