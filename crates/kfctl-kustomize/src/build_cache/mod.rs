//! The build cache: an engine result kept on disk and served again while nothing it read
//! has changed.
//!
//! An entry's name is the sha256 of everything that decides a build besides the files it
//! reads: the entry format, the engine's version and the caller's (kfctl-rs's version), the
//! running executable's size and mtime (so a rebuilt binary of the same version never serves
//! an older engine's result), the folder, the in-memory kustomization (if any), the load
//! restriction and the remote resolver's identity. Its content records what the build read
//! (every file with its digest and [`Stat`], every probed path, as JSON on the second line)
//! and the objects it made, each with its origin and the entries that influenced it, as
//! binary records decoded in parallel (`binary.rs`: no text to parse back). A CRD's version
//! schemas, most of a platform's bytes, are kept apart with the CRD's YAML text, and a reader
//! that asks may leave them undecoded (`deferred.rs`).
//!
//! - **Verified on read**: the first line holds the CRC-32 of the rest; a torn, truncated or
//!   edited entry does not match and is rebuilt (and overwritten). A checksum, not a digest:
//!   it guards against accidents, as a digest would not guard against a hand that can also
//!   write the header (the folder is the user's own), and it costs a millisecond on the 5 MB
//!   of a whole platform where sha256 cost several, on each of the builds an export reads.
//! - **Never stale**: every recorded input is checked before the objects are used; any change
//!   (a file's content, a kustomization file appearing, a symlink pointing elsewhere) is a
//!   miss.
//! - **Safe under concurrent processes**: entries are written to a temporary file in the same
//!   folder and renamed into place; readers see a whole entry or none.
//! - **Bounded**: after each write the oldest entries (by mtime; a hit refreshes it) are
//!   removed until the folder holds at most [`CacheSettings::max_bytes`].
//! - **Best effort**: a cache that cannot be read or written never fails the build; the build
//!   runs as if there were no cache.
//!
//! Builds that resolve a remote reference through a resolver without a
//! [`crate::remote::RemoteResolver::cache_identity`] are not stored.

mod binary;
mod deferred;
pub(crate) mod inputs;
mod store;

pub use deferred::Deferred;
use deferred::Regions;
pub use inputs::{RACY_SECONDS, Stat};
use std::sync::OnceLock;

use crate::error::Result;
use crate::kustomization::Kustomization;
use crate::loader::Loader;
use crate::resmap::ResMap;
use crate::resource::Resource;
use crate::{BuildOptions, prefetch};
use inputs::{Input, Recorder, sha256_hex};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Bump when the entry layout or the meaning of its content changes.
const FORMAT: &str = "kfctl-build-cache 5";

/// An entry's file name is its key and this extension.
const ENTRY_EXTENSION: &str = "entry";

/// The extension of entries before format 4 (JSON): never read again, removed by the bound
/// first as the least recently used.
const OLD_ENTRY_EXTENSION: &str = "json";

/// Where the cache lives and how large it may grow.
#[derive(Debug, Clone)]
pub struct CacheSettings {
    /// The folder holding the entries (created on the first write).
    pub dir: PathBuf,
    /// The caller's version (kfctl-rs's), part of every key.
    pub version: String,
    /// The most the folder may hold; the least recently used entries are removed beyond it.
    pub max_bytes: u64,
}

/// What the cache did for one build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Served from the cache.
    Hit,
    /// Built and stored.
    Stored,
    /// Built; not stored (an unkeyed remote reference, or the cache could not be written).
    NotStored,
}

/// [`crate::build`] through the cache.
#[cfg(test)]
pub(crate) fn build(dir: &Path, options: &BuildOptions, settings: &CacheSettings) -> Result<(ResMap, Outcome)> {
    let material = format!("folder\0{}", dir.display());
    cached(settings, &material, options, Read::default(), |loader| {
        prefetch::warm(loader, dir);
        crate::build_folder(loader, dir)
    })
}

/// [`crate::build_kustomization`] through the cache.
pub fn build_kustomization(
    dir: &Path,
    kustomization: &Kustomization,
    options: &BuildOptions,
    settings: &CacheSettings,
) -> Result<(ResMap, Outcome)> {
    build_kustomization_named(dir, kustomization, options, settings, Read::default())
}

/// What a hit decodes (see [`build_kustomization_named`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Read<'a> {
    /// Only the objects named one of these (`None`: all).
    pub names: Option<&'a [String]>,
    /// Leave each CRD's version schemas in the entry: the object is a stub holding `null` in
    /// their place, and [`Resource::deferred`] attaches them or gives the whole object's text.
    pub defer_schemas: bool,
}

impl Read<'_> {
    /// Whether an object named `name` (its `metadata.name`) is read.
    fn wants(&self, name: Option<&str>) -> bool {
        self.names.is_none_or(|names| name.is_some_and(|n| names.iter().any(|w| w == n)))
    }
}

/// [`build_kustomization`], decoding from a hit only what `read` asks. With `read.names`, a
/// hit decodes only the objects whose `metadata.name` is one of them (a record holds its
/// object's name apart, read without decoding the object). With `read.defer_schemas`, a hit's CRDs
/// come as stubs with their [`Deferred`] parts. A miss builds and stores, then gives what a
/// hit would (`store.rs`); a build that is not stored gives every object whole.
pub fn build_kustomization_named(
    dir: &Path,
    kustomization: &Kustomization,
    options: &BuildOptions,
    settings: &CacheSettings,
    read: Read,
) -> Result<(ResMap, Outcome)> {
    let material = format!("in-memory\0{}\0{kustomization:?}", dir.display());
    cached(settings, &material, options, read, |loader| {
        prefetch::warm_entries(loader, dir, kustomization);
        crate::build_in_memory(loader, dir, kustomization, options.strict_patches)
    })
}

fn cached(
    settings: &CacheSettings,
    material: &str,
    options: &BuildOptions,
    read: Read,
    run: impl FnOnce(&Loader) -> Result<ResMap>,
) -> Result<(ResMap, Outcome)> {
    let key = entry_key(settings, material, options);
    let path = settings.dir.join(format!("{key}.{ENTRY_EXTENSION}"));
    if let Some(resources) = load(&path, read) {
        touch(&path);
        return Ok((resources, Outcome::Hit));
    }
    let recorder = Arc::new(Recorder::default());
    let resources = {
        let loader = Loader::recording(options.remote.clone(), options.restriction, recorder.clone());
        run(&loader)?
    };
    let Ok(recorder) = Arc::try_unwrap(recorder) else { return Ok((resources, Outcome::NotStored)) };
    if recorder.unkeyed_remote.load(Ordering::Relaxed) {
        return Ok((resources, Outcome::NotStored));
    }
    match store::store(&settings.dir, &path, &recorder.into_inputs(), &resources) {
        Ok(stored) => {
            bound(&settings.dir, settings.max_bytes);
            Ok((stored.serve(resources, read, &path), Outcome::Stored))
        }
        Err(_) => Ok((resources, Outcome::NotStored)),
    }
}

/// The entry name: everything that decides the build besides the files it reads.
fn entry_key(settings: &CacheSettings, material: &str, options: &BuildOptions) -> String {
    let text = format!(
        "{FORMAT}\0{}\0{}\0{}\0{:?}\0{:?}\0{}\0{material}",
        env!("CARGO_PKG_VERSION"),
        settings.version,
        executable_identity(),
        options.restriction,
        options.remote.cache_identity(),
        options.strict_patches,
    );
    sha256_hex(text.as_bytes())
}

/// The running executable's path, size and mtime.
fn executable_identity() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let meta = std::fs::metadata(&exe).ok();
    let modified = meta.as_ref().and_then(|m| m.modified().ok());
    format!("{}\0{:?}\0{:?}", exe.display(), meta.map(|m| m.len()), modified)
}

/// The entry at `path` if it is whole and every input it recorded still holds, decoded as
/// `read` asks (see [`build_kustomization_named`]). Its schemas and texts regions are not read
/// here.
fn load(path: &Path, read: Read) -> Option<ResMap> {
    let file = std::fs::File::open(path).ok()?;
    let header = Header::read(&file)?;
    let bytes = read_body(&file, &header)?;
    let body = &bytes[header.line_len..];
    let newline = body.iter().position(|b| *b == b'\n')?;
    let inputs = &body[..newline];
    // A record holds its object's name first: only the objects so named are decoded.
    let named = |record: &&[u8]| read.wants(binary::record_name(record));
    let objects: Vec<&[u8]> = binary::records(&body[newline + 1..])?.into_iter().filter(named).collect();
    let schemas_at = (header.line_len + header.body_len) as u64;
    let texts_at = schemas_at.checked_add(header.schemas_len)?;
    let texts_len = file.metadata().ok()?.len().checked_sub(texts_at)?;
    let regions =
        Regions { file, schemas_at, texts_at, texts_len, texts_crc: header.texts_crc, texts_whole: OnceLock::new() };
    let parts = EntryParts { regions: Arc::new(regions), path: Arc::from(path) };
    // the inputs are read and checked while the records are decoded
    let hold = || serde_json::from_slice::<Vec<Input>>(inputs).is_ok_and(|inputs| inputs::all_hold(&inputs));
    let (hold, objects) = rayon::join(hold, || parse_objects(&objects, &parts, read.defer_schemas));
    if !hold {
        return None;
    }
    let mut resources = ResMap::new();
    resources.replace_all(objects?);
    Some(resources)
}

/// The entry's header line and body, if the body's checksum holds: read and checked in two
/// halves at once (a warm render waits on this read of a few megabytes).
fn read_body(file: &std::fs::File, header: &Header) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0; header.line_len + header.body_len];
    let middle = header.line_len + header.body_len / 2;
    let (first, second) = bytes.split_at_mut(middle);
    let read = |part: &mut [u8], at: usize, skip: usize| {
        file.read_exact_at(part, at as u64).ok()?;
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&part[skip..]);
        Some(hasher)
    };
    let (first, second) = rayon::join(|| read(first, 0, header.line_len), || read(second, middle, 0));
    let mut crc = first?;
    crc.combine(&second?);
    (crc.finalize() == header.body_crc).then_some(bytes)
}

/// An entry's first line: `<FORMAT> <body CRC-32> <body length> <schemas length> <texts
/// CRC-32>`. The schemas region follows the body, the texts region fills the rest of the file
/// (`deferred.rs`).
struct Header {
    /// The line's length with its line break.
    line_len: usize,
    body_crc: u32,
    body_len: usize,
    schemas_len: u64,
    texts_crc: u32,
}

/// Where the records of one entry send their deferred parts.
struct EntryParts {
    regions: Arc<Regions>,
    path: Arc<Path>,
}

impl Header {
    /// The longest first line an entry has.
    const MAX_LEN: usize = 128;

    fn read(file: &std::fs::File) -> Option<Header> {
        let mut start = [0; Self::MAX_LEN];
        let mut filled = 0;
        while filled < start.len() {
            match std::os::unix::fs::FileExt::read_at(file, &mut start[filled..], filled as u64).ok()? {
                0 => break,
                n => filled += n,
            }
        }
        let newline = start[..filled].iter().position(|b| *b == b'\n')?;
        let line = std::str::from_utf8(&start[..newline]).ok()?.strip_prefix(FORMAT)?.strip_prefix(' ')?;
        let fields: Vec<&str> = line.split(' ').collect();
        let [body_crc, body_len, schemas_len, texts_crc] = fields[..] else { return None };
        Some(Header {
            line_len: newline + 1,
            body_crc: u32::from_str_radix(body_crc, 16).ok()?,
            body_len: body_len.parse().ok()?,
            schemas_len: schemas_len.parse().ok()?,
            texts_crc: u32::from_str_radix(texts_crc, 16).ok()?,
        })
    }
}

/// The objects of their records, decoded on all cores;
/// with `defer`, CRDs as stubs and their deferred parts, else whole.
fn parse_objects(records: &[&[u8]], parts: &EntryParts, defer: bool) -> Option<Vec<Resource>> {
    use rayon::prelude::*;
    records
        .par_iter()
        .map(|record| {
            let (origin, obj, influenced_by, placed) = binary::read_record(record)?;
            let mut resource = Resource::new(obj);
            if let Some(placed) = placed {
                let deferred = Deferred::new(parts.regions.clone(), parts.path.clone(), placed, &resource.obj);
                match defer {
                    true => resource.deferred = Some(Arc::new(deferred)),
                    false => deferred.attach(&mut resource.obj).ok()?,
                }
            }
            resource.origin = origin.map(Arc::from);
            resource.influenced_by = influenced_by.into_iter().map(Arc::from).collect();
            Some(resource)
        })
        .collect()
}

/// The checksum an entry's header holds for its body and for its texts region: CRC-32.
fn checksum(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// A number no other write of this process uses.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    (NEXT.fetch_add(1, Ordering::Relaxed) << 32) | u64::from(nanos)
}

/// A temporary file older than this belongs to a process that did not finish its write.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(600);

/// Mark an entry as recently used (the bound removes the least recently used first).
fn touch(path: &Path) {
    if let Ok(file) = std::fs::File::options().append(true).open(path) {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
}

/// Remove the oldest entries until the folder holds at most `max_bytes`, and temporary files
/// an interrupted process left (older than [`STALE_TEMP`]).
fn bound(dir: &Path, max_bytes: u64) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    let files: Vec<std::fs::DirEntry> = read.filter_map(|e| e.ok()).collect();
    for temp in files.iter().filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-")) {
        let age = temp.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
        if age.is_some_and(|age| age > STALE_TEMP) {
            let _ = std::fs::remove_file(temp.path());
        }
    }
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = files
        .iter()
        .filter(|e| e.path().extension().is_some_and(|x| x == ENTRY_EXTENSION || x == OLD_ENTRY_EXTENSION))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
    entries.sort();
    for (_, len, path) in entries {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests;
