//! The platforms upstream's images are published for, as far as a public source says:
//! `charts/image-platforms.yaml`, the one place these facts live.
//!
//! Each entry names image repositories (registry and path, as the releases' objects write
//! them), optionally the tags it holds for, the platforms (`linux/amd64`, `linux/arm64`, …) and
//! the source that states it. An image is matched by its repository (taken apart by
//! [`crate::image`], so a digest or a Docker Hub short name does not hide it) and, when the
//! entry names tags, by its tag; an image no entry matches is *unknown*: nothing is assumed of
//! it, not even amd64.
//!
//! [`coverage`] compares a set of images with the nodes' architectures: the images with no
//! build for one of them (with the source saying so), the unknown ones, and how many are known.
//! `check --pre`'s `architectures` item and `analyze`'s KF006 both read it.

use crate::embedded;
use crate::image::ImageRef;
use serde::Deserialize;
use std::sync::OnceLock;

/// The data file, relative to the repository root.
pub const PLATFORMS_FILE: &str = "charts/image-platforms.yaml";

/// The data file could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{PLATFORMS_FILE}: {0}")]
pub struct PlatformsError(String);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlatformsFile {
    images: Vec<Entry>,
}

/// What one source says of some repositories' platforms.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Registry and path, without tag or digest.
    pub repositories: Vec<String>,
    /// The tags it holds for; empty: the source names none, so every tag.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `os/arch[/variant]`.
    pub platforms: Vec<String>,
    /// Where it is stated (a URL, or `owner/repo path@commit`).
    pub source: String,
    /// What the source states, in short.
    pub says: String,
}

impl Entry {
    /// Whether a build for Linux on `arch` (a node's `nodeInfo.architecture`) is published.
    pub fn builds_for(&self, arch: &str) -> bool {
        self.platforms.iter().any(|p| {
            let mut parts = p.split('/');
            parts.next() == Some("linux") && parts.next() == Some(arch)
        })
    }

    fn matches(&self, image: &ImageRef<'_>) -> bool {
        let name = canonical(image);
        let tag_ok = self.tags.is_empty() || image.tag.is_some_and(|t| self.tags.iter().any(|x| x == t));
        tag_ok && self.repositories.iter().any(|r| canonical(&ImageRef::parse(r)) == name)
    }
}

/// Docker Hub's spellings made one: `mysql`, `docker.io/mysql` and
/// `index.docker.io/library/mysql` are `docker.io/library/mysql`.
fn canonical(image: &ImageRef<'_>) -> String {
    let registry = match image.registry {
        "" | "index.docker.io" | "registry-1.docker.io" => "docker.io",
        other => other,
    };
    match (registry, image.path.contains('/')) {
        ("docker.io", false) => format!("docker.io/library/{}", image.path),
        _ => format!("{registry}/{}", image.path),
    }
}

/// Every entry of the data file, read once.
pub fn entries() -> Result<&'static [Entry], PlatformsError> {
    static ALL: OnceLock<Result<Vec<Entry>, PlatformsError>> = OnceLock::new();
    ALL.get_or_init(|| parse(embedded::file(PLATFORMS_FILE).unwrap_or_default())).as_deref().map_err(Clone::clone)
}

fn parse(text: &str) -> Result<Vec<Entry>, PlatformsError> {
    let doc = kfctl_yaml::parse_stream(text, PLATFORMS_FILE)
        .map_err(|e| PlatformsError(format!("not valid YAML: {e}")))?
        .into_iter()
        .next()
        .unwrap_or_default();
    let file: PlatformsFile = serde_json::from_value(doc).map_err(|e| PlatformsError(e.to_string()))?;
    for (i, entry) in file.images.iter().enumerate() {
        check_entry(entry).map_err(|why| PlatformsError(format!("images[{i}]: {why}")))?;
    }
    Ok(file.images)
}

fn check_entry(entry: &Entry) -> Result<(), String> {
    if entry.source.trim().is_empty() || entry.says.trim().is_empty() {
        return Err("every entry names its source and what it says".into());
    }
    if entry.repositories.is_empty() || entry.platforms.is_empty() {
        return Err("names no repository or no platform".into());
    }
    if let Some(r) = entry.repositories.iter().find(|r| ImageRef::parse(r).tag.is_some() || r.contains('@')) {
        return Err(format!("{r}: a repository names no tag or digest (use `tags:`)"));
    }
    match entry.platforms.iter().find(|p| !is_platform(p)) {
        Some(p) => Err(format!("{p}: not an os/arch[/variant] platform")),
        None => Ok(()),
    }
}

fn is_platform(p: &str) -> bool {
    let parts: Vec<&str> = p.split('/').collect();
    (2..=3).contains(&parts.len())
        && parts.iter().all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// The entry that knows `image`'s platforms.
pub fn lookup<'e>(entries: &'e [Entry], image: &str) -> Option<&'e Entry> {
    let parsed = ImageRef::parse(image);
    entries.iter().find(|e| e.matches(&parsed))
}

/// An image with no build for some of the nodes' architectures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The image as the objects name it.
    pub image: String,
    /// The nodes' architectures it has no build for.
    pub architectures: Vec<String>,
    /// The platforms it is published for.
    pub platforms: Vec<String>,
    /// Where that is stated.
    pub source: String,
}

/// What the data says of a set of images against the nodes' architectures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Images the data knows with no build for a node architecture.
    pub missing: Vec<Missing>,
    /// Images the data does not know.
    pub unknown: Vec<String>,
    /// How many images the data knows.
    pub known: usize,
}

/// Judge `images` (each once) against `architectures` with `entries`.
pub fn coverage(entries: &[Entry], images: &[String], architectures: &[String]) -> Coverage {
    let mut out = Coverage::default();
    for image in images {
        let Some(entry) = lookup(entries, image) else {
            out.unknown.push(image.clone());
            continue;
        };
        out.known += 1;
        let lacking: Vec<String> = architectures.iter().filter(|a| !entry.builds_for(a)).cloned().collect();
        if !lacking.is_empty() {
            out.missing.push(Missing {
                image: image.clone(),
                architectures: lacking,
                platforms: entry.platforms.clone(),
                source: entry.source.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
