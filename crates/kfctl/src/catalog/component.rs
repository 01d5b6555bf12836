//! The component catalog: `charts/catalog.yaml` (order, the install's foundations, output sort)
//! and one `charts/<name>/component.yaml` per component (upstream paths per variant,
//! dependencies, namespaces, name prefixes). Hand-written metadata only; the objects come from
//! upstream at render time.
//!
//! Releases differ in layout. A component or variant new in some release says so (`since`,
//! `variantsSince`, `kustomizeComponentsSince`, with the `alternative` an older release has);
//! [`Catalog::for_release`] gives the catalog as that release has it, keeping what it lacks in
//! [`Catalog::absent`] so a profile naming it fails with the release and the alternative.

use super::CatalogError;
use super::embedded;
use indexmap::IndexMap;
use kfctl_kustomize::kustomization::SortOptions;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComponentDef {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub optional: bool,
    /// Variant name → upstream kustomization folders (relative to the manifests root). The
    /// first variant is the default.
    pub variants: IndexMap<String, Vec<String>>,
    /// kustomize Components to add at the top level when this component is enabled.
    #[serde(default)]
    pub kustomize_components: Vec<String>,
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// Variant → components it stands in for (it brings their objects itself): with that
    /// variant, those components are left out and dependencies on them count as met.
    #[serde(default)]
    pub provides: IndexMap<String, Vec<String>>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Object names that mark this component in a pre-rendered stream (see
    /// [`super::attribute::attribute_prerendered`]).
    #[serde(default)]
    pub name_prefixes: Vec<String>,
    /// The first release that has this component (absent: every known release has it).
    pub since: Option<String>,
    /// What releases before `since` have instead, for the error that names it.
    pub alternative: Option<String>,
    /// Variant → the first release that has it.
    #[serde(default)]
    pub variants_since: IndexMap<String, String>,
    /// The first release that has `kustomizeComponents` (before it the component has none).
    pub kustomize_components_since: Option<String>,
    /// Patterns (`*` any characters) of an upstream `example/` entry (without `../`) that is
    /// this component in a tree that is no pinned release, when no variant's path is the entry.
    #[serde(default)]
    pub entry_patterns: Vec<String>,
}

/// A foundation of the install (`foundations:` in `charts/catalog.yaml`): set up, in catalog
/// order, before every other object.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Foundation {
    pub name: String,
    /// Components whose objects all belong to it.
    #[serde(default)]
    pub components: Vec<String>,
    /// Objects of another component that belong to it.
    #[serde(default)]
    pub parts: Vec<FoundationPart>,
    /// Namespaces whose objects belong to it, whichever component brings them.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// API groups it serves: their custom resources wait for it.
    #[serde(default)]
    pub api_groups: Vec<String>,
}

/// The objects of `component` whose name starts with `name_prefix`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FoundationPart {
    pub component: String,
    pub name_prefix: String,
}

impl ComponentDef {
    pub fn default_variant(&self) -> &str {
        self.variants.keys().next().map(String::as_str).unwrap_or("default")
    }

    pub fn paths(&self, variant: &str) -> Result<&[String], CatalogError> {
        self.variants.get(variant).map(Vec::as_slice).ok_or_else(|| CatalogError::UnknownVariant {
            component: self.name.clone(),
            variant: variant.to_string(),
            known: self.variants.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CatalogFile {
    order: Vec<String>,
    #[serde(default)]
    foundations: Vec<Foundation>,
    sort_options: SortOptions,
    /// Read by [`super::scheduling::scopes`]; parsed here so a bad table fails the catalog.
    #[serde(default)]
    pod_scopes: super::scheduling::PodScopes,
}

/// All components, in catalog order.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub components: IndexMap<String, ComponentDef>,
    /// The release whose layout this is (`None`: the newest, every component as written).
    pub release: Option<String>,
    /// Components the release lacks (see [`Catalog::for_release`]).
    pub absent: IndexMap<String, ComponentDef>,
    /// The install's foundations, in install order.
    pub foundations: Vec<Foundation>,
    pub sort_options: SortOptions,
}

fn parse<T: serde::de::DeserializeOwned>(path: &str, text: &str) -> Result<T, CatalogError> {
    let doc = kfctl_yaml::parse_stream(text, path)
        .map_err(|e| CatalogError::Data { path: path.into(), message: format!("not valid YAML: {e}") })?
        .into_iter()
        .next()
        .unwrap_or_default();
    serde_json::from_value(doc).map_err(|e| CatalogError::Data { path: path.into(), message: e.to_string() })
}

impl Catalog {
    /// The catalog compiled into the binary.
    pub fn embedded() -> Result<Catalog, CatalogError> {
        let index_path = "charts/catalog.yaml";
        let index: CatalogFile = parse(index_path, embedded::file(index_path).unwrap_or_default())?;
        let mut components = IndexMap::new();
        for name in &index.order {
            let path = format!("charts/{name}/component.yaml");
            let text = embedded::file(&path)
                .ok_or_else(|| CatalogError::Data { path: path.clone(), message: "missing".into() })?;
            let def: ComponentDef = parse(&path, text)?;
            if &def.name != name {
                return Err(CatalogError::Data {
                    path,
                    message: format!("name `{}` does not match its folder", def.name),
                });
            }
            components.insert(name.clone(), def);
        }
        if let Some(r) = index.pod_scopes.runtimes.iter().find(|r| !components.contains_key(&r.component)) {
            let message = format!("podScopes.runtimes: component `{}` is not in `order`", r.component);
            return Err(CatalogError::Data { path: index_path.into(), message });
        }
        Ok(Catalog {
            components,
            release: None,
            absent: IndexMap::new(),
            foundations: index.foundations,
            sort_options: index.sort_options,
        })
    }

    /// The embedded catalog as release `version` has it: components, variants and kustomize
    /// Components newer than it left out (the components kept in [`Catalog::absent`]).
    pub fn for_release(version: &str) -> Result<Catalog, CatalogError> {
        let mut catalog = Catalog::embedded()?;
        let release = semver_of(version, "release")?;
        let newer = |since: &Option<String>| -> Result<bool, CatalogError> {
            Ok(match since {
                Some(s) => semver_of(s, "since")? > release,
                None => false,
            })
        };
        let mut kept = IndexMap::new();
        for (name, mut def) in std::mem::take(&mut catalog.components) {
            if newer(&def.since)? {
                catalog.absent.insert(name, def);
                continue;
            }
            let mut dropped = Vec::new();
            for (variant, since) in &def.variants_since {
                if newer(&Some(since.clone()))? {
                    dropped.push(variant.clone());
                }
            }
            def.variants.retain(|v, _| !dropped.contains(v));
            if newer(&def.kustomize_components_since)? {
                def.kustomize_components.clear();
            }
            kept.insert(name, def);
        }
        catalog.components = kept;
        catalog.release = Some(version.to_string());
        Ok(catalog)
    }

    pub fn get(&self, name: &str) -> Result<&ComponentDef, CatalogError> {
        if let (Some(def), Some(release)) = (self.absent.get(name), &self.release) {
            return Err(CatalogError::NotInRelease {
                release: release.clone(),
                component: name.to_string(),
                since: def.since.clone().unwrap_or_default(),
                alternative: def
                    .alternative
                    .as_ref()
                    .map(|a| format!("; {a} exists (--set {name}.enabled=false --set {a}.enabled=true)"))
                    .unwrap_or_default(),
            });
        }
        self.components.get(name).ok_or_else(|| CatalogError::UnknownComponent {
            name: name.to_string(),
            hint: super::schema::suggestion(name, self.components.keys().map(String::as_str))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default(),
        })
    }
}

fn semver_of(version: &str, what: &str) -> Result<semver::Version, CatalogError> {
    semver::Version::parse(version.trim_start_matches('v')).map_err(|e| CatalogError::Data {
        path: "charts/".into(),
        message: format!("{what} `{version}`: not a semantic version: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_catalog_loads_and_every_dependency_exists() {
        let catalog = Catalog::embedded().expect("catalog loads");
        assert!(catalog.components.len() >= 28, "{} components", catalog.components.len());
        for def in catalog.components.values() {
            for dep in &def.dependencies {
                assert!(catalog.components.contains_key(dep), "{} depends on unknown {dep}", def.name);
            }
            assert!(!def.variants.is_empty(), "{} has no variant", def.name);
        }
        for foundation in &catalog.foundations {
            let named = foundation.components.iter().chain(foundation.parts.iter().map(|p| &p.component));
            for component in named {
                assert!(catalog.components.contains_key(component), "{} names unknown {component}", foundation.name);
            }
        }
        let mut folders: Vec<&str> = super::embedded::files_under("charts/")
            .filter_map(|(p, _)| p.strip_suffix("/component.yaml")?.strip_prefix("charts/"))
            .collect();
        folders.sort();
        let mut listed: Vec<&str> = catalog.components.keys().map(String::as_str).collect();
        listed.sort();
        assert_eq!(folders, listed, "every charts/<name>/ is listed in charts/catalog.yaml and vice versa");
    }

    #[test]
    fn v1_10_lacks_trainer_the_ambient_variants_and_the_pss_component() {
        let catalog = Catalog::for_release("v1.10.2").unwrap();
        let e = catalog.get("trainer").unwrap_err().to_string();
        assert!(
            e.starts_with("release v1.10.2: component `trainer` is new in v1.11.0; training-operator exists"),
            "{e}"
        );
        assert!(catalog.get("training-operator").is_ok());
        let istio = catalog.get("istio").unwrap();
        assert!(istio.variants.contains_key("oauth2-proxy") && !istio.variants.contains_key("ambient-oauth2-proxy"));
        assert!(catalog.get("profiles").unwrap().kustomize_components.is_empty());
        let newest = Catalog::for_release("v1.11.0").unwrap();
        assert!(newest.absent.is_empty() && newest.get("trainer").is_ok());
        assert_eq!(newest.get("profiles").unwrap().kustomize_components.len(), 1);
    }

    #[test]
    fn unknown_component_suggests_the_closest_name() {
        let catalog = Catalog::embedded().unwrap();
        let e = catalog.get("katbi").unwrap_err().to_string();
        assert!(e.contains("did you mean `katib`"), "{e}");
    }
}
