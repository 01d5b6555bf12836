//! Components, profiles and values: what to render, and how values change it.
//!
//! - `component`: the catalog (`charts/`), hand-written metadata naming upstream folders;
//! - [`profile`]: which components and variants a profile enables, and the kustomization
//!   whose real `kustomize build` is that profile's default render (the 1:1 contract);
//! - `changes`: a profile file's own `resources`, `patches`, `images` and `replacements`;
//! - [`values`] and `schema`: Helm-style values layering and checking;
//! - `docs`: what every key of the values does (comments, schema descriptions, READMEs);
//! - [`credentials`]: upstream's well-known demo login, the one place it is known;
//! - [`params`]: the parameter table — every value is one parameter point applied to the
//!   rendered objects here *and* turned into a Helm expression by the chart export, so the
//!   two cannot drift;
//! - [`scheduling`]: which pod templates the scheduling values reach (users' runtimes and
//!   node agents scoped by the catalog's `podScopes`);
//! - [`provided`]: dependencies the cluster already runs (`<name>.provided`), and what
//!   Kubeflow needs from them;
//! - `users`: `global.users`, the Profiles and Dex logins replacing upstream's demo user;
//! - `identity`: Dex connectors, or oauth2-proxy straight to an external OIDC issuer;
//! - `workloads`: per-workload pod annotations, pod labels and extra env;
//! - [`render`](mod@render): profile + values + upstream source → objects, each tagged with its component;
//! - [`attribute`]: tags for a pre-rendered stream, inferred from catalog data (the only place).

pub mod access;
pub mod as_kustomize;
pub mod attribute;
pub(crate) mod changes;
pub(crate) mod component;
pub mod credentials;
pub(crate) mod docs;
pub(crate) mod existing_secrets;
pub(crate) mod external_store;
pub(crate) mod gateway;
pub(crate) mod guarded;
pub mod identify;
pub(crate) mod identity;
pub mod image_refs;
pub mod images;
pub mod inspect;
pub(crate) mod object_id;
pub mod params;
pub mod profile;
pub mod provided;
pub mod rehash;
pub mod render;
pub mod scheduling;
pub(crate) mod schema;
pub mod strvals;
pub(crate) mod users;
pub mod values;
pub(crate) mod workloads;

pub use component::{Catalog, ComponentDef};
pub use render::{RenderRequest, Rendered, RenderedObject, render};

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{path}: {message}")]
    Data { path: String, message: String },
    #[error(
        "profile `{name}` is not built in and is not a file; built-in profiles: {known} (or pass a path such as ./mine.yaml)"
    )]
    UnknownProfile { name: String, known: String },
    #[error("component `{name}` is not in the catalog{hint}; `kfctl-rs profile show multi-tenant` lists components")]
    UnknownComponent { name: String, hint: String },
    #[error("component `{component}` has no variant `{variant}`; its variants: {known}")]
    UnknownVariant { component: String, variant: String, known: String },
    #[error("release {release}: component `{component}` is {why}")]
    NotInRelease { release: String, component: String, why: String },
    #[error(
        "component `{component}`: this tree has none of its folders ({paths}) and no example/ entry builds it (`kfctl-rs source inspect` shows what the tree holds); leave it out ({flags}){provided} or pass a pinned release (--version)"
    )]
    NotInTree { component: String, paths: String, flags: String, provided: String },
    #[error("component `{component}` is not part of profile `{profile}`")]
    NotInProfile { component: String, profile: String },
    #[error("component `{component}` needs {missing}; {hint}")]
    MissingDependency { component: String, missing: String, hint: String },
    #[error(transparent)]
    Schema(#[from] schema::SchemaError),
    #[error(transparent)]
    Set(#[from] values::SetError),
    #[error(transparent)]
    Users(#[from] users::UsersError),
    #[error(transparent)]
    ExistingSecrets(#[from] existing_secrets::ExistingSecretsError),
    #[error(transparent)]
    Identity(#[from] identity::IdentityError),
    #[error(transparent)]
    Gateway(#[from] gateway::GatewayError),
    #[error(transparent)]
    Database(#[from] external_store::DatabaseError),
    #[error(
        "values: `{path}` sets `{name}`, which upstream's container already has; extra env takes new names only (change upstream's with a `patches` entry in your profile)"
    )]
    EnvTaken { path: String, name: String },
    #[error(transparent)]
    Registry(#[from] images::RegistryError),
    #[error("{file}: {entry}: {message}")]
    OwnChange { file: String, entry: String, message: String },
    #[error("{path}: cannot read values file: {message}")]
    ValuesFile { path: String, message: String },
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error("{object}: {message}")]
    NotExpressible { object: String, message: String },
    #[error(transparent)]
    Build(#[from] kfctl_kustomize::KustomizeError),
}
