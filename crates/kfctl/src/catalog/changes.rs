//! A profile file's own kustomize changes: `resources`, `patches`, `images`, `replacements`.
//!
//! They go into the profile's kustomization after the components' entries, so the engine
//! applies them exactly where kustomize applies them in the printed kustomization: after every
//! component has been built (patches, then images, then replacements, kustomize's order).
//! Through `extends` they accumulate, the base profile's first.
//!
//! Paths are relative to the profile file and resolved when it is read: a `resources` entry
//! becomes an absolute path (it must exist; a *file* outside the kustomization's folder needs
//! `kustomize build --load-restrictor LoadRestrictionsNone`, which the printed kustomization
//! says in a comment), and a patch's `path` becomes its inline `patch` text, so the printed
//! kustomization stands alone. Replacements must be inline.
//!
//! Stricter than kustomize: a patch whose target selects no object (or an untargeted strategic
//! merge patch whose object is missing) is an error naming the profile file and the entry,
//! where kustomize silently does nothing for a target that matches nothing.

use super::CatalogError;
use kfctl_kustomize::KustomizeError;
use kfctl_kustomize::kustomization::{Image, Kustomization, Patch, ReplacementEntry};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

/// The four keys as written in a profile file (checked and resolved by [`OwnChanges::read`]).
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(crate) struct RawChanges {
    #[serde(default)]
    pub resources: Vec<Value>,
    #[serde(default)]
    pub patches: Vec<Value>,
    #[serde(default)]
    pub images: Vec<Value>,
    #[serde(default)]
    pub replacements: Vec<Value>,
}

/// A profile's own changes, paths resolved, ready for its kustomization.
#[derive(Debug, Clone, Default)]
pub struct OwnChanges {
    /// Absolute paths (or remote URLs, as written).
    pub(crate) resources: Vec<String>,
    /// Inline patches (`path` read).
    pub(crate) patches: Vec<Patch>,
    pub(crate) images: Vec<Image>,
    pub(crate) replacements: Vec<ReplacementEntry>,
    /// Where each patch was written: the profile file and the entry's index in it.
    pub(crate) patch_origins: Vec<(String, usize)>,
}

fn bad(file: &str, entry: String, message: impl Into<String>) -> CatalogError {
    CatalogError::OwnChange { file: file.to_string(), entry, message: message.into() }
}

fn typed<T: DeserializeOwned>(file: &str, entry: &str, value: &Value) -> Result<T, CatalogError> {
    serde_json::from_value(value.clone()).map_err(|e| bad(file, entry.to_string(), e.to_string()))
}

impl OwnChanges {
    /// Check and resolve the raw keys of the profile `file` (its folder `dir`; `None` for a
    /// built-in profile, which may not name files).
    pub(crate) fn read(raw: &RawChanges, file: &str, dir: Option<&Path>) -> Result<Self, CatalogError> {
        let mut out = OwnChanges::default();
        for (i, value) in raw.resources.iter().enumerate() {
            let entry = format!("resources[{i}]");
            let Some(text) = value.as_str().filter(|t| !t.is_empty()) else {
                return Err(bad(file, entry, "expected a path (a file or folder, relative to the profile file)"));
            };
            out.resources.push(resolve_path(file, &entry, text, dir)?);
        }
        for (i, value) in raw.patches.iter().enumerate() {
            let entry = format!("patches[{i}]");
            let mut patch: Patch = typed(file, &entry, value)?;
            if let Some(path) = patch.path.take() {
                if patch.patch.is_some() {
                    return Err(bad(file, entry, "has both `patch` and `path`; keep one"));
                }
                let full = resolve_path(file, &entry, &path, dir)?;
                let text = std::fs::read_to_string(&full)
                    .map_err(|e| bad(file, entry.clone(), format!("cannot read `{path}`: {e}")))?;
                patch.patch = Some(text);
            }
            if patch.patch.as_deref().is_none_or(|p| p.trim().is_empty()) {
                return Err(bad(file, entry, "expected a `patch` (inline text) or a `path` to a patch file"));
            }
            out.patches.push(patch);
            out.patch_origins.push((file.to_string(), i));
        }
        for (i, value) in raw.images.iter().enumerate() {
            out.images.push(typed(file, &format!("images[{i}]"), value)?);
        }
        for (i, value) in raw.replacements.iter().enumerate() {
            let entry = format!("replacements[{i}]");
            let replacement: ReplacementEntry = typed(file, &entry, value)?;
            if replacement.path.is_some() || replacement.source.is_none() {
                return Err(bad(
                    file,
                    entry,
                    "expected an inline replacement (`source` and `targets`); `path` is not supported in a profile",
                ));
            }
            out.replacements.push(replacement);
        }
        Ok(out)
    }

    /// Lay a profile's changes after those of the profile it extends.
    pub(crate) fn extend(&mut self, child: OwnChanges) {
        self.resources.extend(child.resources);
        self.patches.extend(child.patches);
        self.images.extend(child.images);
        self.replacements.extend(child.replacements);
        self.patch_origins.extend(child.patch_origins);
    }

    /// Whether a `resources` entry is a file (outside any kustomization root: kustomize needs
    /// `--load-restrictor LoadRestrictionsNone`).
    pub(crate) fn has_files(&self) -> bool {
        self.resources.iter().any(|r| Path::new(r).is_file())
    }

    /// Append the changes to a kustomization, after its own entries.
    pub(crate) fn apply_to(&self, k: &mut Kustomization) {
        k.resources.extend(self.resources.iter().cloned());
        k.patches.extend(self.patches.iter().cloned());
        k.images.extend(self.images.iter().cloned());
        k.replacements.extend(self.replacements.iter().cloned());
    }

    /// Name the profile file and entry in the engine's error for one of these patches
    /// (`first`: how many patches of the kustomization come before them).
    pub(crate) fn explain(&self, error: KustomizeError, first: usize) -> CatalogError {
        if let KustomizeError::TopPatch { index, message } = &error
            && let Some((file, i)) = index.checked_sub(first).and_then(|j| self.patch_origins.get(j))
        {
            return bad(file, format!("patches[{i}]"), message.clone());
        }
        CatalogError::Build(error)
    }
}

/// A path relative to the profile file, made absolute; it must exist. Remote URLs pass as written.
fn resolve_path(file: &str, entry: &str, text: &str, dir: Option<&Path>) -> Result<String, CatalogError> {
    if text.contains("://") {
        return Ok(text.to_string());
    }
    let Some(dir) = dir else {
        return Err(bad(file, entry.to_string(), "a built-in profile cannot name files"));
    };
    let full = dir.join(text);
    match full.canonicalize() {
        Ok(path) => Ok(path.display().to_string()),
        Err(e) => Err(bad(
            file,
            entry.to_string(),
            format!("`{text}` ({}): {e}; paths are relative to the profile file", full.display()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(v: Value) -> RawChanges {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_missing_resource_names_the_file_and_entry() {
        let dir = std::env::temp_dir();
        let e = OwnChanges::read(&raw(json!({"resources": ["no-such-file.yaml"]})), "mine.yaml", Some(&dir))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("mine.yaml: resources[0]: `no-such-file.yaml`"), "{e}");
    }

    #[test]
    fn a_patch_with_an_unknown_key_or_no_text_is_refused() {
        let e = OwnChanges::read(&raw(json!({"patches": [{"patch": "x", "tagret": {}}]})), "p.yaml", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.yaml: patches[0]: unknown field `tagret`"), "{e}");
        let e = OwnChanges::read(&raw(json!({"patches": [{"target": {"kind": "Deployment"}}]})), "p.yaml", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a `patch`"), "{e}");
    }

    #[test]
    fn a_top_patch_error_names_the_profile_file() {
        let changes =
            OwnChanges::read(&raw(json!({"patches": [{"patch": "[]"}, {"patch": "[]"}]})), "p.yaml", None).unwrap();
        let e = changes.explain(KustomizeError::TopPatch { index: 3, message: "m".into() }, 2).to_string();
        assert_eq!(e, "p.yaml: patches[1]: m");
    }
}
