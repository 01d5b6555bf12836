//! GitOps: one Argo CD Application per exported component chart, plus a parent Application
//! (app of apps) over them. Sync waves follow the install order: the catalog's order with every
//! dependency before its dependents.
//!
//! Each Application syncs server-side, retries, sets `global.resourcePolicy: keep` (so Argo CD
//! never prunes or deletes CRDs, PVCs and Namespaces, as kfctl-rs's own installer never does),
//! and ignores the fields controllers fill in after the sync (`charts/argocd.yaml`: injected
//! caBundles, webhook Secrets upstream ships empty), with `RespectIgnoreDifferences=true`.
//! `argocd/argocd-cm-health.yaml` restores the health check of Applications that Argo CD
//! dropped in 1.8, without which the parent's sync waves do not wait for each component.

use super::{ChartError, scaffold};
use crate::catalog::Catalog;
use crate::catalog::render::RenderedObject;
use crate::embedded;
use serde::Deserialize;
use serde_json::{Value, json};

/// The data file of ignore rules.
const IGNORE_FILE: &str = "charts/argocd.yaml";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct IgnoreFile {
    ignore_differences: Vec<IgnoreRule>,
    empty_secrets: EmptySecrets,
}

/// One `ignoreDifferences` entry, listed for a component that renders its kind (and name).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct IgnoreRule {
    group: String,
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    jq_path_expressions: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EmptySecrets {
    json_pointers: Vec<String>,
}

fn ignore_file() -> Result<IgnoreFile, ChartError> {
    let bad = |message: String| ChartError::Scaffold { name: IGNORE_FILE.into(), message };
    let text = embedded::file(IGNORE_FILE).ok_or_else(|| bad("not compiled into the binary".into()))?;
    let value = kfctl_yaml::parse_stream(text, IGNORE_FILE).map_err(|e| bad(e.to_string()))?;
    let doc = value.into_iter().next().unwrap_or(Value::Null);
    serde_json::from_value(doc).map_err(|e| bad(e.to_string()))
}

/// The `ignoreDifferences` of one component's Application: the rules whose kind (and name)
/// its objects have, then each Secret it renders without data.
fn ignore_differences(objects: &[&Value], rules: &IgnoreFile) -> Vec<Value> {
    let group_of = |o: &Value| {
        o.get("apiVersion").and_then(Value::as_str).and_then(|v| v.split_once('/')).map_or("", |(g, _)| g).to_string()
    };
    let str_at = |o: &Value, p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    let mut out: Vec<Value> = rules
        .ignore_differences
        .iter()
        .filter(|r| {
            objects.iter().any(|o| {
                group_of(o) == r.group
                    && str_at(o, "/kind") == r.kind
                    && r.name.as_ref().is_none_or(|n| *n == str_at(o, "/metadata/name"))
            })
        })
        .map(|r| {
            let mut rule = json!({"group": r.group, "kind": r.kind, "jqPathExpressions": r.jq_path_expressions});
            if let Some(name) = &r.name {
                rule["name"] = json!(name);
            }
            rule
        })
        .collect();
    for secret in objects.iter().filter(|o| str_at(o, "/kind") == "Secret" && group_of(o).is_empty()) {
        let empty = |field: &str| secret.get(field).is_none_or(|d| d.as_object().is_some_and(|m| m.is_empty()));
        if empty("data") && empty("stringData") {
            out.push(json!({"kind": "Secret", "name": str_at(secret, "/metadata/name"),
                "namespace": str_at(secret, "/metadata/namespace"), "jsonPointers": rules.empty_secrets.json_pointers}));
        }
    }
    out
}

/// Where the Applications point (the `--argocd-*` flags).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgoCdOptions {
    /// The Git repository holding the exported folder.
    pub repo_url: String,
    /// The exported folder's path inside that repository.
    pub path: String,
    /// The Git revision the Applications track.
    pub revision: String,
    /// The namespace Argo CD runs in (and the Applications live in).
    pub namespace: String,
    /// The Argo CD project of the Applications.
    pub project: String,
}

/// `components` (catalog order) reordered so that every dependency comes first; among ready
/// components the catalog's order decides.
pub(crate) fn install_order<'a>(components: &[&'a str], catalog: &Catalog) -> Vec<&'a str> {
    let mut placed: Vec<&str> = Vec::new();
    let mut left: Vec<&str> = components.to_vec();
    while !left.is_empty() {
        let ready = left
            .iter()
            .position(|c| {
                catalog.components.get(*c).is_none_or(|d| {
                    d.dependencies
                        .iter()
                        .all(|dep| placed.contains(&dep.as_str()) || !components.contains(&dep.as_str()))
                })
            })
            .unwrap_or(0);
        placed.push(left.remove(ready));
    }
    placed
}

/// The Application files (`argocd/apps/<component>.yaml` and `argocd/root.yaml`).
pub(crate) fn applications(
    chart_name: &str,
    components: &[&str],
    catalog: &Catalog,
    objects: &[RenderedObject],
    options: &ArgoCdOptions,
) -> Result<Vec<(String, String)>, ChartError> {
    let rules = ignore_file()?;
    let argocd = json!({"repo_url": options.repo_url, "path": options.path, "revision": options.revision, "namespace": options.namespace, "project": options.project});
    let base = options.path.trim_end_matches('/');
    let join = |rest: &str| {
        if base.is_empty() || base == "." { rest.to_string() } else { format!("{base}/{rest}") }
    };
    let mut files = Vec::new();
    for (wave, component) in install_order(components, catalog).into_iter().enumerate() {
        let namespace =
            catalog.components.get(component).and_then(|d| d.namespaces.first()).map_or("kubeflow", String::as_str);
        let context = json!({
            "kfctl_version": env!("CARGO_PKG_VERSION"), "component": component, "name": format!("{chart_name}-{component}"),
            "wave": wave.to_string(), "path": join(&format!("charts/{component}")), "namespace": namespace, "argocd": argocd,
            "ignore": ignore_differences(&objects.iter().filter(|o| o.component == component).map(|o| &o.obj).collect::<Vec<_>>(), &rules),
        });
        files.push((
            format!("argocd/apps/{component}.yaml"),
            scaffold::render("argocd/application.yaml.tera", &context)?,
        ));
    }
    let context = json!({"kfctl_version": env!("CARGO_PKG_VERSION"), "name": chart_name, "path": join("argocd/apps"), "argocd": argocd});
    files.push(("argocd/root.yaml".into(), scaffold::render("argocd/root.yaml.tera", &context)?));
    files.push((
        "argocd/argocd-cm-health.yaml".into(),
        scaffold::render("argocd/argocd-cm-health.yaml.tera", &context)?,
    ));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_come_before_their_dependents() {
        let catalog = Catalog::embedded().unwrap();
        let order = install_order(&["katib", "cert-manager", "kubeflow-namespace"], &catalog);
        assert_eq!(order, ["cert-manager", "kubeflow-namespace", "katib"]);
    }

    #[test]
    fn applications_carry_waves_paths_and_sync_options() {
        let catalog = Catalog::embedded().unwrap();
        let options = ArgoCdOptions {
            repo_url: "https://git.example.com/k.git".into(),
            path: "deploy/kubeflow".into(),
            revision: "main".into(),
            namespace: "argocd".into(),
            project: "default".into(),
        };
        let files = applications("kubeflow", &["cert-manager", "katib", "kubeflow-namespace"], &catalog, &[], &options)
            .unwrap();
        let (name, text) = files.iter().find(|(n, _)| n.ends_with("katib.yaml")).unwrap();
        assert_eq!(name, "argocd/apps/katib.yaml");
        let app = &kfctl_yaml::parse_stream(text, name).unwrap()[0];
        assert_eq!(app.pointer("/metadata/annotations/argocd.argoproj.io~1sync-wave").unwrap(), "2");
        assert_eq!(app.pointer("/spec/source/path").unwrap(), "deploy/kubeflow/charts/katib");
        assert_eq!(app.pointer("/spec/source/repoURL").unwrap(), "https://git.example.com/k.git");
        assert!(
            app.pointer("/spec/syncPolicy/syncOptions")
                .unwrap()
                .as_array()
                .unwrap()
                .contains(&json!("ServerSideApply=true"))
        );
        let root_text = &files.iter().find(|(n, _)| n == "argocd/root.yaml").unwrap().1;
        let root = &kfctl_yaml::parse_stream(root_text, "root").unwrap()[0];
        assert_eq!(root.pointer("/spec/source/path").unwrap(), "deploy/kubeflow/argocd/apps");
    }

    #[test]
    fn ignore_rules_follow_the_kinds_and_empty_secrets_a_component_renders() {
        let rules = ignore_file().unwrap();
        let objects = [
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration", "metadata": {"name": "w"}}),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "certs", "namespace": "n"}}),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "full", "namespace": "n"}, "data": {"k": "dg=="}}),
        ];
        let ignore = ignore_differences(&objects.iter().collect::<Vec<_>>(), &rules);
        assert_eq!(ignore.len(), 2, "{ignore:?}");
        assert_eq!(ignore[0]["kind"], "MutatingWebhookConfiguration");
        assert_eq!(ignore[0]["jqPathExpressions"], json!([".webhooks[]?.clientConfig.caBundle"]));
        assert!(ignore[0].get("name").is_none(), "the Knative rule is by name and does not apply");
        assert_eq!(ignore[1], json!({"kind": "Secret", "name": "certs", "namespace": "n", "jsonPointers": ["/data"]}));
    }
}
