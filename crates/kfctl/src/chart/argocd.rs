//! GitOps: one Argo CD Application per exported component chart, plus a parent Application
//! (app of apps) over them. Sync waves follow the install order: the catalog's order with every
//! dependency before its dependents.

use super::{ChartError, scaffold};
use crate::catalog::Catalog;
use serde_json::json;

/// Where the Applications point (the `--argocd-*` flags).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgoCdOptions {
    /// The Git repository holding the exported folder.
    pub repo_url: String,
    /// The exported folder's path inside that repository.
    pub path: String,
    pub revision: String,
    /// The namespace Argo CD runs in (and the Applications live in).
    pub namespace: String,
    pub project: String,
}

/// `components` (catalog order) reordered so that every dependency comes first; among ready
/// components the catalog's order decides.
pub fn install_order<'a>(components: &[&'a str], catalog: &Catalog) -> Vec<&'a str> {
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
pub fn applications(
    chart_name: &str,
    components: &[&str],
    catalog: &Catalog,
    options: &ArgoCdOptions,
) -> Result<Vec<(String, String)>, ChartError> {
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
        });
        files.push((
            format!("argocd/apps/{component}.yaml"),
            scaffold::render("argocd/application.yaml.tera", &context)?,
        ));
    }
    let context = json!({"kfctl_version": env!("CARGO_PKG_VERSION"), "name": chart_name, "path": join("argocd/apps"), "argocd": argocd});
    files.push(("argocd/root.yaml".into(), scaffold::render("argocd/root.yaml.tera", &context)?));
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
        let files =
            applications("kubeflow", &["cert-manager", "katib", "kubeflow-namespace"], &catalog, &options).unwrap();
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
        let root = &kfctl_yaml::parse_stream(&files.last().unwrap().1, "root").unwrap()[0];
        assert_eq!(root.pointer("/spec/source/path").unwrap(), "deploy/kubeflow/argocd/apps");
    }
}
