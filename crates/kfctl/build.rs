//! Embeds the repository's data folders (charts/, profiles/, values/, templates/) into the library, so
//! kfctl-rs stays one static file: writes `$OUT_DIR/embedded.rs` with one `include_str!` per file.
//!
//! It reads them through `data/`, whose entries are symlinks to the repository root's folders:
//! in the repository they are the root's folders themselves, and `cargo package` follows the
//! links, so the packaged crate (which cannot reach outside its folder) holds real copies and
//! builds the same binary.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("data");
    let mut files = Vec::new();
    for folder in ["charts", "profiles", "values", "templates"] {
        let dir = root.join(folder);
        // watch the folder the link names (cargo scans a watched folder for changes)
        println!("cargo:rerun-if-changed={}", std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone()).display());
        assert!(
            dir.is_dir(),
            "{}: missing; expected a link to the repository's {folder}/ (or, packaged, a copy)",
            dir.display()
        );
        files_under(&dir, &mut files);
    }
    let mut code = String::from(
        "/// Every embedded data file: (path relative to the repository root, contents).\npub(crate) static FILES: &[(&str, &str)] = &[\n",
    );
    for path in &files {
        let rel = path.strip_prefix(&root).expect("under the root").to_string_lossy().replace('\\', "/");
        writeln!(code, "    ({rel:?}, include_str!({:?})),", path.display().to_string()).expect("write to string");
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded.rs");
    std::fs::write(out, code).expect("write embedded.rs");
}
