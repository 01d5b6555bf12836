//! Fetching by name over the loopback server: a release the catalog pins no commit for
//! (26.03.1, fetched by its tag), an upstream tag the catalog does not know (`26.10`), a commit
//! SHA, a tag that does not exist, and `--offline` with nothing cached. Each is trusted on first
//! use: its digest is recorded and every later use is verified against it; `--verify` refuses it.

use super::server::{Route, Server};
use super::{COMMIT, JOBSET_0_11, LWS_0_8, TAG_26_03_1, github_archive, upstream_26_03_1};
use crate::common::{self, binary};

use kfctl::source::digest::tree_digest;
use kfctl::source::{Cache, PullReport, PullRequest, SourceError, pull};
use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

const REPO: &str = "kubeflow/community-distribution";
const TAG_26_10: &str = "/kubeflow/community-distribution/archive/refs/tags/26.10.tar.gz";

fn pull_version(cache_dir: &Path, server: &Server, version: &str) -> Result<PullReport, SourceError> {
    let cache = Arc::new(Cache::open(cache_dir).unwrap());
    let request = PullRequest { version: Some(version.into()), from: None };
    pull(&request, &cache, Some(server.fetcher()))
}

/// `kfctl-rs ARGS` against `server` (when given) with the cache in `root/cache`.
fn kfctl(root: &Path, server: Option<&Server>, args: &[&str]) -> Output {
    let mut command = std::process::Command::new(binary());
    command.args(args).env("KFCTL_CACHE_DIR", root.join("cache")).env_remove("KFCTL_REMOTE_MIRROR");
    if let Some(server) = server {
        let ca = root.join("ca.pem");
        std::fs::write(&ca, &server.ca_pem).unwrap();
        command.env("KFCTL_GITHUB_BASE", &server.base).env("KFCTL_CA_FILE", ca);
    } else {
        command.env("KFCTL_GITHUB_BASE", "https://127.0.0.1:1").env_remove("KFCTL_CA_FILE");
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A small upstream-shaped tree with no remote bases, as GitHub's archive of `top`.
fn small_archive(top: &str) -> Arc<Vec<u8>> {
    let tmp = tempfile::tempdir().unwrap();
    let write = |rel: &str, body: &str| {
        let path = tmp.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    };
    write("example/kustomization.yaml", "resources:\n- cm.yaml\n");
    write("example/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: by-commit\n  namespace: kubeflow\n");
    Arc::new(github_archive(tmp.path(), top))
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_release_with_no_commit_is_fetched_by_its_tag_recorded_and_verified() {
    let server = Server::start_with_26_03_1();
    let cache_dir = tempfile::tempdir().unwrap();
    let report = pull_version(cache_dir.path(), &server, "26.03.1").unwrap();

    assert_eq!(report.manifests.label, "26.03.1");
    assert_eq!(report.release.map(|r| r.version), Some("26.03.1"));
    assert!(report.manifests.fetched && report.manifests.path.ends_with("manifests/tag-26.03.1"));
    assert!(report.manifests.origin.ends_with("/kubeflow/community-distribution/archive/refs/tags/26.03.1.tar.gz"));
    assert_eq!(report.manifests.sha256, tree_digest(&common::manifests_dir_of("26.03.1")).unwrap());
    let warning = &report.warnings[0];
    assert!(warning.starts_with(&format!("{REPO} 26.03.1: not pinned by commit")), "{warning}");
    assert!(warning.contains(&format!("sha256:{}", report.manifests.sha256)), "{warning}");
    assert!(warning.contains("is recorded") && warning.contains("--verify refuses it"), "{warning}");

    // The digest is in the cache's digest file, with where it came from.
    let digests: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cache_dir.path().join("digests.json")).unwrap()).unwrap();
    let entry = &digests["entries"]["manifests/tag-26.03.1"];
    assert_eq!(entry["sha256"], report.manifests.sha256.as_str(), "{entry}");
    assert!(entry["origin"].as_str().unwrap().ends_with("/refs/tags/26.03.1.tar.gz"), "{entry}");

    let keys: Vec<&str> = report.remotes.iter().map(|r| r.key.as_str()).collect();
    assert!(keys.contains(&"remote/git/github.com/kubernetes-sigs/lws@v0.8.0"), "{keys:?}");
    assert!(keys.iter().any(|k| k.ends_with("jobset/releases/download/v0.11.0/manifests.yaml")), "{keys:?}");
    assert_eq!(server.hits_of(TAG_26_03_1), 1);
    assert_eq!((server.hits_of(LWS_0_8), server.hits_of(JOBSET_0_11)), (1, 1));
    assert_eq!(server.hits_of(&format!("/kubeflow/community-distribution/archive/{COMMIT}.tar.gz")), 0);
    let requests = server.hits().len();

    // Again, in another spelling: nothing is requested, the cached tree is verified and the
    // warning is said again.
    let again = pull_version(cache_dir.path(), &server, "v26.3.01").unwrap();
    assert_eq!(server.hits().len(), requests, "the second pull must not send any request");
    assert!(!again.manifests.fetched && again.remotes.iter().all(|r| !r.fetched));
    assert_eq!(again.manifests.sha256, report.manifests.sha256);
    assert!(again.warnings[0].contains("verified against the digest recorded"), "{:?}", again.warnings);

    // A changed cache entry is refused as tampered.
    std::fs::write(report.manifests.path.join("example/kustomization.yaml"), "resources: [evil.yaml]\n").unwrap();
    let err = pull_version(cache_dir.path(), &server, "26.03.1").unwrap_err();
    let text = err.to_string();
    assert!(err.is_security() && text.contains("sha256 mismatch") && text.contains(&report.manifests.sha256), "{text}");
    assert_eq!(server.hits().len(), requests, "a tampered entry is refused, never silently fetched again");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn an_unknown_tag_is_rendered_by_content_with_a_warning_verified_later_and_refused_by_verify() {
    let server = Server::with_routes(HashMap::new());
    server.route(TAG_26_10, Route::Body(upstream_26_03_1()[TAG_26_03_1].clone()));
    let tmp = tempfile::tempdir().unwrap();
    let render = ["template", "--profile", "minimal", "--components", "kubeflow-namespace", "--version", "26.10"];

    let first = kfctl(tmp.path(), Some(&server), &render);
    let stderr = text(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(text(&first.stdout).contains("kind: Namespace\nmetadata:"), "{}", text(&first.stdout));
    assert!(stderr.contains(&format!("tag 26.10 of {REPO}: not a release kfctl-rs knows")), "{stderr}");
    assert!(stderr.contains("is recorded in the cache"), "{stderr}");
    assert!(stderr.contains("an unknown upstream: using the catalog data of the release whose layout"), "{stderr}");
    assert_eq!(server.hits_of(TAG_26_10), 1);

    // Later renders come from the cache, verified against the recorded digest, offline too.
    let offline = kfctl(tmp.path(), None, &[&render[..], &["--offline"]].concat());
    let stderr = text(&offline.stderr);
    assert!(offline.status.success(), "{stderr}");
    assert!(stderr.contains("verified against the digest recorded when it was fetched"), "{stderr}");
    assert_eq!(text(&offline.stdout), text(&first.stdout));
    assert_eq!(server.hits().len(), 1);

    // --verify refuses it, before any request.
    let verified = kfctl(tmp.path(), Some(&server), &[&render[..], &["--verify"]].concat());
    let stderr = text(&verified.stderr);
    assert_eq!(verified.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains(&format!("security: tag 26.10 of {REPO}: not a release kfctl-rs knows")), "{stderr}");
    assert!(stderr.contains("--verify refuses it") && stderr.contains("drop --verify"), "{stderr}");

    // A changed cache entry is refused as tampered.
    let cached = tmp.path().join("cache/manifests/tag-26.10/common/kubeflow-namespace/base/kustomization.yaml");
    std::fs::write(&cached, "resources: []\n").unwrap();
    let tampered = kfctl(tmp.path(), None, &[&render[..], &["--offline"]].concat());
    let stderr = text(&tampered.stderr);
    assert_eq!(tampered.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("security:") && stderr.contains("sha256 mismatch"), "{stderr}");
    assert_eq!(server.hits().len(), 1);
}

#[test]
fn a_commit_sha_is_fetched_by_that_name_and_recorded() {
    let sha = "9fca80cba541c1fae8bb33641444f5c4f88411c4";
    let path = format!("/kubeflow/community-distribution/archive/{sha}.tar.gz");
    let server = Server::with_routes(HashMap::from([(path.clone(), Route::Body(small_archive("cd-9fca80c")))]));
    let cache_dir = tempfile::tempdir().unwrap();
    let report = pull_version(cache_dir.path(), &server, &sha.to_ascii_uppercase()).unwrap();
    assert_eq!(report.manifests.label, sha);
    assert!(report.release.is_none() && report.remotes.is_empty());
    assert!(report.manifests.path.ends_with(format!("manifests/commit-{sha}")));
    let warning = &report.warnings[0];
    assert!(warning.starts_with(&format!("commit {sha} of {REPO}: not a release kfctl-rs knows")), "{warning}");
    assert!(warning.contains(&format!("sha256:{}", report.manifests.sha256)), "{warning}");
    assert_eq!(server.hits(), [path.as_str()]);

    let again = pull_version(cache_dir.path(), &server, sha).unwrap();
    assert!(!again.manifests.fetched && again.manifests.sha256 == report.manifests.sha256);
    assert_eq!(server.hits().len(), 1, "the second pull must not send any request");

    // Rendered by content, offline from the cache.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::rename(cache_dir.path(), tmp.path().join("cache")).unwrap();
    let out = kfctl(tmp.path(), None, &["source", "list"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&format!("commit-{sha}  commit {sha} of {REPO}: not a known release")), "{stdout}");
    assert!(stdout.contains("26.03.1  no confirmed commit  Kubernetes 1.35 and newer  (not cached;"), "{stdout}");
}

#[test]
fn a_tag_that_does_not_exist_upstream_is_said_so() {
    let server = Server::with_routes(HashMap::new());
    let cache_dir = tempfile::tempdir().unwrap();
    let err = pull_version(cache_dir.path(), &server, "26.3.9").unwrap_err();
    let text = err.to_string();
    assert!(!err.is_security(), "{text}");
    assert!(text.starts_with(&format!("tag 26.03.9 of {REPO}: not found in {REPO} (https://127.0.0.1:")), "{text}");
    assert!(text.contains("/archive/refs/tags/26.03.9.tar.gz answered HTTP 404)"), "{text}");
    assert!(text.contains("did you mean 26.03.1?") && text.contains("known versions: 26.03.1, 26.03"), "{text}");
    assert_eq!(server.hits(), ["/kubeflow/community-distribution/archive/refs/tags/26.03.9.tar.gz"], "not retried");

    let sha = "0123456789abcdef0123456789abcdef01234567";
    let err = pull_version(cache_dir.path(), &server, sha).unwrap_err().to_string();
    assert!(err.starts_with(&format!("commit {sha} of {REPO}: not found in {REPO}")), "{err}");
}

#[test]
fn offline_with_nothing_cached_names_the_tag_offline_and_the_pull_command() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kfctl(tmp.path(), None, &["template", "--profile", "minimal", "--offline", "--version", "26.10"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("release 26.10: unknown version; known versions: 26.03.1, 26.03, v1.11.0"), "{stderr}");
    assert!(stderr.contains(&format!("as a tag of {REPO} it is not available offline (--offline is set)")), "{stderr}");
    assert!(stderr.contains("fetch it first with `kfctl-rs source pull --version 26.10`"), "{stderr}");

    // An unknown patch of a known release is most likely a typo: the release is suggested.
    let out = kfctl(tmp.path(), None, &["source", "pull", "--offline", "--version", "26.03.9"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("release 26.03.9: unknown version (did you mean 26.03.1?); known versions:"), "{stderr}");

    // The release itself, offline and not cached, names its pull command; a commit too.
    let out = kfctl(tmp.path(), None, &["template", "--profile", "minimal", "--offline"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("{REPO} 26.03.1: not available offline (--offline is set)")), "{stderr}");
    assert!(stderr.contains("`kfctl-rs source pull --version 26.03.1`"), "{stderr}");
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let out = kfctl(tmp.path(), None, &["template", "--profile", "minimal", "--offline", "--version", sha]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("commit {sha} of {REPO}: not available offline")), "{stderr}");
    assert!(!tmp.path().join("cache/manifests").exists(), "nothing was written");
}
