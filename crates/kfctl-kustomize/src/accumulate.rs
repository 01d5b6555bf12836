//! Accumulation: kustomize's `KustTarget`, folder by folder.
//!
//! For one kustomization folder, in kustomize's order:
//! 1. `resources` (and legacy `bases`): files are read as objects; folders are accumulated
//!    recursively into a fresh accumulator and merged in (objects, configs, vars);
//! 2. the defaults with `configurations`, then `crds`, add field specs to what the resources
//!    accumulated (which starts empty, as in kustomize);
//! 3. generators (`configMapGenerator`, `secretGenerator`) add or merge objects;
//! 4. `components` run *on this accumulator*, each as if its directives were written here;
//! 5. transformers run in kustomize's fixed order (see `run_transformers`), then the
//!    `transformers:` configs ([`plugins`]; `generators:` configs run after step 3's; a
//!    folder entry is accumulated here, as a `resources` folder, for its configs);
//! 6. `vars` are collected for resolution at the very end of the build.
//!
//! With `buildMetadata` origin or transformer annotations, the walk also tracks where each
//! kustomization sits and annotates objects as it goes (see [`crate::build_metadata`]).

use super::build_metadata;
use super::builtins::{self, config::TransformConfig, plugins};
use super::error::{ConflictingFieldSpec, KustomizeError, Result};
use super::kustomization::{Kustomization, Var};
use super::loader::{Entry, Loader};
use super::objects::push_objects;
use super::openapi;
use super::resmap::ResMap;
use super::resource::Resource;
use serde_json::Value;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// What a folder (and everything below it) has accumulated.
#[derive(Debug, Clone)]
pub(crate) struct Accumulated {
    pub resources: ResMap,
    /// The defaults borrowed (most folders), or a config of its own.
    pub config: Cow<'static, TransformConfig>,
    /// What `config` is known to be, so merging the defaults into the defaults (most folders)
    /// skips comparing hundreds of field specs to find out.
    config_is: ConfigIs,
    pub vars: Vec<Var>,
}

/// What an accumulated config is known to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConfigIs {
    /// Empty, as kustomize's accumulator starts.
    Empty,
    /// [`TransformConfig::defaults`], unchanged.
    Defaults,
    /// Anything else.
    Other,
}

impl Default for Accumulated {
    fn default() -> Self {
        // kustomize's accumulator starts with an empty config (see `builtins::config`).
        Accumulated {
            resources: ResMap::new(),
            config: Cow::Owned(TransformConfig::default()),
            config_is: ConfigIs::Empty,
            vars: Vec::new(),
        }
    }
}

impl Accumulated {
    /// Merge a config known to be `other_is` into this one ([`TransformConfig::merge_checked`],
    /// or with `strict` false [`TransformConfig::merge`]): nothing to do for an empty one or the
    /// defaults into the defaults, the defaults' copy into an empty one, a merge otherwise.
    fn merge_config(
        &mut self,
        other: &TransformConfig,
        other_is: ConfigIs,
        strict: bool,
    ) -> std::result::Result<(), ConflictingFieldSpec> {
        match (self.config_is, other_is) {
            (_, ConfigIs::Empty) | (ConfigIs::Defaults, ConfigIs::Defaults) => Ok(()),
            (ConfigIs::Empty, ConfigIs::Defaults) => {
                self.config = Cow::Borrowed(TransformConfig::defaults_ref());
                self.config_is = ConfigIs::Defaults;
                Ok(())
            }
            _ if strict => {
                self.config_is = ConfigIs::Other;
                self.config.to_mut().merge_checked(other)
            }
            _ => {
                self.config_is = ConfigIs::Other;
                self.config.to_mut().merge(other);
                Ok(())
            }
        }
    }

    fn absorb(&mut self, other: Accumulated, origin: &Path) -> Result<()> {
        self.resources.append_all(other.resources, &origin.display().to_string())?;
        // lenient: a conflicting spec keeps the one already here
        self.merge_config(&other.config, other.config_is, false).expect("a lenient merge never fails");
        for var in other.vars {
            self.add_var(var, origin)?;
        }
        Ok(())
    }

    fn add_var(&mut self, var: Var, origin: &Path) -> Result<()> {
        if self.vars.iter().any(|v| v.name == var.name) {
            return Err(KustomizeError::transform(
                origin.display().to_string(),
                format!("var '{}' already encountered; var names must be unique across the whole build", var.name),
            ));
        }
        self.vars.push(var);
        Ok(())
    }
}

/// Walks kustomization folders, remembering the chain being built to detect cycles.
pub(crate) struct Accumulator<'a> {
    loader: &'a Loader,
    chain: Vec<PathBuf>,
    /// [`crate::BuildOptions::strict_patches`], for the in-memory kustomization only.
    strict_patches: bool,
    /// The build's `openapi:` so far, for nested kustomizations (see [`crate::openapi`]).
    openapi: openapi::State,
    /// Where the kustomization being accumulated sits, while `buildMetadata` origin or
    /// transformer annotations are tracked (see [`crate::build_metadata`]).
    origin: Option<build_metadata::Origin>,
}

impl<'a> Accumulator<'a> {
    pub(crate) fn new(loader: &'a Loader) -> Self {
        Accumulator {
            loader,
            chain: Vec::new(),
            strict_patches: false,
            openapi: openapi::State::default(),
            origin: None,
        }
    }

    /// Track origins and transformations from the top kustomization's `buildMetadata`.
    pub(crate) fn tracking(mut self, origin: Option<build_metadata::Origin>) -> Self {
        self.origin = origin;
        self
    }

    /// What the top kustomization's `openapi:` set (from [`openapi::top`]).
    pub(crate) fn openapi(mut self, state: openapi::State) -> Self {
        self.openapi = state;
        self
    }

    /// Refuse `patches` entries of the in-memory kustomization that select nothing.
    pub(crate) fn strict_patches(mut self, on: bool) -> Self {
        self.strict_patches = on;
        self
    }

    /// Accumulate the folder being built into a fresh accumulator. Like kustomize, this may be
    /// a Component: built on its own, it acts as a kustomization.
    pub(crate) fn folder(&mut self, dir: &Path) -> Result<(Kustomization, Accumulated)> {
        self.target(dir, Accumulated::default(), Role::Top)
    }

    /// Accumulate an in-memory kustomization as if it were the kustomization file of `dir`
    /// (which need not exist: its entries are resolved relative to it).
    pub(crate) fn in_memory(&mut self, dir: &Path, k: &Kustomization) -> Result<Accumulated> {
        super::unsupported::check(k, dir)?;
        let mut acc = Accumulated::default();
        self.chain.push(dir.to_path_buf());
        let result = self.run_directives(dir, dir, k, &mut acc, self.strict_patches);
        self.chain.pop();
        result.map(|()| acc)
    }

    fn target(&mut self, dir: &Path, mut acc: Accumulated, role: Role) -> Result<(Kustomization, Accumulated)> {
        let dir =
            self.loader.real_path(dir).map_err(|source| KustomizeError::Read { path: dir.to_path_buf(), source })?;
        if self.chain.contains(&dir) {
            let chain = self.chain.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" -> ");
            return Err(KustomizeError::Cycle { dir, chain });
        }
        let (path, k) = self.loader.kustomization(&dir)?;
        check_kind(&path, &k, role)?;
        if role != Role::Top {
            openapi::nested(self.loader, &dir, &path, &k, &mut self.openapi)?;
        }
        self.chain.push(dir.clone());
        let result = self.run_directives(&dir, &path, &k, &mut acc, false);
        self.chain.pop();
        result.map(|()| (k, acc))
    }

    /// The directives of kustomization `k` in `dir`; `origin` is its file (named in errors);
    /// `strict`: its `patches` must each select something.
    fn run_directives(
        &mut self,
        dir: &Path,
        origin: &Path,
        k: &Kustomization,
        acc: &mut Accumulated,
        strict: bool,
    ) -> Result<()> {
        let tracking = self.origin.clone();
        let file = kustomization_file_name(dir, origin);
        let cx = plugins::Context { dir, origin, loader: self.loader, tracking: tracking.as_ref(), file: &file };
        for entry in k.resources.iter().chain(&k.bases) {
            self.resource_entry(dir, origin, entry, acc)?;
        }
        let own = TransformConfig::for_folder(&k.configurations, dir, self.loader)?;
        let own_is = if k.configurations.is_empty() { ConfigIs::Defaults } else { ConfigIs::Other };
        acc.merge_config(&own, own_is, true).map_err(|source| KustomizeError::ConflictingFieldSpecs {
            context: format!("{}: configurations", origin.display()),
            source: Box::new(source),
        })?;
        let crds = builtins::crds::load(&k.crds, dir, self.loader)?;
        let crds_is = if k.crds.is_empty() { ConfigIs::Empty } else { ConfigIs::Other };
        acc.merge_config(&crds, crds_is, true).map_err(|source| KustomizeError::ConflictingFieldSpecs {
            context: format!("{}: crds", origin.display()),
            source: Box::new(source),
        })?;
        let origin_of = |kind: &str| tracking.as_ref().map_or_else(String::new, |o| o.configured(&file, kind));
        let origin_of = tracking.as_ref().map(|_| &origin_of as &dyn Fn(&str) -> String);
        builtins::generators::run_with_origin(&mut acc.resources, k, dir, self.loader, origin_of)?;
        let mut folder = |path: &Path| self.plugin_folder(path);
        plugins::run(&mut acc.resources, plugins::List::Generators, &k.generators, &acc.config, &cx, &mut folder)?;
        for component in &k.components {
            if self.origin.is_some() && super::remote::is_remote(component) {
                return Err(build_metadata::refuse_remote(origin, component));
            }
            let path = match self.loader.resolve_entry(dir, component)? {
                Entry::Folder(p) => p,
                Entry::File(p) => {
                    return Err(KustomizeError::transform(
                        p.display().to_string(),
                        "a component must be a folder with a kustomization of kind Component",
                    ));
                }
            };
            let outer = self.enter(origin, component)?;
            let result = self.target(&path, std::mem::take(acc), Role::Component);
            self.origin = outer;
            *acc = result?.1;
        }
        run_transformers(acc, k, dir, self.loader, strict)?;
        if let Some(tracking) = &tracking {
            let runs = build_metadata::transformer_runs(k);
            let origins: Vec<String> = runs.iter().map(|kind| tracking.configured(&file, kind)).collect();
            build_metadata::add_transformations(&mut acc.resources, &origins);
        }
        let mut folder = |path: &Path| self.plugin_folder(path);
        plugins::run(&mut acc.resources, plugins::List::Transformers, &k.transformers, &acc.config, &cx, &mut folder)?;
        for var in &k.vars {
            builtins::vars::bind(&mut acc.resources, var)?;
            acc.add_var(var.clone(), dir)?;
        }
        Ok(())
    }

    /// The configs of a `generators:`/`transformers:` folder entry: the objects its
    /// kustomization accumulates (kustomize's `accumulateResources` on the entry).
    fn plugin_folder(&mut self, path: &Path) -> Result<Vec<Value>> {
        let (_, sub) = self.target(path, Accumulated::default(), Role::Resource)?;
        Ok(crate::into_objects(sub.resources))
    }

    /// Step into the folder `entry` of the kustomization `file`: returns the origin to
    /// restore afterwards.
    fn enter(&mut self, file: &Path, entry: &str) -> Result<Option<build_metadata::Origin>> {
        let Some(outer) = self.origin.clone() else { return Ok(None) };
        if super::remote::is_remote(entry) {
            return Err(build_metadata::refuse_remote(file, entry));
        }
        self.origin = Some(outer.append(entry));
        Ok(Some(outer))
    }

    fn resource_entry(&mut self, dir: &Path, file: &Path, entry: &str, acc: &mut Accumulated) -> Result<()> {
        let label: std::sync::Arc<str> = entry.into();
        if self.origin.is_some() && super::remote::is_remote(entry) {
            return Err(build_metadata::refuse_remote(file, entry));
        }
        match self.loader.resolve_entry(dir, entry)? {
            Entry::File(path) => {
                let origin = path.display().to_string();
                let annotation = self.origin.as_ref().map(|o| o.of_file(entry));
                for mut resource in objects_from_file(self.loader, &path)? {
                    resource.origin = Some(label.clone());
                    if let Some(annotation) = &annotation {
                        build_metadata::set_origin(&mut resource, annotation);
                    }
                    acc.resources.append(resource, &origin)?;
                }
                Ok(())
            }
            Entry::Folder(path) => {
                let outer = self.enter(file, entry)?;
                let result = self.target(&path, Accumulated::default(), Role::Resource);
                self.origin = outer;
                let (_, mut sub) = result?;
                sub.resources.iter_mut().for_each(|r| r.origin = Some(label.clone()));
                acc.absorb(sub, &path)
            }
        }
    }
}

/// The kustomization file's name in its folder (`origin` is the folder itself for an
/// in-memory kustomization, which is written as `kustomization.yaml`).
fn kustomization_file_name(dir: &Path, origin: &Path) -> String {
    match origin == dir {
        true => super::kustomization::FILE_NAMES[0].to_string(),
        false => origin.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
    }
}

/// Why a folder is accumulated: the one being built, a `resources` entry or a `components` one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Top,
    Resource,
    Component,
}

fn check_kind(path: &Path, k: &Kustomization, role: Role) -> Result<()> {
    let is_component = k.kind.as_deref() == Some("Component");
    let message = match (role, is_component) {
        (Role::Component, false) => "expected kind 'Component' because it is listed under `components`",
        (Role::Resource, true) => "a Component can only be listed under `components`, not `resources`",
        _ => return Ok(()),
    };
    Err(KustomizeError::InvalidKustomization { path: path.to_path_buf(), message: message.to_string() })
}

/// The objects in a resource file: every document, with `List` kinds expanded into their items.
pub(crate) fn objects_from_file(loader: &Loader, path: &Path) -> Result<Vec<Resource>> {
    let origin = path.display().to_string();
    let mut out = Vec::new();
    let (docs, bare) = loader.take_documents(path)?;
    for (doc, bare) in docs.into_iter().zip(bare) {
        let is_list = doc.get("kind").and_then(Value::as_str).unwrap_or("").ends_with("List");
        let before = out.len();
        push_objects(doc, &origin, &mut out)?;
        if out.len() == before + 1 && !is_list {
            out[before].bare_nulls = bare;
        }
    }
    Ok(out)
}

/// The builtin transformers in kustomize's order.
fn run_transformers(acc: &mut Accumulated, k: &Kustomization, dir: &Path, loader: &Loader, strict: bool) -> Result<()> {
    use builtins::*;
    let res = &mut acc.resources;
    let cfg = &acc.config;
    patches::strategic_merge_files(res, &k.patches_strategic_merge, dir, loader)?;
    match strict {
        true => patches::patches_strict(res, &k.patches, dir, loader)?,
        false => patches::patches(res, &k.patches, dir, loader)?,
    }
    if let Some(ns) = k.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        namespace::apply(res, ns, cfg)?;
    }
    let (prefix, suffix) = (k.name_prefix.as_deref().unwrap_or(""), k.name_suffix.as_deref().unwrap_or(""));
    if !prefix.is_empty() || !suffix.is_empty() {
        prefix_suffix::apply(res, prefix, suffix, cfg)?;
    }
    for set in &k.labels {
        labels::apply_label_set(res, set, cfg)?;
    }
    if !k.common_labels.is_empty() {
        labels::apply_common(res, &k.common_labels, cfg)?;
    }
    if !k.common_annotations.is_empty() {
        annotations::apply(res, &k.common_annotations, cfg)?;
    }
    patches::json6902(res, &k.patches_json6902, dir, loader)?;
    for replica in &k.replicas {
        replicas::apply(res, replica, cfg)?;
    }
    images::apply_all(res, &k.images, cfg)?;
    replacements::apply(res, &k.replacements, dir, loader)
}
