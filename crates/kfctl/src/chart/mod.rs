//! Helm chart export: the same render, as charts real Helm renders identically.
//!
//! `kfctl-rs chart export` starts where `kfctl-rs template` does — [`crate::catalog::render::prepare`]
//! gives the default render (1:1 with kustomize), the defaults, the user's values and the
//! schema — and writes an umbrella chart with one subchart per component:
//!
//! ```text
//! OUT/Chart.yaml              dependencies: one per component, condition <component>.enabled
//! OUT/values.yaml             global: + one section per component (the effective values;
//!                             globals given at export under exportedGlobal: `exported_global`)
//! OUT/values.schema.json      kfctl-rs's schema, as JSON Schema
//! OUT/templates/              _helpers.tpl, checks.yaml (dependency checks), NOTES.txt
//! OUT/charts/<component>/     Chart.yaml, values.yaml (section + global), schema, README,
//!                             templates/<kind>-<namespace>-<name>.yaml, one per object
//! OUT/argocd/                 with --argocd: one Application per component, and a parent
//! ```
//!
//! Each object's template is the object itself with a Helm expression at every field a value
//! can change (`params` finds those fields with the native table's own traversals;
//! `object` writes the template; `helpers` generates `_helpers.tpl` from the helpers each
//! row of the native table names). With the exported defaults `helm template OUT` prints exactly what
//! `kfctl-rs template` printed, and with any other values what `kfctl-rs template` prints with
//! them — the test suite checks this against real Helm. CRDs are ordinary templates (so plain
//! `helm template` prints them); `global.crds` (`only`/`skip`) splits an install in two.
//!
//! The export is pure ([`export`] returns the files; [`write::write_folder`] puts them on disk
//! atomically, [`package::package`] makes them one reproducible Helm archive) and
//! deterministic: the same inputs give byte-identical folders and archives. Credentials
//! ([`credentials`]) go only into files created 0600, only into the subcharts that use them,
//! and never into a README.

pub(crate) mod argocd;
pub(crate) mod crd_text;
pub mod credentials;
pub(crate) mod exported_global;
pub(crate) mod external_store;
pub(crate) mod gateway;
pub(crate) mod gotmpl;
pub(crate) mod hashed;
pub(crate) mod helpers;
pub(crate) mod identity;
pub(crate) mod object;
pub mod package;
pub(crate) mod params;
pub(crate) mod peers;
pub mod provenance;
pub mod scaffold;
pub(crate) mod step;
pub(crate) mod values_doc;
pub mod write;
mod write_same;

use crate::catalog::docs;
use crate::catalog::provided;
use crate::catalog::render::{Prepared, RenderedObject};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub use argocd::ArgoCdOptions;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// A CRD's schemas could not be read back from the render cache.
    #[error(transparent)]
    Cache(#[from] crate::catalog::CatalogError),
    /// An object cannot become a template.
    #[error("{object} (component `{component}`): {source}")]
    Object {
        /// The object, labelled for messages (or `added objects`).
        object: String,
        /// Its component.
        component: String,
        /// What went wrong.
        #[source]
        source: params::PointError,
    },
    /// An object belongs to no component of the profile, so no chart can hold it.
    #[error(
        "{object}: belongs to no component of the profile, so no chart can hold it (a profile's own `resources` are not exported; apply them beside the chart)"
    )]
    NoComponent {
        /// The object, as `Kind namespace/name`.
        object: String,
    },
    /// The chart name is not a valid Helm chart name.
    #[error(
        "chart name `{name}`: expected lowercase letters, digits and dashes, starting with a letter (e.g. kubeflow)"
    )]
    BadName {
        /// The name given.
        name: String,
    },
    /// A generated object's hashed name depends on one component's values but another component
    /// refers to it.
    #[error(
        "{object}: a generated object's hashed name depends on values of component `{component}`, but component `{other}` refers to it, and its chart cannot see those values"
    )]
    ForeignHashedReference {
        /// The generated object.
        object: String,
        /// The component whose values its name depends on.
        component: String,
        /// The component referring to it.
        other: String,
    },
    /// The render's objects that depend on other components came without their variants.
    #[error(
        "{object}: its fields depend on other components, but the export was given no variants of it; this is a kfctl-rs bug (export from `catalog::peers::prepare_with_variants`)"
    )]
    PeersNotBuilt {
        /// The object, as `Kind namespace/name`.
        object: String,
    },
    /// An embedded chart file template is missing or did not render.
    #[error("chart scaffolding {name}: {message}")]
    Scaffold {
        /// The template.
        name: String,
        /// The template engine's error.
        message: String,
    },
    /// `--component` names a component the profile does not have.
    #[error("--component {name}: not a component of profile `{profile}`; its components: {known}")]
    NotInProfile {
        /// The component named with `--component`.
        name: String,
        /// The profile exported.
        profile: String,
        /// Its components, comma-separated.
        known: String,
    },
}

/// What to export besides the render.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The umbrella chart's name.
    pub chart_name: String,
    /// The upstream release the objects come from (the charts' `appVersion`).
    pub app_version: String,
    /// The command that made the export, for the README (flags after the profile).
    pub export_args: Vec<String>,
    /// An Argo CD `Application` to write beside the chart, when asked for.
    pub argocd: Option<ArgoCdOptions>,
}

/// The exported files: path relative to the output folder → contents.
pub(crate) type ChartFiles = BTreeMap<String, String>;

/// One component's chart, as the umbrella's README lists it.
struct Component<'a> {
    name: &'a str,
    description: String,
    objects: Vec<&'a RenderedObject>,
}

/// Export `prepared` as an umbrella chart with one subchart per enabled component.
pub fn export(prepared: &Prepared, options: &ExportOptions) -> Result<ChartFiles, ChartError> {
    check_name(&options.chart_name)?;
    let components = group(prepared)?;
    let names: Vec<&str> = components.iter().map(|c| c.name).collect();
    let mut full_schema = prepared.schema.to_json_schema(&|path| docs::describe(path, &prepared.catalog));
    exported_global::nullable_globals(&mut full_schema, &exported_global::keys(&prepared.user));
    let mut files = ChartFiles::new();
    let mut peer_files = ChartFiles::new();
    // the components' charts are independent: made on all cores, taken (and the first error
    // reported) in the components' order
    use rayon::prelude::*;
    let found: Vec<_> = components.par_iter().map(|component| hashed_objects(prepared, component)).collect();
    let by_component: Vec<(&str, Vec<hashed::HashedObject>)> =
        components.iter().map(|c| c.name).zip(found).map(|(c, h)| Ok((c, h?))).collect::<Result<_, ChartError>>()?;
    if let Some((i, object, other)) = hashed::first_foreign_reference(&by_component, &prepared.objects)? {
        let component = by_component[i].0.into();
        return Err(ChartError::ForeignHashedReference { object, component, other: other.into() });
    }
    let charts: Vec<_> = components
        .par_iter()
        .zip(&by_component)
        .map(|(component, (_, hashed))| component_chart(prepared, component, hashed, &full_schema, options))
        .collect();
    for (component, chart) in components.iter().zip(charts) {
        let (own, in_umbrella) = chart?;
        for (path, text) in own {
            files.insert(format!("charts/{}/{path}", component.name), text);
        }
        peer_files.extend(in_umbrella.into_iter().map(|(path, text)| (format!("templates/{path}"), text)));
    }
    files.extend(umbrella(prepared, &components, &full_schema, options)?);
    files.extend(peer_files);
    if let Some(argo) = &options.argocd {
        files.extend(argocd::applications(&options.chart_name, &names, &prepared.catalog, &prepared.objects, argo)?);
    }
    Ok(files)
}

/// The `values.yaml` [`export`] writes for the umbrella chart `chart_name` (`component`
/// `None`) or for the subchart of `component`: the text `kfctl-rs values` prints.
pub fn values_file(prepared: &Prepared, chart_name: &str, component: Option<&str>) -> Result<String, ChartError> {
    let components = group(prepared)?;
    match component {
        None => umbrella_values_file(prepared, chart_name, &umbrella_values(prepared, &components)),
        Some(name) => {
            let Some(c) = components.iter().find(|c| c.name == name) else {
                let known: Vec<&str> = components.iter().map(|c| c.name).collect();
                return Err(ChartError::NotInProfile {
                    name: name.into(),
                    profile: prepared.profile.name.clone(),
                    known: known.join(", "),
                });
            };
            component_values_file(prepared, c.name, &component_values(prepared, c))
        }
    }
}

fn umbrella_values_file(prepared: &Prepared, chart_name: &str, values: &Value) -> Result<String, ChartError> {
    let values = exported_global_apart(prepared, values);
    let body = values_doc::commented_yaml(&values, None, &prepared.catalog);
    let scope = "`global:` and one section per component";
    values_text(chart_name, &prepared.profile.name, scope, &body)
}

fn component_values_file(prepared: &Prepared, component: &str, values: &Value) -> Result<String, ChartError> {
    let values = exported_global_apart(prepared, values);
    let body = values_doc::commented_yaml(&values, Some(component), &prepared.catalog);
    let scope = format!("its `{component}:` section, here at the top, and `global:`");
    values_text(component, &prepared.profile.name, &scope, &body)
}

/// `values` as a `values.yaml` holds them: the globals given at export set apart.
fn exported_global_apart(prepared: &Prepared, values: &Value) -> Value {
    let mut values = values.clone();
    exported_global::set_apart(&mut values, &exported_global::keys(&prepared.user));
    values
}

fn values_text(name: &str, profile: &str, scope: &str, body: &str) -> Result<String, ChartError> {
    scaffold::render("chart/values.yaml.tera", &json!({"name": name, "profile": profile, "scope": scope, "body": body}))
}

/// A subchart's values: its section and `global:`, without the credentials its objects do not hold.
fn component_values(prepared: &Prepared, component: &Component) -> Value {
    let mut values = section(&prepared.effective, component.name);
    values.insert("global".into(), prepared.effective.get("global").cloned().unwrap_or(json!({})));
    let mut values = Value::Object(values);
    credentials::strip_unused(&mut values, component.name, &credentials::used_by(component.objects.iter().copied()));
    values
}

/// The umbrella's values: `global:` and the section of every exported component.
fn umbrella_values(prepared: &Prepared, components: &[Component]) -> Value {
    let mut values = serde_json::Map::new();
    values.insert("global".into(), prepared.effective.get("global").cloned().unwrap_or(json!({})));
    for c in components {
        values.insert(c.name.to_string(), Value::Object(section(&prepared.effective, c.name)));
    }
    Value::Object(values)
}

fn check_name(name: &str) -> Result<(), ChartError> {
    let ok = name.len() <= 53
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-');
    if ok { Ok(()) } else { Err(ChartError::BadName { name: name.into() }) }
}

/// The profile's components in catalog order, each with its objects.
fn group(prepared: &Prepared) -> Result<Vec<Component<'_>>, ChartError> {
    let mut components: Vec<Component> = prepared
        .profile
        .components
        .iter()
        .map(|(name, _)| Component {
            name: name.as_str(),
            description: prepared.catalog.components.get(name).map(|d| d.description.clone()).unwrap_or_default(),
            objects: Vec::new(),
        })
        .collect();
    for o in &prepared.objects {
        match components.iter_mut().find(|c| c.name == o.component) {
            Some(c) => c.objects.push(o),
            None => {
                return Err(ChartError::NoComponent { object: kfctl_yaml::compare::object_label(&o.obj) });
            }
        }
    }
    Ok(components)
}

fn section(values: &Value, name: &str) -> serde_json::Map<String, Value> {
    values.get(name).and_then(Value::as_object).cloned().unwrap_or_default()
}

/// A component's own chart: its files, relative to `charts/<name>/`, and the umbrella's
/// files (relative to its `templates/`) rendering its objects that depend on other components.
fn component_chart(
    prepared: &Prepared,
    component: &Component,
    hashed: &[hashed::HashedObject],
    full_schema: &Value,
    options: &ExportOptions,
) -> Result<(ChartFiles, ChartFiles), ChartError> {
    let mut files = ChartFiles::new();
    let mut in_umbrella = ChartFiles::new();
    let scope = params::Scope { component: component.name, defaults: &prepared.defaults };
    let mut used = std::collections::BTreeSet::new();
    for o in &component.objects {
        let label = kfctl_yaml::compare::object_label(&o.obj);
        let header = format!(
            "{label}: from kubeflow/manifests {}, component {}; written by kfctl-rs, do not edit",
            options.app_version, component.name
        );
        let kept = provided::kept(&prepared.catalog.provided, component.name, &o.obj);
        let namespace = o.obj.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
        let point_error =
            |source| ChartError::Object { object: label.clone(), component: component.name.into(), source };
        let template_of = |obj: &Value| {
            let text = object::template(obj, &scope, &header, kept).map_err(point_error)?;
            Ok::<_, ChartError>(hashed::rewrite_references(text, namespace, hashed))
        };
        let file = unique_file_name(&o.obj, &mut used);
        let mut text = match peers::of(prepared, o)? {
            None => {
                let text = object::template_rendered(o, &scope, &header, kept).map_err(|e| match e {
                    object::TemplateError::Point(source) => point_error(source),
                    object::TemplateError::Cache(e) => ChartError::Cache(e),
                })?;
                hashed::rewrite_references(text, namespace, hashed)
            }
            Some((peer_names, variants)) => {
                let variants =
                    variants.iter().map(|v| Ok((v, template_of(&v.obj)?))).collect::<Result<_, ChartError>>()?;
                let branches = peers::Branches {
                    component: component.name,
                    file: &file,
                    peers: peer_names,
                    default: template_of(&o.obj)?,
                    variants,
                };
                in_umbrella
                    .insert(peers::umbrella_file_name(component.name, &file), peers::umbrella_file(&branches, &label));
                peers::component_file(&branches, &options.chart_name)
            }
        };
        let name = o.obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        if let Some(h) = hashed.iter().find(|h| h.name == name && h.namespace == namespace) {
            text.insert_str(0, &h.define_text);
        }
        files.insert(format!("templates/{file}"), text);
    }
    let added = gateway::added_templates(&component.objects, &scope, &options.app_version).map_err(|source| {
        ChartError::Object { object: "added objects".into(), component: component.name.into(), source }
    })?;
    files.extend(added.into_iter().map(|(file, text)| (format!("templates/{file}"), text)));
    let values = component_values(prepared, component);
    let crd_count =
        component.objects.iter().filter(|o| o.obj.get("kind") == Some(&json!("CustomResourceDefinition"))).count();
    let namespace = prepared
        .catalog
        .components
        .get(component.name)
        .and_then(|d| d.namespaces.first())
        .map_or("kubeflow", String::as_str);
    let context = json!({
        "name": component.name, "description": component.description, "profile": prepared.profile.name,
        "version": scaffold::chart_version(&options.app_version), "kfctl_version": env!("CARGO_PKG_VERSION"), "app_version": options.app_version,
        "kube_version": scaffold::kube_version(&options.app_version), "kubernetes_range": scaffold::kubernetes_range(&options.app_version),
        "dependencies": [], "notice": crate::notice::BEST_EFFORT, "namespace": namespace,
        "rows": scaffold::value_rows(&values, "", Some(component.name), &prepared.catalog),
        "object_count": component.objects.len(), "crd_count": crd_count, "umbrella": false, "components": [],
    });
    files.insert("Chart.yaml".into(), scaffold::render("chart/Chart.yaml.tera", &context)?);
    files.insert("values.yaml".into(), component_values_file(prepared, component.name, &values)?);
    files.insert("values.schema.json".into(), pretty(&scaffold::component_schema(full_schema, component.name)));
    files.insert("README.md".into(), scaffold::render("chart/README.md.tera", &context)?);
    files.insert("templates/NOTES.txt".into(), scaffold::render("chart/NOTES.txt.tera", &context)?);
    files.insert("templates/_helpers.tpl".into(), helpers::helpers_file()?);
    files.insert(".helmignore".into(), scaffold::verbatim("chart/helmignore")?);
    Ok((files, in_umbrella))
}

/// The component's generated objects whose hashed names the chart computes; none may be
/// referred to from another component's objects ([`hashed::first_foreign_reference`]).
fn hashed_objects(prepared: &Prepared, component: &Component) -> Result<Vec<hashed::HashedObject>, ChartError> {
    let scope = params::Scope { component: component.name, defaults: &prepared.defaults };
    let mut found = Vec::new();
    for o in &component.objects {
        let object_error = |source| ChartError::Object {
            object: kfctl_yaml::compare::object_label(&o.obj),
            component: component.name.into(),
            source,
        };
        found.extend(hashed::hashed_object(&o.obj, &scope, component.name).map_err(object_error)?);
    }
    Ok(found)
}

/// The umbrella chart's own files.
fn umbrella(
    prepared: &Prepared,
    components: &[Component],
    full_schema: &Value,
    options: &ExportOptions,
) -> Result<ChartFiles, ChartError> {
    let names: Vec<&str> = components.iter().map(|c| c.name).collect();
    let values = umbrella_values(prepared, components);
    let global_rows = scaffold::value_rows(&json!({"global": values["global"]}), "", None, &prepared.catalog);
    let listed: Vec<Value> = components
        .iter()
        .map(|c| {
            let deps: Vec<Value> = prepared
                .catalog
                .components
                .get(c.name)
                .map(|def| def.dependencies.iter().filter(|d| names.contains(&d.as_str())).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .map(|d| json!({"name": d, "providable": provided::dependency_of(d, &prepared.catalog.provided).is_some()}))
                .collect();
            json!({"name": c.name, "description": c.description, "objects": c.objects.len(), "dependencies": deps})
        })
        .collect();
    let provided_groups: Vec<Value> = prepared
        .catalog
        .provided
        .iter()
        .filter(|d| names.contains(&d.name.as_str()))
        .map(|d| {
            let members: Vec<&String> =
                d.components.iter().filter(|m| **m != d.name && names.contains(&m.as_str())).collect();
            json!({"name": d.name, "members": members})
        })
        .filter(|g| g["members"].as_array().is_some_and(|m| !m.is_empty()))
        .collect();
    let absent: Vec<&String> = prepared.catalog.components.keys().filter(|c| !names.contains(&c.as_str())).collect();
    let context = json!({
        "name": options.chart_name, "profile": prepared.profile.name, "absent": absent,
        "description": format!("Kubeflow, profile {}: {}", prepared.profile.name, prepared.profile.description),
        "version": scaffold::chart_version(&options.app_version), "kfctl_version": env!("CARGO_PKG_VERSION"), "app_version": options.app_version,
        "kube_version": scaffold::kube_version(&options.app_version), "kubernetes_range": scaffold::kubernetes_range(&options.app_version),
        "dependencies": listed, "components": listed, "notice": crate::notice::BEST_EFFORT, "umbrella": true, "crd_count": 0,
        "access": crate::catalog::access::facts(), "provided_groups": provided_groups,
        "rows": global_rows,
        "export_args": options.export_args, "argocd": options.argocd.as_ref().map(|a| json!({"repo_url": a.repo_url, "path": a.path, "revision": a.revision})),
    });
    let mut files = ChartFiles::new();
    files.insert("Chart.yaml".into(), scaffold::render("chart/Chart.yaml.tera", &context)?);
    files.insert("values.yaml".into(), umbrella_values_file(prepared, &options.chart_name, &values)?);
    files.insert("values.schema.json".into(), pretty(&scaffold::umbrella_schema(full_schema, &names)));
    files.insert("README.md".into(), scaffold::render("chart/umbrella-README.md.tera", &context)?);
    files.insert("templates/NOTES.txt".into(), scaffold::render("chart/NOTES.txt.tera", &context)?);
    files.insert("templates/checks.yaml".into(), scaffold::render("chart/checks.yaml.tera", &context)?);
    files.insert("templates/_helpers.tpl".into(), helpers::helpers_file()?);
    files.insert(".helmignore".into(), scaffold::verbatim("chart/helmignore")?);
    Ok(files)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// `<kind>-<namespace>-<name>.yaml` (no namespace part for cluster objects), lowercase, with
/// anything but `[a-z0-9.-]` made `-`, long names shortened, and a number added when two
/// objects would share a name (e.g. two `Gateway` kinds of different groups).
pub(crate) fn unique_file_name(obj: &Value, used: &mut std::collections::BTreeSet<String>) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or_default();
    let parts: Vec<&str> =
        [s("/kind"), s("/metadata/namespace"), s("/metadata/name")].into_iter().filter(|p| !p.is_empty()).collect();
    let mut base: String = parts
        .join("-")
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '-' })
        .collect();
    base.truncate(180);
    let mut name = format!("{base}.yaml");
    let mut n = 2;
    while !used.insert(name.clone()) {
        name = format!("{base}-{n}.yaml");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_sanitized_and_unique() {
        let mut used = Default::default();
        let gw = json!({"kind": "Gateway", "metadata": {"name": "Kubeflow_GW", "namespace": "kubeflow"}});
        assert_eq!(unique_file_name(&gw, &mut used), "gateway-kubeflow-kubeflow-gw.yaml");
        assert_eq!(unique_file_name(&gw, &mut used), "gateway-kubeflow-kubeflow-gw-2.yaml");
        let crd = json!({"kind": "CustomResourceDefinition", "metadata": {"name": "a.b.io"}});
        assert_eq!(unique_file_name(&crd, &mut used), "customresourcedefinition-a.b.io.yaml");
    }

    #[test]
    fn chart_names_follow_helm_rules() {
        assert!(check_name("kubeflow").is_ok());
        assert!(check_name("kubeflow-2").is_ok());
        for bad in ["Kubeflow", "1kf", "kf_x", "kf-", ""] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
