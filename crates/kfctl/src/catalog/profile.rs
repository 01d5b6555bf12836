//! Profiles: which components to run, with which variants.
//!
//! A profile is a small YAML file (`profiles/*.yaml` built in, or the user's own) naming
//! components and variants, optionally extending another profile, and optionally carrying
//! default values. Its render is exactly `kustomize build` of the kustomization
//! [`Resolved::kustomization`] generates: the enabled components' upstream folders, in
//! catalog order, plus their kustomize Components and the catalog's output order.
//!
//! A profile may differ per release: `releases:` maps a version requirement (`<1.11.0`,
//! `>=26.03`; either scheme, see `crate::source::version::requirement`) to
//! component choices laid over the profile's own when the catalog's release matches
//! (multi-tenant on v1.10 has the Training Operator where v1.11.0 has Trainer). A profile with
//! `example: true` *is* upstream's `example/`: on a tree that is no pinned release it renders
//! as that tree's own `example/kustomization.yaml`.

use super::CatalogError;
use super::changes::{OwnChanges, RawChanges};
use super::component::Catalog;
use crate::embedded;
use crate::source::version::{self, ReleaseVersion};
use indexmap::IndexMap;
use kfctl_kustomize::kustomization::Kustomization;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Choice {
    pub variant: Option<String>,
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub extends: Option<String>,
    /// `kind` for a local Kind cluster, `cluster` otherwise.
    pub kubernetes: Option<String>,
    /// Install may keep upstream's default credentials (`kind`: a local cluster).
    #[serde(rename = "allowDefaultCredentials")]
    pub allow_default_credentials: Option<bool>,
    #[serde(default)]
    pub components: IndexMap<String, Choice>,
    #[serde(default)]
    pub values: Value,
    /// Semver requirement on the release → choices laid over `components`.
    #[serde(default)]
    pub releases: IndexMap<String, ReleaseChoices>,
    /// The profile is upstream's `example/` (not inherited through `extends`).
    #[serde(default)]
    pub example: bool,
    /// kustomize `resources` (relative to the profile file), see [`super::changes`].
    #[serde(default)]
    pub resources: Vec<Value>,
    /// kustomize `patches` (strategic merge or JSON 6902, with targets).
    #[serde(default)]
    pub patches: Vec<Value>,
    /// kustomize `images`.
    #[serde(default)]
    pub images: Vec<Value>,
    /// kustomize `replacements` (inline).
    #[serde(default)]
    pub replacements: Vec<Value>,
    /// The four keys above checked and resolved, with those of the profiles it extends.
    #[serde(skip)]
    pub changes: OwnChanges,
}

/// A profile's component choices for the releases a requirement matches.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReleaseChoices {
    #[serde(default)]
    pub components: IndexMap<String, Choice>,
}

/// A profile with `extends` applied and every choice checked against the catalog.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The profile's name.
    pub name: String,
    /// One line saying what the profile is for.
    pub description: String,
    /// The cluster kind it targets: `kind` for a local Kind cluster, `cluster` otherwise (the
    /// default).
    pub kubernetes: String,
    /// Install may keep upstream's default credentials (inherited through `extends`).
    pub allow_default_credentials: bool,
    /// Enabled components and their variants, in catalog order.
    pub components: Vec<(String, String)>,
    /// The profile's values (inherited ones under its own).
    pub values: Value,
    /// The profile is upstream's `example/` (see the module docs).
    pub example: bool,
    /// What the render should say once (an unknown upstream's unattributed entries).
    pub warnings: Vec<String>,
    /// The profile's own kustomize changes, applied at its kustomization (`super::changes`).
    pub changes: OwnChanges,
}

/// Names of the built-in profiles.
pub fn builtin_names() -> Vec<&'static str> {
    embedded::files_under("profiles/").filter_map(|(p, _)| p.strip_prefix("profiles/")?.strip_suffix(".yaml")).collect()
}

fn load_file(name_or_path: &str, release: Option<&str>) -> Result<ProfileFile, CatalogError> {
    let (origin, text, dir) = if let Some(text) = embedded::file(&format!("profiles/{name_or_path}.yaml")) {
        (format!("profile {name_or_path}"), text.to_string(), None)
    } else if name_or_path.contains('/') || name_or_path.ends_with(".yaml") || Path::new(name_or_path).is_file() {
        let text = crate::input::read_bounded(Path::new(name_or_path), "profile file", crate::input::MAX_INPUT_BYTES)?;
        let dir = Path::new(name_or_path).parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
        (name_or_path.to_string(), text, dir.map(Path::to_path_buf))
    } else {
        return Err(CatalogError::UnknownProfile { name: name_or_path.into(), known: builtin_names().join(", ") });
    };
    // a file the user names is the user's input (exit 2); a built-in profile is catalog data
    let builtin = dir.is_none() && embedded::file(&format!("profiles/{name_or_path}.yaml")).is_some();
    let bad = |message: String| match builtin {
        true => CatalogError::Data { path: origin.clone(), message },
        false => CatalogError::ProfileFile { path: origin.clone(), message },
    };
    let doc = kfctl_yaml::parse_stream(&text, &origin)
        .map_err(|e| bad(e.to_string()))?
        .into_iter()
        .next()
        .unwrap_or_default();
    let mut file: ProfileFile = serde_json::from_value(doc).map_err(|e| bad(e.to_string()))?;
    if let Some(release) = release {
        apply_release_choices(&mut file, release, &origin).map_err(|e| match e {
            CatalogError::Data { message, .. } => bad(message),
            other => other,
        })?;
    }
    let raw = RawChanges {
        resources: std::mem::take(&mut file.resources),
        patches: std::mem::take(&mut file.patches),
        images: std::mem::take(&mut file.images),
        replacements: std::mem::take(&mut file.replacements),
    };
    file.changes = OwnChanges::read(&raw, &origin, dir.as_deref())?;
    Ok(file)
}

/// Lay the `releases:` choices whose requirement `release` meets over the profile's own.
fn apply_release_choices(file: &mut ProfileFile, release: &str, origin: &str) -> Result<(), CatalogError> {
    let bad =
        |message: String| CatalogError::Data { path: origin.to_string(), message: format!("releases: {message}") };
    let version = ReleaseVersion::parse(release)
        .ok_or_else(|| bad(format!("`{release}` is not a release version (v1.11.0, 26.03)")))?
        .semver();
    for (requirement, choices) in &file.releases {
        let req = version::requirement(requirement).map_err(bad)?;
        if req.matches(&version) {
            for (name, choice) in &choices.components {
                file.components.insert(name.clone(), choice.clone());
            }
        }
    }
    Ok(())
}

/// Load a built-in profile by name, or a profile file by path, and resolve it.
pub fn resolve(name_or_path: &str, catalog: &Catalog) -> Result<Resolved, CatalogError> {
    let mut chain = Vec::new();
    let mut merged = load_chain(name_or_path, catalog.release.as_deref(), &mut chain)?;
    let mut warnings = Vec::new();
    merged.components = catalog.rename_choices(&merged.components, &mut warnings)?;
    let mut components = Vec::new();
    for (name, def) in &catalog.components {
        if let Some(choice) = merged.components.get(name).filter(|c| c.enabled != Some(false)) {
            let variant = choice.variant.clone().unwrap_or_else(|| def.default_variant().to_string());
            def.paths(&variant)?;
            components.push((name.clone(), variant));
        }
    }
    for (name, choice) in &merged.components {
        // A component upstream dropped (`until`) leaves the profiles that list it; one a
        // release does not have yet is an error naming what it has instead.
        let absent = catalog.absent.get(name);
        let disabled_but_known = choice.enabled == Some(false) && absent.is_some();
        let dropped_upstream = absent.is_some_and(|d| d.until.is_some());
        if !disabled_but_known && !dropped_upstream {
            catalog.get(name)?;
        }
    }
    let mut resolved = Resolved {
        name: merged.name,
        description: merged.description,
        kubernetes: merged.kubernetes.unwrap_or_else(|| "cluster".into()),
        allow_default_credentials: merged.allow_default_credentials.unwrap_or(false),
        components,
        values: merged.values,
        example: merged.example,
        warnings,
        changes: merged.changes,
    };
    resolved.apply_provides(catalog);
    Ok(resolved)
}

fn load_chain(name_or_path: &str, release: Option<&str>, chain: &mut Vec<String>) -> Result<ProfileFile, CatalogError> {
    if chain.iter().any(|c| c == name_or_path) {
        return Err(CatalogError::Data {
            path: name_or_path.into(),
            message: format!("profiles extend each other in a cycle: {}", chain.join(" -> ")),
        });
    }
    chain.push(name_or_path.to_string());
    let file = load_file(name_or_path, release)?;
    let Some(parent) = file.extends.clone() else { return Ok(file) };
    let mut base = load_chain(&parent, release, chain)?;
    for (name, choice) in file.components {
        let slot = base.components.entry(name).or_default();
        if choice.variant.is_some() {
            slot.variant = choice.variant;
        }
        if choice.enabled.is_some() {
            slot.enabled = choice.enabled;
        }
    }
    super::values::merge(&mut base.values, &file.values);
    base.changes.extend(file.changes);
    Ok(ProfileFile {
        name: file.name,
        description: file.description,
        extends: file.extends,
        kubernetes: file.kubernetes.or(base.kubernetes),
        allow_default_credentials: file.allow_default_credentials.or(base.allow_default_credentials),
        components: base.components,
        values: base.values,
        releases: IndexMap::new(),
        example: file.example,
        resources: Vec::new(),
        patches: Vec::new(),
        images: Vec::new(),
        replacements: Vec::new(),
        changes: base.changes,
    })
}

impl Resolved {
    /// Keep only the named components (`--components a,b`), checking the names.
    pub(crate) fn restrict_to(&mut self, names: &[String], catalog: &Catalog) -> Result<(), CatalogError> {
        let names = &catalog.rename_list(names, &mut self.warnings);
        for n in names {
            catalog.get(n)?;
            if !self.components.iter().any(|(c, _)| c == n) {
                return Err(CatalogError::NotInProfile { component: n.clone(), profile: self.name.clone() });
            }
        }
        self.components.retain(|(c, _)| names.contains(c));
        Ok(())
    }

    /// Drop components whose `<name>.enabled` value is false.
    pub(crate) fn apply_enabled(&mut self, values: &Value) {
        self.components
            .retain(|(c, _)| values.get(c).and_then(|v| v.get("enabled")).and_then(Value::as_bool) != Some(false));
    }

    /// Components an enabled variant stands in for (see `provides` in component.yaml).
    pub(crate) fn provided(&self, catalog: &Catalog) -> Vec<String> {
        self.components.iter().filter_map(|(c, v)| catalog.get(c).ok()?.provides.get(v).cloned()).flatten().collect()
    }

    /// Leave out the components an enabled variant stands in for.
    pub(crate) fn apply_provides(&mut self, catalog: &Catalog) {
        let provided = self.provided(catalog);
        self.components.retain(|(c, _)| !provided.contains(c));
    }

    /// Every enabled component's dependencies must be enabled, provided by a variant, or
    /// provided by the cluster (`cluster_provided`: components whose `<name>.provided` is
    /// true). `restricted`: the components were named with `--components`, which the hint
    /// then speaks of.
    pub fn check_dependencies(
        &self,
        catalog: &Catalog,
        cluster_provided: &[String],
        restricted: bool,
    ) -> Result<(), CatalogError> {
        let provided = self.provided(catalog);
        for (name, _) in &self.components {
            let missing: Vec<String> = catalog
                .get(name)?
                .dependencies
                .iter()
                .filter(|d| !self.components.iter().any(|(c, _)| c == *d) && !provided.contains(d))
                .filter(|d| !cluster_provided.contains(d))
                .cloned()
                .collect();
            if !missing.is_empty() {
                let absent = |d: &str| {
                    !self.components.iter().any(|(c, _)| c == d)
                        && !provided.iter().any(|p| p == d)
                        && !cluster_provided.iter().any(|p| p == d)
                };
                let hint = ways_out(name, &missing, catalog, &absent, restricted);
                return Err(CatalogError::MissingDependency {
                    component: name.clone(),
                    missing: missing.join(", "),
                    hint,
                });
            }
        }
        Ok(())
    }

    /// The kustomization whose `kustomize build` is this profile's default render, meant to
    /// sit in a folder directly under the manifests root (as upstream's `example/` does).
    pub fn kustomization(&self, catalog: &Catalog) -> Result<Kustomization, CatalogError> {
        let mut k = Kustomization {
            api_version: Some("kustomize.config.k8s.io/v1beta1".into()),
            kind: Some("Kustomization".into()),
            sort_options: Some(catalog.sort_options.clone()),
            ..Kustomization::default()
        };
        for (name, variant) in &self.components {
            let def = catalog.get(name)?;
            k.resources.extend(def.paths(variant)?.iter().map(|p| format!("../{p}")));
            k.components.extend(def.kustomize_components.iter().map(|p| format!("../{p}")));
        }
        self.changes.apply_to(&mut k);
        Ok(k)
    }

    /// Which component an object came from, by the `resources:` entry that produced it.
    pub(crate) fn component_of_entry(&self, entry: &str, catalog: &Catalog) -> Option<String> {
        let path = entry.strip_prefix("../")?;
        self.components
            .iter()
            .find(|(name, variant)| {
                catalog
                    .get(name)
                    .ok()
                    .and_then(|d| d.paths(variant).ok())
                    .is_some_and(|ps| ps.iter().any(|p| p == path))
            })
            .map(|(name, _)| name.clone())
    }
}

/// The ways out of a missing dependency, each a set of flags that works when pasted: install
/// the missing components with what they need in turn (`absent` says what the profile lacks),
/// or (where the catalog says the cluster may run one) use the cluster's own, or leave the
/// component out.
fn ways_out(
    component: &str,
    missing: &[String],
    catalog: &Catalog,
    absent: &dyn Fn(&str) -> bool,
    restricted: bool,
) -> String {
    let can_provide = |m: &str| super::provided::dependency_of(m, &catalog.provided).is_some();
    let flags = |provided: bool| -> String {
        let (own, install): (Vec<String>, Vec<String>) =
            missing.iter().cloned().partition(|m| provided && can_provide(m));
        let install = needed_closure(&install, catalog, absent);
        let own = own.iter().map(|m| format!("--set {m}.provided=true")).collect::<Vec<_>>().join(" ");
        match (restricted, install.is_empty()) {
            (true, false) if own.is_empty() => format!("add {} to --components", install.join(",")),
            (true, false) => format!("add {} to --components and pass {own}", install.join(",")),
            (false, false) if own.is_empty() => enable_flags(&install),
            (false, false) => format!("{} {own}", enable_flags(&install)),
            (_, true) => own,
        }
    };
    let it = if missing.len() == 1 { "it" } else { "them" };
    let mut ways = vec![format!("install {it} ({})", flags(false))];
    if missing.iter().any(|m| super::provided::dependency_of(m, &catalog.provided).is_some()) {
        ways.push(format!("use the cluster's own if it runs {it} ({})", flags(true)));
    }
    ways.push(match restricted {
        true => format!("leave `{component}` out (drop it from --components)"),
        false => format!("leave `{component}` out (--set {component}.enabled=false)"),
    });
    ways.join(", or ")
}

fn enable_flags(components: &[String]) -> String {
    components.iter().map(|c| format!("--set {c}.enabled=true")).collect::<Vec<_>>().join(" ")
}

/// `start` and, in turn, every dependency of theirs the profile lacks: what enabling `start`
/// takes, in the order found.
fn needed_closure(start: &[String], catalog: &Catalog, absent: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = start.to_vec();
    let mut i = 0;
    while i < out.len() {
        let deps = catalog.get(&out[i]).map(|d| d.dependencies.clone()).unwrap_or_default();
        for dep in deps {
            if absent(&dep) && !out.contains(&dep) {
                out.push(dep);
            }
        }
        i += 1;
    }
    out
}

/// The kustomization as YAML text, for `kfctl-rs profile kustomization`. A profile's
/// `resources` files are absolute paths outside its folder: a comment says how to build it.
pub fn kustomization_yaml(k: &Kustomization) -> String {
    let outside = k.resources.iter().any(|r| Path::new(r).is_absolute() && Path::new(r).is_file());
    let note = match outside {
        true => {
            "# The profile's `resources` name files outside this folder: build with\n# kustomize build --load-restrictor LoadRestrictionsNone\n"
        }
        false => "",
    };
    format!("{note}{}", kustomization_doc(k))
}

fn kustomization_doc(k: &Kustomization) -> String {
    let mut doc = serde_json::json!({
        "apiVersion": k.api_version,
        "kind": k.kind,
        "resources": k.resources,
    });
    if !k.components.is_empty() {
        doc["components"] = serde_json::json!(k.components);
    }
    let to_value = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
    if !k.patches.is_empty() {
        doc["patches"] = to_value(serde_json::to_value(&k.patches));
    }
    if !k.images.is_empty() {
        doc["images"] = to_value(serde_json::to_value(&k.images));
    }
    if !k.replacements.is_empty() {
        doc["replacements"] = to_value(serde_json::to_value(&k.replacements));
    }
    if let Some(sort) = &k.sort_options {
        let legacy = sort.legacy_sort_options.as_ref();
        doc["sortOptions"] = serde_json::json!({
            "order": sort.order,
            "legacySortOptions": {
                "orderFirst": legacy.map(|l| l.order_first.clone()).unwrap_or_default(),
                "orderLast": legacy.map(|l| l.order_last.clone()).unwrap_or_default(),
            }
        });
    }
    kfctl_yaml::to_yaml(&doc)
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
