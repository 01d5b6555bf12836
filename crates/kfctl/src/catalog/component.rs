//! The component catalog: `charts/catalog.yaml` (order, the install's foundations, output sort)
//! and one `charts/<name>/component.yaml` per component (upstream paths per variant,
//! dependencies, namespaces, name prefixes). Hand-written metadata only; the objects come from
//! upstream at render time.
//!
//! Releases differ in layout, and each difference is written once, where it happens:
//!
//! - a folder that moved is two entries of one variant, `{path: old, until: 26.03}` and
//!   `{path: new, since: 26.03}` (`until` is the first release without it); a plain string is
//!   a folder every release has. `kustomizeComponents` entries take the same form;
//! - a variant new in some release says so in `variantsSince`;
//! - a component new in some release has `since` (and the `alternative` older releases have);
//!   one upstream dropped has `until` and `untilNote`, what became of it.
//!
//! [`Catalog::for_release`] gives the catalog as one release has it: plain folder lists, the
//! components it lacks kept in [`Catalog::absent`] so that naming one fails with the release
//! and what to use instead. A release the catalog has no entry for is taken as the newest
//! known one before it (an older tag, or a newer one, found by its version).

use super::CatalogError;
use crate::embedded;
use crate::source::version::ReleaseVersion;
use indexmap::IndexMap;
use kfctl_kustomize::kustomization::SortOptions;
use serde::Deserialize;

/// A component as one release has it (see `ComponentFile` for the catalog file's form).
#[derive(Debug, Clone)]
pub struct ComponentDef {
    pub(crate) name: String,
    /// One line saying what the component is.
    pub description: String,
    /// Variant name → upstream kustomization folders (relative to the manifests root). The
    /// first variant is the default.
    pub(crate) variants: IndexMap<String, Vec<String>>,
    /// kustomize Components to add at the top level when this component is enabled.
    pub(crate) kustomize_components: Vec<String>,
    /// Components it needs (dependencies must be in the selection too).
    pub dependencies: Vec<String>,
    /// Variant → components it stands in for (it brings their objects itself): with that
    /// variant, those components are left out and dependencies on them count as met.
    pub(crate) provides: IndexMap<String, Vec<String>>,
    pub(crate) namespaces: Vec<String>,
    /// Where its namespaced objects that name no namespace go, as upstream's README installs
    /// the folder (`kubectl apply -n kubeflow`): [`super::default_namespace`].
    pub(crate) default_namespace: Option<String>,
    /// Object names that mark this component in a pre-rendered stream (see
    /// [`super::attribute::attribute_prerendered`]).
    pub(crate) name_prefixes: Vec<String>,
    /// The first release that has this component (absent: every known release has it).
    pub(crate) since: Option<String>,
    /// What releases before `since` have instead, for the error that names it.
    pub(crate) alternative: Option<String>,
    /// The first release without this component, and what became of it.
    pub(crate) until: Option<String>,
    pub(crate) until_note: Option<String>,
    /// Patterns (`*` any characters) of an upstream `example/` entry (without `../`) that is
    /// this component in a tree the catalog's folders do not describe.
    pub(crate) entry_patterns: Vec<String>,
    /// Objects only this component renders (`Kind/name`, `CustomResourceDefinition/<name>`):
    /// what identifies its folder in a tree whose layout the catalog does not know
    /// ([`super::identify`]).
    pub(crate) marks: Vec<String>,
    /// The components it is made of in releases before `since` (see [`super::aliases`]).
    pub(crate) replaces: Vec<String>,
}

/// A folder of a variant (or a kustomize Component) and the releases that have it there.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum PathEntry {
    /// Every release has it.
    Always(String),
    /// `{path, since, until}`: from `since` (inclusive) to `until` (exclusive).
    Ranged {
        path: String,
        #[serde(default)]
        since: Option<String>,
        #[serde(default)]
        until: Option<String>,
    },
}

/// `charts/<name>/component.yaml` as written: every release's folders at once.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ComponentFile {
    pub name: String,
    pub description: String,
    #[serde(default)]
    #[allow(dead_code, reason = "catalog files declare it (`deny_unknown_fields`); nothing reads it")]
    pub optional: bool,
    pub variants: IndexMap<String, Vec<PathEntry>>,
    #[serde(default)]
    pub kustomize_components: Vec<PathEntry>,
    #[serde(default)]
    pub dependencies: Vec<String>,
    #[serde(default)]
    pub provides: IndexMap<String, Vec<String>>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Where its namespaced objects that name no namespace go.
    #[serde(default)]
    pub default_namespace: Option<String>,
    #[serde(default)]
    pub name_prefixes: Vec<String>,
    pub since: Option<String>,
    pub alternative: Option<String>,
    pub until: Option<String>,
    pub until_note: Option<String>,
    /// Variant → the first release that has it.
    #[serde(default)]
    pub variants_since: IndexMap<String, String>,
    #[serde(default)]
    pub entry_patterns: Vec<String>,
    #[serde(default)]
    pub marks: Vec<String>,
    /// The components it is made of before `since` (merged or renamed upstream).
    #[serde(default)]
    pub replaces: Vec<String>,
}

/// Whether `release` lies in `[since, until)`; every bound must be a release version.
fn in_range(release: &ReleaseVersion, since: Option<&str>, until: Option<&str>) -> Result<bool, CatalogError> {
    let after_since = match since {
        Some(s) => version_of(s, "since")? <= *release,
        None => true,
    };
    let before_until = match until {
        Some(u) => *release < version_of(u, "until")?,
        None => true,
    };
    Ok(after_since && before_until)
}

impl PathEntry {
    /// The folder, when `release` has it.
    fn at(&self, release: &ReleaseVersion) -> Result<Option<&str>, CatalogError> {
        Ok(match self {
            PathEntry::Always(path) => Some(path),
            PathEntry::Ranged { path, since, until } => {
                in_range(release, since.as_deref(), until.as_deref())?.then_some(path.as_str())
            }
        })
    }
}

/// The folders of `entries` that `release` has.
fn paths_at(entries: &[PathEntry], release: &ReleaseVersion) -> Result<Vec<String>, CatalogError> {
    let mut out = Vec::new();
    for entry in entries {
        out.extend(entry.at(release)?.map(str::to_string));
    }
    Ok(out)
}

impl ComponentFile {
    /// The component as `release` has it: its folders, and whether the release has it at all.
    pub(crate) fn at(&self, release: &ReleaseVersion) -> Result<(ComponentDef, bool), CatalogError> {
        let present = in_range(release, self.since.as_deref(), self.until.as_deref())?;
        let mut variants = IndexMap::new();
        for (variant, entries) in &self.variants {
            let since = self.variants_since.get(variant).map(String::as_str);
            let paths = paths_at(entries, release)?;
            if in_range(release, since, None)? && (!paths.is_empty() || !present) {
                variants.insert(variant.clone(), paths);
            }
        }
        let def = ComponentDef {
            name: self.name.clone(),
            description: self.description.clone(),
            variants,
            kustomize_components: paths_at(&self.kustomize_components, release)?,
            dependencies: self.dependencies.clone(),
            provides: self.provides.clone(),
            namespaces: self.namespaces.clone(),
            default_namespace: self.default_namespace.clone(),
            name_prefixes: self.name_prefixes.clone(),
            since: self.since.clone(),
            alternative: self.alternative.clone(),
            until: self.until.clone(),
            until_note: self.until_note.clone(),
            entry_patterns: self.entry_patterns.clone(),
            marks: self.marks.clone(),
            replaces: self.replaces.clone(),
        };
        Ok((def, present))
    }
}

/// A foundation of the install (`foundations:` in `charts/catalog.yaml`): set up, in catalog
/// order, before every other object.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Foundation {
    pub(crate) name: String,
    /// Components whose objects all belong to it.
    #[serde(default)]
    pub(crate) components: Vec<String>,
    /// Objects of another component that belong to it.
    #[serde(default)]
    pub(crate) parts: Vec<FoundationPart>,
    /// Namespaces whose objects belong to it, whichever component brings them.
    #[serde(default)]
    pub(crate) namespaces: Vec<String>,
    /// API groups it serves: their custom resources wait for it.
    #[serde(default)]
    pub(crate) api_groups: Vec<String>,
}

/// A kind whose controller makes a namespace named after each object of it (`namespaceMakers:`
/// in `charts/catalog.yaml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NamespaceMaker {
    pub(crate) api_group: String,
    pub(crate) kind: String,
    /// Who makes the namespace, for messages.
    pub(crate) controller: String,
}

/// The objects of `component` whose name starts with `name_prefix`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FoundationPart {
    pub(crate) component: String,
    pub(crate) name_prefix: String,
}

impl ComponentDef {
    pub(crate) fn default_variant(&self) -> &str {
        self.variants.keys().next().map(String::as_str).unwrap_or("default")
    }

    /// The upstream kustomization folders of `variant`; [`CatalogError::UnknownVariant`] when it
    /// has no such variant.
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
    #[serde(default)]
    provided: Vec<super::provided::Dependency>,
    #[serde(default)]
    namespace_makers: Vec<NamespaceMaker>,
}

/// All components, in catalog order.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Every component of the release, by name, in catalog order.
    pub components: IndexMap<String, ComponentDef>,
    /// The release whose layout this is (`None`: the newest, every component as written).
    pub(crate) release: Option<String>,
    /// Components the release lacks (see [`Catalog::for_release`]).
    pub(crate) absent: IndexMap<String, ComponentDef>,
    /// The install's foundations, in install order.
    pub(crate) foundations: Vec<Foundation>,
    /// Kinds whose controller makes a namespace per object (see [`NamespaceMaker`]).
    pub(crate) namespace_makers: Vec<NamespaceMaker>,
    /// Dependencies a cluster may provide itself (see [`super::provided`]).
    pub provided: Vec<super::provided::Dependency>,
    pub(crate) sort_options: SortOptions,
    /// Names that select other components in this release (merged or renamed upstream, see
    /// [`super::aliases`]).
    pub(crate) aliases: super::aliases::Aliases,
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
    /// The catalog compiled into the binary, as the newest known release has it.
    pub fn embedded() -> Result<Catalog, CatalogError> {
        Catalog::for_release(crate::source::releases::newest().version)
    }

    /// The embedded catalog as release `version` has it (see the module docs).
    pub fn for_release(version: &str) -> Result<Catalog, CatalogError> {
        let release = version_of(version, "release")?;
        let index_path = "charts/catalog.yaml";
        let index: CatalogFile = parse(index_path, embedded::file(index_path).unwrap_or_default())?;
        let (mut components, mut absent) = (IndexMap::new(), IndexMap::new());
        for name in &index.order {
            let path = format!("charts/{name}/component.yaml");
            let text = embedded::file(&path)
                .ok_or_else(|| CatalogError::Data { path: path.clone(), message: "missing".into() })?;
            let file: ComponentFile = parse(&path, text)?;
            if &file.name != name {
                return Err(CatalogError::Data {
                    path,
                    message: format!("name `{}` does not match its folder", file.name),
                });
            }
            match file.at(&release)? {
                (def, true) => components.insert(name.clone(), def),
                (def, false) => absent.insert(name.clone(), def),
            };
        }
        if let Some(r) = index.pod_scopes.runtimes.iter().find(|r| !index.order.contains(&r.component)) {
            let message = format!("podScopes.runtimes: component `{}` is not in `order`", r.component);
            return Err(CatalogError::Data { path: index_path.into(), message });
        }
        let known: Vec<&str> = index.order.iter().map(String::as_str).collect();
        super::provided::check_table(&index.provided, &known, index_path)?;
        let aliases = super::aliases::derive(&mut components, &absent);
        Ok(Catalog {
            aliases,
            components,
            release: Some(version.to_string()),
            absent,
            foundations: index.foundations,
            namespace_makers: index.namespace_makers,
            provided: index.provided,
            sort_options: index.sort_options,
        })
    }

    /// The catalog of the known release whose layout `manifests_dir` is closest to: the one
    /// whose folders (every component's default variant) the tree has the most of, the newest
    /// on a tie. For a tree that is no pinned release: a newer upstream commit is read with the
    /// newest catalog, an older tag or a fork of one with its own release's.
    pub(crate) fn closest_to(manifests_dir: &std::path::Path) -> Result<Catalog, CatalogError> {
        let mut best: Option<(usize, Catalog)> = None;
        for release in crate::source::releases::newest_first(crate::source::releases::known()) {
            let catalog = Catalog::for_release(release.version)?;
            let present = catalog
                .components
                .values()
                .flat_map(|d| d.paths(d.default_variant()).map(<[String]>::to_vec).unwrap_or_default())
                .filter(|p| manifests_dir.join(p).is_dir())
                .count();
            if best.as_ref().is_none_or(|(most, _)| present > *most) {
                best = Some((present, catalog));
            }
        }
        best.map(|(_, c)| c)
            .ok_or_else(|| CatalogError::Data { path: "charts/releases.yaml".into(), message: "no release".into() })
    }

    /// The component named `name`; [`CatalogError::NotInRelease`] or
    /// [`CatalogError::UnknownComponent`] when the release has no such component.
    pub fn get(&self, name: &str) -> Result<&ComponentDef, CatalogError> {
        if let (Some(def), Some(release)) = (self.absent.get(name), &self.release) {
            let why = match self.aliases.get(name) {
                Some(targets) => format!(
                    "{}; in profiles, values files and --components `{name}` selects `{}` there",
                    def.absence(),
                    targets.join("`, `")
                ),
                None => def.absence(),
            };
            return Err(CatalogError::NotInRelease { release: release.clone(), component: name.to_string(), why });
        }
        self.components.get(name).ok_or_else(|| CatalogError::UnknownComponent {
            name: name.to_string(),
            hint: super::schema::suggestion(name, self.components.keys().map(String::as_str))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default(),
        })
    }
}

impl ComponentDef {
    /// Why a release lacks this component, for [`CatalogError::NotInRelease`].
    fn absence(&self) -> String {
        let name = &self.name;
        match (&self.until, &self.since) {
            (Some(until), _) => format!(
                "removed in {until}{}; leave it out (--set {name}.enabled=false)",
                self.until_note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
            ),
            (None, since) => format!(
                "new in {}{}",
                since.as_deref().unwrap_or("a later release"),
                self.alternative
                    .as_ref()
                    .map(|a| format!("; {a} exists (--set {name}.enabled=false --set {a}.enabled=true)"))
                    .unwrap_or_default()
            ),
        }
    }
}

fn version_of(version: &str, what: &str) -> Result<ReleaseVersion, CatalogError> {
    ReleaseVersion::parse(version).ok_or_else(|| CatalogError::Data {
        path: "charts/".into(),
        message: format!("{what} `{version}`: not a release version (v1.11.0, 26.03)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_catalog_loads_and_every_dependency_exists() {
        let catalog = Catalog::embedded().expect("catalog loads");
        assert!(catalog.components.len() >= 24, "{} components", catalog.components.len());
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
        let mut folders: Vec<&str> = crate::embedded::files_under("charts/")
            .filter_map(|(p, _)| p.strip_suffix("/component.yaml")?.strip_prefix("charts/"))
            .collect();
        folders.sort();
        let mut listed: Vec<&str> =
            catalog.components.keys().chain(catalog.absent.keys()).map(String::as_str).collect();
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
        let v1_11 = Catalog::for_release("v1.11.0").unwrap();
        assert!(v1_11.get("trainer").is_ok());
        let absent: Vec<&str> = v1_11.absent.keys().map(String::as_str).collect();
        assert_eq!(absent, ["dashboard", "notebooks-v1", "hub", "workspaces"], "only what 26.03.1 added");
        assert_eq!(v1_11.get("profiles").unwrap().kustomize_components.len(), 1);
    }

    #[test]
    fn folders_that_moved_in_26_03_are_one_entry_each_side_of_the_move() {
        let old = Catalog::for_release("v1.11.0").unwrap();
        let new = Catalog::for_release("26.03").unwrap();
        assert_eq!(
            old.get("cert-manager").unwrap().paths("default").unwrap(),
            ["common/cert-manager/base", "common/cert-manager/kubeflow-issuer/base"]
        );
        assert_eq!(
            new.get("cert-manager").unwrap().paths("default").unwrap(),
            ["common/cert-manager/overlays/kubeflow"]
        );
        assert_eq!(new.get("pipelines").unwrap().paths("multi-user").unwrap(), ["applications/pipeline/overlays"]);
        assert!(new.get("profiles").unwrap().kustomize_components.is_empty());
        let gone = new.get("networkpolicies").unwrap_err().to_string();
        assert!(gone.starts_with("release 26.03: component `networkpolicies` is removed in 26.03"), "{gone}");
        assert!(gone.contains("--set networkpolicies.enabled=false"), "{gone}");
        assert_eq!(
            Catalog::embedded().unwrap().release.as_deref(),
            Some("26.03.1"),
            "the newest release is the default"
        );
    }

    #[test]
    fn unknown_component_suggests_the_closest_name() {
        let catalog = Catalog::embedded().unwrap();
        let e = catalog.get("katbi").unwrap_err().to_string();
        assert!(e.contains("did you mean `katib`"), "{e}");
    }
}
