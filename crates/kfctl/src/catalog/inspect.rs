//! `kfctl-rs source inspect`: how the catalog sees a manifests tree.
//!
//! For a tree the catalog may not describe (a newer upstream commit, a fork, an older tag),
//! this says what a render will do before it does it: each `example/` entry and the component
//! it is (by path, by content or by path pattern, see [`super::attribute`]), the entries
//! nothing claims, and for every catalog component the folder a profile would render — the
//! catalog's own when the tree has it, else an `example/` entry — or that it is found nowhere.

use super::CatalogError;
use super::attribute::{self, Attributed};
use super::component::Catalog;
use kfctl_kustomize::remote::RemoteResolver;
use std::path::Path;
use std::sync::Arc;

/// Where a catalog component's objects come from in the inspected tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The catalog's folders for its default variant, all present.
    CatalogFolders(Vec<String>),
    /// `example/` entries attributed to it (the catalog's folders are missing).
    ExampleEntries(Vec<String>),
    /// Neither.
    Nowhere {
        /// The catalog's folders for its default variant, none of them present.
        catalog_paths: Vec<String>,
    },
    /// The release lacks it (new later, or removed), with the reason.
    NotInRelease(String),
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The release whose catalog data was used.
    pub(crate) release: String,
    /// `example/` `resources:` then `components:` entries, attributed (empty without example/).
    pub(crate) entries: Vec<Attributed>,
    /// Why `example/` could not be read, when it could not.
    pub(crate) example_error: Option<String>,
    /// Every catalog component, in catalog order.
    pub(crate) components: Vec<(String, Found)>,
}

/// Inspect `manifests_dir` with `catalog` (the release's data, or the newest for an unknown tree).
pub fn inspect(catalog: &Catalog, manifests_dir: &Path, remote: Arc<dyn RemoteResolver>) -> Inspection {
    let (entries, example_error) = match attribute::attribute_example(catalog, manifests_dir, remote) {
        Ok(example) => (example.resources.into_iter().chain(example.components).collect(), None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let mut components = Vec::new();
    for (name, def) in &catalog.components {
        let paths: Vec<String> = def.paths(def.default_variant()).map(<[String]>::to_vec).unwrap_or_default();
        let found = if !paths.is_empty() && paths.iter().all(|p| manifests_dir.join(p).is_dir()) {
            Found::CatalogFolders(paths)
        } else {
            let claimed: Vec<String> = entries.iter().filter(|a| a.holds(name)).map(|a| a.entry.clone()).collect();
            match claimed.is_empty() {
                true => Found::Nowhere { catalog_paths: paths },
                false => Found::ExampleEntries(claimed),
            }
        };
        components.push((name.clone(), found));
    }
    for name in catalog.absent.keys() {
        let why = catalog.get(name).err().map(|e: CatalogError| e.to_string()).unwrap_or_default();
        components.push((name.clone(), Found::NotInRelease(why)));
    }
    Inspection { release: catalog.release.clone().unwrap_or_default(), entries, example_error, components }
}

impl Inspection {
    /// The report as text, one line per entry and per component.
    pub fn to_text(&self) -> String {
        let mut out = format!("catalog data: release {}\n", self.release);
        match &self.example_error {
            Some(e) => out.push_str(&format!("example/: not read ({e})\n")),
            None => out.push_str("example/ entries:\n"),
        }
        for a in &self.entries {
            let also = match a.also.is_empty() {
                true => String::new(),
                false => format!(", with {} (one folder upstream merged them into, by content)", a.also.join(", ")),
            };
            let what = match (&a.component, &a.how) {
                (Some((c, v)), Some(how)) => format!("{c} ({v}, {how}){also}"),
                _ if !a.also.is_empty() => format!("{} (by content)", a.also.join(", ")),
                _ => "unclaimed: rendered only by a profile that is this tree's example/ (multi-tenant)".into(),
            };
            out.push_str(&format!("  {}  ->  {what}\n", a.entry));
        }
        out.push_str("components:\n");
        for (name, found) in &self.components {
            let what = match found {
                Found::CatalogFolders(p) => format!("{} (catalog folder)", p.join(", ")),
                Found::ExampleEntries(e) if e.len() > 1 => format!("{} (example/ entries)", e.join(", ")),
                Found::ExampleEntries(e) => format!("{} (example/ entry)", e.join(", ")),
                Found::Nowhere { catalog_paths } => format!(
                    "not found (catalog folder {} missing, no example/ entry builds it): a profile with it fails; leave it out with --set {name}.enabled=false",
                    catalog_paths.join(", ")
                ),
                Found::NotInRelease(why) => why.clone(),
            };
            out.push_str(&format!("  {name}: {what}\n"));
        }
        out
    }
}
