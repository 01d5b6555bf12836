//! One limit policy: every input kfctl-rs reads, and every render it makes, has a bound.
//!
//! A bound is refused past it without reading (or building) the rest, so `/dev/zero`, an
//! endless pipe fed with data, a 300 MB file or a gzip bomb fails at once, in little memory,
//! naming the input and the limit. The bounds are generous: each is many times the largest
//! real input measured, so no real use meets one. The YAML reader's own budgets (depth,
//! aliases, nodes; `kfctl_yaml`) then apply to what was read.
//!
//! | limit | bound | what it bounds | why this size |
//! |---|---|---|---|
//! | [`MAX_INPUT_BYTES`] | 8 MiB | a values file (`-f`), a `--set-file` file, a profile file, a kubeconfig (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`), a CA file (`--ca-file`, `KFCTL_CA_FILE`), the install record (`record.json`) | real ones are kilobytes |
//! | [`MAX_STREAM_BYTES`] | 24 MiB | a rendered stream: `install --objects` (and every verb taking it), both sides of `compare`, from a file or standard input | the whole platform (26.03.1) is 12.7 MB; under 100 MB of memory at the limit |
//! | [`MAX_FILE_BYTES`] | 64 MiB | each file a kustomize build reads (kustomization, resource, patch, generator input) | upstream's largest (`kserve_kubeflow.yaml`) is 3.7 MB |
//! | [`MAX_DOWNLOAD_BYTES`] | 512 MiB | each HTTPS download: a release archive, a remote base (checked against `Content-Length` and while streaming) | upstream's whole tree is 32 MB unpacked, less as an archive |
//! | [`ARCHIVE_MAX_TOTAL_BYTES`], [`ARCHIVE_MAX_FILE_BYTES`], [`ARCHIVE_MAX_ENTRIES`], [`ARCHIVE_MAX_RATIO`] | 512 MiB unpacked, 64 MiB a file, 50,000 entries, 100:1 past 16 MiB | every `.tar.gz` unpacked: fetched releases, `--source ARCHIVE`, bundles (`source::ExtractLimits`) | upstream (26.03.1) unpacks to 32 MB in about 1,300 files |
//! | [`MAX_API_BODY_BYTES`] | 128 MiB | each response body from the API server (`cluster::api`) | a LIST on a big cluster runs to several MB; all of Kubeflow's CRDs are 11.7 MB as YAML |
//! | `kfctl_kustomize`'s growth bound | 64 MiB + 8 × the objects before it | what a labels or annotations transformer of a kustomization adds (measured only for pairs past 64 KiB) | a label is tens of bytes |
//! | [`max_render_bytes`] | 32 MiB + 2 × the default render + 8 × the user's values | a render's objects (`catalog::render`), checked as the values are applied | a default render of the whole platform is 12.7 MB; a value copied onto every object (`global.commonLabels`) is what grows past it |
//!
//! A FIFO that is never written to blocks its reader as any file read does; every reader here
//! ends as soon as the limit is reached, so a stream that keeps coming costs at most the limit
//! (24 MiB read in well under a second), which is why `--objects` needs no `--timeout` of its
//! own while reading.

use std::io::Read;
use std::path::Path;

/// The largest values, `--set-file`, profile, kubeconfig or CA file (and install record) read: 8 MiB.
pub const MAX_INPUT_BYTES: u64 = 8 * 1024 * 1024;

/// The largest rendered stream read (`install --objects`, `compare`): 24 MiB.
pub const MAX_STREAM_BYTES: u64 = 24 * 1024 * 1024;

/// The largest file a kustomize build reads: 64 MiB (the engine's own limit, here for the table).
pub use kfctl_kustomize::MAX_FILE_BYTES;

/// The largest HTTPS download: 512 MiB.
pub const MAX_DOWNLOAD_BYTES: u64 = 512 * 1024 * 1024;

/// The most an archive unpacks to, all files together: 512 MiB.
pub const ARCHIVE_MAX_TOTAL_BYTES: u64 = 512 * 1024 * 1024;

/// The largest file in an archive: 64 MiB.
pub const ARCHIVE_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The most entries in an archive: 50,000.
pub const ARCHIVE_MAX_ENTRIES: u64 = 50_000;

/// The most unpacked bytes per compressed byte, once past [`ARCHIVE_RATIO_FLOOR_BYTES`]: 100.
pub const ARCHIVE_MAX_RATIO: u64 = 100;

/// Unpacked bytes before [`ARCHIVE_MAX_RATIO`] is enforced (small archives compress oddly): 16 MiB.
pub const ARCHIVE_RATIO_FLOOR_BYTES: u64 = 16 * 1024 * 1024;

/// The largest response body read from the API server: 128 MiB.
pub const MAX_API_BODY_BYTES: u64 = 128 * 1024 * 1024;

/// The most a render may hold (its objects, measured as their JSON size), given the size of
/// its default render and of the user's values: 32 MiB + 2 × default + 8 × values.
pub fn max_render_bytes(default_render: u64, values: u64) -> u64 {
    (32 * 1024 * 1024u64).saturating_add(default_render.saturating_mul(2)).saturating_add(values.saturating_mul(8))
}

/// Read the file `path` (a CA file, for instance) as bytes, at most [`MAX_INPUT_BYTES`].
/// `what` names it in messages (`--ca-file`).
pub fn read_small_file(path: &Path, what: &str) -> Result<Vec<u8>, InputError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| InputError::Unreadable {
        path: shown.clone(),
        what: what.into(),
        message: e.to_string(),
    })?;
    read_bytes_from(file, &shown, what, MAX_INPUT_BYTES)
}

/// Read a rendered stream: the file `arg`, or standard input for `-`, at most
/// [`MAX_STREAM_BYTES`]. `what` names it in messages (`objects`, `YAML stream`).
pub fn read_stream(arg: &str, what: &str) -> Result<String, InputError> {
    match arg {
        "-" => read_bounded_from(std::io::stdin().lock(), "stdin", what, MAX_STREAM_BYTES),
        path => read_bounded(Path::new(path), what, MAX_STREAM_BYTES),
    }
}

/// A user's input file that could not be read or is too large.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file is larger than the limit.
    #[error(
        "{path}: {what} is larger than the {} MiB limit; pass a smaller file",
        limit / (1024 * 1024)
    )]
    TooLarge {
        /// The file, as given.
        path: String,
        /// What it was read as (e.g. `values file`).
        what: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file cannot be read.
    #[error("{path}: cannot read {what}: {message}; check the path and its permissions")]
    Unreadable {
        /// The file, as given.
        path: String,
        /// What it was read as.
        what: String,
        /// The read error.
        message: String,
    },
    /// The file is not UTF-8 text.
    #[error("{path}: {what} is not UTF-8 text; expected a YAML file")]
    NotText {
        /// The file, as given.
        path: String,
        /// What it was read as.
        what: String,
    },
}

/// Read `path` as text, refusing it past `limit` bytes without reading further. `what`
/// names the file in messages (`values file`, `profile file`).
pub(crate) fn read_bounded(path: &Path, what: &str, limit: u64) -> Result<String, InputError> {
    let shown = path.display().to_string();
    let unreadable =
        |e: std::io::Error| InputError::Unreadable { path: shown.clone(), what: what.into(), message: e.to_string() };
    let too_large = || InputError::TooLarge { path: shown.clone(), what: what.into(), limit };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    // A regular file says its size: refuse it before reading a byte (a sparse 300 MB file too).
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > limit
    {
        return Err(too_large());
    }
    read_bounded_from(file, &shown, what, limit)
}

/// Read `reader` (shown as `shown`) as text, refusing it past `limit` bytes without reading
/// further.
fn read_bounded_from(reader: impl Read, shown: &str, what: &str, limit: u64) -> Result<String, InputError> {
    let bytes = read_bytes_from(reader, shown, what, limit)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText { path: shown.into(), what: what.into() })
}

/// Read `reader` (shown as `shown`) as bytes, refusing it past `limit` without reading further.
fn read_bytes_from(reader: impl Read, shown: &str, what: &str, limit: u64) -> Result<Vec<u8>, InputError> {
    let unreadable =
        |e: std::io::Error| InputError::Unreadable { path: shown.into(), what: what.into(), message: e.to_string() };
    let mut bytes = Vec::new();
    reader.take(limit + 1).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { path: shown.into(), what: what.into(), limit });
    }
    Ok(bytes)
}

/// The kubeconfig files kube reads without `--kubeconfig` (each of `KUBECONFIG`, else
/// `~/.kube/config`), checked against the input limit first: kube reads them unbounded.
pub(crate) fn check_ambient_kubeconfigs() -> Result<(), InputError> {
    let listed = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    let paths: Vec<std::path::PathBuf> = match listed {
        Some(list) => std::env::split_paths(&list).collect(),
        None => std::env::var_os("HOME")
            .map(|home| std::path::PathBuf::from(home).join(".kube/config"))
            .into_iter()
            .collect(),
    };
    for path in paths.iter().filter(|p| p.exists()) {
        read_bounded(path, "kubeconfig", MAX_INPUT_BYTES)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_past_the_limit_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.yaml");
        std::fs::File::create(&big).unwrap().set_len(MAX_INPUT_BYTES + 1).unwrap();
        let err = read_bounded(&big, "values file", MAX_INPUT_BYTES).unwrap_err();
        assert!(matches!(err, InputError::TooLarge { .. }));
        assert!(err.to_string().contains("big.yaml: values file is larger than the 8 MiB limit"), "{err}");
        let fits = dir.path().join("fits.yaml");
        std::fs::write(&fits, "a: 1\n").unwrap();
        assert_eq!(read_bounded(&fits, "values file", MAX_INPUT_BYTES).unwrap(), "a: 1\n");
    }

    #[test]
    fn an_endless_stream_stops_at_the_limit() {
        let started = std::time::Instant::now();
        let err = read_bounded(Path::new("/dev/zero"), "values file", 1024).unwrap_err();
        assert!(matches!(err, InputError::TooLarge { .. }), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = read_bounded(Path::new("/no/such/values.yaml"), "values file", 10).unwrap_err();
        assert!(err.to_string().starts_with("/no/such/values.yaml: cannot read values file"), "{err}");
    }
}
