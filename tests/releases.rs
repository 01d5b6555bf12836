//! Issue 10 items 1–2 and issue 11 item 6: several upstream releases, per-release catalog
//! data, unknown upstreams rendered from their own `example/`, and the bad inputs around them
//! (an unknown `--version`, a `--version` the tree's digest disagrees with, an unverified
//! import, a tampered cache entry). Every case runs the real binary.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kfctl(cache: &Path, args: &[&str]) -> Output {
    Command::new(common::binary())
        .args(args)
        .env("KFCTL_CACHE_DIR", cache)
        .env_remove("KFCTL_REMOTE_MIRROR")
        .output()
        .expect("run kfctl-rs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `template --offline --remote-mirror <mirror> --source <dir>` plus `extra`.
fn template(cache: &Path, source: &Path, extra: &[&str]) -> Output {
    let mirror = common::mirror_dir();
    let mut args = vec!["template", "--offline", "--remote-mirror", mirror.to_str().unwrap()];
    args.extend(["--source", source.to_str().unwrap()]);
    args.extend(extra);
    kfctl(cache, &args)
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn multi_tenant_of_each_release_is_byte_identical_to_its_example_golden() {
    let cache = tempfile::tempdir().unwrap();
    for version in common::releases() {
        let source = common::manifests_dir_of(version);
        let out = template(cache.path(), &source, &["--profile", "multi-tenant", "--version", version]);
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{version}: {stderr}");
        // A release pinned by digest recognises its tree; 26.03.1's snapshot holds two
        // stand-in files, so it renders with the release's catalog data and a warning.
        let pinned = kfctl::source::releases::select(Some(version)).unwrap().pinned_digest().is_some();
        assert_eq!(!stderr.contains("warning: folder"), pinned, "{version}: {stderr}");
        let golden = std::fs::read(common::golden_dir_of(version).join("example.yaml")).unwrap();
        assert!(out.stdout == golden, "{version}: the render differs from its example.yaml golden");
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_profile_naming_trainer_on_v1_10_trains_with_the_training_operator_saying_so() {
    let cache = tempfile::tempdir().unwrap();
    let source = common::manifests_dir_of("v1.10.2");
    let out = template(cache.path(), &source, &["--profile", "minimal", "--version", "1.10"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let note = "component `trainer` is new in v1.11.0; release v1.10.2 has `training-operator` instead";
    assert_eq!(stderr.matches(note).count(), 1, "said once: {stderr}");
    let rendered = text(&out.stdout);
    assert!(rendered.contains("name: training-operator\n"), "the Training Operator is rendered");
    assert!(!rendered.contains("trainer.kubeflow.org"), "no Trainer v2 object on v1.10.2");
}

#[test]
fn an_unknown_version_lists_the_known_ones() {
    let cache = tempfile::tempdir().unwrap();
    let out = kfctl(cache.path(), &["template", "--profile", "minimal", "--offline", "--version", "v1.9.9"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "release v1.9.9: unknown version; known versions: 26.03.1, 26.03, v1.11.0, v1.10.2, v1.10.1, v1.10.0"
        ),
        "{stderr}"
    );
}

#[test]
fn source_list_shows_every_release_newest_first_with_its_commit() {
    let cache = tempfile::tempdir().unwrap();
    let out = kfctl(cache.path(), &["source", "list"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let versions: Vec<&str> = stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(versions, ["26.03.1", "26.03", "v1.11.0", "v1.10.2", "v1.10.1", "v1.10.0"], "{stdout}");
    assert!(
        stdout.contains("26.03  commit d68ebc7fab366ab40ddd1541d2ec22febb31bc83  Kubernetes 1.34 and newer"),
        "{stdout}"
    );
    assert!(
        stdout.contains("v1.10.2  commit d8d643f1a736b28c525bd9b8ee5c9b2f4a661b39  Kubernetes 1.32 to 1.33"),
        "{stdout}"
    );
    assert!(stdout.contains("v1.10.0  commit c1ae849873a36199af43c4e14d113bd60fc695d7"), "{stdout}");
}

#[test]
fn every_spelling_of_26_03_selects_it_and_others_are_refused_naming_the_known_ones() {
    let cache = tempfile::tempdir().unwrap();
    for spelling in ["26.03", "26.3", "v26.03", "26.03.0", "latest"] {
        let out = kfctl(cache.path(), &["profile", "kustomization", "minimal", "--version", spelling]);
        assert!(out.status.success(), "{spelling}: {}", text(&out.stderr));
    }
    let out = kfctl(cache.path(), &["profile", "kustomization", "minimal", "--version", "26.04"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("release 26.04: unknown version; known versions: 26.03.1, 26.03, v1.11.0"), "{stderr}");
}

/// The release snapshot of `version` as a git checkout or GitHub's archive of the tag has it:
/// plus `.github/`, scripts, Makefiles, dotfiles and a README with CRLF line ends.
fn checkout_of(version: &str, root: &Path) -> PathBuf {
    let copy = root.join(format!("manifests-{version}"));
    let status = Command::new("cp").arg("-r").arg(common::manifests_dir_of(version)).arg(&copy).status().unwrap();
    assert!(status.success());
    let extras = [
        (".github/workflows/full_kubeflow_integration_test.yaml", "on:\n  pull_request:\n"),
        (".gitignore", "*.swp\n"),
        (".shellcheckrc", "disable=SC1091\n"),
        ("Makefile", "test:\n\t./tests/run.sh\n"),
        ("tests/install_KinD_create_KinD_cluster_install_kustomize.sh", "#!/bin/bash\nkind create cluster\n"),
        ("common/istio/split-istio-packages", "#!/usr/bin/env python3\nprint('split')\n"),
        ("hack/synchronize-pipelines-manifests.sh", "#!/bin/bash\n"),
        ("README.md", "# Kubeflow Manifests\r\n\r\nInstall with kustomize.\r\n"),
    ];
    for (rel, body) in extras {
        let path = copy.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    copy
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_checkout_of_each_release_is_that_release() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    // A release pinned by digest (26.03.1 is not: see charts/releases.yaml).
    let pinned = |v: &&&str| kfctl::source::releases::select(Some(v)).unwrap().pinned_digest().is_some();
    for version in common::releases().iter().filter(pinned) {
        let checkout = checkout_of(version, tmp.path());
        let args = ["--profile", "multi-tenant", "--components", "kubeflow-namespace"];
        let out = template(&cache, &checkout, &args);
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{version}: {stderr}");
        assert!(!stderr.contains("matches no pinned release"), "{version}: the checkout is recognised: {stderr}");
        // A file a render reads, changed: no longer the release.
        let namespace = checkout.join("common/kubeflow-namespace/base/kustomization.yaml");
        let text_before = std::fs::read_to_string(&namespace).unwrap();
        std::fs::write(&namespace, format!("{text_before}\n# edited\n")).unwrap();
        let edited = template(&cache, &checkout, &args);
        assert!(text(&edited.stderr).contains("matches no pinned release"), "{version}: {}", text(&edited.stderr));
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_version_the_digest_disagrees_with_warns_and_verify_refuses_it() {
    let cache = tempfile::tempdir().unwrap();
    let source = common::manifests_dir_of("v1.10.2");
    let warned = template(
        cache.path(),
        &source,
        &["--profile", "multi-tenant", "--version", "v1.11.0", "--components", "cert-manager"],
    );
    let stderr = text(&warned.stderr);
    assert!(warned.status.success(), "{stderr}");
    assert_eq!(stderr.matches("--version v1.11.0 was given, but the tree's release digest").count(), 1, "{stderr}");
    assert!(stderr.contains("is the digest of v1.10.2"), "{stderr}");

    let refused = template(cache.path(), &source, &["--profile", "multi-tenant", "--version", "v1.11.0", "--verify"]);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("security:") && stderr.contains("--verify"), "{stderr}");
    assert!(refused.stdout.is_empty());
}

/// A copy of the v1.10.2 snapshot with `applications/katib` moved to
/// `applications/hp-tuning/katib` and one entry no component claims, `example/` updated.
fn moved_copy(root: &Path) -> PathBuf {
    let copy = root.join("manifests");
    let status = Command::new("cp").arg("-r").arg(common::manifests_dir_of("v1.10.2")).arg(&copy).status().unwrap();
    assert!(status.success());
    std::fs::create_dir_all(copy.join("applications/hp-tuning")).unwrap();
    std::fs::rename(copy.join("applications/katib"), copy.join("applications/hp-tuning/katib")).unwrap();
    std::fs::create_dir_all(copy.join("custom/team-config")).unwrap();
    std::fs::write(copy.join("custom/team-config/kustomization.yaml"), "resources:\n- config.yaml\n").unwrap();
    std::fs::write(
        copy.join("custom/team-config/config.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team-config\n  namespace: kubeflow\ndata:\n  team: ml\n",
    )
    .unwrap();
    let example = copy.join("example/kustomization.yaml");
    let text = std::fs::read_to_string(&example).unwrap();
    let moved = text.replace("../applications/katib/", "../applications/hp-tuning/katib/");
    let moved =
        moved.replace("- ../common/user-namespace/base", "- ../common/user-namespace/base\n- ../custom/team-config");
    assert_ne!(moved, text);
    std::fs::write(&example, moved).unwrap();
    copy
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn an_unknown_upstream_renders_multi_tenant_as_real_kustomize_of_its_own_example() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = moved_copy(tmp.path());
    let cache = tmp.path().join("cache");
    let out = template(&cache, &copy, &["--profile", "multi-tenant"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("matches no pinned release").count(), 1, "said once: {stderr}");
    assert!(
        stderr.contains("entries no catalog component claims") && stderr.contains("../custom/team-config"),
        "{stderr}"
    );
    let real = Command::new(common::tool("kustomize-build")).arg(copy.join("example")).output().unwrap();
    assert!(real.status.success(), "{}", text(&real.stderr));
    assert!(out.stdout == real.stdout, "multi-tenant differs from real kustomize of the copy's example/");

    // Other profiles take the moved folder from its attributed example/ entry.
    let profile = tmp.path().join("few.yaml");
    std::fs::write(&profile, "name: few\ncomponents:\n  cert-manager: {}\n  kubeflow-namespace: {}\n  istio: {}\n  katib: {}\nvalues:\n  istio:\n    provided: true\n")
        .unwrap();
    let out_dir = tmp.path().join("out");
    let few =
        template(&cache, &copy, &["--profile", profile.to_str().unwrap(), "--output-dir", out_dir.to_str().unwrap()]);
    assert!(few.status.success(), "{}", text(&few.stderr));
    let katib = std::fs::read_to_string(out_dir.join("katib.yaml")).unwrap();
    assert!(katib.contains("name: katib-controller"), "katib's objects come from the moved folder");

    // A component the tree does not have at all is an error naming it.
    let minimal = template(&cache, &copy, &["--profile", "minimal"]);
    let stderr = text(&minimal.stderr);
    assert_eq!(minimal.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("component `trainer`: this tree has none of its folders"), "{stderr}");
}

/// A tiny tree with an `example/` of one ConfigMap: no pinned release.
fn tiny_tree(root: &Path) -> PathBuf {
    let tree = root.join("manifests-tiny");
    std::fs::create_dir_all(tree.join("example")).unwrap();
    std::fs::write(tree.join("example/kustomization.yaml"), "resources:\n- cm.yaml\n").unwrap();
    std::fs::write(tree.join("example/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny\n").unwrap();
    tree
}

#[test]
fn an_import_whose_digest_is_not_the_named_release_is_unverified_and_never_used_by_version() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tiny_tree(tmp.path());
    let cache = tmp.path().join("cache");
    let pulled =
        kfctl(&cache, &["source", "pull", "--offline", "--version", "v1.11.0", "--from", tree.to_str().unwrap()]);
    let stdout = text(&pulled.stdout);
    assert!(pulled.status.success(), "{}", text(&pulled.stderr));
    assert!(stdout.contains("manifests unverified-v1.11.0-"), "{stdout}");
    assert!(!stdout.contains("release v1.11.0 commit"), "not recorded as the release: {stdout}");

    let list = text(&kfctl(&cache, &["source", "list"]).stdout);
    assert!(
        list.contains(
            "v1.11.0  commit 854bd3a21044f767204def71b2dcda83e376891f  Kubernetes 1.33 and newer  (not cached)"
        ),
        "{list}"
    );
    assert!(list.lines().any(|l| l.starts_with("unverified-v1.11.0-") && l.contains("unverified import")), "{list}");

    let used = kfctl(&cache, &["template", "--profile", "minimal", "--offline", "--version", "v1.11.0"]);
    let stderr = text(&used.stderr);
    assert_eq!(used.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("not available offline"), "{stderr}");
}

#[test]
fn a_tampered_file_in_the_cache_exits_4() {
    let tmp = tempfile::tempdir().unwrap();
    tiny_tree(tmp.path());
    let archive = tmp.path().join("tiny.tar.gz");
    let status =
        Command::new("tar").arg("czf").arg(&archive).arg("-C").arg(tmp.path()).arg("manifests-tiny").status().unwrap();
    assert!(status.success());
    let cache = tmp.path().join("cache");
    let first =
        kfctl(&cache, &["template", "--offline", "--profile", "multi-tenant", "--source", archive.to_str().unwrap()]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(text(&first.stdout).contains("name: tiny"));

    let imports = cache.join("imports");
    let entry = std::fs::read_dir(&imports).unwrap().filter_map(Result::ok).find(|e| e.path().is_dir()).unwrap();
    std::fs::write(entry.path().join("manifests-tiny/example/cm.yaml"), "kind: Evil\n").unwrap();
    let second =
        kfctl(&cache, &["template", "--offline", "--profile", "multi-tenant", "--source", archive.to_str().unwrap()]);
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("security:") && stderr.contains("sha256 mismatch"), "{stderr}");
    assert!(second.stdout.is_empty());
}
