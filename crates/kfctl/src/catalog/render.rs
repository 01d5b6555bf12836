//! Rendering a profile: profile + values + upstream source → objects.
//!
//! 1. resolve the profile and layer the user's values (profile values, `-f` files, `--set`);
//! 2. choose components (`--components`, `<name>.enabled`) and check dependencies;
//! 3. build the profile's kustomization with the native engine (the default render, 1:1
//!    with real kustomize), tagging each object with the component it came from;
//! 4. derive the defaults (images, replicas, resources per workload) from that render and
//!    check the values coalesced over them, as Helm does (a null deletes a default);
//! 5. apply the parameter table to every object, and rename the generated ConfigMaps and
//!    Secrets whose content changed as kustomize would ([`super::rehash`]).
//!
//! The catalog data is the one of the release the tree is ([`Layout`]). When it does not
//! describe the tree — no pinned release ([`Layout::Unknown`], the catalog of the closest
//! release's layout), or a
//! release tree lacking a folder the catalog names for the profile (an older tag, a fork) — a
//! profile marked `example` renders as the tree's own `example/` kustomization, and the other
//! profiles take each component's folder from the catalog when the tree has it, else from the
//! `example/` entries attributed to it by path, content or pattern
//! ([`super::attribute::attribute_example`]). A component found nowhere is an error naming it
//! and the flags that leave it out together with what needs it.

use super::attribute::{self, ExampleAttribution};
use super::component::Catalog;
use super::defaults::{check_coalesced, defaults, precheck, schema_for};
use super::params::{self, CREDENTIALS, Credential};
use super::profile::{self, Resolved};
use super::schema::Schema;
use super::strvals::{self, SetFlag};
use super::{CatalogError, images, values};
use crate::source::RemoteResolver;
pub use crate::source::open::Layout;
use kfctl_kustomize::build_cache::{Deferred, Read};
use kfctl_kustomize::{BuildOptions, LoadRestriction};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// What to render.
#[derive(Clone)]
pub struct RenderRequest {
    /// The profile: a built-in name or a file path.
    pub profile: String,
    /// Restrict to these components (empty: all of the profile's).
    pub components: Vec<String>,
    /// Values files (`-f`), in command-line order.
    pub value_files: Vec<PathBuf>,
    /// The `--set` family, each flag in command-line order; applied in the helm CLI's order
    /// of kinds (`strvals::SetKind::HELM_ORDER`).
    pub sets: Vec<SetFlag>,
    /// The kubeflow/manifests root.
    pub manifests_dir: PathBuf,
    /// Fetches remote kustomize resources the tree names.
    pub remote: Arc<dyn RemoteResolver>,
    /// Which release's catalog data describes the tree.
    pub layout: Layout,
}

impl Layout {
    /// The catalog data that describes a tree of this layout at `manifests_dir`.
    pub fn catalog(&self, manifests_dir: &std::path::Path) -> Result<Catalog, CatalogError> {
        match self {
            Layout::Release(version) => Catalog::for_release(version),
            Layout::Newest => Catalog::embedded(),
            Layout::Unknown => Catalog::closest_to(manifests_dir),
        }
    }
}

/// One rendered object and the component it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedObject {
    /// The catalog component it belongs to.
    pub component: String,
    /// The object as rendered.
    pub obj: Value,
    /// Inside a render only: a CRD whose schemas are still in the render cache, `obj` its
    /// stub ([`super::deferred`]). Every object a render hands out is whole.
    pub(crate) deferred: Option<Arc<Deferred>>,
}

impl RenderedObject {
    /// A whole object of `component`.
    pub fn new(component: impl Into<String>, obj: Value) -> Self {
        RenderedObject { component: component.into(), obj, deferred: None }
    }

    /// Its size as JSON ([`kfctl_kustomize::json_size`]), deferred schemas included.
    pub(crate) fn json_size(&self) -> u64 {
        kfctl_kustomize::json_size(&self.obj) + self.deferred.as_ref().map_or(0, |d| d.json_size())
    }
}

/// The result of a render.
pub struct Rendered {
    /// The resolved profile.
    pub profile: Resolved,
    /// The effective values (defaults with the user's layers on top).
    pub values: Value,
    /// The defaults the values layer on.
    pub defaults: Value,
    /// The rendered objects, each tagged with its component.
    pub objects: Vec<RenderedObject>,
    /// Upstream default credentials still in the output (values left them unset).
    pub default_credentials: Vec<&'static Credential>,
    /// Dependencies the cluster provides (`<name>.provided`), with the needs that apply to
    /// this render's components: what the install's preflight checks.
    pub provided: Vec<super::provided::Dependency>,
}

impl Rendered {
    /// Whether upstream's demo login (`user@example.com / 12341234`) still works: the Dex demo
    /// user's password hash is one of the [`Rendered::default_credentials`]. Users of one's own
    /// (`global.users`) or a hash of one's own (`dex.staticUser.passwordHash`) replace it,
    /// whatever other credential stays at upstream's default.
    pub fn keeps_demo_login(&self) -> bool {
        self.default_credentials.iter().any(|c| c.field == super::credentials::DEX_PASSWORD_FIELD)
    }
}

/// Everything a render knows before values change any object: the chart export starts here.
pub struct Prepared {
    /// The catalog of the tree's release.
    pub catalog: Catalog,
    /// The resolved profile.
    pub profile: Resolved,
    /// The user's layers only (profile values, files, `--set`), checked against the schema.
    pub user: Value,
    /// The defaults (static, plus what the default render implies).
    pub defaults: Value,
    /// `defaults` with `user` on top.
    pub effective: Value,
    /// The schema the values are checked against.
    pub schema: Schema,
    /// The default render (1:1 with kustomize), objects tagged by component. From
    /// [`super::peers::prepare_with_variants`] (the chart export's), a CRD may be a stub whose
    /// schemas stay in the render cache ([`super::deferred`]); from [`prepare`], every object
    /// is whole.
    pub objects: Vec<RenderedObject>,
    /// Its objects whose fields other components' presence decides ([`super::peers`]).
    pub peers: Vec<super::peers::PeerDependent>,
    /// Their variants, once [`super::peers::prepare_with_variants`] built them (the chart
    /// export needs them; a render does not).
    pub peer_variants: Option<super::peers::Variants>,
}

/// Steps 1–4: resolve, layer, choose, build, derive defaults and check values.
pub fn prepare(req: &RenderRequest) -> Result<Prepared, CatalogError> {
    prepare_with(req, Read::default())
}

/// [`prepare`] for the chart export: a CRD may be a stub whose schemas stay in the render
/// cache ([`super::deferred`]; the export splices them from the CRD's cached text), except
/// those whose fields other components decide (their variants are compared whole).
pub(crate) fn prepare_deferred(req: &RenderRequest) -> Result<Prepared, CatalogError> {
    let mut prepared = prepare_with(req, Read { names: None, defer_schemas: true })?;
    for index in prepared.peers.iter().map(|p| p.index) {
        if let Some(object) = prepared.objects.get_mut(index) {
            super::deferred::attach(object)?;
        }
    }
    Ok(prepared)
}

/// [`prepare`], the default render read from the render cache as `read` asks: with
/// `defer_schemas`, CRDs may be stubs ([`super::deferred`]).
fn prepare_with(req: &RenderRequest, read: Read) -> Result<Prepared, CatalogError> {
    let Built { catalog, profile, listed, user, example, objects, peers, .. } = built(req, read)?;
    let defaults = defaults(&catalog, &profile, &objects);
    let known = schema_defaults(&catalog, &listed, &user, req, example.as_ref(), &defaults)?;
    let schema = schema_for(&known);
    check_coalesced(&schema, &known, &user)?;
    super::image_refs::all()?;
    let mut effective = defaults.clone();
    values::merge(&mut effective, &user);
    super::users::users(&effective)?;
    super::existing_secrets::check(&effective)?;
    super::identity::check(&effective)?;
    super::gateway::settings(&effective)?;
    super::external_store::database(&effective)?;
    super::workloads::check_env(&effective, &objects)?;
    Ok(Prepared { catalog, profile, user, defaults, effective, schema, objects, peers, peer_variants: None })
}

/// Steps 1–3 of [`prepare`]: what the profile, the values and the components chosen build.
pub(crate) struct Built {
    catalog: Catalog,
    profile: Resolved,
    /// The profile as listed, before the values chose its components.
    listed: Resolved,
    user: Value,
    example: Option<ExampleAttribution>,
    /// The default render (1:1 with kustomize), objects tagged by component.
    pub(crate) objects: Vec<RenderedObject>,
    peers: Vec<super::peers::PeerDependent>,
    /// Whether the render cache served the build.
    pub(crate) outcome: crate::render_cache::Outcome,
}

/// Resolve, layer, choose and build: the default render, without defaults or value checks
/// beyond what choosing the components needs. With `read.names`, the render's objects are at
/// least those so named, and maybe no others; with `read.defer_schemas`, CRDs may be stubs
/// (the render cache reads no more from a hit:
/// [`kfctl_kustomize::build_cache::build_kustomization_named`]).
pub(crate) fn built(req: &RenderRequest, read: Read) -> Result<Built, CatalogError> {
    let catalog = req.layout.catalog(&req.manifests_dir)?;
    let mut profile = profile::resolve(&req.profile, &catalog)?;
    let described = req.layout != Layout::Unknown && folders_present(&profile, &catalog, &req.manifests_dir);
    let example = match described {
        false => Some(attribute::attribute_example(&catalog, &req.manifests_dir, req.remote.clone())?),
        true => None,
    };
    if let Some(example) = example.as_ref().filter(|_| profile.example) {
        profile.components = example.components_in(&catalog);
        let unattributed = example.unattributed();
        if !unattributed.is_empty() {
            profile.warnings.push(format!(
                "example/kustomization.yaml: entries no catalog component claims (rendered, tagged `{}`): {}",
                attribute::UNKNOWN,
                unattributed.join(", ")
            ));
        }
    }
    let mut user = user_values(&profile, req)?;
    catalog.rename_values(&mut user, &mut profile.warnings)?;
    super::provided::expand(&mut user, &catalog.provided);
    let listed = profile.clone();
    choose_components(&mut profile, &catalog, &user, &req.components)?;
    precheck(&user, &catalog, &profile)?;
    if let Some(registry) =
        values::get(&user, &["global", "imageRegistry"]).and_then(Value::as_str).filter(|r| !r.is_empty())
    {
        images::check_registry("global.imageRegistry", registry)?;
    }
    let (objects, peers, outcome) = default_render(&profile, &catalog, &user, req, example.as_ref(), read)?;
    Ok(Built { catalog, profile, listed, user, example, objects, peers, outcome })
}

/// The defaults the values are checked against: a component of the profile that the values
/// disable (`<name>.enabled: false`) keeps every key it has when enabled (images, replicas,
/// resources…, from the profile's whole render, which the render cache usually holds), as
/// Helm's umbrella schema keeps a disabled subchart's: one values file serves with the
/// component on or off, and a misspelt key is still refused. A tree that cannot build the
/// disabled component keeps the plain defaults.
fn schema_defaults(
    catalog: &Catalog,
    listed: &Resolved,
    user: &Value,
    req: &RenderRequest,
    example: Option<&ExampleAttribution>,
    defaults: &Value,
) -> Result<Value, CatalogError> {
    let off = |c: &str| user.get(c).and_then(|v| v.get("enabled")).and_then(Value::as_bool) == Some(false);
    if !req.components.is_empty() || !listed.components.iter().any(|(c, _)| off(c)) {
        return Ok(defaults.clone());
    }
    let mut whole = listed.clone();
    whole.apply_provides(catalog);
    // a disabled component the tree cannot build (an unknown tree without its folder) keeps
    // only the keys every component has, as before
    let read = Read { names: None, defer_schemas: true };
    let Ok((objects, _, _)) = default_render(&whole, catalog, user, req, example, read) else {
        return Ok(defaults.clone());
    };
    let whole_defaults = self::defaults(catalog, &whole, &objects);
    let mut out = defaults.clone();
    for (name, _) in listed.components.iter().filter(|(c, _)| off(c)) {
        out[name.as_str()] = whole_defaults[name.as_str()].clone();
        out[name.as_str()]["enabled"] = json!(false);
    }
    Ok(out)
}

/// Whether the tree has every folder the catalog names for the profile's components: then the
/// catalog describes the tree; else its `example/` is read to find what moved.
fn folders_present(profile: &Resolved, catalog: &Catalog, manifests_dir: &std::path::Path) -> bool {
    profile.components.iter().all(|(name, variant)| {
        catalog.get(name).is_ok_and(|def| {
            let paths = def.paths(variant).map(<[String]>::to_vec).unwrap_or_default();
            paths.iter().chain(&def.kustomize_components).all(|p| manifests_dir.join(p).is_dir())
        })
    })
}

/// Render a profile with values.
pub fn render(req: &RenderRequest) -> Result<Rendered, CatalogError> {
    let mut rendered = render_deferred(req)?;
    super::deferred::attach_all(&mut rendered.objects)?;
    Ok(rendered)
}

/// [`render`], whose CRDs may still be stubs with their schemas in the render cache
/// ([`super::deferred`]): attach them, or write them from their text.
pub(crate) fn render_deferred(req: &RenderRequest) -> Result<Rendered, CatalogError> {
    let read = Read { names: None, defer_schemas: true };
    let Prepared { catalog, profile, defaults, effective, objects, user, .. } = prepare_with(req, read)?;
    // Each object's parameters depend on the values and on it alone: applied on the pool, in
    // order, and stopped once the objects outgrow the render's limit. Each object is measured
    // before and after, while it is at hand: the limit grows with the default render measured
    // so far, so a render stops no later than against the whole default render's limit, and a
    // stopped render is an error.
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    let values_size = kfctl_kustomize::json_size(&user);
    let (before, after, stopped) = (AtomicU64::new(0), AtomicU64::new(0), AtomicBool::new(false));
    let applied: Vec<_> = objects
        .into_par_iter()
        .filter(|o| params::keep(&o.obj, &effective, &o.component, &catalog.provided))
        .map(|mut o| {
            let size = o.json_size();
            let limit = crate::input::max_render_bytes(before.fetch_add(size, Relaxed) + size, values_size);
            if after.load(Relaxed) > limit {
                stopped.store(true, Relaxed);
                return None;
            }
            let hashed = super::rehash::HashedName::of(&o.obj);
            params::apply_all(&mut o.obj, &effective, &defaults, &o.component);
            after.fetch_add(o.json_size(), Relaxed);
            Some((o, hashed))
        })
        .collect();
    let limit = crate::input::max_render_bytes(before.into_inner(), values_size);
    let size = after.into_inner();
    if stopped.into_inner() {
        return Err(CatalogError::RenderTooLarge { size, limit });
    }
    within_limit(size, limit)?;
    let (mut objects, hashed): (Vec<_>, Vec<_>) = applied.into_iter().flatten().unzip();
    super::rehash::rename_changed(&mut objects, &hashed)?;
    let users = super::users::users(&effective)?;
    if !users.is_empty() {
        super::users::expand_profiles(&mut objects, &users);
        within_limit(objects.par_iter().map(RenderedObject::json_size).sum(), limit)?;
    }
    super::existing_secrets::drop_listed(&mut objects, &effective)?;
    let order = kfctl_kustomize::SortOrder::from_options(Some(&catalog.sort_options))?;
    super::gateway::add_certificate(&mut objects, &effective, &defaults, &order);
    let default_credentials = unset_credentials(&objects, &effective);
    let installed: Vec<String> = profile.components.iter().map(|(c, _)| c.clone()).collect();
    let provided = super::provided::in_use(&effective, &catalog.provided)
        .into_iter()
        .map(|d| super::provided::Dependency { needs: d.needs_for(&installed).cloned().collect(), ..d.clone() })
        .collect();
    Ok(Rendered { profile, values: effective, defaults, objects, default_credentials, provided })
}

/// A render of `size` bytes (as JSON) against its `limit` ([`crate::input::max_render_bytes`]).
fn within_limit(size: u64, limit: u64) -> Result<(), CatalogError> {
    match size > limit {
        true => Err(CatalogError::RenderTooLarge { size, limit }),
        false => Ok(()),
    }
}

/// Layer the profile's values, the `-f` files and the `--set` expressions.
pub(crate) fn user_values(profile: &Resolved, req: &RenderRequest) -> Result<Value, CatalogError> {
    let mut user = if profile.values.is_object() { profile.values.clone() } else { json!({}) };
    for path in &req.value_files {
        let shown = path.display().to_string();
        let text = crate::input::read_bounded(path, "values file", crate::input::MAX_INPUT_BYTES)?;
        let doc = kfctl_yaml::parse_helm_values(&text, &shown)
            .map_err(|e| CatalogError::ValuesFile { path: shown.clone(), message: e.to_string() })?;
        if !doc.is_object() {
            return Err(CatalogError::ValuesFile {
                path: shown,
                message: "expected a map of values at the top".into(),
            });
        }
        values::merge_layer(&mut user, &doc);
    }
    values::merge_layer(&mut user, &strvals::parse_all(&req.sets)?);
    Ok(user)
}

fn choose_components(
    profile: &mut Resolved,
    catalog: &Catalog,
    user: &Value,
    only: &[String],
) -> Result<(), CatalogError> {
    let wanted = |name: &str| user.get(name).and_then(|v| v.get("enabled")).and_then(Value::as_bool) == Some(true);
    if let Some(absent) = catalog.absent.keys().find(|name| wanted(name)) {
        catalog.get(absent)?;
    }
    for (name, def) in &catalog.components {
        if wanted(name) && !profile.components.iter().any(|(c, _)| c == name) {
            profile.components.push((name.clone(), def.default_variant().to_string()));
        }
    }
    let order: Vec<&String> = catalog.components.keys().collect();
    profile.components.sort_by_key(|(c, _)| order.iter().position(|o| *o == c));
    if !only.is_empty() {
        profile.restrict_to(only, catalog)?;
    }
    profile.apply_enabled(user);
    profile.apply_provides(catalog);
    let cluster_provided: Vec<String> =
        catalog.components.keys().filter(|c| super::provided::is_provided(user, c)).cloned().collect();
    profile.check_dependencies(catalog, &cluster_provided, !only.is_empty())
}

/// The profile's kustomization built by the native engine, objects tagged by component, and
/// those whose fields other components decide.
fn default_render(
    profile: &Resolved,
    catalog: &Catalog,
    user: &Value,
    req: &RenderRequest,
    example: Option<&ExampleAttribution>,
    read: Read,
) -> Result<(Vec<RenderedObject>, Vec<super::peers::PeerDependent>, crate::render_cache::Outcome), CatalogError> {
    let (k, dir, tags) = match example {
        Some(example) if profile.example && req.components.is_empty() => {
            let tags = example.resources.iter().chain(&example.components);
            let tags = tags.filter_map(|a| Some((a.entry.clone(), a.component.clone()?.0))).collect();
            let mut k = example.kustomization.clone();
            profile.changes.apply_to(&mut k);
            (k, req.manifests_dir.join("example"), tags)
        }
        Some(example) => {
            let (k, tags) = super::unknown_tree::kustomization(profile, catalog, user, &req.manifests_dir, example)?;
            (k, req.manifests_dir.join("kfctl-profile"), tags)
        }
        None => (profile.kustomization(catalog)?, req.manifests_dir.join("kfctl-profile"), Vec::new()),
    };
    let restriction = match profile.changes.has_files() {
        true => LoadRestriction::None,
        false => LoadRestriction::RootOnly,
    };
    let options = BuildOptions { remote: req.remote.clone(), restriction, strict_patches: true };
    let first_own_patch = k.patches.len() - profile.changes.patches.len();
    let (resources, outcome) = crate::render_cache::build_kustomization(&dir, &k, &options, read)
        .map_err(|e| profile.changes.explain(e, first_own_patch))?;
    let tag_of = |entry: &str| match example {
        Some(_) => tags.iter().find(|(e, _)| e == entry).map(|(_, c)| c.clone()),
        None => profile.component_of_entry(entry, catalog),
    };
    let mut peers = Vec::new();
    let mut objects: Vec<RenderedObject> = resources
        .into_vec()
        .into_iter()
        .enumerate()
        .map(|(index, r)| {
            let component = r.origin.as_deref().and_then(&tag_of).unwrap_or_else(|| attribute::UNKNOWN.into());
            let by = super::peers::peers_of(&r.influenced_by, &tag_of, &component);
            if !by.is_empty() {
                peers.push(super::peers::PeerDependent { index, peers: by });
            }
            RenderedObject { component, obj: r.obj, deferred: r.deferred }
        })
        .collect();
    super::default_namespace::fill(&mut objects, catalog);
    Ok((objects, peers, outcome))
}

fn unset_credentials(objects: &[RenderedObject], effective: &Value) -> Vec<&'static Credential> {
    let mut out: Vec<&'static Credential> = Vec::new();
    for cred in CREDENTIALS {
        let unset = values::get(effective, &cred.value_path()).and_then(Value::as_str).is_none_or(str::is_empty);
        if unset && objects.iter().any(|o| holds_default(cred, &o.obj)) && !out.iter().any(|c| c.value == cred.value) {
            out.push(cred);
        }
    }
    out
}

/// Whether `obj` (rendered) still holds the upstream default of `cred`: the field is there,
/// not emptied (`global.users` empties the demo hash), and a text still has the default.
fn holds_default(cred: &Credential, obj: &Value) -> bool {
    if !cred.matches(obj) {
        return false;
    }
    let field = obj.pointer(cred.field).and_then(Value::as_str).unwrap_or_default();
    match cred.encoding {
        params::Encoding::InText { needle, .. } => field.contains(needle),
        params::Encoding::Plain | params::Encoding::Base64 => !field.is_empty(),
    }
}
