//! What a build read, recorded so a cached result can be checked against the disk.
//!
//! The [`crate::Loader`] notes every file it reads (with its content's sha256 and its
//! `stat` taken *before* the read), every kustomization file name it probed, and every path
//! it resolved to a real path. A cached result is served only when each of these still holds:
//! a file whose `stat` (size, mtime, ctime, inode, device) is unchanged is taken as unchanged
//! unless it was modified within [`RACY_SECONDS`] of being read (the "racy" case git knows:
//! a change in the same clock tick leaves `stat` alone), in which case its content is hashed
//! again; a file whose `stat` changed is hashed again too, so a `touch` alone does not lose
//! the entry. A file modified between the `stat` and the read shows a later mtime than the
//! one recorded, so it is re-hashed and compared with the content actually built from.

use crate::realpath::RealPaths;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Files modified this recently before they were read are always re-hashed on verify.
pub const RACY_SECONDS: i64 = 2;

/// One fact a build depended on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum Input {
    /// A file's content (sha256 hex) and its `stat` before the read.
    File { path: PathBuf, sha256: String, stat: Stat, racy: bool },
    /// What a path is (a probed kustomization file name, an entry's kind).
    Probe { path: PathBuf, kind: PathKind },
    /// What a path canonicalizes to (`None`: it did not).
    Real { path: PathBuf, real: Option<PathBuf> },
}

/// What is at a path, following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum PathKind {
    Missing,
    File,
    Dir,
    Other,
}

impl PathKind {
    pub(crate) fn of(path: &Path) -> PathKind {
        match std::fs::metadata(path) {
            Err(_) => PathKind::Missing,
            Ok(m) if m.is_file() => PathKind::File,
            Ok(m) if m.is_dir() => PathKind::Dir,
            Ok(_) => PathKind::Other,
        }
    }
}

/// The parts of `stat` that change when a file's content may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
pub struct Stat {
    /// Size in bytes.
    pub len: u64,
    /// Last modification, seconds since the epoch.
    pub mtime: i64,
    /// Last modification, the nanoseconds past `mtime`.
    pub mtime_nsec: i64,
    /// Last status change, seconds since the epoch.
    pub ctime: i64,
    /// Last status change, the nanoseconds past `ctime`.
    pub ctime_nsec: i64,
    /// Inode number.
    pub ino: u64,
    /// Device of the file system holding it.
    pub dev: u64,
}

impl Stat {
    /// The signature of `meta`.
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            len: meta.len(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }

    /// Without unix `stat`, every file counts as racy (always re-hashed): correct, slower.
    #[cfg(not(unix))]
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        Stat { len: meta.len(), ..Stat::default() }
    }

    /// Whether the file changed within [`RACY_SECONDS`] of now (always, without unix `stat`):
    /// a signature taken now cannot vouch for its content.
    pub(crate) fn is_recent(&self) -> bool {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        self.is_recent_at(now)
    }

    /// Whether the file changed within [`RACY_SECONDS`] of `now` (seconds since the epoch;
    /// always, without unix `stat`): a signature taken at `now` cannot vouch for its content.
    pub fn is_recent_at(&self, now: i64) -> bool {
        cfg!(not(unix)) || self.mtime.max(self.ctime) >= now - RACY_SECONDS
    }
}

/// The inputs of one build, filled while it runs (shared by the loader's threads).
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    inputs: Mutex<Vec<Input>>,
    /// Set when a remote reference was resolved by a resolver without a cache identity.
    pub(crate) unkeyed_remote: std::sync::atomic::AtomicBool,
}

impl Recorder {
    fn push(&self, input: Input) {
        self.inputs.lock().unwrap_or_else(|p| p.into_inner()).push(input);
    }

    pub(crate) fn probe(&self, path: &Path) -> PathKind {
        let kind = PathKind::of(path);
        self.push(Input::Probe { path: path.to_path_buf(), kind });
        kind
    }

    pub(crate) fn real(&self, path: &Path, real: Option<&Path>) {
        self.push(Input::Real { path: path.to_path_buf(), real: real.map(Path::to_path_buf) });
    }

    /// Read a file, noting its `stat` (taken first) and its content's digest.
    pub(crate) fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let meta = std::fs::metadata(path)?;
        let bytes = crate::read::read_file(path)?;
        let stat = Stat::of(&meta);
        self.push(Input::File { path: path.to_path_buf(), sha256: sha256_hex(&bytes), racy: stat.is_recent(), stat });
        Ok(bytes)
    }

    /// The inputs, sorted and without repeats.
    pub(crate) fn into_inputs(self) -> Vec<Input> {
        let mut inputs = self.inputs.into_inner().unwrap_or_else(|p| p.into_inner());
        inputs.sort();
        inputs.dedup();
        inputs
    }
}

/// Read a YAML file as text (bounded, UTF-16 behind a BOM decoded: [`crate::read`]), through
/// the recorder when there is one.
pub(crate) fn read_text(recorder: Option<&Recorder>, path: &Path) -> std::io::Result<String> {
    let bytes = match recorder {
        None => crate::read::read_file(path)?,
        Some(r) => r.read(path)?,
    };
    crate::read::decode_text(bytes)
}

/// Whether every input still holds.
pub(crate) fn all_hold(inputs: &[Input]) -> bool {
    use rayon::prelude::*;
    let reals = RealPaths::default();
    inputs.par_iter().all(|input| holds(input, &reals))
}

fn holds(input: &Input, reals: &RealPaths) -> bool {
    match input {
        Input::Probe { path, kind } => PathKind::of(path) == *kind,
        Input::Real { path, real } => reals.of(path).ok().as_ref() == real.as_ref(),
        Input::File { path, sha256, stat, racy } => {
            let Ok(meta) = std::fs::metadata(path) else { return false };
            if !racy && Stat::of(&meta) == *stat && cfg!(unix) {
                return true;
            }
            crate::read::read_file(path).is_ok_and(|bytes| sha256_hex(&bytes) == *sha256)
        }
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
