//! What `--version` names, and fetching it by that name.
//!
//! A `--version` names, in this order:
//!
//! 1. a release of the catalog ([`releases::select`]: an exact version in any spelling, a
//!    prefix, `latest`), or the release whose commit a full SHA is;
//! 2. else a commit, given as its full 40-hex SHA;
//! 3. else, when it is a whole version (`26.10`, `26.03.9`, `v1.12.0`:
//!    `ReleaseVersion::as_tag`), an upstream tag the catalog does not know;
//! 4. else nothing: an error listing the known versions.
//!
//! | named | fetched from (`https://github.com/<repository>/…`) | cache entry |
//! |-------|----------------------------------------------------|-------------|
//! | a release pinned by commit | `archive/<commit>.tar.gz` | `manifests/<version>` |
//! | a release with no confirmed commit (26.03.1) | `archive/refs/tags/<version>.tar.gz` | `manifests/tag-<version>` |
//! | an unknown tag | `archive/refs/tags/<tag>.tar.gz` | `manifests/tag-<tag>` |
//! | a commit | `archive/<sha>.tar.gz` | `manifests/commit-<sha>` |
//!
//! `<repository>` is [`releases::repository`]. A known release is rendered with its catalog
//! data; an unknown tag or commit by content (`super::open`: a known release's digest makes it
//! that release, anything else is an unknown upstream).
//!
//! Only a release pinned by commit is vouched for by the catalog. Everything else is trusted on
//! first use, and said in a warning each time it is used: the tree digest of what was fetched
//! is recorded in the cache before the tree is moved into place, and every later use is
//! verified against it (a changed entry is a `security:` refusal, `super::cache`); `--verify`
//! refuses it before any request. A tag-fetched tree has a cache key of its own, so a later
//! catalog that pins the release by its commit never mistakes it for the pinned tree.

use super::SourceError;
use super::cache::{Cache, Kind};
use super::extract::{ExtractLimits, extract_staged, single_top_folder};
use super::fetch::{Fetcher, GITHUB};
use super::pull::Installed;
use super::releases::{self, Release, archive_url_of};
use super::resolver::download_checked;
use super::version::ReleaseVersion;

/// The cache label prefix of a tree fetched by a tag.
pub const TAG_PREFIX: &str = "tag-";
/// The cache label prefix of a tree fetched by a commit the catalog does not know.
pub const COMMIT_PREFIX: &str = "commit-";

/// What a `--version` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// A release of the catalog.
    Release(&'static Release),
    /// An upstream tag the catalog does not know, as upstream writes it (`26.10`, `v1.12.0`).
    Tag(String),
    /// A commit the catalog does not know: its full SHA, lowercase.
    Commit(String),
}

/// A full commit SHA (40 hex digits), lowercase.
fn commit_sha(text: &str) -> Option<String> {
    (text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit())).then(|| text.to_ascii_lowercase())
}

/// Something a user may have meant as an abbreviated commit SHA: hex, with a letter in it.
fn short_sha(text: &str) -> bool {
    (7..40).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_hexdigit())
        && text.bytes().any(|b| b.is_ascii_alphabetic())
}

impl Named {
    /// What `spec` names (`None` means `latest`); the known versions when nothing.
    pub fn parse(spec: Option<&str>) -> Result<Named, SourceError> {
        let text = spec.unwrap_or("latest").trim();
        let unknown = match releases::select(Some(text)) {
            Ok(release) => return Ok(Named::Release(release)),
            Err(err) => err,
        };
        if let Some(sha) = commit_sha(text) {
            let pinned = releases::known().iter().find(|r| r.commit == Some(sha.as_str()));
            return Ok(pinned.map_or(Named::Commit(sha), Named::Release));
        }
        if short_sha(text) {
            return Err(SourceError::invalid(
                format!("--version {text}"),
                format!(
                    "an abbreviated commit SHA is not accepted; name a commit by its full 40-hex SHA, or a release \
                     (known versions: {})",
                    releases::known_versions()
                ),
            ));
        }
        match ReleaseVersion::parse(text).and_then(|v| v.as_tag()) {
            Some(tag) => Ok(Named::Tag(tag)),
            None => Err(unknown),
        }
    }

    /// The catalog release, when it names one.
    pub fn release(&self) -> Option<&'static Release> {
        match self {
            Named::Release(release) => Some(release),
            _ => None,
        }
    }

    /// Whether the catalog vouches for it: a release pinned by its commit.
    pub fn is_pinned(&self) -> bool {
        self.release().is_some_and(Release::is_pinned)
    }

    /// The name a user gives for it again: the release version, the tag or the SHA.
    pub fn label(&self) -> &str {
        match self {
            Named::Release(release) => release.version,
            Named::Tag(name) | Named::Commit(name) => name,
        }
    }

    /// For messages: `kubeflow/community-distribution 26.03.1`, `tag 26.10 of
    /// kubeflow/community-distribution`, `commit <sha> of kubeflow/community-distribution`.
    pub fn describe(&self) -> String {
        let repository = releases::repository();
        match self {
            Named::Release(release) => format!("{repository} {}", release.version),
            Named::Tag(tag) => format!("tag {tag} of {repository}"),
            Named::Commit(sha) => format!("commit {sha} of {repository}"),
        }
    }

    /// Its cache key (see the module docs).
    pub fn cache_key(&self) -> String {
        match self {
            Named::Release(release) if release.is_pinned() => format!("manifests/{}", release.version),
            Named::Release(release) => format!("manifests/{TAG_PREFIX}{}", release.version),
            Named::Tag(tag) => format!("manifests/{TAG_PREFIX}{tag}"),
            Named::Commit(sha) => format!("manifests/{COMMIT_PREFIX}{sha}"),
        }
    }

    /// Its archive URL under `github_base`.
    pub(crate) fn archive_url(&self, github_base: &str) -> String {
        match self {
            Named::Release(release) => release.archive_url(github_base),
            Named::Tag(tag) => archive_url_of(github_base, &format!("refs/tags/{tag}")),
            Named::Commit(sha) => archive_url_of(github_base, sha),
        }
    }

    /// The command that puts it into the cache.
    pub fn pull_command(&self) -> String {
        format!("kfctl-rs source pull --version {}", self.label())
    }

    /// The `--verify` refusal of anything not pinned by commit.
    pub fn refused_by_verify(&self) -> SourceError {
        let why = match self {
            Named::Release(_) => {
                "not pinned by commit (the catalog has no confirmed commit for its tag, and a tag can be moved)"
            }
            Named::Tag(_) | Named::Commit(_) => "not a release kfctl-rs knows (no pinned commit, no known digest)",
        };
        let pinned = releases::newest_first(releases::known()).into_iter().find(|r| r.is_pinned());
        let instead =
            pinned.map(|r| format!("choose a pinned release (--version {}), or ", r.version)).unwrap_or_default();
        SourceError::Security(format!(
            "{}: {why}, so --verify refuses it; {instead}drop --verify to fetch it by name (its digest is recorded \
             when it is first fetched and verified on every later use)",
            self.describe()
        ))
    }

    /// The warning every use of something not pinned by commit carries; `None` when pinned.
    fn warning(&self, fetched_now: bool, origin: &str, sha256: &str) -> Option<String> {
        let why = match self {
            Named::Release(release) if release.is_pinned() => return None,
            Named::Release(_) => "not pinned by commit (the catalog has no confirmed commit for it)",
            Named::Tag(_) => "not a release kfctl-rs knows, and a tag can be moved: not pinned",
            Named::Commit(_) => "not a release kfctl-rs knows: not pinned",
        };
        let what = self.describe();
        Some(match fetched_now {
            true => format!(
                "{what}: {why}; fetched from {origin}; its digest sha256:{sha256} is recorded in the cache and \
                 every later use is verified against it (--verify refuses it)"
            ),
            false => format!(
                "{what}: {why}; using the tree fetched from {origin}, verified against the digest recorded when it \
                 was fetched (sha256:{sha256}; --verify refuses it)"
            ),
        })
    }

    /// The error when it is not cached and `--offline` is set.
    fn offline_error(&self) -> SourceError {
        match self {
            Named::Tag(tag) => SourceError::OfflineTag {
                tag: tag.clone(),
                suggestion: suggestion(tag),
                known: releases::known_versions(),
                repository: releases::repository().to_string(),
                command: self.pull_command(),
            },
            _ => SourceError::Offline { what: self.describe(), command: self.pull_command() },
        }
    }

    /// A download error, with HTTP 404 said as "no such tag/commit/release upstream".
    fn not_found(&self, err: SourceError) -> SourceError {
        let SourceError::Fetch { url, message } = &err else { return err };
        if !message.starts_with(super::fetch::NOT_FOUND) {
            return err;
        }
        let hint = match self {
            Named::Release(release) => format!(
                "its {} is not there (check KFCTL_GITHUB_BASE); pass a checkout or archive of it with --source, or \
                 choose another release (known versions: {}; `kfctl-rs source list`)",
                if release.is_pinned() { "commit" } else { "tag" },
                others(release.version)
            ),
            Named::Tag(tag) => format!(
                "check the spelling: upstream writes tags `26.03.1` or `v1.11.0`{}; known versions: {}",
                suggestion(tag),
                releases::known_versions()
            ),
            Named::Commit(_) => "name a commit of that repository by its full 40-hex SHA (a fork's commits are not in \
                                 it), or a release (`kfctl-rs source list`)"
                .to_string(),
        };
        SourceError::NotUpstream {
            what: self.describe(),
            repository: releases::repository().to_string(),
            url: url.clone(),
            hint,
        }
    }
}

/// The known versions but `version`.
fn others(version: &str) -> String {
    let list: Vec<&str> =
        releases::newest_first(releases::known()).into_iter().map(|r| r.version).filter(|v| *v != version).collect();
    list.join(", ")
}

/// ` (did you mean 26.03.1?)` when a known release shares the tag's first two numbers (an
/// unknown patch is most likely a typo), else nothing.
fn suggestion(tag: &str) -> String {
    let Some(wanted) = ReleaseVersion::parse(tag) else { return String::new() };
    let near = releases::newest_first(releases::known())
        .into_iter()
        .find(|r| r.parsed().parts[..2] == wanted.parts[..2] && r.parsed() != wanted);
    near.map(|r| format!(" (did you mean {}?)", r.version)).unwrap_or_default()
}

/// The tree `named` names in the cache: verified if present, else fetched (unless offline:
/// `fetcher` is `None`), its digest recorded before it is moved into place.
pub(crate) fn ensure(
    cache: &Cache,
    fetcher: Option<&Fetcher>,
    named: &Named,
    limits: &ExtractLimits,
) -> Result<Installed, SourceError> {
    let key = named.cache_key();
    let url = named.archive_url(GITHUB);
    let label = named.label().to_string();
    if let Some(path) = cache.lookup(&key)? {
        let record = cache.record(&key)?;
        let sha256 = record.as_ref().map(|r| r.sha256.clone()).unwrap_or_default();
        let origin = record.map_or_else(|| url.clone(), |r| r.origin);
        let warning = named.warning(false, &origin, &sha256);
        return Ok(Installed { label, path, sha256, fetched: false, origin: url, warning });
    }
    let fetcher = fetcher.ok_or_else(|| named.offline_error())?;
    let archive = download_checked(cache, fetcher, &url).map_err(|e| named.not_found(e))?;
    let parent = cache.path_of("manifests")?;
    let (staging, _) = extract_staged(archive.path(), &parent, limits)?;
    let top = single_top_folder(staging.path(), archive.path())?;
    let (path, sha256) = cache.install(&key, &top, Kind::Tree, &url)?;
    let warning = named.warning(true, &url, &sha256);
    Ok(Installed { label, path, sha256, fetched: true, origin: url, warning })
}

/// `manifests/` labels of trees fetched by a name the catalog does not know (an unknown tag or
/// commit), with how each was named, for `source list`.
pub fn fetched_by_name(labels: &[String]) -> Vec<(&str, Named)> {
    labels
        .iter()
        .filter_map(|label| {
            let named = match (label.strip_prefix(TAG_PREFIX), label.strip_prefix(COMMIT_PREFIX)) {
                (Some(tag), _) => Named::Tag(tag.to_string()),
                (_, Some(sha)) => Named::Commit(sha.to_string()),
                _ => return None,
            };
            let known = matches!(&named, Named::Tag(tag) if releases::known().iter().any(|r| r.version == tag));
            (!known).then_some((label.as_str(), named))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(spec: &str) -> Named {
        Named::parse(Some(spec)).unwrap_or_else(|e| panic!("{spec}: {e}"))
    }

    #[test]
    fn every_spelling_of_26_03_1_names_the_release() {
        for spelling in ["26.03.1", "26.3.1", "v26.03.1", "26.03.01", "V26.3.01", "latest"] {
            assert_eq!(named(spelling).label(), "26.03.1", "{spelling}");
            assert!(named(spelling).release().is_some(), "{spelling}");
        }
        assert_eq!(Named::parse(None).unwrap().label(), "26.03.1");
    }

    #[test]
    fn the_release_with_no_commit_is_fetched_by_its_tag_under_a_key_of_its_own() {
        let current = named("26.03.1");
        assert!(!current.is_pinned());
        assert_eq!(
            current.archive_url("https://github.com"),
            "https://github.com/kubeflow/community-distribution/archive/refs/tags/26.03.1.tar.gz"
        );
        assert_eq!(current.cache_key(), "manifests/tag-26.03.1");
        let pinned = named("26.03");
        assert!(pinned.is_pinned());
        assert_eq!(pinned.cache_key(), "manifests/26.03");
        assert_eq!(
            pinned.archive_url("https://github.com/"),
            "https://github.com/kubeflow/community-distribution/archive/d68ebc7fab366ab40ddd1541d2ec22febb31bc83.tar.gz"
        );
    }

    #[test]
    fn unknown_whole_versions_are_tags() {
        assert_eq!(named("26.10"), Named::Tag("26.10".into()));
        assert_eq!(named("v26.10.0"), Named::Tag("26.10".into()));
        assert_eq!(named("26.3.9"), Named::Tag("26.03.9".into()));
        assert_eq!(named("1.12.0"), Named::Tag("v1.12.0".into()));
        assert_eq!(
            named("26.10").archive_url("https://github.com"),
            "https://github.com/kubeflow/community-distribution/archive/refs/tags/26.10.tar.gz"
        );
        assert_eq!(named("26.10").cache_key(), "manifests/tag-26.10");
    }

    #[test]
    fn prefixes_and_words_that_name_nothing_list_the_known_versions() {
        for spec in ["1.12", "27", "2026.03", "banana", "26.03.1-rc.2", "../x"] {
            let err = Named::parse(Some(spec)).unwrap_err().to_string();
            assert!(err.contains("unknown version; known versions: 26.03.1, 26.03, v1.11.0"), "{spec}: {err}");
        }
        let err = Named::parse(Some("d68ebc7")).unwrap_err().to_string();
        assert!(err.contains("full 40-hex SHA") && err.contains("known versions: 26.03.1"), "{err}");
    }

    #[test]
    fn commits_are_named_by_their_full_sha_and_a_release_commit_is_the_release() {
        let sha = "0123456789ABCDEF0123456789abcdef01234567";
        let commit = named(sha);
        assert_eq!(commit, Named::Commit(sha.to_ascii_lowercase()));
        assert_eq!(commit.cache_key(), format!("manifests/commit-{}", sha.to_ascii_lowercase()));
        assert!(commit.archive_url("https://h").ends_with(&format!("/archive/{}.tar.gz", sha.to_ascii_lowercase())));
        assert_eq!(named("d68ebc7fab366ab40ddd1541d2ec22febb31bc83").label(), "26.03");
    }

    #[test]
    fn verify_refuses_what_is_not_pinned_naming_it_and_what_to_do() {
        for spec in ["26.03.1", "26.10", "0123456789abcdef0123456789abcdef01234567"] {
            let err = named(spec).refused_by_verify();
            let text = err.to_string();
            assert!(err.is_security() && text.starts_with("security: "), "{text}");
            assert!(
                text.contains(spec) && text.contains("--version 26.03") && text.contains("drop --verify"),
                "{text}"
            );
        }
    }

    #[test]
    fn offline_tag_names_it_the_known_versions_a_typo_fix_and_the_pull_command() {
        let text = named("26.03.9").offline_error().to_string();
        assert!(text.starts_with("release 26.03.9: unknown version (did you mean 26.03.1?); known versions: 26.03.1,"));
        assert!(text.contains("--offline") && text.contains("`kfctl-rs source pull --version 26.03.9`"), "{text}");
        let text = named("26.10").offline_error().to_string();
        assert!(!text.contains("did you mean"), "{text}");
        let commit = named("0123456789abcdef0123456789abcdef01234567").offline_error().to_string();
        assert!(commit.contains("--offline") && commit.contains("source pull --version 0123456789abcdef"), "{commit}");
    }

    #[test]
    fn a_404_says_the_tag_does_not_exist_upstream() {
        let fetch = |url: &str| SourceError::Fetch { url: url.into(), message: "HTTP 404 Not Found".into() };
        let text = named("26.03.9").not_found(fetch("https://h/x.tar.gz")).to_string();
        assert!(text.starts_with("tag 26.03.9 of kubeflow/community-distribution: not found in"), "{text}");
        assert!(text.contains("https://h/x.tar.gz") && text.contains("did you mean 26.03.1?"), "{text}");
        let text = named("26.03.1").not_found(fetch("https://h/y.tar.gz")).to_string();
        assert!(text.starts_with("kubeflow/community-distribution 26.03.1: not found in"), "{text}");
        assert!(text.contains("its tag is not there") && text.contains("known versions: 26.03, v1.11.0"), "{text}");
        let other = SourceError::Fetch { url: "u".into(), message: "HTTP 500".into() };
        assert!(matches!(named("26.10").not_found(other), SourceError::Fetch { .. }));
    }

    #[test]
    fn cached_labels_fetched_by_name_are_listed_but_known_releases_are_not() {
        let labels: Vec<String> =
            ["26.03", "tag-26.03.1", "tag-26.10", "commit-abc", "local-1"].iter().map(|s| s.to_string()).collect();
        let listed: Vec<&str> = fetched_by_name(&labels).into_iter().map(|(l, _)| l).collect();
        assert_eq!(listed, ["tag-26.10", "commit-abc"]);
    }
}
