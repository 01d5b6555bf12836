//! The catalog of supported kubeflow/manifests releases, read from `charts/releases.yaml`.
//!
//! A release is pinned by its commit, never by its tag: tags can move, commits cannot. The
//! archive is fetched from the commit's immutable address
//! (`https://github.com/kubeflow/manifests/archive/<sha>.tar.gz`), and each release states the
//! Kubernetes versions it supports so installers can refuse an unsupported cluster early, the
//! remote bases its kustomizations name, and the digest of its tree, by which a `--source`
//! folder or an imported archive is recognised as the release ([`identify`]). A release whose
//! commit could not be confirmed has none: it is known (its catalog data applies), but it
//! cannot be fetched, and nothing is ever recorded as it without a matching digest.
//!
//! `--version` accepts an exact version (`v1.11.0` or `1.11.0`), a semver prefix (`1.11`,
//! `v1`: the newest known match) or `latest`. Anything else is an error listing what is known.

use super::SourceError;
use super::digest::{EntryKind, TreeEntry, collect_tree, digest_entries};
use semver::Version;
use serde::Deserialize;
use std::path::Path;
use std::sync::OnceLock;

/// One supported release of kubeflow/manifests.
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
    pub remote_bases: &'static [&'static str],
    /// The release digest ([`release_digest`]) of its tree, when measured.
    pub digest: Option<&'static str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReleasesFile {
    digest_skips: DigestSkips,
    releases: Vec<ReleaseEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DigestSkips {
    skip: Vec<String>,
    keep: Vec<String>,
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KubernetesRange {
    min: String,
    max: Option<String>,
}

const RELEASES_FILE: &str = "charts/releases.yaml";

struct Loaded {
    releases: Vec<Release>,
    skips: DigestSkips,
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
    let mut releases = Vec::new();
    for entry in file.releases {
        parse_version(&entry.version).ok_or_else(|| format!("`{}`: not a semantic version", entry.version))?;
        let remote_bases: Vec<&'static str> = entry.remote_bases.into_iter().map(leak).collect();
        releases.push(Release {
            version: leak(entry.version),
            commit: entry.commit.map(leak),
            min_kubernetes: minor_of(&entry.kubernetes.min)?,
            max_kubernetes: entry.kubernetes.max.as_deref().map(minor_of).transpose()?,
            remote_bases: Box::leak(remote_bases.into_boxed_slice()),
            digest: entry.digest.map(leak),
        });
    }
    Ok(Loaded { releases, skips: file.digest_skips })
}

fn loaded() -> &'static Loaded {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    LOADED.get_or_init(|| {
        let text = crate::catalog::embedded::file(RELEASES_FILE).unwrap_or_default();
        // Compiled-in data, checked by the tests below: not user input.
        parse_file(text).unwrap_or_else(|e| panic!("{RELEASES_FILE}: {e}"))
    })
}

/// Every release kfctl-rs knows, oldest first.
pub fn known() -> &'static [Release] {
    &loaded().releases
}

/// The known versions, for messages: `v1.10.0, v1.10.1, …`.
pub fn known_versions() -> String {
    known().iter().map(|r| r.version).collect::<Vec<_>>().join(", ")
}

/// The release digest of a tree: [`super::digest`]'s tree digest without the files
/// `digestSkips` names (helper scripts no kustomization reads). Remembered per tree by
/// [`super::digest_memo`], so an unchanged tree is not hashed again.
pub fn release_digest(root: &Path) -> Result<String, SourceError> {
    let skips = &loaded().skips;
    let kept: Vec<TreeEntry> = collect_tree(root)?
        .into_iter()
        .filter(|e| {
            let name = e.rel.rsplit('/').next().unwrap_or(&e.rel);
            let skipped = e.kind == EntryKind::File && skips.skip.iter().any(|p| glob_match(p, name));
            !skipped || skips.keep.iter().any(|p| glob_match(p, name))
        })
        .collect();
    let filter = format!("skip {:?} keep {:?}", skips.skip, skips.keep);
    super::digest_memo::digest(super::digest_memo::folder().as_deref(), root, &filter, &kept, digest_entries)
}

/// The known release whose digest `digest` is.
pub fn by_digest(digest: &str) -> Option<&'static Release> {
    known().iter().find(|r| r.digest == Some(digest))
}

/// A tree and what it is: its release digest and the release with that digest, if any.
pub fn identify(root: &Path) -> Result<(String, Option<&'static Release>), SourceError> {
    let digest = release_digest(root)?;
    let release = by_digest(&digest);
    Ok((digest, release))
}

/// `*` matches any run of characters; everything else matches itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else { return false };
            (0..=tail.len()).filter(|i| tail.is_char_boundary(*i)).any(|i| glob_match(rest, &tail[i..]))
        }
    }
}

/// The repository every release comes from.
pub const MANIFESTS_REPO: &str = "kubeflow/manifests";

impl Release {
    /// The archive URL of this release's commit under `github_base` (normally
    /// `https://github.com`); `None` when the commit is not confirmed.
    pub fn archive_url(&self, github_base: &str) -> Option<String> {
        let commit = self.commit?;
        Some(format!("{}/{MANIFESTS_REPO}/archive/{commit}.tar.gz", github_base.trim_end_matches('/')))
    }

    /// The commit for messages (`commit SHA`), or `no confirmed commit`.
    pub fn commit_or_unconfirmed(&self) -> String {
        self.commit.map_or_else(|| "no confirmed commit".to_string(), |c| format!("commit {c}"))
    }

    /// Whether a cluster at Kubernetes `major.minor` is supported.
    pub fn supports_kubernetes(&self, major: u64, minor: u64) -> bool {
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

    fn semver(&self) -> Version {
        parse_version(self.version).unwrap_or_else(|| Version::new(0, 0, 0))
    }
}

/// Select a release from the built-in catalog. `None` means `latest`.
pub fn select(spec: Option<&str>) -> Result<&'static Release, SourceError> {
    select_from(known(), spec.unwrap_or("latest"))
}

/// Select from any catalog: exact version, semver prefix (newest match) or `latest`.
pub fn select_from<'a>(catalog: &'a [Release], spec: &str) -> Result<&'a Release, SourceError> {
    let spec = spec.trim();
    let newest = |candidates: Vec<&'a Release>| candidates.into_iter().max_by_key(|r| r.semver());
    let found = if spec.eq_ignore_ascii_case("latest") {
        newest(catalog.iter().collect())
    } else {
        let wanted = spec.strip_prefix('v').unwrap_or(spec);
        let exact = catalog.iter().find(|r| r.version.trim_start_matches('v') == wanted);
        exact.or_else(|| newest(catalog.iter().filter(|r| is_prefix_match(r.version, wanted)).collect()))
    };
    found.ok_or_else(|| SourceError::UnknownVersion {
        requested: spec.to_string(),
        known: catalog.iter().map(|r| r.version).collect::<Vec<_>>().join(", "),
    })
}

/// `1.11` matches `v1.11.0` and `v1.11.3`, not `v1.110.0`: whole dot-separated parts only.
fn is_prefix_match(version: &str, wanted: &str) -> bool {
    let version = version.trim_start_matches('v');
    !wanted.is_empty() && (version == wanted || version.starts_with(&format!("{wanted}.")))
}

fn parse_version(version: &str) -> Option<Version> {
    Version::parse(version.trim_start_matches('v')).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(version: &'static str) -> Release {
        Release {
            version,
            commit: Some("0000000000000000000000000000000000000000"),
            min_kubernetes: (1, 30),
            max_kubernetes: Some((1, 32)),
            remote_bases: &[],
            digest: None,
        }
    }

    const CATALOG: [&str; 4] = ["v1.9.1", "v1.10.0", "v1.10.2", "v1.11.0"];

    fn catalog() -> Vec<Release> {
        CATALOG.iter().map(|v| release(v)).collect()
    }

    #[test]
    fn v1_11_0_is_pinned_to_its_commit_and_kubernetes_range() {
        let r = select(Some("v1.11.0")).unwrap();
        assert_eq!(r.commit, Some("854bd3a21044f767204def71b2dcda83e376891f"));
        assert_eq!(r.kubernetes_range(), "1.33 and newer");
        assert!(r.supports_kubernetes(1, 33) && r.supports_kubernetes(1, 40) && !r.supports_kubernetes(1, 32));
    }

    #[test]
    fn archive_url_uses_the_commit_not_the_tag() {
        let r = select(Some("1.11.0")).unwrap();
        assert_eq!(
            r.archive_url("https://github.com/").as_deref(),
            Some("https://github.com/kubeflow/manifests/archive/854bd3a21044f767204def71b2dcda83e376891f.tar.gz")
        );
    }

    #[test]
    fn the_catalog_knows_four_releases_and_pins_only_confirmed_commits() {
        let versions: Vec<&str> = known().iter().map(|r| r.version).collect();
        assert_eq!(versions, ["v1.10.0", "v1.10.1", "v1.10.2", "v1.11.0"]);
        for r in known() {
            let sha_ok = r.commit.is_none_or(|c| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(sha_ok, "{}: {:?}", r.version, r.commit);
            assert!(!r.remote_bases.is_empty(), "{}", r.version);
        }
        let v1_10_2 = select(Some("v1.10.2")).unwrap();
        assert_eq!(v1_10_2.commit, Some("d8d643f1a736b28c525bd9b8ee5c9b2f4a661b39"));
        assert_eq!(v1_10_2.kubernetes_range(), "1.32 to 1.33");
        assert_eq!(select(Some("v1.10.0")).unwrap().archive_url("https://github.com"), None);
    }

    #[test]
    fn version_1_10_means_v1_10_2() {
        assert_eq!(select(Some("1.10")).unwrap().version, "v1.10.2");
        assert_eq!(select(Some("latest")).unwrap().version, "v1.11.0");
    }

    #[test]
    fn unknown_version_in_the_real_catalog_lists_all_four() {
        let err = select(Some("v1.9.0")).unwrap_err().to_string();
        assert_eq!(err, "release v1.9.0: unknown version; known versions: v1.10.0, v1.10.1, v1.10.2, v1.11.0");
    }

    #[test]
    fn glob_matches_stars_anywhere() {
        assert!(glob_match("*.sh", "hack.sh") && !glob_match("*.sh", "hack.shx"));
        assert!(glob_match("a*b*c", "aXbYc") && glob_match("*", "") && !glob_match("a*", "ba"));
    }

    #[test]
    fn release_digest_skips_scripts_but_keeps_sync_py() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("k.yaml"), "a: 1\n").unwrap();
        let before = release_digest(tmp.path()).unwrap();
        std::fs::write(tmp.path().join("hack.sh"), "echo\n").unwrap();
        assert_eq!(release_digest(tmp.path()).unwrap(), before, "a script changes no release digest");
        std::fs::write(tmp.path().join("sync.py"), "x = 1\n").unwrap();
        assert_ne!(release_digest(tmp.path()).unwrap(), before, "sync.py is embedded by kustomizations");
        assert_eq!(by_digest(&before), None);
    }

    #[test]
    fn exact_version_with_or_without_v() {
        let c = catalog();
        assert_eq!(select_from(&c, "v1.10.0").unwrap().version, "v1.10.0");
        assert_eq!(select_from(&c, "1.10.0").unwrap().version, "v1.10.0");
    }

    #[test]
    fn prefix_selects_newest_match() {
        let c = catalog();
        assert_eq!(select_from(&c, "1.10").unwrap().version, "v1.10.2");
        assert_eq!(select_from(&c, "v1").unwrap().version, "v1.11.0");
    }

    #[test]
    fn prefix_matches_whole_parts_only() {
        let c = catalog();
        assert!(select_from(&c, "1.1").is_err());
    }

    #[test]
    fn latest_is_the_highest_semver_not_the_last_listed() {
        let mut c = catalog();
        c.reverse();
        assert_eq!(select_from(&c, "latest").unwrap().version, "v1.11.0");
        assert_eq!(select(None).unwrap().version, known().last().unwrap().version);
    }

    #[test]
    fn unknown_version_lists_known_ones() {
        let err = select_from(&catalog(), "2.0").unwrap_err().to_string();
        assert_eq!(err, "release 2.0: unknown version; known versions: v1.9.1, v1.10.0, v1.10.2, v1.11.0");
    }

    #[test]
    fn bounded_kubernetes_range() {
        let r = release("v1.9.1");
        assert_eq!(r.kubernetes_range(), "1.30 to 1.32");
        assert!(!r.supports_kubernetes(1, 33) && r.supports_kubernetes(1, 31));
    }
}
