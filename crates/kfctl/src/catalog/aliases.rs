//! Component names across merges and renames.
//!
//! Upstream merges components (26.03.1: Central Dashboard, Profiles and the admission webhook
//! became one folder, `applications/dashboard`) and renames them (Model Registry became `hub`).
//! The component that absorbed others says so once, in its `component.yaml`:
//! `replaces: [centraldashboard, profiles, admission-webhook]`. From that one fact, per release:
//!
//! - from the merge on, each old name is an **alias** of the new component: a profile or a
//!   values file that names `centraldashboard` selects `dashboard`, and the render says so once;
//! - before the merge, the new name is an alias of the old parts: a profile written for the
//!   new release (`dashboard: {}`) selects all three on an older one;
//! - the new component's dependencies, marks and entry patterns include those of what it
//!   replaces (so a tree is read the same whichever layout it has), and a dependency written
//!   with an old name means the new component.
//!
//! A component newer than a release that names an `alternative` the release has is an alias of
//! it there (a profile with Trainer v2 on v1.10.x gets the Training Operator, saying so).
//!
//! A merged folder cannot be built in parts: leaving out one part while another part keeps the
//! component fails ([`CatalogError::MergedPart`]), naming the folder and what else it holds.

use super::CatalogError;
use super::component::{Catalog, ComponentDef};
use super::profile::Choice;
use indexmap::IndexMap;
use serde_json::Value;

/// Old name → what it selects in this release (one merged component, or the parts of one that
/// the release does not have yet).
pub(crate) type Aliases = IndexMap<String, Vec<String>>;

/// The aliases of a release, from the `replaces` lists of its components (present or absent),
/// and the merged components completed: their dependencies and marks include the replaced
/// components', dependencies written with an old name resolved to the new one.
pub(crate) fn derive(
    components: &mut IndexMap<String, ComponentDef>,
    absent: &IndexMap<String, ComponentDef>,
) -> Aliases {
    let mut aliases = Aliases::new();
    for def in components.values() {
        for old in def.replaces.iter().filter(|o| absent.contains_key(*o)) {
            aliases.insert(old.clone(), vec![def.name.clone()]);
        }
    }
    for def in absent.values() {
        let parts: Vec<String> = def.replaces.iter().filter(|o| components.contains_key(*o)).cloned().collect();
        if !parts.is_empty() {
            aliases.insert(def.name.clone(), parts);
        }
    }
    // A component newer than the release with an `alternative` the release has (Trainer v2 on
    // v1.10.x: the Training Operator) selects the alternative there.
    for def in absent.values().filter(|d| d.until.is_none() && d.replaces.is_empty()) {
        if let Some(alternative) = def.alternative.as_ref().filter(|a| components.contains_key(*a)) {
            aliases.insert(def.name.clone(), vec![alternative.clone()]);
        }
    }
    let merged: Vec<String> = components.values().filter(|d| !d.replaces.is_empty()).map(|d| d.name.clone()).collect();
    for name in merged {
        let replaced: Vec<ComponentDef> =
            components[&name].replaces.iter().filter_map(|o| absent.get(o)).cloned().collect();
        let def = &mut components[&name];
        for old in &replaced {
            def.dependencies.extend(old.dependencies.iter().cloned());
            def.marks.extend(old.marks.iter().cloned());
            def.entry_patterns.extend(old.entry_patterns.iter().cloned());
        }
    }
    for def in components.values_mut() {
        let own = def.name.clone();
        let resolved: Vec<String> = def
            .dependencies
            .iter()
            .flat_map(|d| aliases.get(d).cloned().unwrap_or_else(|| vec![d.clone()]))
            .filter(|d| *d != own)
            .collect();
        def.dependencies.clear();
        for dep in resolved {
            if !def.dependencies.contains(&dep) {
                def.dependencies.push(dep);
            }
        }
    }
    aliases
}

impl Catalog {
    /// What `name` selects in this release: its alias targets, or itself.
    pub fn resolve_name(&self, name: &str) -> Vec<String> {
        self.aliases.get(name).cloned().unwrap_or_else(|| vec![name.to_string()])
    }

    /// The note an alias gets, once per render.
    fn alias_note(&self, old: &str, targets: &[String]) -> String {
        let release = self.release.as_deref().unwrap_or("this release");
        let newer = self.absent.get(old).filter(|d| d.until.is_none() && d.replaces.is_empty());
        if let (Some(def), [alternative]) = (newer, targets) {
            let since = def.since.as_deref().unwrap_or("a later release");
            return format!(
                "component `{old}` is new in {since}; release {release} has `{alternative}` instead: `{old}` selects `{alternative}`"
            );
        }
        match targets {
            [one] => format!("component `{old}` is part of `{one}` in release {release}: `{old}` selects `{one}`"),
            many => format!("component `{old}` is {} in release {release}: `{old}` selects them", list(many)),
        }
    }

    /// Profile choices with every alias replaced by what it selects (notes in `notes`). An
    /// alias's variant carries over only where the target has that variant.
    pub(crate) fn rename_choices(
        &self,
        choices: &IndexMap<String, Choice>,
        notes: &mut Vec<String>,
    ) -> Result<IndexMap<String, Choice>, CatalogError> {
        let mut own: IndexMap<String, Choice> = IndexMap::new();
        let mut via: IndexMap<String, Vec<(String, Option<bool>)>> = IndexMap::new();
        for (name, choice) in choices {
            let Some(targets) = self.aliases.get(name) else {
                own.insert(name.clone(), choice.clone());
                continue;
            };
            for target in targets {
                via.entry(target.clone()).or_default().push((name.clone(), choice.enabled));
                let variant = choice.variant.clone().filter(|v| self.has_variant(target, v));
                let slot = own.entry(target.clone()).or_default();
                slot.variant = slot.variant.clone().or(variant);
            }
        }
        for (target, parts) in &via {
            // the target named itself decides (named without `enabled`: enabled)
            let explicit = choices.get(target).map(|c| c.enabled.unwrap_or(true));
            let enabled = self.merged_enabled(target, explicit, parts)?;
            own.entry(target.clone()).or_default().enabled = enabled;
        }
        notes.extend(self.notes_for(choices.keys()));
        Ok(own)
    }

    /// Values with every top-level alias key moved to what it selects: `enabled` and
    /// `provided` to each target, every other key to a single target (a key of a component
    /// split in parts names which part it is for).
    pub(crate) fn rename_values(&self, user: &mut Value, notes: &mut Vec<String>) -> Result<(), CatalogError> {
        let Some(map) = user.as_object_mut() else { return Ok(()) };
        let aliased: Vec<String> = map.keys().filter(|k| self.aliases.contains_key(*k)).cloned().collect();
        if aliased.is_empty() {
            return Ok(());
        }
        let mut via: IndexMap<String, Vec<(String, Option<bool>)>> = IndexMap::new();
        for old in &aliased {
            let Some(Value::Object(settings)) = map.remove(old) else { continue };
            let targets = &self.aliases[old];
            for (key, value) in settings {
                if key == "enabled" {
                    for target in targets {
                        via.entry(target.clone()).or_default().push((old.clone(), value.as_bool()));
                    }
                    continue;
                }
                let [target] = targets.as_slice() else {
                    return Err(CatalogError::Data {
                        path: "values".into(),
                        message: format!(
                            "`{old}.{key}`: `{old}` is {} in this release; set `{key}` under the part it is for",
                            list(targets)
                        ),
                    });
                };
                let slot = map.entry(target.clone()).or_insert_with(|| Value::Object(Default::default()));
                if let Some(slot) = slot.as_object_mut() {
                    slot.entry(key).or_insert(value);
                }
            }
        }
        for (target, parts) in &via {
            let explicit = map.get(target).and_then(|v| v.get("enabled")).and_then(Value::as_bool);
            if let Some(enabled) = self.merged_enabled(target, explicit, parts)? {
                let slot = map.entry(target.clone()).or_insert_with(|| Value::Object(Default::default()));
                if let Some(slot) = slot.as_object_mut() {
                    slot.insert("enabled".into(), Value::Bool(enabled));
                }
            }
        }
        notes.extend(self.notes_for(aliased.iter()));
        Ok(())
    }

    /// `--components` names with every alias replaced by what it selects.
    pub(crate) fn rename_list(&self, names: &[String], notes: &mut Vec<String>) -> Vec<String> {
        let mut out = Vec::new();
        for name in names {
            for target in self.resolve_name(name) {
                if !out.contains(&target) {
                    out.push(target);
                }
            }
        }
        notes.extend(self.notes_for(names.iter()));
        out
    }

    /// Notes for the old names among `names`, and for newer components an older release has
    /// an alternative for (a merged component's name on an older release selects its parts
    /// without a word: that is what it means there).
    fn notes_for<'a>(&self, names: impl Iterator<Item = &'a String>) -> Vec<String> {
        let old = |n: &String| self.absent.get(n).is_some_and(|d| d.until.is_some() || d.replaces.is_empty());
        names.filter(|n| old(n)).filter_map(|n| Some(self.alias_note(n, self.aliases.get(n)?))).collect()
    }

    fn has_variant(&self, component: &str, variant: &str) -> bool {
        self.components.get(component).is_some_and(|d| d.variants.contains_key(variant))
    }

    /// Whether a merged component is enabled, given its own choice and its parts' (old names):
    /// its own choice decides; else it is left out only when every part it replaces is. One
    /// part left out alone is a merged folder asked to be built in part: an error.
    fn merged_enabled(
        &self,
        target: &str,
        explicit: Option<bool>,
        parts: &[(String, Option<bool>)],
    ) -> Result<Option<bool>, CatalogError> {
        if explicit.is_some() {
            return Ok(explicit);
        }
        let Some(off) = parts.iter().find(|(_, e)| *e == Some(false)) else {
            return Ok(parts.iter().find_map(|(_, e)| *e));
        };
        let replaces = self.components.get(target).map(|d| d.replaces.as_slice()).unwrap_or_default();
        let is_off = |name: &String| parts.iter().any(|(n, e)| n == name && *e == Some(false));
        let any_on = parts.iter().any(|(_, e)| *e != Some(false));
        let all_off = replaces.is_empty() || replaces.iter().all(is_off);
        match !any_on && all_off {
            true => Ok(Some(false)),
            false => Err(self.merged_part(&off.0, target)),
        }
    }

    /// The error for leaving out `part`, which this release builds inside `target`.
    pub(crate) fn merged_part(&self, part: &str, target: &str) -> CatalogError {
        let folders = self
            .components
            .get(target)
            .and_then(|d| d.paths(d.default_variant()).ok().map(|p| p.join(", ")))
            .unwrap_or_default();
        let with: Vec<String> = self
            .components
            .get(target)
            .map(|d| d.replaces.iter().filter(|r| *r != part).cloned().collect())
            .unwrap_or_default();
        CatalogError::MergedPart {
            release: self.release.clone().unwrap_or_default(),
            part: part.to_string(),
            component: target.to_string(),
            folders,
            with: list(&with),
        }
    }
}

fn list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn old_names_select_the_merged_component_and_new_names_select_the_parts_before() {
        let new = Catalog::for_release("26.03.1").unwrap();
        assert_eq!(new.resolve_name("centraldashboard"), ["dashboard"]);
        assert_eq!(new.resolve_name("pvcviewer-controller"), ["notebooks-v1"]);
        assert_eq!(new.resolve_name("model-registry"), ["hub"]);
        assert_eq!(new.resolve_name("katib"), ["katib"]);
        let old = Catalog::for_release("26.03").unwrap();
        assert_eq!(old.resolve_name("dashboard"), ["centraldashboard", "profiles", "admission-webhook"]);
        assert_eq!(old.resolve_name("hub"), ["model-registry"]);
        assert!(old.get("workspaces").is_err(), "workspaces is new in 26.03.1 and replaces nothing");
    }

    #[test]
    fn a_merged_component_takes_the_dependencies_and_marks_of_its_parts() {
        let catalog = Catalog::for_release("26.03.1").unwrap();
        let dashboard = catalog.get("dashboard").unwrap();
        for dep in ["cert-manager", "istio", "kubeflow-namespace"] {
            assert!(dashboard.dependencies.iter().any(|d| d == dep), "{:?}", dashboard.dependencies);
        }
        assert!(dashboard.marks.iter().any(|m| m == "Deployment/profiles-deployment"));
        assert_eq!(catalog.get("user-namespace").unwrap().dependencies, ["dashboard"], "profiles means dashboard");
    }

    #[test]
    fn a_part_left_out_alone_is_refused_naming_the_folder_and_the_rest() {
        let catalog = Catalog::for_release("26.03.1").unwrap();
        let mut notes = Vec::new();
        let mut user = json!({"pvcviewer-controller": {"enabled": false}});
        let e = catalog.rename_values(&mut user, &mut notes).unwrap_err().to_string();
        assert!(e.contains("`pvcviewer-controller` is part of `notebooks-v1` in release 26.03.1"), "{e}");
        assert!(e.contains("applications/notebooks-v1/overlays/istio") && e.contains("`jupyter-web-app`"), "{e}");
        assert!(e.contains("--set notebooks-v1.enabled=false"), "{e}");
        let parts = ["centraldashboard", "profiles", "admission-webhook"];
        let mut all_off = json!({});
        for part in parts {
            all_off[part] = json!({"enabled": false});
        }
        catalog.rename_values(&mut all_off, &mut notes).unwrap();
        assert_eq!(all_off, json!({"dashboard": {"enabled": false}}));
        assert_eq!(notes.len(), 3, "one note per old name: {notes:?}");
        let mut on = json!({"model-registry": {"enabled": true}});
        catalog.rename_values(&mut on, &mut notes).unwrap();
        assert_eq!(on, json!({"hub": {"enabled": true}}));
    }
}
