//! Components, profiles and values: what to render, and how values change it.
//!
//! - `component`: the catalog (`charts/`), hand-written metadata naming upstream folders;
//! - [`profile`]: which components and variants a profile enables, and the kustomization
//!   whose real `kustomize build` is that profile's default render (the 1:1 contract);
//! - `changes`: a profile file's own `resources`, `patches`, `images` and `replacements`;
//! - [`values`] and `schema`: Helm-style values layering and checking;
//! - `docs`: what every key of the values does (comments, schema descriptions, READMEs);
//! - [`credentials`]: upstream's well-known demo login, the one place it is known;
//! - [`platforms`]: the platforms upstream's images are published for, with their sources;
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
pub(crate) mod aliases;
pub mod as_kustomize;
pub mod attribute;
pub(crate) mod changes;
pub(crate) mod component;
pub mod credentials;
pub mod default_namespace;
pub mod defaults;
pub mod deferred;
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
pub mod peers;
pub mod platforms;
pub mod profile;
pub mod provided;
pub mod rehash;
pub mod render;
pub mod scheduling;
pub(crate) mod schema;
pub mod strvals;
mod traverse;
mod unknown_tree;
pub(crate) mod users;
pub mod values;
pub(crate) mod workloads;

pub use component::{Catalog, ComponentDef};
pub use render::{RenderRequest, Rendered, RenderedObject, render};

/// Why loading the catalog, a profile or the values, or rendering them, failed.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A data file (a profile, the provided-components table) does not parse or holds an invalid
    /// entry.
    #[error("{path}: {message}")]
    Data {
        /// The data file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// A profile file the user wrote does not parse or holds an invalid entry (the user's
    /// input: a usage error, where a built-in profile's is [`CatalogError::Data`]).
    #[error("{path}: {message}")]
    ProfileFile {
        /// The profile file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The profile name is neither a built-in profile nor a readable file.
    #[error(
        "profile `{name}` is not built in and is not a file; built-in profiles: {known} (or pass a path such as ./mine.yaml)"
    )]
    UnknownProfile {
        /// The name given.
        name: String,
        /// The built-in profiles, comma-separated.
        known: String,
    },
    /// A component named on the command line or in a profile is not in the catalog.
    #[error("component `{name}` is not in the catalog{hint}; `kfctl-rs profile show multi-tenant` lists components")]
    UnknownComponent {
        /// The name given.
        name: String,
        /// A did-you-mean suffix, or empty.
        hint: String,
    },
    /// A component is asked for with a variant it does not have.
    #[error("component `{component}` has no variant `{variant}`; its variants: {known}")]
    UnknownVariant {
        /// The component whose variant was asked for.
        component: String,
        /// The variant asked for.
        variant: String,
        /// Its variants, comma-separated.
        known: String,
    },
    /// The component does not exist at the selected release (added later, or removed).
    #[error("release {release}: component `{component}` is {why}")]
    NotInRelease {
        /// The selected release.
        release: String,
        /// The component asked for.
        component: String,
        /// Why, as the message words it (not yet added, or removed, and how to leave it out).
        why: String,
    },
    /// The source tree has none of the components' folders and no example entry builds them.
    #[error(
        "{component}: this tree has none of {its} folders ({paths}) and no example/ entry builds {it} (`kfctl-rs source inspect` shows what the tree holds); leave {it} out ({flags}){provided} or pass a pinned release (--version)",
        its = if *.several { "their" } else { "its" },
        it = if *.several { "them" } else { "it" }
    )]
    NotInTree {
        /// The components whose folders are missing: ``component `a` `` or
        /// ``components `a`, `b` ``.
        component: String,
        /// Whether several components are missing (the message says "them").
        several: bool,
        /// The folders looked for.
        paths: String,
        /// The flags that leave it out.
        flags: String,
        /// How to say the cluster provides it instead, or empty.
        provided: String,
    },
    /// A component left out shares its folder with an enabled one (upstream merged them) in a
    /// tree the catalog does not describe.
    #[error(
        "component `{part}` is in folder {folder} with {with}: it cannot be left out alone; leave them all out ({flags}) or keep `{part}`"
    )]
    MergedFolder {
        /// The component left out.
        part: String,
        /// The folder that holds it.
        folder: String,
        /// What else the folder holds.
        with: String,
        /// The flags that leave the whole folder out.
        flags: String,
    },
    /// `--component` names a component the profile does not have.
    #[error("component `{component}` is not part of profile `{profile}`")]
    NotInProfile {
        /// The component named with `--component`.
        component: String,
        /// The profile rendered.
        profile: String,
    },
    /// One part of a merged component is left out while the rest stays (a merged folder
    /// builds whole).
    #[error(
        "component `{part}` is part of `{component}` in release {release} (folder {folders}, with {with}): it cannot be left out alone; leave out all of it (--set {component}.enabled=false) or keep `{part}`"
    )]
    MergedPart {
        /// The release.
        release: String,
        /// The part named (an old component name).
        part: String,
        /// The merged component that holds it.
        component: String,
        /// The merged component's folders.
        folders: String,
        /// What else the merged component holds.
        with: String,
    },
    /// A component is asked for without a component it needs.
    #[error("component `{component}` needs {missing}; {hint}")]
    MissingDependency {
        /// The component that needs the others.
        component: String,
        /// The components it needs that are not in the selection.
        missing: String,
        /// How to add them.
        hint: String,
    },
    /// An object's fields depend on more other components than the chart export builds
    /// variants for.
    #[error(
        "{object}: its fields depend on whether each of {peers} is installed, more than the {max} components the chart export builds variants for; export with fewer components (--components) or use `kfctl-rs template`"
    )]
    TooManyPeers {
        /// The object, as `Kind namespace/name`.
        object: String,
        /// The components it depends on.
        peers: String,
        /// The most the export handles.
        max: usize,
    },
    /// A build with some components left out lost an object of another component.
    #[error(
        "{object}: expected in the build without {off} (its component stays), but that build has no such object; this is a kfctl-rs bug, please report it with the command line"
    )]
    PeerVariantMissing {
        /// The object, as `Kind namespace/name`.
        object: String,
        /// The components left out.
        off: String,
    },
    /// The values break their schema.
    #[error(transparent)]
    Schema(#[from] schema::SchemaError),
    /// A `--set` expression does not parse or does not fit the values.
    #[error(transparent)]
    Set(#[from] values::SetError),
    /// `global.users` is invalid.
    #[error(transparent)]
    Users(#[from] users::UsersError),
    /// A `global.existingSecrets` entry is invalid.
    #[error(transparent)]
    ExistingSecrets(#[from] existing_secrets::ExistingSecretsError),
    /// The identity values (Dex connectors, external OIDC) are invalid.
    #[error(transparent)]
    Identity(#[from] identity::IdentityError),
    /// The gateway values are invalid.
    #[error(transparent)]
    Gateway(#[from] gateway::GatewayError),
    /// `pipelines.database` cannot be used.
    #[error(transparent)]
    Database(#[from] external_store::DatabaseError),
    /// A workload's extra env sets a name upstream's container already has.
    #[error(
        "values: `{path}` sets `{name}`, which upstream's container already has; extra env takes new names only (change upstream's with a `patches` entry in your profile)"
    )]
    EnvTaken {
        /// The values path that sets it.
        path: String,
        /// The env variable.
        name: String,
    },
    /// The image registry values are invalid.
    #[error(transparent)]
    Registry(#[from] images::RegistryError),
    /// A profile file's own `resources`, `patches`, `images` or `replacements` entry is invalid.
    #[error("{file}: {entry}: {message}")]
    OwnChange {
        /// The profile file.
        file: String,
        /// The entry.
        entry: String,
        /// What is wrong with it.
        message: String,
    },
    /// A values file cannot be read.
    #[error("{path}: cannot read values file: {message}")]
    ValuesFile {
        /// The values file.
        path: String,
        /// The read error.
        message: String,
    },
    /// An input file is missing, unreadable or over the size limit.
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// The render outgrew its limit ([`crate::input::max_render_bytes`]): a value copied onto
    /// many objects is the usual cause.
    #[error(
        "the render is larger than its limit ({} MiB, already {} MiB when stopped; the limit is 32 MiB + 2 x the default render + 8 x your values): a long value copied onto every object (global.commonLabels, global.commonAnnotations) is the likely cause; shorten it",
        limit / (1024 * 1024),
        size / (1024 * 1024)
    )]
    RenderTooLarge {
        /// The objects' size when the render stopped (bytes, as JSON).
        size: u64,
        /// The limit (bytes).
        limit: u64,
    },
    /// `--as-kustomization`: what the values change in an object cannot be written as a patch.
    #[error("{object}: {message}")]
    NotExpressible {
        /// The object, as `Kind namespace/name`.
        object: String,
        /// Why it cannot be expressed.
        message: String,
    },
    /// The kustomize engine failed to build a component.
    #[error(transparent)]
    Build(#[from] kfctl_kustomize::KustomizeError),
}
