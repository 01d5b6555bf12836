//! The engine's error type. Every variant names the file, folder or object at fault.
//!
//! The refusals of the steps below a build are typed too — [`FieldError`] (what a transformer
//! found at a field), [`PatchError`], [`GeneratorError`], [`ConflictingFieldSpec`] — and ride
//! as the `source` of a [`KustomizeError`] variant that adds the object, field or file.

use super::gvk::Gvk;
use super::kustomization::FieldSpec;
use super::resource::ResId;
use std::path::PathBuf;

/// Why a build failed. The message names the file, folder, entry or object at fault, and with
/// it how to fix the input where there is one way to.
#[derive(Debug, thiserror::Error)]
pub enum KustomizeError {
    /// A file or folder the build needs could not be read (or its real path resolved).
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The path that failed.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A build cache entry whose checksum holds but whose deferred CRD schema does not decode.
    #[error("{}: damaged build cache entry (a CRD schema in it does not decode); remove the file, or run `kfctl-rs source clean`", path.display())]
    DamagedCacheEntry {
        /// The entry file.
        path: PathBuf,
    },
    /// A folder named as a kustomization (or a `resources:` entry) has no kustomization file.
    #[error("{}: no kustomization.yaml, kustomization.yml or Kustomization in this folder", dir.display())]
    NoKustomization {
        /// The folder without one.
        dir: PathBuf,
    },
    /// A folder has more than one of the recognised kustomization file names.
    #[error("{}: found more than one kustomization file ({found}); keep only one, as kustomize requires", dir.display())]
    MultipleKustomizations {
        /// The folder.
        dir: PathBuf,
        /// The file names found, comma-separated.
        found: String,
    },
    /// A kustomization field kustomize knows but kfctl-rs does not implement (the helm fields,
    /// `validators`, `openapi: path:` in a base, `buildMetadata` where it cannot be tracked):
    /// refused rather than ignored, so the output never silently differs from kustomize's.
    #[error("{}: `{field}` is not supported by kfctl-rs; {hint}", path.display())]
    Unsupported {
        /// The kustomization file using it.
        path: PathBuf,
        /// The field, as written in the file (for example `helmCharts`), or what about it is
        /// refused.
        field: String,
        /// What to do instead.
        hint: String,
    },
    /// A `generators:`, `transformers:` or `validators:` entry naming a plugin the engine has no
    /// builtin for (an exec or container plugin, or an unknown kind).
    #[error("{}: `{field}` entry ({what}) is not supported by kfctl-rs; {hint}", path.display())]
    UnsupportedPlugin {
        /// The kustomization file listing it.
        path: PathBuf,
        /// The list it is in (`generators`, `transformers` or `validators`).
        field: String,
        /// The plugin as identified (its kind or file).
        what: String,
        /// What to do instead.
        hint: String,
    },
    /// A kustomization (or a file it names, such as an `openapi:` schema) that does not parse
    /// or fails kustomize's checks: an unknown field, a wrong `kind` or `apiVersion`, a bad value.
    #[error("{}: {message}", path.display())]
    InvalidKustomization {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A manifest or configuration file is not valid YAML, or exceeds the reading bounds.
    #[error(transparent)]
    Yaml(#[from] kfctl_yaml::YamlError),
    /// A remote reference could not be parsed or resolved to a local path.
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    /// A file outside the kustomization's folder, read under [`crate::LoadRestriction::RootOnly`]
    /// (judged on real paths, so a symlink out of the tree counts).
    #[error("security: {} is outside {}; kustomize's load restrictor only allows files in or below the kustomization's folder (move the file, or reference a folder that has its own kustomization)", path.display(), root.display())]
    OutsideRoot {
        /// The real path of the file asked for.
        path: PathBuf,
        /// The real path of the folder it had to stay in.
        root: PathBuf,
    },
    /// A kustomization that includes itself, directly or through other folders.
    #[error("{}: cycle detected: this folder is already being built higher up ({chain})", dir.display())]
    Cycle {
        /// The folder met a second time.
        dir: PathBuf,
        /// The folders being built when it was met, from the top down, joined by ` -> `.
        chain: String,
    },
    /// A document of a resource file that is not a map with `apiVersion`, `kind` and a name.
    #[error("{origin}: a document is not a Kubernetes object: {message}")]
    NotAnObject {
        /// The file (or generator) the document came from.
        origin: String,
        /// What the document lacks.
        message: String,
    },
    /// Two objects with the same id (gvk, name and namespace) in one build.
    #[error(
        "may not add resource with an already registered id: {id} (from {origin}); remove the duplicate or give it another name or namespace"
    )]
    DuplicateId {
        /// The id both objects have.
        id: Box<ResId>,
        /// The entry the second object came from.
        origin: String,
    },
    /// A generator or transformer refused its input (a bad field spec, an unresolvable var, a
    /// replacement with no source, an invalid `sortOptions`, …).
    #[error("{context}: {message}")]
    Transform {
        /// Which step and entry, in kustomize's words (for example `patchesJson6902 ops.yaml`).
        context: String,
        /// What went wrong.
        message: String,
    },
    /// With [`crate::BuildOptions::strict_patches`], a top-level `patches` entry that changed no
    /// object.
    #[error("patches entry {index} (counting from 0): {message}")]
    TopPatch {
        /// The entry's position in the kustomization's `patches` list.
        index: usize,
        /// Why it matched nothing.
        message: String,
    },
    /// A strategic merge patch could not be applied to its target.
    #[error("{context}: {source}")]
    Merge {
        /// The patch and the object it was applied to.
        context: String,
        /// The merge's own error.
        source: super::merge::MergeError,
    },
    /// A field of an object that a transformer could not read or write (namespace, name
    /// prefix and suffix, images), after the object (and step) it is in.
    #[error("{context}: {source}")]
    Field {
        /// The object, as its id, and where needed the step.
        context: String,
        /// What was found at the field instead.
        source: FieldError,
    },
    /// A field spec's path that meets what the transformer cannot handle.
    #[error("{object}: considering field '{field}': {source}; fix the object or the field spec")]
    FieldSpec {
        /// The object, as its id.
        object: String,
        /// The field spec's path.
        field: String,
        /// What was found there.
        source: FieldError,
    },
    /// A name reference field the name-reference fix-up cannot update.
    #[error("{object}: updating the name reference in `{field}`: {source}")]
    NameReference {
        /// The referring object, as its id.
        object: String,
        /// The field spec's path.
        field: String,
        /// Why the field cannot be updated.
        source: FieldError,
    },
    /// A `vars` field spec whose field cannot take a var's value.
    #[error("vars: considering field '{field}' of object {object}: {source}")]
    VarField {
        /// The object, as kustomize prints its id.
        object: String,
        /// The field spec's path.
        field: String,
        /// What was found there.
        source: FieldError,
    },
    /// A replacement target's `fieldPaths` entry that cannot be followed in the object.
    #[error("replacements: unable to find field \"{field}\" in replacement target: {source}")]
    ReplacementTarget {
        /// The field path.
        field: String,
        /// What was found on the way.
        source: FieldError,
    },
    /// A patch that cannot be read or applied.
    #[error("{context}: {source}")]
    Patch {
        /// The step and the patch (for example `patchesJson6902 [path: "ops.yaml"]`).
        context: String,
        /// Why.
        source: PatchError,
    },
    /// A strategic merge patch without a target whose own id matches no object, or several.
    #[error("patches: no resource matches strategic merge patch \"{id}\": {source}")]
    NoPatchTarget {
        /// The patch's id, as kustomize prints it.
        id: String,
        /// How many matched.
        source: PatchError,
    },
    /// A generator's source (an env file, a literal, a file source) that does not parse.
    #[error("{context}: {source}")]
    Generator {
        /// The env file, or the kind of source (`literal source`, `file source`).
        context: String,
        /// What is wrong with it.
        source: GeneratorError,
    },
    /// `configurations` (or `crds`) declaring one field both with and without `create`.
    #[error("{context}: {source}")]
    ConflictingFieldSpecs {
        /// The file (and field) the configuration came from.
        context: String,
        /// The two declarations.
        source: Box<ConflictingFieldSpec>,
    },
    /// A `crds` file in JSON that does not parse.
    #[error("{origin}: unable to parse open API definition: {source}")]
    CrdSchema {
        /// The file.
        origin: String,
        /// The parser's reason.
        source: serde_json::Error,
    },
    /// A custom schema file named by `openapi: path:` that cannot be used.
    #[error("{}: invalid schema file: {source} (a swagger 2.0 document with `definitions`)", path.display())]
    Schema {
        /// The schema file's real path.
        path: PathBuf,
        /// What is wrong with it.
        source: super::merge::SchemaError,
    },
}

/// Two field specs for the same field of the same kinds, one with `create` and one without.
#[derive(Debug, Clone, PartialEq)]
pub struct ConflictingFieldSpec {
    /// The configuration list, as kustomize names it (`CommonLabels`, `NameReference`, ...).
    pub list: &'static str,
    /// The field spec declared twice.
    pub spec: FieldSpec,
}

impl std::error::Error for ConflictingFieldSpec {}

impl std::fmt::Display for ConflictingFieldSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let gvk = Gvk::new(&self.spec.group, &self.spec.version, &self.spec.kind);
        let kinds = if gvk == Gvk::default() { "all kinds".to_string() } else { gvk.to_string() };
        write!(
            f,
            "failed to merge {} fieldSpec: conflicting fieldspecs: path `{}` for {kinds} is declared both with and without `create`; declare it once",
            self.list, self.spec.path
        )
    }
}

/// What a transformer found at a field instead of what it can read or write.
#[derive(Debug, thiserror::Error)]
pub enum FieldError {
    /// A scalar where the path goes on: the path segment and the type found.
    #[error("expected sequence or mapping node at `{0}`, found {1}")]
    NotAContainerAt(String, &'static str),
    /// A scalar where a `vars` field spec's path goes on.
    #[error("expected sequence or mapping node")]
    NotAContainer,
    /// Labels or annotations added where there is no map: the type found.
    #[error("expected a map to add entries to, found {0}")]
    NotAMap(&'static str),
    /// A replica count field holding a map or list: the type found.
    #[error("expected a replica count, found {0}")]
    NotACount(&'static str),
    /// An `image` field holding a map or list: the type found.
    #[error("expected an image name, found {0}")]
    NotAnImage(&'static str),
    /// An error inside a `containers` or `initContainers` list: the list's key and the error.
    #[error("{0}: {1}")]
    InList(String, Box<FieldError>),
    /// A namespace field spec reaching a map or list: the path and what it reached.
    #[error("namespace field specs must target scalar nodes: `{0}` is a {1}; fix the field spec's path")]
    NamespaceNotScalar(String, &'static str),
    /// A name prefix or suffix field spec reaching a map or list: the path.
    #[error(
        "name prefix and suffix field specs must target scalar nodes: `{0}` is not a scalar; fix the field spec's path"
    )]
    AffixNotScalar(String),
    /// A name reference field that is a map without `name`.
    #[error("path config error: the field is a map without a `name` field; point the field spec at the name")]
    NoName,
    /// A name reference that several objects could answer: the name and their ids.
    #[error(
        "found multiple possible referrals for `{0}`: {1}; give them distinct names or namespaces, or the same name prefixes and suffixes as the referrer"
    )]
    AmbiguousReferral(String, String),
    /// A var expanded into a list with an item that is not a string.
    #[error("invalid value type expect a string")]
    NotAString,
    /// A list index past the end: the index and the list's length.
    #[error("index {0} is out of range for a list of {1}")]
    OutOfRange(usize, usize),
    /// A `[key=pattern]` path segment whose pattern is not a regular expression.
    #[error("invalid regular expression in {0}: {1}")]
    BadRegex(String, regex::Error),
    /// Another YAML node kind than the path needs: expected and found, in kyaml's words.
    #[error("wrong node kind: expected {0} but got {1}")]
    WrongKind(&'static str, &'static str),
}

/// Why patch text is not a patch of its kind, or cannot be applied.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The text is not valid YAML.
    #[error(transparent)]
    Yaml(#[from] kfctl_yaml::YamlError),
    /// A document of a strategic merge patch is not an object.
    #[error(transparent)]
    Object(Box<KustomizeError>),
    /// The text is not JSON, or does not decode as a list of JSON patch operations.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// YAML text of a JSON patch with other than one document.
    #[error("expected one list of operations")]
    NotOneList,
    /// Operations that do not decode as a JSON patch.
    #[error("not a JSON patch: {0}")]
    NotAPatch(serde_json::Error),
    /// An operation that cannot be applied.
    #[error(transparent)]
    Apply(#[from] json_patch::PatchError),
    /// No object has the patch's id (kustomize's id text).
    #[error("no matches for Id {0}; failed to find unique target for patch {0}")]
    NoMatch(String),
    /// Several objects have the patch's id (kustomize's id text).
    #[error("multiple matches for Id {0}; failed to find unique target for patch {0}")]
    MultipleMatches(String),
}

/// Why a generator's source does not parse.
#[derive(Debug, thiserror::Error)]
pub enum GeneratorError {
    /// An env file line that is not UTF-8: its number, from 1.
    #[error("line {0} has invalid utf8 bytes")]
    InvalidUtf8(usize),
    /// A literal source that is not `key=value`.
    #[error("invalid literal source {0}, expected key=value")]
    Literal(String),
    /// A file source `=path`: the path and the source.
    #[error("missing key name for file path {0:?} in source {1:?}")]
    MissingKey(String, String),
    /// A file source with more than one `=`.
    #[error("source {0:?} key name or file path contains '='")]
    ExtraEquals(String),
    /// A file source `key=`: the key and the source.
    #[error("missing file path for key name {0:?} in source {1:?}")]
    MissingPath(String, String),
}

impl KustomizeError {
    pub(crate) fn transform(context: impl Into<String>, message: impl Into<String>) -> Self {
        KustomizeError::Transform { context: context.into(), message: message.into() }
    }
}

/// The engine's result type.
pub type Result<T> = std::result::Result<T, KustomizeError>;
