//! Offline bundles and `open_source`, on the shared v1.11.0 snapshot and mirror, plus a
//! hostile `--from` archive through the CLI. Nothing here touches the network.

use crate::common;

use kfctl::source::digest::tree_digest;
use kfctl::source::walk::{remote_closure, scan_tree};
use kfctl::source::{MirrorLayout, SourceSpec, open_source};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::binary;

fn snapshot() -> PathBuf {
    common::manifests_dir_of("v1.11.0")
}

fn mirror() -> PathBuf {
    common::mirror_dir()
}

fn kfctl(cache: &Path, args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .env("KFCTL_CACHE_DIR", cache)
        .env("KFCTL_GITHUB_BASE", "https://127.0.0.1:9") // never reached: every command here is offline
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn offline(source: &Path, cache: &Path) -> SourceSpec {
    SourceSpec {
        source: Some(source.to_path_buf()),
        offline: true,
        cache_dir: Some(cache.to_path_buf()),
        ..SourceSpec::default()
    }
}

/// Every remote reference of the snapshot resolves through `resolver` to the same content as
/// the shared mirror holds.
fn assert_resolves_every_remote(manifests: &Path, resolver: &dyn kfctl::source::RemoteResolver) {
    let scan = scan_tree(manifests).unwrap();
    assert_eq!(scan.found.len(), 9, "v1.11.0 has nine remote entries");
    for found in &scan.found {
        let got = resolver.resolve(&found.reference).unwrap();
        let want = found.reference.mirror_path(&mirror());
        assert_eq!(tree_digest(&got).unwrap(), tree_digest(&want).unwrap(), "{}", found.reference.url());
    }
    assert_eq!(remote_closure(manifests, resolver).unwrap().units.len(), 4);
}

fn make_bundle(tmp: &Path) -> PathBuf {
    let out = tmp.join("B.tar.gz");
    let (snapshot, mirror) = (snapshot(), mirror());
    let args = ["source", "bundle", "--from", snapshot.to_str().unwrap(), "--remote-mirror", mirror.to_str().unwrap()];
    let run = kfctl(&tmp.join("cache"), &[&args[..], &["--out", out.to_str().unwrap()]].concat());
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("remote/git/github.com/kubernetes-sigs/lws@v0.7.0: sha256 "));
    out
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn bundle_from_snapshot_and_mirror_opens_to_a_resolving_source() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = make_bundle(tmp.path());
    let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(names.iter().all(|n| !n.to_string_lossy().starts_with(".kfctl-tmp")), "temp file left: {names:?}");

    let cache = tmp.path().join("cache");
    let opened = open_source(&offline(&bundle, &cache)).unwrap();
    assert_eq!(tree_digest(&opened.manifests_dir).unwrap(), tree_digest(&snapshot()).unwrap());
    assert_resolves_every_remote(&opened.manifests_dir, opened.resolver.as_ref());

    // Extracted once, keyed by the archive's sha256: a second open reuses it.
    let imports: Vec<_> = std::fs::read_dir(cache.join("imports")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(imports.len(), 1);
    let before = std::fs::metadata(&imports[0]).unwrap().modified().unwrap();
    let again = open_source(&offline(&bundle, &cache)).unwrap();
    assert_eq!(again.manifests_dir, opened.manifests_dir);
    assert_eq!(std::fs::metadata(&imports[0]).unwrap().modified().unwrap(), before);

    // Tampering with the extracted copy is caught on the next open.
    std::fs::write(opened.manifests_dir.join("example/kustomization.yaml"), "resources: []\n").unwrap();
    let err = open_source(&offline(&bundle, &cache)).unwrap_err();
    assert!(err.is_security() && err.to_string().contains("sha256 mismatch"), "{err}");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn unpacked_bundle_folder_is_verified_and_used_as_a_mirror() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = make_bundle(tmp.path());
    let unpacked = tmp.path().join("unpacked");
    kfctl::source::extract::extract_archive(&bundle, &unpacked, false, &Default::default()).unwrap();
    let opened = open_source(&offline(&unpacked, &tmp.path().join("cache"))).unwrap();
    assert_eq!(opened.manifests_dir, unpacked.join("manifests"));
    assert_resolves_every_remote(&opened.manifests_dir, opened.resolver.as_ref());

    let jobset = unpacked.join("remote/http/github.com/kubernetes-sigs/jobset/releases/download/v0.6.0/manifests.yaml");
    std::fs::write(&jobset, "kind: Evil\n").unwrap();
    let err = open_source(&offline(&unpacked, &tmp.path().join("cache"))).unwrap_err().to_string();
    assert!(err.starts_with("security:") && err.contains("v0.6.0/manifests.yaml"), "{err}");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn pull_from_a_bundle_fills_the_cache_for_offline_use() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = make_bundle(tmp.path());
    let cache = tmp.path().join("cache");
    let pulled =
        kfctl(&cache, &["source", "pull", "--version", "v1.11.0", "--from", bundle.to_str().unwrap(), "--offline"]);
    assert!(pulled.status.success(), "{}", text(&pulled.stderr));
    assert_eq!(text(&pulled.stdout).matches("(imported)").count(), 5, "{}", text(&pulled.stdout));

    // The cache now serves the release offline, and is itself a mirror.
    let spec = SourceSpec {
        version: Some("1.11".into()),
        offline: true,
        cache_dir: Some(cache.clone()),
        ..SourceSpec::default()
    };
    let opened = open_source(&spec).unwrap();
    assert_eq!(opened.release.map(|r| r.version), Some("v1.11.0"));
    assert_resolves_every_remote(&opened.manifests_dir, opened.resolver.as_ref());

    let out = tmp.path().join("C.tar.gz");
    let rebundled =
        kfctl(&cache, &["source", "bundle", "--version", "v1.11.0", "--offline", "--out", out.to_str().unwrap()]);
    assert!(rebundled.status.success(), "{}", text(&rebundled.stderr));
    let first = text(&kfctl(&cache, &["source", "list"]).stdout);
    assert!(
        first.contains("v1.11.0") && first.contains("Kubernetes 1.33 and newer") && first.contains("(cached)"),
        "{first}"
    );
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn open_source_with_a_github_archive_extracts_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("manifests.tar.gz");
    let gz = flate2::write::GzEncoder::new(std::fs::File::create(&archive).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all("manifests-854bd3a", snapshot()).unwrap();
    tar.into_inner().unwrap().finish().unwrap();
    let spec = SourceSpec { remote_mirror: Some(mirror()), ..offline(&archive, &tmp.path().join("cache")) };
    let opened = open_source(&spec).unwrap();
    assert!(opened.manifests_dir.ends_with("manifests-854bd3a"));
    assert_eq!(tree_digest(&opened.manifests_dir).unwrap(), tree_digest(&snapshot()).unwrap());
    assert_resolves_every_remote(&opened.manifests_dir, opened.resolver.as_ref());
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn offline_folder_source_names_the_missing_remote_and_the_fetch_command() {
    let tmp = tempfile::tempdir().unwrap();
    let opened = open_source(&offline(&snapshot(), tmp.path())).unwrap();
    let reference =
        kfctl::source::RemoteRef::parse("https://github.com/kubernetes-sigs/lws//config/default?ref=v0.7.0").unwrap();
    let err = opened.resolver.resolve(&reference).unwrap_err().to_string();
    assert!(err.contains("kubernetes-sigs/lws") && err.contains("kfctl-rs source pull"), "{err}");
}

/// A raw tar header, so the archive can say what `tar::Builder` refuses to write.
fn raw_entry(out: &mut Vec<u8>, name: &str, kind: tar::EntryType, link: &str, data: &[u8]) {
    let mut header = tar::Header::new_gnu();
    {
        let gnu = header.as_gnu_mut().unwrap();
        gnu.name[..name.len()].copy_from_slice(name.as_bytes());
        gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(512), 0);
}

fn gzip(mut tar: Vec<u8>) -> Vec<u8> {
    use std::io::Write;
    tar.extend_from_slice(&[0u8; 1024]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

fn files_named(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_name() == name {
                found.push(entry.path());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    found
}

#[test]
fn pull_from_an_evil_archive_exits_4_and_writes_nothing_outside_its_temp_folder() {
    let cases: [(&str, Vec<u8>); 2] = [
        ("dotdot", {
            let mut tar = Vec::new();
            raw_entry(&mut tar, "manifests-x/kustomization.yaml", tar::EntryType::Regular, "", b"resources: []\n");
            raw_entry(&mut tar, "manifests-x/../../../../escape.txt", tar::EntryType::Regular, "", b"evil");
            gzip(tar)
        }),
        ("symlink", {
            let mut tar = Vec::new();
            raw_entry(&mut tar, "manifests-x/kustomization.yaml", tar::EntryType::Regular, "", b"resources: []\n");
            raw_entry(&mut tar, "manifests-x/up", tar::EntryType::Symlink, "../../../..", b"");
            raw_entry(&mut tar, "manifests-x/up/escape.txt", tar::EntryType::Regular, "", b"evil");
            gzip(tar)
        }),
    ];
    for (name, bytes) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let evil = tmp.path().join("evil.tar.gz");
        std::fs::write(&evil, bytes).unwrap();
        let cache = tmp.path().join("deep/er/cache");
        let run = kfctl(&cache, &["source", "pull", "--from", evil.to_str().unwrap(), "--offline"]);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(4), "{name}: {stderr}");
        assert!(stderr.contains("error: security: archive"), "{name}: {stderr}");
        assert!(files_named(tmp.path(), "escape.txt").is_empty(), "{name}: escaped");
        assert!(files_named(tmp.path(), "kustomization.yaml").is_empty(), "{name}: partial tree left");
        let manifests: Vec<_> = std::fs::read_dir(cache.join("manifests")).unwrap().collect();
        assert!(manifests.is_empty(), "{name}: temp folder left: {manifests:?}");
    }
}
