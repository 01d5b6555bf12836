//! The committed catalog of supported kubeflow/manifests releases.
//!
//! A release is pinned by its commit, never by its tag: tags can move, commits cannot. The
//! archive is fetched from the commit's immutable address
//! (`https://github.com/kubeflow/manifests/archive/<sha>.tar.gz`), and each release states the
//! Kubernetes versions it supports so installers can refuse an unsupported cluster early.
//!
//! `--version` accepts an exact version (`v1.11.0` or `1.11.0`), a semver prefix (`1.11`,
//! `v1`: the newest known match) or `latest`. Anything else is an error listing what is known.

use super::SourceError;
use semver::Version;

/// One supported release of kubeflow/manifests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// The tag name, e.g. `v1.11.0`.
    pub version: &'static str,
    /// The full commit SHA the tag pointed to when the release was added to the catalog.
    pub commit: &'static str,
    /// The oldest supported Kubernetes minor version, as (major, minor).
    pub min_kubernetes: (u64, u64),
    /// The newest supported Kubernetes minor version; `None` means "and newer".
    pub max_kubernetes: Option<(u64, u64)>,
}

/// Every release kfctl-rs knows, oldest first.
pub const KNOWN_RELEASES: &[Release] = &[Release {
    version: "v1.11.0",
    commit: "854bd3a21044f767204def71b2dcda83e376891f",
    min_kubernetes: (1, 33),
    max_kubernetes: None,
}];

/// The repository every release comes from.
pub const MANIFESTS_REPO: &str = "kubeflow/manifests";

impl Release {
    /// The archive URL of this release's commit under `github_base` (normally `https://github.com`).
    pub fn archive_url(&self, github_base: &str) -> String {
        format!("{}/{MANIFESTS_REPO}/archive/{}.tar.gz", github_base.trim_end_matches('/'), self.commit)
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
    select_from(KNOWN_RELEASES, spec.unwrap_or("latest"))
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
            commit: "0000000000000000000000000000000000000000",
            min_kubernetes: (1, 30),
            max_kubernetes: Some((1, 32)),
        }
    }

    const CATALOG: [&str; 4] = ["v1.9.1", "v1.10.0", "v1.10.2", "v1.11.0"];

    fn catalog() -> Vec<Release> {
        CATALOG.iter().map(|v| release(v)).collect()
    }

    #[test]
    fn v1_11_0_is_pinned_to_its_commit_and_kubernetes_range() {
        let r = select(Some("v1.11.0")).unwrap();
        assert_eq!(r.commit, "854bd3a21044f767204def71b2dcda83e376891f");
        assert_eq!(r.kubernetes_range(), "1.33 and newer");
        assert!(r.supports_kubernetes(1, 33) && r.supports_kubernetes(1, 40) && !r.supports_kubernetes(1, 32));
    }

    #[test]
    fn archive_url_uses_the_commit_not_the_tag() {
        let r = select(Some("1.11.0")).unwrap();
        assert_eq!(
            r.archive_url("https://github.com/"),
            "https://github.com/kubeflow/manifests/archive/854bd3a21044f767204def71b2dcda83e376891f.tar.gz"
        );
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
        assert_eq!(select(None).unwrap().version, KNOWN_RELEASES.last().unwrap().version);
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
