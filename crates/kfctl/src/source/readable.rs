//! What a render can read in a manifests tree: the part of it a release digest covers.
//!
//! A tree is recognised as a release by its digest ([`super::releases::release_digest`]), and
//! the same release arrives in many shapes: the data-only snapshot, a git checkout, GitHub's
//! archive of the tag (with `.github/`, scripts, Makefiles, dotfiles, a README with CRLF line
//! ends). None of those extras changes what `kustomize build` of any folder gives, so none may
//! change the digest; and every file a build can read must. So the digest covers exactly:
//!
//! - every kustomization file (`kustomization.yaml`, `.yml`, `Kustomization`) in the tree;
//! - every file such a file names by a local path, in the fields through which kustomize
//!   reads files: `resources`, `bases`, `components`, `patches[].path`,
//!   `patchesStrategicMerge`, `patchesJson6902[].path`, the `files`, `envs` and `env` of
//!   `configMapGenerator` and `secretGenerator`, `configurations`, `crds`, `openapi.path`,
//!   `replacements[].path`, `generators`, `transformers` and `validators`.
//!
//! A folder entry needs nothing more: its own kustomization file is already covered. An entry
//! that names nothing in the tree (a remote URL, a missing file) adds nothing; a build that
//! uses it fails with the engine's own message. A kustomization file that is not YAML is still
//! covered itself (its bytes are what a build would refuse).

use super::digest::{EntryKind, TreeEntry};
use kfctl_kustomize::kustomization::FILE_NAMES;
use serde_json::Value;
use std::collections::BTreeSet;

/// The entries of `tree` (as [`super::digest::collect_tree`] lists them) that a render can
/// read: the kustomization files and the files they name.
pub(crate) fn readable(tree: Vec<TreeEntry>) -> Vec<TreeEntry> {
    let all: BTreeSet<&str> = tree.iter().map(|e| e.rel.as_str()).collect();
    let mut keep: BTreeSet<String> = BTreeSet::new();
    for entry in tree.iter().filter(|e| is_kustomization(&e.rel) && e.kind == EntryKind::File) {
        keep.insert(entry.rel.clone());
        let Ok(text) = crate::input::read_bounded(&entry.abs, "kustomization", crate::input::MAX_FILE_BYTES) else {
            continue;
        };
        let Ok(docs) = kfctl_yaml::parse_stream(&text, &entry.rel) else { continue };
        let folder = entry.rel.rsplit_once('/').map_or("", |(dir, _)| dir);
        for named in docs.iter().flat_map(named_paths) {
            if let Some(rel) = join(folder, &named).filter(|rel| all.contains(rel.as_str())) {
                keep.insert(rel);
            }
        }
    }
    tree.into_iter().filter(|e| keep.contains(&e.rel)).collect()
}

fn is_kustomization(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    FILE_NAMES.contains(&name)
}

/// Every local path a kustomization document names in a field kustomize reads files through.
fn named_paths(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let strings = |key: &str| doc.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    for key in [
        "resources",
        "bases",
        "components",
        "patchesStrategicMerge",
        "configurations",
        "crds",
        "generators",
        "transformers",
        "validators",
    ] {
        // An inline patch or generator config spans lines; a path never does.
        out.extend(strings(key).filter(|s| !s.contains('\n')).map(str::to_string));
    }
    let items = |key: &str| doc.get(key).and_then(Value::as_array).into_iter().flatten();
    for key in ["patches", "patchesJson6902", "replacements"] {
        out.extend(items(key).filter_map(|i| i.get("path")?.as_str()).map(str::to_string));
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for generator in items(key) {
            let list =
                |k: &str| generator.get(k).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
            // `files` entries may be `key=path`.
            out.extend(list("files").map(|f| f.split_once('=').map_or(f, |(_, path)| path).to_string()));
            out.extend(list("envs").map(str::to_string));
            out.extend(generator.get("env").and_then(Value::as_str).map(str::to_string));
        }
    }
    out.extend(doc.pointer("/openapi/path").and_then(Value::as_str).map(str::to_string));
    out
}

/// `folder/named`, with `.` and `..` resolved; `None` when it leaves the tree or is absolute.
fn join(folder: &str, named: &str) -> Option<String> {
    if named.starts_with('/') || named.contains("://") {
        return None;
    }
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for piece in named.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::digest::collect_tree;

    fn kept(files: &[(&str, &str)]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        for (rel, body) in files {
            crate::source::write_fixture(dir.path(), rel, body);
        }
        readable(collect_tree(dir.path()).unwrap()).into_iter().map(|e| e.rel).collect()
    }

    #[test]
    fn kustomizations_and_what_they_name_are_kept_the_rest_is_not() {
        let k = "resources:\n- deploy.yaml\n- ../base\n- https://github.com/o/r//x?ref=v1\n\
                 patches:\n- path: patch.yaml\n- patch: |\n    - op: remove\n      path: /x\n\
                 configMapGenerator:\n- name: c\n  files:\n  - script=sync.py\n  - conf/a.conf\n  envs:\n  - params.env\n\
                 openapi:\n  path: schema.json\n";
        let files = [
            ("app/kustomization.yaml", k),
            ("app/deploy.yaml", "kind: Deployment\n"),
            ("app/patch.yaml", "x: 1\n"),
            ("app/sync.py", "print()\n"),
            ("app/conf/a.conf", "a\n"),
            ("app/params.env", "A=1\n"),
            ("app/schema.json", "{}\n"),
            ("app/notes.md", "read me\n"),
            ("app/hack.sh", "echo\n"),
            ("base/kustomization.yaml", "resources: []\n"),
            (".github/workflows/ci.yaml", "on: push\n"),
            ("Makefile", "all:\n"),
            ("README.md", "# manifests\r\n"),
        ];
        assert_eq!(
            kept(&files),
            [
                "app/conf/a.conf",
                "app/deploy.yaml",
                "app/kustomization.yaml",
                "app/params.env",
                "app/patch.yaml",
                "app/schema.json",
                "app/sync.py",
                "base/kustomization.yaml"
            ]
        );
    }

    #[test]
    fn paths_resolve_dots_and_never_leave_the_tree() {
        assert_eq!(join("a/b", "../c/./d.yaml").as_deref(), Some("a/c/d.yaml"));
        assert_eq!(join("a", "../../x"), None);
        assert_eq!(join("a", "/etc/passwd"), None);
    }
}
