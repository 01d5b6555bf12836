//! `source pull` against a real TLS server on loopback (`server`).
//!
//! The server serves GitHub-style archives built at run time from the shared snapshot
//! (kubeflow/manifests v1.11.0, now fetched from kubeflow/community-distribution; 26.03.1 by its
//! tag; the remote mirror), counts every request, and can misbehave on demand: cut a body
//! short, answer 503, redirect. Fetching by a tag or a commit no release pins is in `by_name`.

use crate::common;

use kfctl::source::digest::tree_digest;
use kfctl::source::walk::remote_closure;
use kfctl::source::{Cache, FetchOptions, Fetcher, MirrorResolver, PullReport, PullRequest, SourceError, pull};
use server::{Route, Server};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const COMMIT: &str = "854bd3a21044f767204def71b2dcda83e376891f";
const ARGO: &str = "/argoproj/argo-workflows/archive/v3.7.3.tar.gz";
const LWS: &str = "/kubernetes-sigs/lws/archive/v0.7.0.tar.gz";
const JOBSET_NEW: &str = "/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml";
const JOBSET_OLD: &str = "/kubernetes-sigs/jobset/releases/download/v0.6.0/manifests.yaml";
/// 26.03.1 has no confirmed commit: it is fetched by its tag.
const TAG_26_03_1: &str = "/kubeflow/community-distribution/archive/refs/tags/26.03.1.tar.gz";
const LWS_0_8: &str = "/kubernetes-sigs/lws/archive/v0.8.0.tar.gz";
const JOBSET_0_11: &str = "/kubernetes-sigs/jobset/releases/download/v0.11.0/manifests.yaml";

mod by_name;
mod server;

use common::binary;

/// The repository was renamed kubeflow/community-distribution; releases are fetched from there.
fn manifests_path() -> String {
    format!("/kubeflow/community-distribution/archive/{COMMIT}.tar.gz")
}

// ---------------------------------------------------------------- fixtures

/// A `.tar.gz` of `dir` under one top folder, like GitHub's archives.
fn github_archive(dir: &Path, top: &str) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all(top, dir).unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

/// The archives, built once per test binary.
fn upstream() -> &'static HashMap<String, Arc<Vec<u8>>> {
    static FILES: OnceLock<HashMap<String, Arc<Vec<u8>>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let kubeflow = common::upstream();
        let remote = kubeflow.join("remote");
        let file = |rel: &str| Arc::new(std::fs::read(remote.join(rel)).unwrap());
        HashMap::from([
            (
                manifests_path(),
                Arc::new(github_archive(&kubeflow.join("manifests/v1.11.0"), &format!("manifests-{COMMIT}"))),
            ),
            (
                ARGO.to_string(),
                Arc::new(github_archive(
                    &remote.join("git/github.com/argoproj/argo-workflows@v3.7.3"),
                    "argo-workflows-3.7.3",
                )),
            ),
            (
                LWS.to_string(),
                Arc::new(github_archive(&remote.join("git/github.com/kubernetes-sigs/lws@v0.7.0"), "lws-0.7.0")),
            ),
            (
                JOBSET_NEW.to_string(),
                file("http/github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml"),
            ),
            (
                JOBSET_OLD.to_string(),
                file("http/github.com/kubernetes-sigs/jobset/releases/download/v0.6.0/manifests.yaml"),
            ),
        ])
    })
}

/// 26.03.1's archive and the remote bases only it needs (lws v0.8.0, jobset v0.11.0), built
/// once per test binary and only by the tests that serve them.
fn upstream_26_03_1() -> &'static HashMap<String, Arc<Vec<u8>>> {
    static FILES: OnceLock<HashMap<String, Arc<Vec<u8>>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let kubeflow = common::upstream();
        let remote = kubeflow.join("remote");
        let tree = github_archive(&kubeflow.join("manifests/26.03.1"), "community-distribution-26.03.1");
        HashMap::from([
            (TAG_26_03_1.to_string(), Arc::new(tree)),
            (
                LWS_0_8.to_string(),
                Arc::new(github_archive(&remote.join("git/github.com/kubernetes-sigs/lws@v0.8.0"), "lws-0.8.0")),
            ),
            (
                JOBSET_0_11.to_string(),
                Arc::new(
                    std::fs::read(
                        remote.join("http/github.com/kubernetes-sigs/jobset/releases/download/v0.11.0/manifests.yaml"),
                    )
                    .unwrap(),
                ),
            ),
        ])
    })
}

// ---------------------------------------------------------------- helpers

fn pull_release(cache_dir: &Path, server: &Server) -> Result<PullReport, SourceError> {
    let cache = Arc::new(Cache::open(cache_dir).unwrap());
    let request = PullRequest { version: Some("1.11".into()), from: None };
    pull(&request, &cache, Some(server.fetcher()))
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".kfctl-tmp") || name.starts_with(".kfctl-old") {
                found.push(entry.path());
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    found
}

// ---------------------------------------------------------------- tests

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn pull_fetches_release_and_remote_bases_then_a_second_run_makes_no_request() {
    let server = Server::start();
    let cache_dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let report = pull_release(cache_dir.path(), &server).unwrap();
    eprintln!("first pull: {:?}, {} requests", started.elapsed(), server.hits().len());

    let snapshot = common::manifests_dir_of("v1.11.0");
    assert_eq!(report.manifests.label, "v1.11.0");
    assert!(report.manifests.fetched);
    assert_eq!(report.manifests.sha256, tree_digest(&snapshot).unwrap());
    let keys: Vec<_> = report.remotes.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "remote/git/github.com/argoproj/argo-workflows@v3.7.3",
            "remote/git/github.com/kubernetes-sigs/lws@v0.7.0",
            "remote/http/github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml",
            "remote/http/github.com/kubernetes-sigs/jobset/releases/download/v0.6.0/manifests.yaml",
        ]
    );
    assert!(report.remotes.iter().all(|r| r.fetched));
    let mirror = common::mirror_dir();
    let lws = "git/github.com/kubernetes-sigs/lws@v0.7.0";
    assert_eq!(
        tree_digest(&cache_dir.path().join("remote").join(lws)).unwrap(),
        tree_digest(&mirror.join(lws)).unwrap()
    );
    let mut hits = server.hits();
    hits.sort();
    let mut expected = vec![manifests_path(), ARGO.into(), LWS.into(), JOBSET_NEW.into(), JOBSET_OLD.into()];
    expected.sort();
    assert_eq!(hits, expected, "each archive fetched exactly once");

    // The cache is a mirror: MirrorResolver resolves every remote of v1.11.0 from it.
    let closure =
        remote_closure(&report.manifests.path, &MirrorResolver { root: cache_dir.path().join("remote") }).unwrap();
    assert_eq!(closure.units.len(), 4);

    let started = Instant::now();
    let again = pull_release(cache_dir.path(), &server).unwrap();
    eprintln!("second pull: {:?}", started.elapsed());
    assert_eq!(server.hits().len(), 5, "the second pull must not send any request");
    assert!(!again.manifests.fetched && again.remotes.iter().all(|r| !r.fetched));
    assert_eq!(again.manifests.sha256, report.manifests.sha256);
    assert!(leftovers(cache_dir.path()).is_empty());
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn tampered_cache_entries_are_refused() {
    let server = Server::start();
    let cache_dir = tempfile::tempdir().unwrap();
    let report = pull_release(cache_dir.path(), &server).unwrap();
    let victim = report.manifests.path.join("example/kustomization.yaml");
    std::fs::write(&victim, "resources: [evil.yaml]\n").unwrap();
    let err = pull_release(cache_dir.path(), &server).unwrap_err();
    let text = err.to_string();
    assert!(err.is_security() && text.contains("sha256 mismatch") && text.contains(&report.manifests.sha256), "{text}");
    assert!(text.contains(&report.manifests.path.display().to_string()), "{text}");

    // A remote plain file, checked with its own digest.
    let cache2 = tempfile::tempdir().unwrap();
    let report = pull_release(cache2.path(), &server).unwrap();
    let file = report.remotes.iter().find(|r| r.key.ends_with("v0.6.0/manifests.yaml")).unwrap();
    std::fs::write(&file.path, "kind: Evil\n").unwrap();
    let err = pull_release(cache2.path(), &server).unwrap_err();
    assert!(err.is_security() && err.to_string().contains(&file.sha256), "{err}");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_wrong_recorded_digest_is_refused() {
    let server = Server::start();
    let cache_dir = tempfile::tempdir().unwrap();
    pull_release(cache_dir.path(), &server).unwrap();

    // The digest file says something else than the tree holds.
    let digests = cache_dir.path().join("digests.json");
    let text = std::fs::read_to_string(&digests).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let wrong = "0".repeat(64);
    json["entries"]["remote/git/github.com/kubernetes-sigs/lws@v0.7.0"]["sha256"] = wrong.clone().into();
    std::fs::write(&digests, serde_json::to_vec(&json).unwrap()).unwrap();
    let err = pull_release(cache_dir.path(), &server).unwrap_err();
    assert!(err.is_security() && err.to_string().contains(&format!("recorded {wrong}")), "{err}");

    // Upstream serves different bytes for a URL already fetched once (trust on first use).
    std::fs::write(&digests, &text).unwrap();
    std::fs::remove_dir_all(cache_dir.path().join("remote/git/github.com/kubernetes-sigs/lws@v0.7.0")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("config")).unwrap();
    std::fs::write(tmp.path().join("config/kustomization.yaml"), "resources: []\n").unwrap();
    server.route(LWS, Route::Body(Arc::new(github_archive(tmp.path(), "lws-0.7.0"))));
    let err = pull_release(cache_dir.path(), &server).unwrap_err().to_string();
    let named = "download https://github.com/kubernetes-sigs/lws/archive/v0.7.0.tar.gz: sha256 mismatch";
    assert!(err.starts_with("security:") && err.contains(named), "{err}");
    assert!(!cache_dir.path().join("remote/git/github.com/kubernetes-sigs/lws@v0.7.0").exists());
    assert!(leftovers(cache_dir.path()).is_empty());
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_body_cut_short_is_retried_then_succeeds() {
    let server = Server::start();
    let body = upstream()[JOBSET_NEW].clone();
    server.route(JOBSET_NEW, Route::CutOff { failures: Arc::new(AtomicUsize::new(2)), body });
    let lws = upstream()[LWS].clone();
    server.route(LWS, Route::Unavailable { failures: Arc::new(AtomicUsize::new(1)), body: lws });
    let cache_dir = tempfile::tempdir().unwrap();
    let report = pull_release(cache_dir.path(), &server).unwrap();
    assert_eq!(server.hits_of(JOBSET_NEW), 3);
    assert_eq!(server.hits_of(LWS), 2);
    let file = report.remotes.iter().find(|r| r.key.ends_with("v0.10.1/manifests.yaml")).unwrap();
    assert_eq!(std::fs::read(&file.path).unwrap(), *upstream()[JOBSET_NEW]);
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_body_always_cut_short_fails_cleanly() {
    let server = Server::start();
    let body = upstream()[JOBSET_OLD].clone();
    server.route(JOBSET_OLD, Route::CutOff { failures: Arc::new(AtomicUsize::new(usize::MAX)), body });
    let cache_dir = tempfile::tempdir().unwrap();
    let err = pull_release(cache_dir.path(), &server).unwrap_err();
    let text = err.to_string();
    assert!(!err.is_security() && text.contains("gave up after 4 attempts") && text.contains(JOBSET_OLD), "{text}");
    assert_eq!(server.hits_of(JOBSET_OLD), 4);
    assert!(!cache_dir.path().join("remote/http/github.com").join(&JOBSET_OLD[1..]).exists());
    assert!(leftovers(cache_dir.path()).is_empty(), "{:?}", leftovers(cache_dir.path()));
    let downloads: Vec<_> = std::fs::read_dir(cache_dir.path().join(".downloads")).unwrap().collect();
    assert!(downloads.is_empty(), "{downloads:?}");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_redirect_to_plain_http_is_refused_and_https_redirects_are_followed() {
    let server = Server::start();
    let port = server.base.rsplit(':').next().unwrap().to_string();
    server.route(JOBSET_NEW, Route::Redirect("/moved/jobset.yaml".into()));
    server.route("/moved/jobset.yaml", Route::Body(upstream()[JOBSET_NEW].clone()));
    let dest = tempfile::NamedTempFile::new().unwrap();
    let fetched = server.fetcher().download(&format!("https://github.com{JOBSET_NEW}"), dest.path()).unwrap();
    assert_eq!(fetched.bytes as usize, upstream()[JOBSET_NEW].len());
    assert_eq!(server.hits_of("/moved/jobset.yaml"), 1, "the https redirect was followed");

    server.route(JOBSET_OLD, Route::Redirect(format!("http://127.0.0.1:{port}/plain.yaml")));
    let cache_dir = tempfile::tempdir().unwrap();
    let err = pull_release(cache_dir.path(), &server).unwrap_err();
    let text = err.to_string();
    assert!(err.is_security() && text.contains("redirect to plain http refused"), "{text}");
    assert!(text.contains(&format!("http://127.0.0.1:{port}/plain.yaml")), "{text}");
    assert_eq!(server.hits_of("/plain.yaml"), 0);
    assert!(!cache_dir.path().join("remote/http/github.com").join(&JOBSET_OLD[1..]).exists());
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn an_untrusted_certificate_is_refused_without_retries() {
    let server = Server::start();
    let options = FetchOptions { extra_root_ca_pem: None, ..server.options() };
    let fetcher = Fetcher::new(options).unwrap();
    let dest = tempfile::NamedTempFile::new().unwrap();
    let err = fetcher.download(&format!("https://github.com{JOBSET_NEW}"), dest.path()).unwrap_err().to_string();
    assert!(err.contains("certificate"), "{err}");
    assert_eq!(fetcher.request_count(), 1);
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn cli_pull_over_tls_then_offline() {
    let server = Server::start();
    let tmp = tempfile::tempdir().unwrap();
    let ca = tmp.path().join("ca.pem");
    std::fs::write(&ca, &server.ca_pem).unwrap();
    let cache = tmp.path().join("cache");
    let run = |args: &[&str]| {
        std::process::Command::new(binary())
            .args(args)
            .env("KFCTL_CACHE_DIR", &cache)
            .env("KFCTL_GITHUB_BASE", &server.base)
            .output()
            .unwrap()
    };
    let ca_arg = ca.to_str().unwrap();
    let first = run(&["source", "pull", "--version", "v1.11.0", "--ca-file", ca_arg]);
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    assert!(stdout.contains("manifests v1.11.0:") && stdout.matches("(fetched)").count() == 5, "{stdout}");
    assert!(
        String::from_utf8_lossy(&first.stderr).contains("fetched https://127.0.0.1"),
        "plain progress lines off a terminal"
    );
    let offline = run(&["source", "pull", "--version", "1.11", "--offline"]);
    let stdout = String::from_utf8_lossy(&offline.stdout);
    assert!(offline.status.success() && stdout.matches("(cached, verified)").count() == 5, "{stdout}");
    assert_eq!(server.hits().len(), 5);
    let unknown = run(&["source", "pull", "--version", "9.9", "--offline"]);
    assert_eq!(unknown.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("known versions: 26.03.1, 26.03, v1.11.0, v1.10.2, v1.10.1, v1.10.0")
    );
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn pull_from_an_https_url_imports_the_archive_and_refuses_plain_http() {
    let server = Server::start();
    server.route("/mirror/kubeflow.tar.gz", Route::Body(upstream()[&manifests_path()].clone()));
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(Cache::open(cache_dir.path()).unwrap());
    let url = format!("{}/mirror/kubeflow.tar.gz", server.base);
    let request = PullRequest { version: Some("v1.11.0".into()), from: Some(url.clone()) };
    let report = pull(&request, &cache, Some(server.fetcher())).unwrap();
    assert_eq!(report.manifests.label, "v1.11.0");
    assert_eq!(report.manifests.origin, url);
    assert_eq!(report.manifests.sha256, tree_digest(&common::manifests_dir_of("v1.11.0")).unwrap());
    assert_eq!(server.hits_of("/mirror/kubeflow.tar.gz"), 1);
    assert_eq!(server.hits_of(&manifests_path()), 0, "the catalog archive is not fetched when --from is given");

    let plain = PullRequest {
        version: None,
        from: Some(format!("http://127.0.0.1:{}/x.tar.gz", server.base.rsplit(':').next().unwrap())),
    };
    let err = pull(&plain, &cache, Some(server.fetcher())).unwrap_err();
    assert!(err.is_security() && err.to_string().contains("plain http"), "{err}");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_stalled_body_times_out_and_fails_cleanly() {
    let server = Server::start();
    server.route("/stall.yaml", Route::Stall(Duration::from_secs(5)));
    let options = FetchOptions { read_timeout: Duration::from_millis(300), attempts: 2, ..server.options() };
    let fetcher = Fetcher::new(options).unwrap();
    let dest = tempfile::NamedTempFile::new().unwrap();
    let started = Instant::now();
    let err = fetcher.download(&format!("{}/stall.yaml", server.base), dest.path()).unwrap_err().to_string();
    assert!(err.contains("gave up after 2 attempts"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(4), "the read timeout did not apply: {:?}", started.elapsed());
    assert_eq!(server.hits_of("/stall.yaml"), 2);
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_download_over_the_size_cap_is_refused() {
    let server = Server::start();
    let options = FetchOptions { max_download_bytes: 1000, ..server.options() };
    let fetcher = Fetcher::new(options).unwrap();
    let dest = tempfile::NamedTempFile::new().unwrap();
    let err = fetcher.download(&format!("https://github.com{JOBSET_NEW}"), dest.path()).unwrap_err();
    assert!(err.is_security() && err.to_string().contains("size cap of 1000 bytes"), "{err}");
    assert_eq!(fetcher.request_count(), 1, "no retry for a refusal");
}
