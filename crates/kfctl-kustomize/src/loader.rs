//! All file access of the engine goes through the [`Loader`].
//!
//! It finds a folder's one kustomization file (two is an error, as in kustomize) and reads it
//! as kustomize does (a duplicate key keeps its last value; kind and apiVersion checked;
//! unsupported fields refused by [`crate::unsupported`]), reads files under kustomize's load
//! restriction (by default a file must be in or below the folder of the kustomization that
//! names it, judged on real paths after symlinks; [`LoadRestriction::None`] lifts it), resolves remote references through a
//! [`RemoteResolver`], and parses each YAML file at most once per build: parsed documents are
//! kept in a shared cache, and [`Loader::prefetch`] queues many files to be parsed on the
//! other cores while the accumulation runs ([`crate::parse_ahead`], which also holds the parse
//! itself, so that both use one).

use super::build_cache::inputs::{self, Recorder};
use super::error::{KustomizeError, Result};
use super::kustomization::{FILE_NAMES, Kustomization};
use super::parse_ahead::{BareNulls, Docs, Parsed, Queue, Slot, parse_file};
use crate::remote::{RemoteRef, RemoteResolver, is_remote};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Whether file reads are confined to the kustomization's folder (kustomize's
/// `--load-restrictor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadRestriction {
    /// `LoadRestrictionsRootOnly`, kustomize's default: a file must be in or below the folder of
    /// the kustomization that names it, judged on real paths (a violation is
    /// [`KustomizeError::OutsideRoot`]).
    #[default]
    RootOnly,
    /// `LoadRestrictionsNone`: any readable file may be named.
    None,
}

/// The engine's only way to the disk: reads kustomization files and manifests under a
/// [`LoadRestriction`], resolves remote references, and parses each file once per build.
pub struct Loader {
    remote: Arc<dyn RemoteResolver>,
    restriction: LoadRestriction,
    parsed: Mutex<HashMap<PathBuf, Arc<Slot>>>,
    /// Real paths resolved so far: the tree does not change under a build, and resolving
    /// symlinks costs a system call per path component.
    reals: crate::realpath::RealPaths,
    /// Kustomization files read so far, by folder (the prefetch walk reads them first).
    kustomizations: Mutex<HashMap<PathBuf, (PathBuf, Kustomization)>>,
    /// Files being parsed in the background, stopped when the loader is dropped.
    queues: Mutex<Vec<Arc<Queue>>>,
    /// Notes what the build read, for the build cache ([`crate::build_cache`]).
    recorder: Option<Arc<Recorder>>,
}

/// What a `resources:` entry turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A folder with its own kustomization (local or a fetched remote).
    Folder(PathBuf),
    /// A file of objects.
    File(PathBuf),
}

impl Loader {
    /// A loader with an empty parse cache, resolving remote references through `remote`.
    pub fn new(remote: Arc<dyn RemoteResolver>, restriction: LoadRestriction) -> Self {
        Loader {
            remote,
            restriction,
            parsed: Mutex::new(HashMap::new()),
            reals: crate::realpath::RealPaths::default(),
            kustomizations: Mutex::new(HashMap::new()),
            queues: Mutex::new(Vec::new()),
            recorder: None,
        }
    }

    /// A loader that notes every file it reads and path it resolves into `recorder`.
    pub(crate) fn recording(
        remote: Arc<dyn RemoteResolver>,
        restriction: LoadRestriction,
        recorder: Arc<Recorder>,
    ) -> Self {
        let mut loader = Loader::new(remote, restriction);
        loader.recorder = Some(recorder);
        loader
    }

    fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_deref()
    }

    /// `path.canonicalize()`, noted.
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        let real = self.real_path(path);
        if let Some(r) = self.recorder() {
            r.real(path, real.as_deref().ok());
        }
        real
    }

    /// `path.canonicalize()`, remembered for the rest of the build (not noted).
    pub(crate) fn real_path(&self, path: &Path) -> std::io::Result<PathBuf> {
        self.reals.of(path)
    }

    /// The real path of a folder; a folder that does not exist (a virtual kustomization's) is
    /// taken as written (see [`canonical_dir`]).
    fn real_dir(&self, dir: &Path) -> Result<PathBuf> {
        match self.real_path(dir) {
            Ok(real) => Ok(real),
            Err(_) => canonical_dir(dir),
        }
    }

    /// `path.is_dir()`, noted.
    fn is_dir(&self, path: &Path) -> bool {
        match self.recorder() {
            Some(r) => r.probe(path) == inputs::PathKind::Dir,
            None => path.is_dir(),
        }
    }

    /// The kustomization file of a folder and its parsed contents.
    pub fn kustomization(&self, dir: &Path) -> Result<(PathBuf, Kustomization)> {
        if let Some(read) = self.kustomizations.lock().expect("kustomization cache lock").get(dir) {
            return Ok(read.clone());
        }
        let read = self.read_kustomization(dir)?;
        self.kustomizations.lock().expect("kustomization cache lock").insert(dir.to_path_buf(), read.clone());
        Ok(read)
    }

    fn read_kustomization(&self, dir: &Path) -> Result<(PathBuf, Kustomization)> {
        let path = kustomization_file(dir, self.recorder())?;
        let text = inputs::read_text(self.recorder(), &path)
            .map_err(|source| KustomizeError::Read { path: path.clone(), source })?;
        let docs = kfctl_yaml::parse_stream_last_key_wins(&text, &path.display().to_string())?;
        let mut doc = docs.into_iter().next().unwrap_or(Value::Object(Default::default()));
        super::fieldcase::canonicalize_kustomization(&mut doc);
        let empty = is_empty_kustomization(&doc);
        let k: Kustomization = serde_json::from_value(doc).map_err(|e| KustomizeError::InvalidKustomization {
            path: path.clone(),
            message: explain_field_error(&e),
        })?;
        if empty {
            let message = "the kustomization is empty (no field but apiVersion and kind), which kustomize refuses \
                           (`kustomization.yaml is empty`); add resources or remove the file";
            return Err(KustomizeError::InvalidKustomization { path, message: message.into() });
        }
        self.refuse_absolute_folders(&path, dir, &k)?;
        check_type(&path, &k)?;
        super::unsupported::check(&k, &path)?;
        Ok((path, k))
    }

    /// kustomize refuses a folder named by an absolute path in `resources:` or `components:`
    /// (`new root ... cannot be absolute`); an absolute *file* is read under the load
    /// restriction like any other. Profiles' in-memory kustomizations are not read here.
    fn refuse_absolute_folders(&self, path: &Path, dir: &Path, k: &Kustomization) -> Result<()> {
        let lists = [("resources", &k.resources), ("bases", &k.bases), ("components", &k.components)];
        for (field, entries) in lists {
            let absolute = entries.iter().find(|e| Path::new(e).is_absolute() && self.is_dir(&clean_join(dir, e)));
            if let Some(entry) = absolute {
                let message = format!(
                    "{field}: `{entry}` is a folder named by an absolute path, which kustomize refuses (a new root \
                     cannot be absolute); name it relative to this kustomization's folder"
                );
                return Err(KustomizeError::InvalidKustomization { path: path.to_path_buf(), message });
            }
        }
        Ok(())
    }

    /// Resolve a `resources:`/`components:` entry of the kustomization in `dir`.
    pub(crate) fn resolve_entry(&self, dir: &Path, entry: &str) -> Result<Entry> {
        if is_remote(entry) {
            let reference = RemoteRef::parse(entry)?;
            let path = self.remote.resolve(&reference)?;
            if let Some(r) = self.recorder().filter(|_| self.remote.cache_identity().is_none()) {
                r.unkeyed_remote.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return Ok(if self.is_dir(&path) { Entry::Folder(path) } else { Entry::File(path) });
        }
        let path = clean_join(dir, entry);
        let real = self.canonicalize(&path).map_err(|source| KustomizeError::Read { path: path.clone(), source })?;
        if self.is_dir(&real) {
            Ok(Entry::Folder(real))
        } else {
            self.check_restriction(dir, &real)?;
            Ok(Entry::File(real))
        }
    }

    /// The real path of a file named relative to `dir`, checked against the load restriction.
    pub(crate) fn restricted_path(&self, dir: &Path, relative: &str) -> Result<PathBuf> {
        let path = clean_join(dir, relative);
        let real = self.canonicalize(&path).map_err(|source| KustomizeError::Read { path: path.clone(), source })?;
        self.check_restriction(dir, &real)?;
        Ok(real)
    }

    fn check_restriction(&self, dir: &Path, real: &Path) -> Result<()> {
        if self.restriction == LoadRestriction::None {
            return Ok(());
        }
        let root = self.real_dir(dir)?;
        if let Some(r) = self.recorder() {
            r.real(dir, self.real_path(dir).ok().as_deref());
        }
        if real.starts_with(&root) {
            Ok(())
        } else {
            Err(KustomizeError::OutsideRoot { path: real.to_path_buf(), root })
        }
    }

    /// Read a file named relative to `dir` as text, under the load restriction.
    pub(crate) fn read_text(&self, dir: &Path, relative: &str) -> Result<(PathBuf, String)> {
        let real = self.restricted_path(dir, relative)?;
        let text = inputs::read_text(self.recorder(), &real)
            .map_err(|source| KustomizeError::Read { path: real.clone(), source })?;
        Ok((real, text))
    }

    /// Read a file as bytes, under the load restriction.
    pub(crate) fn read_bytes(&self, dir: &Path, relative: &str) -> Result<(PathBuf, Vec<u8>)> {
        let real = self.restricted_path(dir, relative)?;
        let bytes = match self.recorder() {
            Some(r) => r.read(&real),
            None => crate::read::read_file(&real),
        }
        .map_err(|source| KustomizeError::Read { path: real.clone(), source })?;
        Ok((real, bytes))
    }

    /// The parsed documents of a file (by real path), parsing it at most once.
    pub(crate) fn documents(&self, path: &Path) -> Result<Docs> {
        self.documents_with_bare_nulls(path).map(|(docs, _)| docs)
    }

    /// The parsed documents of a file and, per document, where it has bare nulls.
    pub(crate) fn documents_with_bare_nulls(&self, path: &Path) -> Result<(Docs, BareNulls)> {
        let slot = self.parsed.lock().expect("parse cache lock").get(path).cloned();
        if let Some(parsed) = slot.and_then(|slot| slot.get(|| self.parse_quietly(path))) {
            return Ok(parsed);
        }
        let parsed = parse_file(path, self.recorder())?;
        self.parsed.lock().expect("parse cache lock").insert(path.to_path_buf(), Arc::new(Slot::done(parsed.clone())));
        Ok(parsed)
    }

    /// The documents of an object file, taken out of the cache (no copy): object files are
    /// consumed once per build, and a file read again is simply parsed again.
    pub(crate) fn take_documents(&self, path: &Path) -> Result<(Vec<Value>, Vec<Vec<String>>)> {
        let slot = self.parsed.lock().expect("parse cache lock").remove(path);
        let (docs, bare) = match slot.and_then(|slot| slot.take(|| self.parse_quietly(path))) {
            Some(parsed) => parsed,
            None => parse_file(path, self.recorder())?,
        };
        let docs = Arc::try_unwrap(docs).unwrap_or_else(|shared| (*shared).clone());
        let bare = Arc::try_unwrap(bare).unwrap_or_else(|shared| (*shared).clone());
        Ok((docs, bare))
    }

    /// A parse whose error is left for [`parse_file`] to report again.
    fn parse_quietly(&self, path: &Path) -> Option<Parsed> {
        parse_file(path, self.recorder()).ok()
    }

    /// Queue many files (in the order they will be consumed) to be parsed on the rayon pool
    /// while the caller goes on ([`crate::parse_ahead`]). Errors are left for the sequential
    /// pass, which reports them in context.
    pub(crate) fn prefetch(&self, paths: Vec<PathBuf>) {
        let mut cache = self.parsed.lock().expect("parse cache lock");
        let mut queued = std::collections::HashSet::new();
        let todo: Vec<PathBuf> =
            paths.into_iter().filter(|p| !cache.contains_key(p) && queued.insert(p.clone())).collect();
        let queue = Queue::new(todo, self.recorder.clone());
        cache.extend(queue.slots().map(|(path, slot)| (path.to_path_buf(), Arc::clone(slot))));
        drop(cache);
        queue.start();
        self.queues.lock().expect("parse queue lock").push(queue);
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.queues.get_mut().map(|queues| queues.iter().for_each(|q| q.cancel())).ok();
    }
}

/// kind must be Kustomization or Component, and a set apiVersion the one of that kind.
fn check_type(path: &Path, k: &Kustomization) -> Result<()> {
    let invalid = |message: String| Err(KustomizeError::InvalidKustomization { path: path.to_path_buf(), message });
    let kind = k.kind.as_deref().unwrap_or("Kustomization");
    let expected = match kind {
        "Kustomization" => "kustomize.config.k8s.io/v1beta1",
        "Component" => "kustomize.config.k8s.io/v1alpha1",
        other => return invalid(format!("kind `{other}` is not Kustomization or Component")),
    };
    match k.api_version.as_deref().filter(|v| !v.is_empty()) {
        Some(version) if version != expected => invalid(format!(
            "apiVersion for {kind} should be {expected}, not `{version}`; fix the apiVersion or remove it"
        )),
        _ => Ok(()),
    }
}

/// kustomize's test for an empty kustomization, on the document as read: every field but
/// `apiVersion` and `kind` is absent, null or an empty string (an empty list or map is a value).
fn is_empty_kustomization(doc: &Value) -> bool {
    match doc {
        Value::Null => true,
        Value::Object(fields) => fields
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "apiVersion" | "kind"))
            .all(|(_, value)| value.is_null() || value.as_str() == Some("")),
        _ => false,
    }
}

/// The one kustomization file of a folder. Like kustomize, more than one is an error.
fn kustomization_file(dir: &Path, recorder: Option<&Recorder>) -> Result<PathBuf> {
    let is_file = |p: &PathBuf| match recorder {
        Some(r) => r.probe(p) == inputs::PathKind::File,
        None => p.is_file(),
    };
    let found: Vec<PathBuf> = FILE_NAMES.iter().map(|n| dir.join(n)).filter(is_file).collect();
    match found.as_slice() {
        [] => Err(KustomizeError::NoKustomization { dir: dir.to_path_buf() }),
        [one] => Ok(one.clone()),
        many => {
            let names: Vec<String> =
                many.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
            Err(KustomizeError::MultipleKustomizations { dir: dir.to_path_buf(), found: names.join(", ") })
        }
    }
}

/// Join and clean `..` and `.` lexically, as Go's `filepath.Join` does before any symlink
/// is looked at. This also lets a virtual folder (an in-memory kustomization) name siblings.
pub(crate) fn clean_join(dir: &Path, relative: &str) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in dir.join(relative).components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The real path of a folder; a folder that does not exist (a virtual kustomization's) is
/// taken as written.
pub(crate) fn canonical_dir(dir: &Path) -> Result<PathBuf> {
    match dir.canonicalize() {
        Ok(real) => Ok(real),
        Err(_) if !dir.exists() => Ok(dir.to_path_buf()),
        Err(source) => Err(KustomizeError::Read { path: dir.to_path_buf(), source }),
    }
}

/// serde's "unknown field `x`, expected one of ..." becomes a kustomize-like message with a hint.
fn explain_field_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.starts_with("unknown field") {
        format!("invalid Kustomization: {text}; check the spelling (kustomize refuses unknown fields)")
    } else {
        format!("invalid Kustomization: {text}")
    }
}
