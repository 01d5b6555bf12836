//! Files the user names, read with a size limit.
//!
//! One limit policy for what users hand in. Values files (`-f`), `--set-file` files, profile
//! files and kubeconfig files are read through `read_bounded`: at most [`MAX_INPUT_BYTES`]
//! (8 MiB), refused past it without reading the rest, so `-f /dev/zero` or a 300 MB file fails
//! at once and in little memory. The install record (`record.json` in its ConfigMap) is held
//! to the same limit. Whole rendered streams (`install --objects`, `compare`, from a file or
//! standard input) are read through [`read_stream`], at most [`MAX_STREAM_BYTES`] (24 MiB,
//! over twice the whole platform's 9.8 MB, and under 100 MB of memory at the limit). The YAML reader's own budgets (depth, aliases,
//! nodes) then apply to what was read.

use std::io::Read;
use std::path::Path;

/// The largest values, `--set-file` or profile file (and install record) read: 8 MiB.
pub const MAX_INPUT_BYTES: u64 = 8 * 1024 * 1024;

/// The largest rendered stream read (`install --objects`, `compare`): 24 MiB.
pub const MAX_STREAM_BYTES: u64 = 24 * 1024 * 1024;

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
    let unreadable =
        |e: std::io::Error| InputError::Unreadable { path: shown.into(), what: what.into(), message: e.to_string() };
    let mut bytes = Vec::new();
    reader.take(limit + 1).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { path: shown.into(), what: what.into(), limit });
    }
    String::from_utf8(bytes).map_err(|_| InputError::NotText { path: shown.into(), what: what.into() })
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
