//! The catalog of supported upstream releases, read from `charts/releases.yaml`.
//!
//! Upstream is the GitHub repository the file's top-level `repository` names
//! (kubeflow/community-distribution, formerly kubeflow/manifests: [`repository`]). A release is
//! pinned by its commit when the catalog has one: tags can move, commits cannot. Its archive is
//! fetched from the commit's immutable address (`https://github.com/<repository>/archive/<sha>.tar.gz`);
//! a release whose commit could not be confirmed is fetched by its tag
//! (`archive/refs/tags/<version>.tar.gz`), with a warning, and trusted on first use
//! (`super::by_name`). Each release states the Kubernetes versions it supports so installers
//! can refuse an unsupported cluster early, the remote bases its kustomizations name, and the
//! digest of its tree, by which a `--source` folder or an imported archive is recognised as the
//! release (`identify`); nothing is ever recorded as a release without a matching digest.
//!
//! `--version` accepts an exact version in either of upstream's schemes (`v1.11.0` or
//! `1.11.0`; `26.03`, also spelt `26.3`, `v26.03` or `26.03.0`; `26.03.1`, also spelt
//! `26.3.1`, `v26.03.1` or `26.03.01`), a prefix of a semantic version (`1.11`, `v1`: the
//! newest known match; a calendar `YY.MM` names that release itself, `YY` the newest of the
//! year) or `latest`. [`select`] refuses anything else, listing what is known; what a version
//! the catalog does not know can still name (an upstream tag, a commit) is
//! `super::by_name`'s business. Versions order across both schemes (`super::version`).

use super::SourceError;
use super::digest::{TreeEntry, collect_tree, digest_entries};
use super::version::ReleaseVersion;
use serde::Deserialize;
use std::path::Path;
use std::sync::OnceLock;

/// One supported upstream release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// The tag name, e.g. `v1.11.0`.
    pub version: &'static str,
    /// The full commit SHA the tag pointed to, when it is confirmed.
    pub commit: Option<&'static str>,
    /// The oldest supported Kubernetes minor version, as (major, minor).
    pub min_kubernetes: (u64, u64),
    /// The newest supported Kubernetes minor version; `None` means "and newer".
    pub max_kubernetes: Option<(u64, u64)>,
    /// The remote references the release's kustomizations name.
    pub(crate) remote_bases: &'static [&'static str],
    /// The release digest ([`release_digest`]) of its tree, when measured.
    pub(crate) digest: Option<&'static str>,
    /// Upstream's notes on upgrading to this release that no render can express (data to
    /// migrate by hand), printed by `upgrade --plan` and kept in the install record.
    pub(crate) upgrade_notes: &'static [&'static str],
    /// Upstream's stated reason a cluster on this release cannot return to an earlier one (a
    /// database migration with no way back, say): `kfctl-rs rollback` from it refuses with it.
    pub(crate) no_rollback_from: Option<&'static str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReleasesFile {
    /// The GitHub repository (`owner/name`) every release is fetched from.
    repository: String,
    releases: Vec<ReleaseEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReleaseEntry {
    version: String,
    commit: Option<String>,
    kubernetes: KubernetesRange,
    #[serde(default)]
    remote_bases: Vec<String>,
    digest: Option<String>,
    #[serde(default)]
    upgrade_notes: Vec<String>,
    no_rollback_from: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KubernetesRange {
    min: String,
    max: Option<String>,
}

const RELEASES_FILE: &str = "charts/releases.yaml";

struct Loaded {
    repository: &'static str,
    releases: Vec<Release>,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn minor_of(text: &str) -> Result<(u64, u64), String> {
    let (major, minor) = text.split_once('.').ok_or_else(|| format!("`{text}`: expected MAJOR.MINOR"))?;
    let parse = |s: &str| s.parse::<u64>().map_err(|e| format!("`{text}`: {e}"));
    Ok((parse(major)?, parse(minor)?))
}

fn parse_file(text: &str) -> Result<Loaded, String> {
    let doc = kfctl_yaml::parse_stream(text, RELEASES_FILE).map_err(|e| e.to_string())?.into_iter().next();
    let file: ReleasesFile = serde_json::from_value(doc.unwrap_or_default()).map_err(|e| e.to_string())?;
    let repository = checked_repository(&file.repository)?;
    let mut releases = Vec::new();
    for entry in file.releases {
        let parsed = ReleaseVersion::parse(&entry.version)
            .ok_or_else(|| format!("`{}`: not a release version (v1.11.0, 26.03)", entry.version))?;
        if parsed.canonical() != entry.version {
            return Err(format!("`{}`: write it as upstream tags it, `{}`", entry.version, parsed.canonical()));
        }
        let remote_bases: Vec<&'static str> = entry.remote_bases.into_iter().map(leak).collect();
        releases.push(Release {
            version: leak(entry.version),
            commit: entry.commit.map(leak),
            min_kubernetes: minor_of(&entry.kubernetes.min)?,
            max_kubernetes: entry.kubernetes.max.as_deref().map(minor_of).transpose()?,
            remote_bases: Box::leak(remote_bases.into_boxed_slice()),
            digest: entry.digest.map(leak),
            upgrade_notes: Box::leak(entry.upgrade_notes.into_iter().map(leak).collect::<Vec<_>>().into_boxed_slice()),
            no_rollback_from: entry.no_rollback_from.map(leak),
        });
    }
    Ok(Loaded { repository: leak(repository.to_string()), releases })
}

/// `owner/name`, each a plain GitHub name (letters, digits, `-`, `_`, `.`), so that it can only
/// ever name a repository in a URL path.
fn checked_repository(text: &str) -> Result<&str, String> {
    let plain = |s: &str| {
        !s.is_empty() && s != "." && s != ".." && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    match text.split_once('/') {
        Some((owner, name)) if plain(owner) && plain(name) => Ok(text),
        _ => Err(format!("repository `{text}`: expected a GitHub `owner/name`, e.g. kubeflow/community-distribution")),
    }
}

fn loaded() -> &'static Loaded {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    LOADED.get_or_init(|| {
        let text = crate::embedded::file(RELEASES_FILE).unwrap_or_default();
        // Compiled-in data, checked by the tests below: not user input.
        parse_file(text).unwrap_or_else(|e| panic!("{RELEASES_FILE}: {e}"))
    })
}

/// The Kubernetes versions accepted for a tree no release describes (and for a pre-rendered
/// stream, `install --objects`): 1.33 and newer, the oldest minor of the releases with Trainer
/// v2 (`charts/releases.yaml`: v1.11.0's `min`; v1.10.x's 1.32 is its own pinned range, and
/// newer releases ask more: 26.03 1.34, 26.03.1 1.35). A test holds it equal to v1.11.0's
/// `min`.
pub const DEFAULT_KUBERNETES: &str = ">=1.33.0";

/// [`DEFAULT_KUBERNETES`] as a requirement.
pub fn default_kubernetes() -> semver::VersionReq {
    semver::VersionReq::parse(DEFAULT_KUBERNETES).unwrap_or(semver::VersionReq::STAR)
}

/// Every release of the embedded release table, in the table's order.
pub fn known() -> &'static [Release] {
    &loaded().releases
}

/// The newest known release: what `latest` and no `--version` mean.
pub(crate) fn newest() -> &'static Release {
    // The compiled-in catalog has releases (checked by the tests below).
    newest_first(known()).into_iter().next().unwrap_or_else(|| panic!("{RELEASES_FILE}: no release"))
}

/// The upgrade notes of the known release `version` names exactly (none for anything else).
pub fn upgrade_notes_of(version: &str) -> Vec<String> {
    known()
        .iter()
        .filter(|r| r.version == version)
        .flat_map(|r| r.upgrade_notes.iter().map(|n| n.to_string()))
        .collect()
}

/// Why a cluster on the known release `version` cannot roll back to an earlier one, when
/// upstream says so (its `noRollbackFrom`); `None` for anything else.
pub fn no_rollback_from(version: &str) -> Option<String> {
    known().iter().find(|r| r.version == version).and_then(|r| r.no_rollback_from).map(str::to_string)
}

/// The upgrade notes of every known release after `from` up to and including `to`, oldest
/// first, each with its release: what an upgrade from `from` to `to` must do by hand. Empty
/// when either is not a release version.
pub fn upgrade_notes_between(from: &str, to: &str) -> Vec<(&'static str, &'static str)> {
    let (Some(from), Some(to)) = (ReleaseVersion::parse(from), ReleaseVersion::parse(to)) else { return Vec::new() };
    let mut releases: Vec<&Release> = known().iter().filter(|r| from < r.parsed() && r.parsed() <= to).collect();
    releases.sort_by_key(|r| r.parsed());
    releases.iter().flat_map(|r| r.upgrade_notes.iter().map(move |n| (r.version, *n))).collect()
}

/// The release digest of a tree: [`super::digest`]'s tree digest of what a render can read
/// there (`super::readable`: the kustomization files and the files they name), so a git
/// checkout or GitHub's archive of a tag has the digest of the data-only tree. Remembered per
/// tree by [`super::digest_memo`] (keyed by every entry's signature, so an unchanged tree is
/// neither parsed nor hashed again).
pub fn release_digest(root: &Path) -> Result<String, SourceError> {
    let tree = collect_tree(root)?;
    let compute = |entries: &[TreeEntry]| digest_entries(&super::readable::readable(entries.to_vec()));
    super::digest_memo::digest(super::digest_memo::folder().as_deref(), root, READABLE_SCOPE, &tree, compute)
}

/// What the release digest covers, named for the memo: a change of meaning is a new name.
const READABLE_SCOPE: &str = "readable-by-kustomize/1";

/// The known release whose digest `digest` is.
pub(crate) fn by_digest(digest: &str) -> Option<&'static Release> {
    known().iter().find(|r| r.digest == Some(digest))
}

/// A tree and what it is: its release digest and the release with that digest, if any.
pub(crate) fn identify(root: &Path) -> Result<(String, Option<&'static Release>), SourceError> {
    let digest = release_digest(root)?;
    let release = by_digest(&digest);
    Ok((digest, release))
}

/// `*` matches any run of characters; everything else matches itself.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else { return false };
            (0..=tail.len()).filter(|i| tail.is_char_boundary(*i)).any(|i| glob_match(rest, &tail[i..]))
        }
    }
}

/// The GitHub repository (`owner/name`) every release comes from: the top-level `repository`
/// of `charts/releases.yaml` (kubeflow/community-distribution, formerly kubeflow/manifests).
pub fn repository() -> &'static str {
    loaded().repository
}

/// The archive of `reference` (a commit SHA, or `refs/tags/<tag>`) of [`repository`] under
/// `github_base` (normally `https://github.com`).
pub(crate) fn archive_url_of(github_base: &str, reference: &str) -> String {
    format!("{}/{}/archive/{reference}.tar.gz", github_base.trim_end_matches('/'), repository())
}

impl Release {
    /// The archive URL of this release under `github_base`: its commit's when the catalog pins
    /// one, else its tag's (`refs/tags/<version>`, which upstream can move).
    pub(crate) fn archive_url(&self, github_base: &str) -> String {
        match self.commit {
            Some(commit) => archive_url_of(github_base, commit),
            None => archive_url_of(github_base, &format!("refs/tags/{}", self.version)),
        }
    }

    /// Whether the catalog pins this release by its commit (else it is fetched by its tag).
    pub fn is_pinned(&self) -> bool {
        self.commit.is_some()
    }

    /// The release digest of its tree, when pinned (a `--source` tree with it *is* the release).
    pub fn pinned_digest(&self) -> Option<&'static str> {
        self.digest
    }

    /// The commit for messages (`commit SHA`), or `no confirmed commit`.
    pub fn commit_or_unconfirmed(&self) -> String {
        self.commit.map_or_else(|| "no confirmed commit".to_string(), |c| format!("commit {c}"))
    }

    /// Whether a cluster at Kubernetes `major.minor` is supported.
    #[cfg(test)]
    pub(crate) fn supports_kubernetes(&self, major: u64, minor: u64) -> bool {
        let at_least_min = (major, minor) >= self.min_kubernetes;
        let at_most_max = self.max_kubernetes.is_none_or(|max| (major, minor) <= max);
        at_least_min && at_most_max
    }

    /// The supported range for messages, e.g. `1.33 and newer`.
    pub fn kubernetes_range(&self) -> String {
        let (lo_major, lo_minor) = self.min_kubernetes;
        match self.max_kubernetes {
            None => format!("{lo_major}.{lo_minor} and newer"),
            Some((hi_major, hi_minor)) => format!("{lo_major}.{lo_minor} to {hi_major}.{hi_minor}"),
        }
    }

    /// The version's numbers, ordered across both schemes.
    pub(crate) fn parsed(&self) -> ReleaseVersion {
        // Checked when the catalog was read (`parse_file`).
        ReleaseVersion::parse(self.version).unwrap_or(ReleaseVersion { parts: [0; 3], given: 3 })
    }
}

/// Select a release from the built-in catalog. `None` means `latest`.
pub fn select(spec: Option<&str>) -> Result<&'static Release, SourceError> {
    select_from(known(), spec.unwrap_or("latest"))
}

/// Select from any catalog: an exact version, a prefix (newest match) or `latest`.
pub(crate) fn select_from<'a>(catalog: &'a [Release], spec: &str) -> Result<&'a Release, SourceError> {
    let spec = spec.trim();
    let newest = |candidates: Vec<&'a Release>| candidates.into_iter().max_by_key(|r| r.parsed());
    let found = if spec.eq_ignore_ascii_case("latest") {
        newest(catalog.iter().collect())
    } else {
        ReleaseVersion::parse(spec).and_then(|wanted| {
            // `26.03` names the release 26.03 itself; `1.11` the newest v1.11.x.
            let whole = wanted.given == 3 || (wanted.is_calendar() && wanted.given == 2);
            match whole {
                true => catalog.iter().find(|r| r.parsed().parts == wanted.parts),
                false => newest(catalog.iter().filter(|r| wanted.covers(&r.parsed())).collect()),
            }
        })
    };
    found.ok_or_else(|| SourceError::UnknownVersion { requested: spec.to_string(), known: versions_of(catalog) })
}

/// The versions of a catalog, newest first, for messages.
fn versions_of(catalog: &[Release]) -> String {
    newest_first(catalog).iter().map(|r| r.version).collect::<Vec<_>>().join(", ")
}

/// The known versions, newest first, for messages: `26.03.1, 26.03, v1.11.0, …`.
pub(crate) fn known_versions() -> String {
    versions_of(known())
}

/// The releases of a catalog, newest first.
pub fn newest_first(catalog: &[Release]) -> Vec<&Release> {
    let mut releases: Vec<&Release> = catalog.iter().collect();
    releases.sort_by_key(|r| std::cmp::Reverse(r.parsed()));
    releases
}

#[cfg(test)]
mod tests;
