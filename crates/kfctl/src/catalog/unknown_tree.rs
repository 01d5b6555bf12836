//! A profile's kustomization on a tree the catalog does not describe (no pinned release, or a
//! release tree lacking a folder the catalog names): each component from its catalog folders
//! where the tree has them, else from the `example/` entries attributed to it. Split from
//! [`super::render`], whose default render builds it.

use super::CatalogError;
use super::attribute::{self, ExampleAttribution};
use super::component::Catalog;
use super::profile::Resolved;
use kfctl_kustomize::kustomization::Kustomization;
use serde_json::Value;

/// A profile's kustomization on a tree that is no pinned release: each component's catalog
/// folders when the tree has them all, else the `example/` entries attributed to it; the
/// tree's `sortOptions`. A dependency the cluster provides (`<name>.provided: true`) renders
/// nothing, so a tree without its folders is fine. Returns the entries' tags too.
/// The profile's kustomization on a tree the catalog does not describe: each component from
/// its catalog folders where the tree has them, else from the `example/` entries that hold it
/// (its own, several where upstream split it, or a folder it shares with others upstream merged
/// it with: added once, whichever of them is enabled). Components found nowhere fail together,
/// in one error whose flags leave them all out; a component left out whose folder another
/// enabled component brings fails, naming the folder and what it holds.
pub(super) fn kustomization(
    profile: &Resolved,
    catalog: &Catalog,
    user: &Value,
    manifests_dir: &std::path::Path,
    example: &ExampleAttribution,
) -> Result<(Kustomization, Vec<(String, String)>), CatalogError> {
    let mut k = profile.kustomization(catalog)?;
    k.resources.clear();
    k.components.clear();
    k.sort_options = example.kustomization.sort_options.clone().or(k.sort_options);
    let mut tags: Vec<(String, String)> = Vec::new();
    let mut missing = Vec::new();
    let present = |paths: &[String]| paths.iter().all(|p| manifests_dir.join(p).is_dir());
    for (name, variant) in &profile.components {
        let def = catalog.get(name)?;
        let from_example = |list: &[attribute::Attributed]| -> Vec<String> {
            list.iter().filter(|a| a.holds(name)).map(|a| a.entry.clone()).collect()
        };
        let catalog_paths = def.paths(variant)?;
        let resources = match present(catalog_paths) {
            true => catalog_paths.iter().map(|p| format!("../{p}")).collect(),
            false => from_example(&example.resources),
        };
        if resources.is_empty() && !super::provided::is_provided(user, name) {
            missing.push((name.clone(), catalog_paths.join(", ")));
        }
        let components = match present(&def.kustomize_components) {
            true => def.kustomize_components.iter().map(|p| format!("../{p}")).collect(),
            false => from_example(&example.components),
        };
        for entry in resources.into_iter().chain(components.iter().cloned()) {
            if tags.iter().any(|(e, _)| *e == entry) {
                continue;
            }
            tags.push((entry.clone(), name.clone()));
            match components.contains(&entry) {
                true => k.components.push(entry),
                false => k.resources.push(entry),
            }
        }
    }
    if !missing.is_empty() {
        return Err(not_in_tree(&missing, profile, catalog));
    }
    check_merged_parts(user, example, &tags)?;
    k.resources.extend(profile.changes.resources.iter().cloned());
    Ok((k, tags))
}

/// The one error for every component found nowhere, with flags that leave them all out (and
/// what needs them), or use the cluster's own where it can provide one.
fn not_in_tree(missing: &[(String, String)], profile: &Resolved, catalog: &Catalog) -> CatalogError {
    let names: Vec<String> = missing.iter().map(|(n, _)| n.clone()).collect();
    let provided: Vec<String> = names
        .iter()
        .filter_map(|n| {
            super::provided::dependency_of(n, &catalog.provided).map(|d| format!("--set {}.provided=true", d.name))
        })
        .collect();
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let one = names.len() == 1;
    CatalogError::NotInTree {
        component: format!("{} {}", if one { "component" } else { "components" }, quoted.join(", ")),
        several: !one,
        paths: missing.iter().map(|(n, p)| format!("{n}: {p}")).collect::<Vec<_>>().join("; "),
        flags: leave_out_flags(&names, profile, catalog),
        provided: match provided.is_empty() {
            true => String::new(),
            false => format!(", use the cluster's own ({}),", provided.join(" ")),
        },
    }
}

/// A component the values leave out whose folder an enabled component brings (one folder
/// upstream merged them into) would be installed anyway: refused, naming the folder.
fn check_merged_parts(
    user: &Value,
    example: &ExampleAttribution,
    tags: &[(String, String)],
) -> Result<(), CatalogError> {
    let off = |c: &str| user.get(c).and_then(|v| v.get("enabled")).and_then(Value::as_bool) == Some(false);
    for (entry, brought_by) in tags {
        let Some(held) = example.resources.iter().find(|a| a.entry == *entry) else { continue };
        let parts: Vec<&String> = held.component.iter().map(|(c, _)| c).chain(&held.also).collect();
        if let Some(part) = parts.iter().find(|p| off(p) && **p != brought_by) {
            let with: Vec<String> = parts.iter().filter(|p| **p != *part).map(|p| format!("`{p}`")).collect();
            let all: Vec<String> = parts.iter().map(|p| format!("--set {p}.enabled=false")).collect();
            return Err(CatalogError::MergedFolder {
                part: part.to_string(),
                folder: entry.trim_start_matches("../").to_string(),
                with: with.join(", "),
                flags: all.join(" "),
            });
        }
    }
    Ok(())
}

/// The `--set` flags that leave `name` out of `profile`, with every enabled component that
/// needs it (directly or not): the hint that works when pasted.
fn leave_out_flags(names: &[String], profile: &Resolved, catalog: &Catalog) -> String {
    let mut out = names.to_vec();
    let mut grew = true;
    while grew {
        grew = false;
        for (component, _) in &profile.components {
            let needs = catalog.get(component).is_ok_and(|d| d.dependencies.iter().any(|dep| out.contains(dep)));
            if needs && !out.contains(component) {
                out.push(component.clone());
                grew = true;
            }
        }
    }
    out.iter().map(|c| format!("--set {c}.enabled=false")).collect::<Vec<_>>().join(" ")
}
