//! Safe `.tar.gz` extraction.
//!
//! Archives come from the network or from a user's disk and are treated as hostile. Each entry
//! is checked before anything is written:
//!
//! - its path must be relative, UTF-8, without `..`, NUL, backslashes or a drive prefix;
//! - only folders, regular files and symlinks are accepted: hardlinks, device files, fifos and
//!   any other type are refused;
//! - a symlink's target must be relative and stay inside the root (checked lexically when the
//!   entry is read, and again on the real file system once all entries are written, so chains
//!   of links cannot escape); a dangling link is refused;
//! - nothing is ever written through a symlink: every parent of an entry is checked with
//!   `symlink_metadata`, and files are created with `create_new` (which never follows a link);
//! - an entry may appear only once (folders excepted);
//! - the entry count, each file's size, the total size and the gzip expansion ratio are capped
//!   ([`ExtractLimits`]), so a gzip bomb stops after a few megabytes.
//!
//! Extraction goes to a staging folder inside the destination's parent and is renamed into
//! place only when complete; on any error the staging folder is removed, so an interrupted or
//! refused extraction leaves nothing behind. Refusals are `security:` errors naming the archive
//! and the entry.

mod guard;
#[cfg(test)]
mod tests;

use super::SourceError;
use super::fsutil::{Staging, make_symlink, symlink_stays_inside};
use guard::{Counted, RatioGuard, Tripwire};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use tar::EntryType;

/// Caps that bound the work and disk space an archive can demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtractLimits {
    /// Sum of all file sizes.
    pub(crate) max_total_bytes: u64,
    /// Size of any one file.
    pub(crate) max_file_bytes: u64,
    /// Number of entries of any type.
    pub(crate) max_entries: u64,
    /// Decompressed bytes per compressed byte, once past `ratio_floor_bytes`.
    pub(crate) max_ratio: u64,
    /// Decompressed bytes before the ratio is enforced (small archives compress oddly).
    pub(crate) ratio_floor_bytes: u64,
}

impl Default for ExtractLimits {
    /// Generous for kubeflow/manifests (about 30 MB and 1,300 files unpacked) and the
    /// repositories it references, small enough that a hostile archive cannot fill a disk: the
    /// archive rows of the limit table ([`crate::input`]).
    fn default() -> Self {
        use crate::input::{
            ARCHIVE_MAX_ENTRIES, ARCHIVE_MAX_FILE_BYTES, ARCHIVE_MAX_RATIO, ARCHIVE_MAX_TOTAL_BYTES,
            ARCHIVE_RATIO_FLOOR_BYTES,
        };
        ExtractLimits {
            max_total_bytes: ARCHIVE_MAX_TOTAL_BYTES,
            max_file_bytes: ARCHIVE_MAX_FILE_BYTES,
            max_entries: ARCHIVE_MAX_ENTRIES,
            max_ratio: ARCHIVE_MAX_RATIO,
            ratio_floor_bytes: ARCHIVE_RATIO_FLOOR_BYTES,
        }
    }
}

/// What an extraction wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extracted {
    pub(crate) entries: u64,
    pub(crate) files: u64,
    pub(crate) bytes: u64,
}

/// Extract `archive` into a new staging folder inside `parent`. The caller inspects it and
/// places it (or part of it); dropping the [`Staging`] removes everything.
pub(crate) fn extract_staged(
    archive: &Path,
    parent: &Path,
    limits: &ExtractLimits,
) -> Result<(Staging, Extracted), SourceError> {
    let staging = Staging::dir(parent, "extract")?;
    let extracted = unpack_into(archive, staging.path(), limits)?;
    Ok((staging, extracted))
}

/// Extract `archive` to `dest` (replacing it), all or nothing. With `strip_top_folder`, the
/// archive must hold exactly one top folder (a GitHub archive) and its contents become `dest`.
pub fn extract_archive(
    archive: &Path,
    dest: &Path,
    strip_top_folder: bool,
    limits: &ExtractLimits,
) -> Result<Extracted, SourceError> {
    let parent = dest.parent().ok_or_else(|| SourceError::invalid(dest.display(), "has no parent folder"))?;
    let (staging, extracted) = extract_staged(archive, parent, limits)?;
    if strip_top_folder {
        let top = single_top_folder(staging.path(), archive)?;
        super::fsutil::place(&top, dest)?;
    } else {
        staging.place(dest)?;
    }
    Ok(extracted)
}

/// The only entry of `dir`, which must be a folder: the layout of a GitHub archive.
pub(crate) fn single_top_folder(dir: &Path, archive: &Path) -> Result<PathBuf, SourceError> {
    let entries: Vec<_> = std::fs::read_dir(dir).map_err(|e| SourceError::io(dir, e))?.filter_map(Result::ok).collect();
    match entries.as_slice() {
        [only] if only.file_type().is_ok_and(|t| t.is_dir()) => Ok(only.path()),
        _ => Err(SourceError::invalid(
            archive.display(),
            format!(
                "expected exactly one top folder (the layout of a GitHub archive), found {} entries",
                entries.len()
            ),
        )),
    }
}

/// Refuse `archive` unless it starts as gzip does (two bytes read: `/dev/zero` ends here).
pub(crate) fn check_gzip(archive: &Path) -> Result<(), SourceError> {
    let mut file = std::fs::File::open(archive).map_err(|e| SourceError::io(archive, e))?;
    let mut magic = [0u8; 2];
    if file.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return Err(SourceError::invalid(archive.display(), "not a gzip-compressed tar archive (.tar.gz)"));
    }
    Ok(())
}

/// Unpack every entry of `archive` into the existing, empty folder `root`.
fn unpack_into(archive: &Path, root: &Path, limits: &ExtractLimits) -> Result<Extracted, SourceError> {
    check_gzip(archive)?;
    let file = std::fs::File::open(archive).map_err(|e| SourceError::io(archive, e))?;
    let tripwire = Tripwire::default();
    let (compressed, compressed_bytes) = Counted::new(file);
    let decoder = flate2::read::GzDecoder::new(BufReader::new(compressed));
    let guarded = RatioGuard::new(decoder, compressed_bytes, tripwire.clone(), limits);
    let mut tar = tar::Archive::new(guarded);
    let mut unpacker = Unpacker { archive, root, limits, done: Extracted::default(), symlinks: Vec::new() };
    let malformed = |e: std::io::Error| match tripwire.reason() {
        Some(reason) => SourceError::Security(format!("archive {}: {reason}", archive.display())),
        None => SourceError::invalid(archive.display(), format!("malformed .tar.gz: {e}")),
    };
    for entry in tar.entries().map_err(malformed)? {
        let mut entry = entry.map_err(malformed)?;
        unpacker.entry(&mut entry).map_err(|err| match tripwire.reason() {
            Some(reason) => SourceError::Security(format!("archive {}: {reason}", archive.display())),
            None => err,
        })?;
    }
    unpacker.check_symlinks()?;
    Ok(unpacker.done)
}

struct Unpacker<'a> {
    archive: &'a Path,
    root: &'a Path,
    limits: &'a ExtractLimits,
    done: Extracted,
    symlinks: Vec<(PathBuf, PathBuf)>,
}

impl Unpacker<'_> {
    fn refuse(&self, entry: &str, reason: impl std::fmt::Display) -> SourceError {
        SourceError::Security(format!("archive {}: entry `{entry}`: {reason}", self.archive.display()))
    }

    fn entry<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> Result<(), SourceError> {
        self.done.entries += 1;
        if self.done.entries > self.limits.max_entries {
            return Err(SourceError::Security(format!(
                "archive {}: more than {} entries; refusing to extract",
                self.archive.display(),
                self.limits.max_entries
            )));
        }
        let kind = entry.header().entry_type();
        if kind == EntryType::XGlobalHeader {
            return Ok(());
        }
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let rel = checked_relative_path(&raw).map_err(|reason| self.refuse(&shown, reason))?;
        match kind {
            EntryType::Directory => self.directory(&shown, &rel),
            EntryType::Regular | EntryType::Continuous => self.file(&shown, &rel, entry),
            EntryType::Symlink => {
                let target = entry.link_name_bytes().map(|t| t.into_owned()).unwrap_or_default();
                self.symlink(&shown, &rel, &target)
            }
            EntryType::Link => Err(self.refuse(&shown, "hardlinks are not allowed")),
            EntryType::Char | EntryType::Block | EntryType::Fifo => {
                Err(self.refuse(&shown, "device files and fifos are not allowed"))
            }
            other => Err(self.refuse(&shown, format!("entry type {other:?} is not allowed"))),
        }
    }

    fn directory(&mut self, shown: &str, rel: &Path) -> Result<(), SourceError> {
        if rel.as_os_str().is_empty() {
            return Ok(());
        }
        self.ensure_parents(shown, rel)?;
        let path = self.root.join(rel);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(self.refuse(shown, "a folder would replace a file or symlink")),
            Err(_) => std::fs::create_dir(&path).map_err(|e| SourceError::io(&path, e)),
        }
    }

    fn file<R: Read>(&mut self, shown: &str, rel: &Path, entry: &mut tar::Entry<'_, R>) -> Result<(), SourceError> {
        let size = entry.size();
        if size > self.limits.max_file_bytes {
            return Err(self.refuse(
                shown,
                format!("{size} bytes exceeds the per-file cap of {} bytes", self.limits.max_file_bytes),
            ));
        }
        if self.done.bytes + size > self.limits.max_total_bytes {
            return Err(self.refuse(
                shown,
                format!("the archive exceeds the total size cap of {} bytes", self.limits.max_total_bytes),
            ));
        }
        self.ensure_parents(shown, rel)?;
        let path = self.root.join(rel);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(self.refuse(shown, "the path appears twice in the archive"));
        }
        let mut out = create_new_file(&path, entry.header().mode().unwrap_or(0o644))?;
        let written = std::io::copy(&mut entry.take(size), &mut out).map_err(|e| SourceError::io(&path, e))?;
        if written != size {
            return Err(SourceError::invalid(self.archive.display(), format!("entry `{shown}` is truncated")));
        }
        self.done.files += 1;
        self.done.bytes += size;
        Ok(())
    }

    fn symlink(&mut self, shown: &str, rel: &Path, target: &[u8]) -> Result<(), SourceError> {
        let target = checked_link_target(target).map_err(|reason| self.refuse(shown, reason))?;
        let parent = rel.parent().unwrap_or(Path::new(""));
        if !symlink_stays_inside(parent, &target) {
            return Err(self.refuse(shown, format!("symlink to `{}` points outside the archive", target.display())));
        }
        self.ensure_parents(shown, rel)?;
        let path = self.root.join(rel);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(self.refuse(shown, "the path appears twice in the archive"));
        }
        make_symlink(&target, &path)?;
        self.symlinks.push((path, target));
        Ok(())
    }

    /// Create the parents of `rel`, refusing to pass through a symlink or a file.
    fn ensure_parents(&self, shown: &str, rel: &Path) -> Result<(), SourceError> {
        let mut current = self.root.to_path_buf();
        let parents: Vec<_> = rel.parent().map(|p| p.components().collect()).unwrap_or_default();
        for component in parents {
            current.push(component);
            match std::fs::symlink_metadata(&current) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(self.refuse(shown, "its path goes through a symlink; refusing to write through it"));
                }
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(self.refuse(shown, "its parent is a file")),
                Err(_) => std::fs::create_dir(&current).map_err(|e| SourceError::io(&current, e))?,
            }
        }
        Ok(())
    }

    /// Once everything is written, every symlink must resolve, for real, inside the root.
    fn check_symlinks(&self) -> Result<(), SourceError> {
        if self.symlinks.is_empty() {
            return Ok(());
        }
        let root = self.root.canonicalize().map_err(|e| SourceError::io(self.root, e))?;
        for (link, target) in &self.symlinks {
            let shown = link.strip_prefix(self.root).unwrap_or(link).display().to_string();
            match link.canonicalize() {
                Ok(resolved) if resolved.starts_with(&root) => {}
                Ok(_) => {
                    return Err(
                        self.refuse(&shown, format!("symlink to `{}` resolves outside the archive", target.display()))
                    );
                }
                Err(_) => {
                    return Err(self.refuse(
                        &shown,
                        format!("symlink to `{}` does not resolve inside the archive", target.display()),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A tar path as a safe relative path, or the reason it is refused.
fn checked_relative_path(raw: &[u8]) -> Result<PathBuf, &'static str> {
    let text = checked_text(raw)?;
    if text.starts_with('/') {
        return Err("absolute paths are not allowed");
    }
    let mut rel = PathBuf::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("`..` is not allowed in paths"),
            part => rel.push(part),
        }
    }
    Ok(rel)
}

/// A symlink target: relative, UTF-8, no NUL, backslash or drive prefix (`..` is checked later
/// against the link's own folder).
fn checked_link_target(raw: &[u8]) -> Result<PathBuf, &'static str> {
    let text = checked_text(raw)?;
    if text.is_empty() {
        return Err("symlink without a target");
    }
    if text.starts_with('/') {
        return Err("symlinks to absolute paths are not allowed");
    }
    Ok(PathBuf::from(text))
}

fn checked_text(raw: &[u8]) -> Result<&str, &'static str> {
    if raw.contains(&0) {
        return Err("NUL bytes are not allowed in paths");
    }
    let text = std::str::from_utf8(raw).map_err(|_| "paths must be UTF-8")?;
    if text.contains('\\') {
        return Err("backslashes are not allowed in paths");
    }
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("drive prefixes are not allowed in paths");
    }
    Ok(text)
}

fn create_new_file(path: &Path, mode: u32) -> Result<std::fs::File, SourceError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if mode & 0o111 != 0 { 0o755 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = mode;
    options.open(path).map_err(|e| SourceError::io(path, e))
}
