//! Chart scaffolding: Chart.yaml, values.yaml, values.schema.json, README.md, NOTES.txt and
//! the helpers' pieces, from the tera templates compiled into the binary (`templates/chart/`,
//! `templates/argocd/`), plus the values tables the READMEs list.

use super::ChartError;
use super::exported_global;
use crate::catalog::{Catalog, docs};
use crate::embedded;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Render one embedded tera template with `context`. Each template is parsed once per process
/// (an export renders the same few for every component).
pub(crate) fn render(name: &str, context: &Value) -> Result<String, ChartError> {
    let path = format!("templates/{name}");
    let failed = |e: tera::Error| {
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(inner) = source {
            message.push_str(&format!(": {inner}"));
            source = inner.source();
        }
        ChartError::Scaffold { name: path.clone(), message }
    };
    let tera = parsed(name, &path).map_err(failed)?;
    let context = tera::Context::from_value(context.clone()).map_err(failed)?;
    tera.render(name, &context).map_err(failed)
}

/// The embedded template `path` parsed, as `name`, from the process's parsed templates.
fn parsed(name: &str, path: &str) -> Result<std::sync::Arc<tera::Tera>, tera::Error> {
    type Parsed = std::collections::HashMap<String, std::sync::Arc<tera::Tera>>;
    static PARSED: std::sync::OnceLock<std::sync::Mutex<Parsed>> = std::sync::OnceLock::new();
    let parsed = PARSED.get_or_init(Default::default);
    if let Some(tera) = parsed.lock().unwrap_or_else(|p| p.into_inner()).get(name) {
        return Ok(tera.clone());
    }
    let source = embedded::file(path).ok_or_else(|| tera::Error::msg("not compiled into the binary"))?;
    let mut tera = tera::Tera::default();
    tera.autoescape_on(Vec::new());
    tera.add_raw_template(name, source)?;
    let tera = std::sync::Arc::new(tera);
    parsed.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), tera.clone());
    Ok(tera)
}

/// An embedded file copied as it is (the helpers' pieces, `.helmignore`).
pub(crate) fn verbatim(name: &str) -> Result<String, ChartError> {
    let path = format!("templates/{name}");
    embedded::file(&path)
        .map(str::to_string)
        .ok_or(ChartError::Scaffold { name: path, message: "not compiled into the binary".into() })
}

/// The charts' `kubeVersion` for the upstream release `app_version`, from the release catalog
/// (`charts/releases.yaml`): its oldest supported Kubernetes minor, as a lower bound only
/// (`>=1.33.0-0`; `-0` admits pre-release and vendor builds such as `v1.33.1-gke.100`). The
/// catalog's newest tested minor is not a bound: Helm refuses a chart outside `kubeVersion`
/// outright, `helm template` included (it checks against its own default version), and a
/// newer cluster is untested, not known to be incompatible; the README says the tested range.
/// `None` for a release the catalog does not know (an `--app-version` of your own).
pub(crate) fn kube_version(app_version: &str) -> Option<String> {
    let release = crate::source::releases::known().iter().find(|r| r.version == app_version)?;
    let (major, minor) = release.min_kubernetes;
    Some(format!(">={major}.{minor}.0-0"))
}

/// The charts' `version`: the upstream release as SemVer with kfctl-rs's version as build
/// metadata (`26.3.0+kfctl.0.1.0` for 26.03, `1.11.0+kfctl.0.1.0` for v1.11.0), so a chart
/// says which Kubeflow it holds and which kfctl-rs wrote it; an `--app-version` that is no
/// release version gives `0.0.0+kfctl.<version>`.
pub fn chart_version(app_version: &str) -> String {
    let parts = crate::source::version::ReleaseVersion::parse(app_version).map_or([0, 0, 0], |v| v.parts);
    format!("{}.{}.{}+kfctl.{}", parts[0], parts[1], parts[2], env!("CARGO_PKG_VERSION"))
}

/// The tested Kubernetes range of `app_version` for READMEs (`1.33 and newer`), if known.
pub(crate) fn kubernetes_range(app_version: &str) -> Option<String> {
    crate::source::releases::known().iter().find(|r| r.version == app_version).map(|r| r.kubernetes_range())
}

/// One line of a README's values table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct ValueRow {
    pub key: String,
    pub default: String,
    pub description: String,
}

/// Every leaf of `values` (maps are walked, lists and free-form maps are leaves) as a row,
/// with keys under `prefix`, described by [`docs::describe`]; a credential's default is
/// [`super::credentials::placeholder`].
pub(crate) fn value_rows(values: &Value, prefix: &str, component: Option<&str>, catalog: &Catalog) -> Vec<ValueRow> {
    let mut rows = Vec::new();
    let at = Place { prefix, component, catalog };
    walk(values, &at, &mut Vec::new(), &mut rows);
    rows
}

/// Where a README's rows come from: the chart (`component`, `None` for the umbrella).
struct Place<'a> {
    prefix: &'a str,
    component: Option<&'a str>,
    catalog: &'a Catalog,
}

fn walk<'a>(value: &'a Value, at: &Place, path: &mut Vec<&'a str>, rows: &mut Vec<ValueRow>) {
    match value {
        Value::Object(m) if !m.is_empty() && !docs::free_form(&docs::full_path(path, at.component)) => {
            for (k, v) in m {
                path.push(k);
                walk(v, at, path, rows);
                path.pop();
            }
        }
        leaf => {
            let key = path
                .iter()
                .map(|k| if k.contains('.') { format!("\"{k}\"") } else { k.to_string() })
                .collect::<Vec<_>>()
                .join(".");
            let key = if at.prefix.is_empty() { key } else { format!("{}.{key}", at.prefix) };
            let default = if super::credentials::credential_at(&path.join("."), at.component).is_some() {
                super::credentials::placeholder(&key)
            } else {
                format!("`{}`", cell(&serde_json::to_string(leaf).unwrap_or_default()))
            };
            let description = docs::describe(&docs::full_path(path, at.component), at.catalog).unwrap_or_default();
            rows.push(ValueRow { key, default, description: cell(&description) });
        }
    }
}

fn cell(text: &str) -> String {
    let text = text.replace('|', "\\|").replace('\n', " ");
    if text.chars().count() > 120 { format!("{}…", text.chars().take(117).collect::<String>()) } else { text }
}

/// values.schema.json of the umbrella chart: the kfctl-rs schema with `global` and the exported
/// components, each of which may also hold the `global` Helm copies into it. Every other
/// catalog component may only be disabled (`<component>.enabled: false`, as `kfctl-rs
/// template` takes it for any profile), so one values file serves every export.
pub(crate) fn umbrella_schema(full: &Value, components: &[&str]) -> Value {
    let mut schema = full.clone();
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, section) in props.iter_mut().filter(|(k, _)| *k != "global") {
            if !components.contains(&name.as_str()) {
                *section = only_disabled(name);
            } else if let Some(inner) = section.get_mut("properties").and_then(Value::as_object_mut) {
                inner.insert("global".into(), json!({"description": docs::GLOBAL_COPY, "type": "object"}));
                inner.insert(exported_global::KEY.into(), exported_global_schema());
            }
        }
        props.insert(exported_global::KEY.into(), exported_global_schema());
    }
    with_draft(schema)
}

/// `exportedGlobal`, the globals given at export ([`exported_global`]).
fn exported_global_schema() -> Value {
    json!({"description": docs::EXPORTED_GLOBAL, "type": "object"})
}

/// The schema of a component the chart does not hold: `enabled: false` and nothing else.
fn only_disabled(component: &str) -> Value {
    let description = format!(
        "`{component}` is not in this chart: it can only be disabled here; export a profile that \
         holds it (or `--set {component}.enabled=true` at export) to install it"
    );
    // not `const: false`: Helm's schema error would say only "value must be false"; the
    // umbrella's checks (`kfctl.absent`) refuse `true` saying how to export it instead
    json!({"description": description, "type": "object", "additionalProperties": false, "properties": {
        "enabled": {"description": "Must stay false: this chart has no subchart to enable.", "type": "boolean"},
    }})
}

/// values.schema.json of a component's chart: its section's keys at the top, plus `global`.
pub(crate) fn component_schema(full: &Value, component: &str) -> Value {
    let section = full
        .pointer(&format!("/properties/{}", component.replace('~', "~0").replace('/', "~1")))
        .cloned()
        .unwrap_or(json!({}));
    let mut props = section.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    if let Some(global) = full.pointer("/properties/global") {
        props.insert("global".into(), global.clone());
    }
    props.insert(exported_global::KEY.into(), exported_global_schema());
    with_draft(json!({"type": "object", "properties": props, "additionalProperties": false}))
}

fn with_draft(schema: Value) -> Value {
    let mut out = Map::new();
    out.insert("$schema".into(), json!("http://json-schema.org/draft-07/schema#"));
    if let Value::Object(m) = schema {
        out.extend(m);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scaffolding_template_is_embedded() {
        for name in [
            "chart/Chart.yaml.tera",
            "chart/values.yaml.tera",
            "chart/NOTES.txt.tera",
            "chart/README.md.tera",
            "chart/umbrella-README.md.tera",
            "chart/checks.yaml.tera",
            "argocd/application.yaml.tera",
            "argocd/root.yaml.tera",
            "chart/helpers/header.tpl",
            "chart/helpers/keep.tpl",
            "chart/helpers/requires.tpl",
            "chart/helmignore",
        ] {
            assert!(embedded::file(&format!("templates/{name}")).is_some(), "{name}");
        }
    }

    #[test]
    fn rows_walk_maps_but_list_free_form_values_whole() {
        let values = json!({"images": {"katib-ui": "ghcr.io/k:v1"}, "nodeSelector": {"a": "b"}, "resources": {"w": {"c": {"limits": {"cpu": "1"}}}}, "enabled": true});
        let rows = value_rows(&values, "", Some("katib"), &catalog());
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["images.katib-ui", "nodeSelector", "resources.w.c", "enabled"]);
        assert_eq!(rows[0].default, "`\"ghcr.io/k:v1\"`");
        assert_eq!(rows[2].description, "`resources` of container `c` in `w`; empty keeps upstream's.");
    }

    fn catalog() -> Catalog {
        Catalog::embedded().unwrap()
    }

    #[test]
    fn credentials_are_described_by_their_chart_relative_path() {
        let rows = value_rows(&json!({"staticUser": {"passwordHash": ""}}), "", Some("dex"), &catalog());
        assert!(rows[0].description.starts_with("Credential: the Dex demo user's password hash"), "{rows:?}");
    }

    #[test]
    fn credential_rows_never_show_the_value() {
        let values = json!({"staticUser": {"passwordHash": "$2y$canary", "email": "canary@example.com"}, "global": {"oidcClientSecret": "canary"}, "replicas": {"dex": 1}});
        let rows = value_rows(&values, "", Some("dex"), &catalog());
        assert!(rows.iter().all(|r| !r.default.contains("canary")), "{rows:?}");
        assert_eq!(rows[0].default, "`<secret: set with --set-string staticUser.passwordHash=… or -f>`");
        assert_eq!(rows[3].default, "`1`");
        let umbrella = value_rows(&json!({"global": {"oidcClientSecret": "canary"}}), "", None, &catalog());
        assert!(umbrella[0].default.starts_with("`<secret:"), "{umbrella:?}");
    }

    #[test]
    fn schemas_keep_exported_components_and_allow_global_copies() {
        let full = json!({"type": "object", "additionalProperties": false, "properties": {
            "global": {"type": "object", "properties": {"imageRegistry": {"type": "string"}}},
            "katib": {"type": "object", "additionalProperties": false, "properties": {"enabled": {"type": "boolean"}}},
            "ray": {"type": "object", "properties": {}}}});
        let umbrella = umbrella_schema(&full, &["katib"]);
        assert_eq!(umbrella.pointer("/properties/ray/properties/enabled/type"), Some(&json!("boolean")));
        assert_eq!(
            umbrella.pointer("/properties/ray/properties/enabled/const"),
            None,
            "the checks say it, not the schema"
        );
        assert_eq!(umbrella.pointer("/properties/ray/additionalProperties"), Some(&json!(false)));
        assert_eq!(umbrella.pointer("/properties/katib/properties/global/type").unwrap(), "object");
        let katib = component_schema(&full, "katib");
        assert_eq!(katib.pointer("/properties/enabled/type").unwrap(), "boolean");
        assert_eq!(katib.pointer("/properties/global/properties/imageRegistry/type").unwrap(), "string");
        assert_eq!(katib["additionalProperties"], json!(false));
        for schema in [&umbrella, &katib] {
            assert_eq!(schema.pointer("/properties/exportedGlobal/type").unwrap(), "object");
        }
        assert_eq!(umbrella.pointer("/properties/katib/properties/exportedGlobal/type").unwrap(), "object");
    }

    #[test]
    fn the_chart_version_says_the_release_and_kfctl_rs() {
        let kfctl = env!("CARGO_PKG_VERSION");
        assert_eq!(chart_version("26.03"), format!("26.3.0+kfctl.{kfctl}"));
        assert_eq!(chart_version("v1.11.0"), format!("1.11.0+kfctl.{kfctl}"));
        assert_eq!(chart_version("mine"), format!("0.0.0+kfctl.{kfctl}"));
        assert!(semver::Version::parse(&chart_version("26.03.1")).is_ok());
    }

    #[test]
    fn chart_yaml_lists_dependencies_with_their_conditions() {
        let text = render("chart/Chart.yaml.tera", &json!({"name": "kubeflow", "description": "d: x", "version": "0.1.0", "app_version": "v1.11.0", "kfctl_version": "0.1.0", "dependencies": [{"name": "cert-manager"}]})).unwrap();
        let doc = &kfctl_yaml::parse_stream(&text, "Chart.yaml").unwrap()[0];
        assert_eq!(
            doc["dependencies"][0],
            json!({"name": "cert-manager", "version": "0.1.0", "condition": "cert-manager.enabled"})
        );
        assert_eq!(doc["appVersion"], "v1.11.0");
        assert_eq!(doc["description"], "d: x");
        assert!(doc.get("kubeVersion").is_none(), "no kubeVersion without a known release");
    }

    #[test]
    fn kube_version_is_the_release_catalogs_lower_bound() {
        assert_eq!(kube_version("v1.11.0").as_deref(), Some(">=1.33.0-0"));
        assert_eq!(kube_version("v1.10.2").as_deref(), Some(">=1.32.0-0"));
        assert_eq!(kube_version("v0.0.0-mine"), None);
        let context = json!({"name": "c", "description": "d", "version": "0.1.0", "app_version": "v1.11.0",
            "kfctl_version": "0.1.0", "dependencies": [], "kube_version": kube_version("v1.11.0")});
        let doc =
            &kfctl_yaml::parse_stream(&render("chart/Chart.yaml.tera", &context).unwrap(), "Chart.yaml").unwrap()[0];
        assert_eq!(doc["kubeVersion"], ">=1.33.0-0");
    }
}
