//! Knowing a component by what its folder builds, not by where the folder is.
//!
//! Upstream moves folders between releases (cert-manager's issuer into an overlay, Pipelines
//! behind an overlay, whole applications renamed), and forks and older tags have layouts of
//! their own. Paths are the catalog's first guess; what a folder *builds* is the evidence that
//! survives a move. Each component lists `marks` in its `component.yaml`: objects only it
//! renders, written `Kind/name` (a CRD by its full name: `CustomResourceDefinition/
//! certificates.cert-manager.io`). A folder is the component whose marks its build holds the
//! most of, when exactly one component leads; no mark, or a tie, identifies nothing.
//!
//! The marks are data, checked against every release snapshot by the test suite: each mark is
//! rendered by its component and by no other, and every `example/` entry of every release is
//! identified by content as the component its path names.

use super::component::Catalog;
use kfctl_kustomize::BuildOptions;
use kfctl_kustomize::remote::RemoteResolver;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// How an object is written in `marks`: `Kind/name`.
pub(crate) fn mark_of(obj: &Value) -> Option<String> {
    let kind = obj.get("kind")?.as_str()?;
    let name = obj.pointer("/metadata/name")?.as_str()?;
    Some(format!("{kind}/{name}"))
}

/// How many marks of each component `objects` hold, the most first (catalog order on a tie),
/// components with none left out.
fn scores<'a>(catalog: &'a Catalog, objects: &[Value]) -> Vec<(usize, &'a str, &'a str)> {
    let present: BTreeSet<String> = objects.iter().filter_map(mark_of).collect();
    let mut scores: Vec<(usize, &str, &str)> = catalog
        .components
        .values()
        .map(|def| {
            let score = def.marks.iter().filter(|m| present.contains(m.as_str())).count();
            (score, def.name.as_str(), def.default_variant())
        })
        .filter(|(score, _, _)| *score > 0)
        .collect();
    scores.sort_by_key(|(score, _, _)| std::cmp::Reverse(*score));
    scores
}

/// Every component (with its default variant) whose marks `objects` hold, the most marks
/// first: a folder upstream merged several components into holds the marks of each.
pub(crate) fn components_marked(catalog: &Catalog, objects: &[Value]) -> Vec<(String, String)> {
    scores(catalog, objects).into_iter().map(|(_, name, variant)| (name.to_string(), variant.to_string())).collect()
}

/// The component (and its default variant) whose marks `objects` hold the most of, when one
/// component leads alone.
pub(crate) fn identify_objects(catalog: &Catalog, objects: &[Value]) -> Option<(String, String)> {
    match scores(catalog, objects).as_slice() {
        [(best, name, variant), rest @ ..] if rest.first().is_none_or(|(next, _, _)| next < best) => {
            Some((name.to_string(), variant.to_string()))
        }
        _ => None,
    }
}

/// Build the kustomization folder `dir` natively and identify it; `None` when it does not
/// build (a build that really uses it fails later with the engine's own message).
pub fn identify_folder(catalog: &Catalog, dir: &Path, remote: Arc<dyn RemoteResolver>) -> Option<(String, String)> {
    let (leader, _) = identify_folder_all(catalog, dir, remote)?;
    leader
}

/// What a folder's build holds: the component it is, with its variant, when one leads
/// ([`identify_objects`]), and every other component whose marks it holds too.
pub(crate) type FolderComponents = (Option<(String, String)>, Vec<String>);

/// Build `dir` natively and say which components it holds ([`FolderComponents`]); `None` when
/// it does not build.
pub(crate) fn identify_folder_all(
    catalog: &Catalog,
    dir: &Path,
    remote: Arc<dyn RemoteResolver>,
) -> Option<FolderComponents> {
    let options = BuildOptions { remote, ..BuildOptions::default() };
    let built = kfctl_kustomize::build(dir, &options).ok()?;
    let objects = kfctl_kustomize::objects(&built);
    let leader = identify_objects(catalog, &objects);
    let all = components_marked(catalog, &objects);
    let also = all.into_iter().map(|(c, _)| c).filter(|c| leader.as_ref().is_none_or(|(l, _)| l != c)).collect();
    Some((leader, also))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(kind: &str, name: &str) -> Value {
        json!({"kind": kind, "metadata": {"name": name}})
    }

    #[test]
    fn the_component_with_the_most_marks_wins_alone() {
        let catalog = Catalog::embedded().unwrap();
        let cert_manager = [
            object("Deployment", "cert-manager-webhook"),
            object("CustomResourceDefinition", "certificates.cert-manager.io"),
            object("ConfigMap", "anything"),
        ];
        assert_eq!(identify_objects(&catalog, &cert_manager).map(|(c, _)| c).as_deref(), Some("cert-manager"));
        assert_eq!(identify_objects(&catalog, &[object("ConfigMap", "anything")]), None);
    }

    #[test]
    fn every_mark_names_one_component_only() {
        // As written, across the whole catalog...
        let catalog = Catalog::embedded().unwrap();
        let mut seen = std::collections::BTreeMap::new();
        for name in catalog.components.keys().chain(catalog.absent.keys()) {
            let path = format!("charts/{name}/component.yaml");
            let file: super::super::component::ComponentFile = serde_json::from_value(
                kfctl_yaml::parse_stream(crate::embedded::file(&path).unwrap(), &path).unwrap().remove(0),
            )
            .unwrap();
            for mark in &file.marks {
                assert!(mark.contains('/'), "{name}: mark `{mark}` is not Kind/name");
                if let Some(other) = seen.insert(mark.clone(), name.clone()) {
                    panic!("mark `{mark}` is listed by both {other} and {name}");
                }
            }
        }
        // ...and as each release has them (a merged component takes its parts' marks).
        for release in crate::source::releases::known() {
            let catalog = Catalog::for_release(release.version).unwrap();
            let mut seen = std::collections::BTreeMap::new();
            for def in catalog.components.values() {
                for mark in &def.marks {
                    if let Some(other) = seen.insert(mark.clone(), def.name.clone()) {
                        panic!("{}: mark `{mark}` belongs to both {other} and {}", release.version, def.name);
                    }
                }
            }
        }
    }
}
