//! The data folders (charts/, profiles/, values/, templates/) compiled into the binary by
//! `build.rs`, so the tool is one file with no install-time data.

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// The contents of an embedded file, by its path relative to the repository root.
pub(crate) fn file(path: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, text)| *text)
}

/// Embedded files whose path starts with `prefix`, in path order.
pub(crate) fn files_under(prefix: &str) -> impl Iterator<Item = (&'static str, &'static str)> {
    FILES.iter().filter(move |(p, _)| p.starts_with(prefix)).map(|(p, t)| (*p, *t))
}
