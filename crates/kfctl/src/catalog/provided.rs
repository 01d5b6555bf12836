//! Platform dependencies the cluster already runs: "Kubeflow components only".
//!
//! `charts/catalog.yaml`'s `provided` table names each dependency a cluster may bring itself
//! (cert-manager, Istio with its CRDs and namespace, Knative Serving, Dex, oauth2-proxy), the
//! components that make it up, the API groups Kubeflow's own objects use from it and the objects
//! they refer to by name. `--set <name>.provided=true` then:
//!
//! - renders none of its components' objects ([`super::params::keep`], and `kfctl.enabled` in
//!   the exported charts) but Kubeflow's own objects its folders hold (`keeps`: Kubeflow's
//!   ClusterIssuer in cert-manager's folder), while every component that needs it stays
//!   enabled: a provided dependency meets the dependency check as an enabled one does;
//! - makes the install's preflight check the cluster's copy before any write
//!   (`cluster::provided`): the kinds Kubeflow uses served, the named objects present, their
//!   webhooks answering.
//!
//! The value sits on the dependency's own name; its other components follow it
//! (`expand`: `istio.provided=true` covers `istio-crds` and `istio-namespace` unless they are
//! set themselves). Helm passes a value to one subchart only, so the exported umbrella chart
//! cannot follow it at `helm template` time: its checks refuse a half-provided group with the
//! flags to add, and `chart export --set istio.provided=true` writes all three.

use super::CatalogError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One dependency a cluster may provide (a row of the catalog's `provided` table).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dependency {
    /// The value's name (`<name>.provided`), a component of the catalog.
    pub name: String,
    /// Components whose objects the cluster's copy stands in for (`name` first).
    pub components: Vec<String>,
    /// API groups (and their subdomains) whose kinds Kubeflow's objects use from it.
    #[serde(default)]
    pub(crate) api_groups: Vec<String>,
    /// Objects Kubeflow's own objects refer to by name.
    #[serde(default)]
    pub(crate) needs: Vec<Need>,
    /// Kubeflow's own objects in the dependency's folders (`Kind/name`): they still render when
    /// the cluster provides the dependency (Kubeflow's ClusterIssuer in cert-manager's folder).
    #[serde(default)]
    pub(crate) keeps: Vec<String>,
}

/// Whether `obj` of `component` is one of Kubeflow's own objects a provided dependency's
/// folders hold: it renders even with `<dependency>.provided=true`.
pub(crate) fn kept(table: &[Dependency], component: &str, obj: &Value) -> bool {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let name = obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let id = format!("{kind}/{name}");
    dependency_of(component, table).is_some_and(|d| d.keeps.contains(&id))
}

/// An object a provided dependency must have on the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Need {
    #[serde(default = "core_v1")]
    pub(crate) api_version: String,
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
    /// What else must hold of it.
    #[serde(default)]
    pub(crate) ready: Option<Readiness>,
    #[serde(default)]
    pub(crate) contains: Option<Contains>,
    /// Checked only when this component is installed too.
    #[serde(default)]
    pub(crate) when: Option<String>,
    /// What Kubeflow uses it for, said when it is missing.
    pub(crate) why: String,
    /// How to make it, said when it is missing.
    #[serde(default)]
    pub(crate) create: Option<String>,
}

fn core_v1() -> String {
    "v1".into()
}

/// A condition on a needed object beyond its existence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Readiness {
    /// A Service with at least one ready endpoint: the webhook or gateway behind it answers.
    Endpoints,
}

/// A text that must occur in a string field (`data.mesh`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Contains {
    pub(crate) field: String,
    pub(crate) text: String,
}

impl Need {
    /// `ConfigMap istio-system/istio`, `ClusterIssuer kubeflow-self-signing-issuer`.
    pub(crate) fn shown(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

impl Dependency {
    /// Whether Kubeflow's objects of `api_version` come from this dependency's API groups.
    pub fn serves(&self, api_version: &str) -> bool {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        !group.is_empty() && self.api_groups.iter().any(|g| group == g || group.ends_with(&format!(".{g}")))
    }

    /// The flag that turns it off again, for hints.
    pub(crate) fn install_it_flag(&self) -> String {
        format!("--set {}.provided=false", self.name)
    }

    /// Its needs that apply to an install of `installed` components.
    pub(crate) fn needs_for<'a>(&'a self, installed: &'a [String]) -> impl Iterator<Item = &'a Need> {
        self.needs.iter().filter(move |n| n.when.as_ref().is_none_or(|c| installed.contains(c)))
    }
}

/// Whether `values` sets `<component>.provided` to true.
pub(crate) fn is_provided(values: &Value, component: &str) -> bool {
    values.get(component).and_then(|c| c.get("provided")).and_then(Value::as_bool) == Some(true)
}

/// Let a dependency's other components follow `<name>.provided: true` (see the module docs);
/// a component's own `provided`, true or false, wins.
pub(crate) fn expand(user: &mut Value, table: &[Dependency]) {
    let provided: Vec<&Dependency> = table.iter().filter(|d| is_provided(user, &d.name)).collect();
    for dep in provided {
        for member in dep.components.iter().filter(|c| **c != dep.name) {
            let section = &mut user[member.as_str()];
            if !section.is_object() {
                *section = Value::Object(Default::default());
            }
            if section.get("provided").is_none_or(Value::is_null) {
                section["provided"] = Value::Bool(true);
            }
        }
    }
}

/// The dependencies `values` marks provided (by their own name).
pub(crate) fn in_use<'a>(values: &Value, table: &'a [Dependency]) -> Vec<&'a Dependency> {
    table.iter().filter(|d| is_provided(values, &d.name)).collect()
}

/// The dependency a component belongs to, if any.
pub(crate) fn dependency_of<'a>(component: &str, table: &'a [Dependency]) -> Option<&'a Dependency> {
    table.iter().find(|d| d.components.iter().any(|c| c == component))
}

/// Check the table against the catalog's components: every name and member must exist.
pub(crate) fn check_table(table: &[Dependency], known: &[&str], path: &str) -> Result<(), CatalogError> {
    for dep in table {
        let unknown = std::iter::once(&dep.name).chain(&dep.components).find(|c| !known.contains(&c.as_str()));
        if let Some(c) = unknown {
            let message = format!("provided `{}`: component `{c}` is not in `order`", dep.name);
            return Err(CatalogError::Data { path: path.into(), message });
        }
        if dep.components.first() != Some(&dep.name) {
            let message = format!("provided `{}`: `components` must start with `{}`", dep.name, dep.name);
            return Err(CatalogError::Data { path: path.into(), message });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn istio() -> Dependency {
        Dependency {
            name: "istio".into(),
            components: vec!["istio".into(), "istio-crds".into(), "istio-namespace".into()],
            api_groups: vec!["istio.io".into()],
            needs: Vec::new(),
            keeps: Vec::new(),
        }
    }

    #[test]
    fn members_follow_the_dependency_unless_set_themselves() {
        let mut user = json!({"istio": {"provided": true}, "istio-namespace": {"provided": false}});
        expand(&mut user, &[istio()]);
        assert_eq!(user["istio-crds"]["provided"], json!(true));
        assert_eq!(user["istio-namespace"]["provided"], json!(false));
        let mut none = json!({"istio": {"provided": false}});
        expand(&mut none, &[istio()]);
        assert!(none.get("istio-crds").is_none());
    }

    #[test]
    fn api_groups_cover_their_subdomains_only() {
        let dep = istio();
        assert!(dep.serves("networking.istio.io/v1"));
        assert!(dep.serves("security.istio.io/v1beta1"));
        assert!(!dep.serves("v1"));
        assert!(!dep.serves("notistio.io/v1"));
    }

    #[test]
    fn the_catalog_table_names_known_components() {
        let catalog = crate::catalog::Catalog::embedded().unwrap();
        let names: Vec<&str> = catalog.provided.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["cert-manager", "istio", "knative-serving", "dex", "oauth2-proxy"]);
        let known: Vec<&str> = catalog.components.keys().map(String::as_str).collect();
        assert!(check_table(&catalog.provided, &known, "t").is_ok());
        let bad = Dependency { components: vec!["istio-crds".into()], ..istio() };
        assert!(check_table(&[bad], &known, "t").unwrap_err().to_string().contains("must start with `istio`"));
    }
}
