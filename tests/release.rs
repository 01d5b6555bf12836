//! How kfctl-rs ships (issue 42): what `.github/workflows/release.yaml` calls, run here since
//! the workflow never runs on this machine. The release archives are reproducible and hold the
//! binary; SHA256SUMS covers them; the krew plugin manifest and the Homebrew formula generated
//! from a sample SHA256SUMS pass krew's own validation rules and the formula's structure (and
//! `ruby -c` where Ruby exists); the SBOM lists what the binary links and nothing else; the
//! chart script packages a release whose chart real Helm renders as `template` and lints
//! strictly; the workflow's matrix is the targets list, every action is pinned by SHA
//! (actionlint, with ShellCheck: `cluster_ci`), and the scripts pass ShellCheck. The kubectl plugin and `cargo package`:
//! `install_ways`.

use crate::common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn release_dir() -> PathBuf {
    common::repo_root().join(".github/release")
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("release", name)
}

fn script(name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(release_dir().join(name)).args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// `.github/release/targets`: (Rust target, os, arch, runner).
fn targets() -> Vec<[String; 4]> {
    std::fs::read_to_string(release_dir().join("targets"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            [f[0].clone(), f[1].clone(), f[2].clone(), f[3].clone()]
        })
        .collect()
}

/// A sample release in `dir`: one archive per target (a stand-in binary), and SHA256SUMS.
fn sample_release(dir: &Path, version: &str) -> BTreeMap<String, String> {
    let binary = dir.join("stand-in-kfctl-rs");
    for [target, ..] in targets() {
        std::fs::write(&binary, format!("#!/bin/sh\necho {target}\n")).unwrap();
        ok(&script("archive", &[version, &target, binary.to_str().unwrap(), dir.to_str().unwrap()], &[]), "archive");
    }
    ok(&script("checksums", &[dir.to_str().unwrap()], &[]), "checksums");
    std::fs::read_to_string(dir.join("SHA256SUMS"))
        .unwrap()
        .lines()
        .map(|l| {
            let (hex, file) = l.split_once("  ").expect("sha256sum's two spaces");
            (file.to_string(), hex.to_string())
        })
        .collect()
}

#[test]
fn release_archives_are_reproducible_and_hold_the_binary_license_and_readme() {
    let dir = scratch("archives");
    let binary = dir.join("kfctl-rs-built");
    std::fs::write(&binary, "stand-in").unwrap();
    let make = |out: &str| {
        let out = dir.join(out);
        let printed = ok(
            &script(
                "archive",
                &["v0.1.0", "x86_64-unknown-linux-musl", binary.to_str().unwrap(), out.to_str().unwrap()],
                &[],
            ),
            "archive",
        );
        PathBuf::from(printed.trim())
    };
    let (a, b) = (make("a"), make("b"));
    assert_eq!(a.file_name().unwrap(), "kfctl-rs-v0.1.0-x86_64-unknown-linux-musl.tar.gz");
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(), "two archives of one binary differ");
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(&a).unwrap()));
    let entries: Vec<(String, u32, u64)> = tar
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.path().unwrap().to_string_lossy().into_owned(), e.header().mode().unwrap(), e.header().mtime().unwrap())
        })
        .collect();
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(names, ["kfctl-rs", "LICENSE", "README.md"]);
    assert_eq!(entries[0].1 & 0o777, 0o755);
    assert!(entries.iter().all(|e| e.2 == 0), "{entries:?}");

    let refused = script("archive", &["0.1.0", "x86_64-unknown-linux-musl", binary.to_str().unwrap(), "x"], &[]);
    assert_eq!(refused.status.code(), Some(2), "a version without v was accepted");
    let refused = script("archive", &["v0.1.0", "mips-unknown-linux-gnu", binary.to_str().unwrap(), "x"], &[]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not in .github/release/targets"));
}

/// krew's `ValidatePlugin` (krew/internal/index/validation) and krew-index's checks, on one
/// parsed manifest named `file_name`: every problem found.
fn krew_problems(doc: &Value, file_name: &str, sums: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut need = |ok: bool, what: &str| {
        if !ok {
            problems.push(what.to_string());
        }
    };
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    need(s(&doc["apiVersion"]) == "krew.googlecontainertools.github.com/v1alpha2", "apiVersion");
    need(s(&doc["kind"]) == "Plugin", "kind");
    let name = s(&doc["metadata"]["name"]);
    let safe = !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    need(safe && !name.starts_with('-') && !name.ends_with('-'), "name: lowercase words separated by dashes");
    need(file_name == format!("{name}.yaml"), "the file is named after the plugin");
    let spec = &doc["spec"];
    let version = s(&spec["version"]);
    let semver = version.strip_prefix('v').and_then(|v| v.split('-').next()).is_some_and(|v| {
        let parts: Vec<&str> = v.split('.').collect();
        parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    });
    need(semver, "spec.version: v-prefixed semver");
    need(!s(&spec["shortDescription"]).is_empty() && s(&spec["shortDescription"]).len() <= 80, "shortDescription");
    need(s(&spec["homepage"]).starts_with("https://"), "homepage");
    let platforms = spec["platforms"].as_array().cloned().unwrap_or_default();
    need(!platforms.is_empty(), "platforms");
    let mut selectors = Vec::new();
    for p in &platforms {
        let labels = p["selector"]["matchLabels"].as_object().cloned().unwrap_or_default();
        need(!labels.is_empty() && labels.keys().all(|k| k == "os" || k == "arch"), "selector: os/arch matchLabels");
        selectors.push(format!("{}/{}", s(&labels["os"]), s(&labels["arch"])));
        let uri = s(&p["uri"]);
        need(uri.starts_with("https://"), "uri: https");
        let sha = s(&p["sha256"]);
        need(sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "sha256");
        let file = uri.rsplit('/').next().unwrap_or("");
        need(sums.get(file) == Some(&sha), "sha256: the SHA256SUMS line of the uri's file");
        need(!s(&p["bin"]).is_empty(), "bin");
        if let Some(files) = p.get("files") {
            let files = files.as_array().cloned().unwrap_or_default();
            need(!files.is_empty(), "files: unspecified or non-empty");
            need(files.iter().all(|f| !s(&f["from"]).is_empty() && !s(&f["to"]).is_empty()), "files: from and to");
            need(files.iter().any(|f| s(&f["from"]) == s(&p["bin"])), "files: the bin is copied");
        }
    }
    let unique: std::collections::BTreeSet<&String> = selectors.iter().collect();
    need(unique.len() == selectors.len(), "platforms: one per os/arch");
    problems
}

#[test]
fn krew_manifest_and_formula_from_a_sample_sha256sums_validate() {
    let dir = scratch("package-managers");
    let sums = sample_release(&dir, "v1.2.3");
    assert_eq!(sums.len(), targets().len(), "{sums:?}");
    let out = dir.join("out");
    ok(
        &script(
            "package-manager-files",
            &["v1.2.3", dir.join("SHA256SUMS").to_str().unwrap(), out.to_str().unwrap()],
            &[],
        ),
        "generate",
    );

    let text = std::fs::read_to_string(out.join("kubeflow-install.yaml")).unwrap();
    let doc = kfctl_yaml::parse_stream(&text, "krew manifest").unwrap().remove(0);
    assert_eq!(krew_problems(&doc, "kubeflow-install.yaml", &sums), Vec::<String>::new(), "{text}");
    let platforms = doc["spec"]["platforms"].as_array().unwrap();
    let covered: Vec<String> = platforms
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["selector"]["matchLabels"]["os"].as_str().unwrap(),
                p["selector"]["matchLabels"]["arch"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(covered, ["linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"]);
    assert!(platforms.iter().all(|p| p["bin"] == "kfctl-rs"));
    // the validator finds what it checks: a wrong digest, a second platform for one os/arch
    let mut broken = doc.clone();
    broken["spec"]["platforms"][0]["sha256"] = Value::String("0".repeat(64));
    broken["spec"]["platforms"][1]["selector"] = platforms[0]["selector"].clone();
    broken["spec"]["version"] = Value::String("1.2.3".into());
    let problems = krew_problems(&broken, "kubeflow-install.yaml", &sums);
    for expected in [
        "sha256: the SHA256SUMS line of the uri's file",
        "platforms: one per os/arch",
        "spec.version: v-prefixed semver",
    ] {
        assert!(problems.iter().any(|p| p == expected), "{expected}: {problems:?}");
    }

    let formula = std::fs::read_to_string(out.join("kfctl-rs.rb")).unwrap();
    check_formula(&formula, &sums);

    // a SHA256SUMS without one of the targets makes nothing
    let partial = dir.join("PARTIAL");
    let first = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    std::fs::write(&partial, first.lines().skip(1).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let out2 = dir.join("out2");
    let failed = script("package-manager-files", &["v1.2.3", partial.to_str().unwrap(), out2.to_str().unwrap()], &[]);
    assert!(!failed.status.success(), "generated from an incomplete SHA256SUMS");
    assert!(String::from_utf8_lossy(&failed.stderr).contains("no line for kfctl-rs-v1.2.3-"));
    assert!(!out2.join("kubeflow-install.yaml").exists() && !out2.join("kfctl-rs.rb").exists());
}

/// The formula's structure, as `brew audit` would read it: the class, desc rules, one url and
/// sha256 per OS and arch (each the SHA256SUMS line of its file), the install and the test.
fn check_formula(formula: &str, sums: &BTreeMap<String, String>) {
    assert!(formula.contains("\nclass KfctlRs < Formula\n"), "{formula}");
    let desc = formula.lines().find_map(|l| l.trim().strip_prefix("desc \"")).unwrap().trim_end_matches('"');
    assert!(desc.len() <= 80 && !desc.starts_with("A ") && !desc.ends_with('.'), "desc {desc:?}");
    assert!(formula.contains("  version \"1.2.3\"\n") && formula.contains("  license \"Apache-2.0\"\n"));
    let urls: Vec<&str> =
        formula.lines().filter_map(|l| l.trim().strip_prefix("url \"")).map(|u| u.trim_end_matches('"')).collect();
    let shas: Vec<&str> =
        formula.lines().filter_map(|l| l.trim().strip_prefix("sha256 \"")).map(|u| u.trim_end_matches('"')).collect();
    assert_eq!(urls.len(), targets().len());
    for (url, sha) in urls.iter().zip(&shas) {
        assert!(url.starts_with("https://"), "{url}");
        assert_eq!(sums.get(url.rsplit('/').next().unwrap()).map(String::as_str), Some(*sha), "{url}");
    }
    for block in ["on_macos do", "on_linux do", "on_arm do", "on_intel do", "def install", "test do"] {
        assert!(formula.contains(block), "{block}");
    }
    assert!(formula.contains("bin.install_symlink \"kfctl-rs\" => \"kubectl-kubeflow_install\""));
    let opens = formula
        .lines()
        .filter(|l| l.trim_end().ends_with(" do") || l.trim_start().starts_with("def ") || l.starts_with("class "))
        .count();
    let ends = formula.lines().filter(|l| l.trim() == "end").count();
    assert_eq!(opens, ends, "unbalanced do/def/class and end:\n{formula}");
}

#[test]
#[cfg_attr(kfctl_no_ruby, ignore = "needs Ruby (ruby on PATH) to syntax-check the Homebrew formula")]
fn the_formula_is_valid_ruby() {
    let dir = scratch("ruby");
    sample_release(&dir, "v1.2.3");
    ok(
        &script(
            "package-manager-files",
            &["v1.2.3", dir.join("SHA256SUMS").to_str().unwrap(), dir.to_str().unwrap()],
            &[],
        ),
        "generate",
    );
    let out = Command::new("ruby").arg("-c").arg(dir.join("kfctl-rs.rb")).output().unwrap();
    assert!(out.status.success(), "ruby -c: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_sbom_lists_what_the_binary_links_and_nothing_else() {
    let make = || {
        let out = Command::new("python3")
            .arg(release_dir().join("sbom"))
            .arg("x86_64-unknown-linux-musl")
            .current_dir(common::repo_root())
            .env("CARGO_METADATA_FLAGS", "--offline")
            .output()
            .unwrap();
        ok(&out, "sbom")
    };
    let text = make();
    assert_eq!(text, make(), "two SBOMs of one tree differ");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["bomFormat"], "CycloneDX");
    assert_eq!(doc["specVersion"], "1.5");
    assert!(doc["serialNumber"].as_str().unwrap().starts_with("urn:uuid:"));
    assert_eq!(doc["metadata"]["component"]["name"], "kfctl-rs");
    let components = doc["components"].as_array().unwrap();
    let names: Vec<&str> = components.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for shipped in ["kfctl", "kfctl-kustomize", "kfctl-yaml", "clap", "rustls", "tar", "serde-saphyr"] {
        assert!(names.contains(&shipped), "{shipped} missing");
    }
    for not_shipped in ["kfctl-testapi", "rcgen", "windows-sys"] {
        assert!(!names.contains(&not_shipped), "{not_shipped} is not in a Linux binary");
    }
    for c in components {
        let purl = c["purl"].as_str().unwrap();
        assert_eq!(purl, format!("pkg:cargo/{}@{}", c["name"].as_str().unwrap(), c["version"].as_str().unwrap()));
        if !c["name"].as_str().unwrap().starts_with("kfctl") {
            assert_eq!(c["hashes"][0]["content"].as_str().map(str::len), Some(64), "{purl}: no Cargo.lock checksum");
        }
    }
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn the_chart_script_packages_a_release_and_lists_its_digest() {
    let out = scratch("charts");
    let binary = common::binary();
    let root = common::manifests_dir();
    let root = root.parent().unwrap();
    let listed = ok(
        &script(
            "package-charts",
            &[out.to_str().unwrap(), common::release()],
            &[
                ("KFCTL_RS", binary.to_str().unwrap()),
                ("KFCTL_SOURCE_ROOT", root.to_str().unwrap()),
                ("KFCTL_REMOTE_MIRROR", common::mirror_dir().to_str().unwrap()),
            ],
        ),
        "package-charts",
    );
    assert_eq!(listed, std::fs::read_to_string(out.join("CHARTS")).unwrap());
    let line: Vec<&str> = listed.trim().split(' ').collect();
    assert_eq!(line.len(), 3, "{listed}");
    assert_eq!(line[0], common::release());
    let bytes = std::fs::read(line[1]).unwrap();
    use sha2::Digest;
    assert_eq!(line[2], format!("sha256:{}", hex::encode(sha2::Sha256::digest(&bytes))));
    assert!(line[1].contains("/kubeflow-") && line[1].ends_with(".tgz"), "{listed}");

    // the chart a release publishes is upstream's example/ platform: real Helm of the archive
    // equals `kfctl-rs template --profile multi-tenant`
    let native = common::kfctl_offline(&["template", "--profile", "multi-tenant"]);
    let native = kfctl_yaml::parse_stream(&ok(&native, "template"), "template").unwrap();
    let helm = Command::new(common::tool("helm-template")).args([line[1], "--name", "kubeflow"]).output().unwrap();
    common::assert_helm_equals_native(&native, &helm, "helm template of the published chart");
    let lint = Command::new(common::tool("helm-lint")).args([line[1], "--strict"]).output().unwrap();
    ok(&lint, "helm lint --strict of the published chart");
}

#[test]
fn the_workflow_builds_every_target_and_pins_every_action() {
    let text = std::fs::read_to_string(common::repo_root().join(".github/workflows/release.yaml")).unwrap();
    let doc = kfctl_yaml::parse_stream(&text, "release.yaml").unwrap().remove(0);
    let matrix: Vec<(String, String)> = doc["jobs"]["binaries"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["target"].as_str().unwrap().to_string(), e["runner"].as_str().unwrap().to_string()))
        .collect();
    let listed: Vec<(String, String)> = targets().into_iter().map(|[t, _, _, r]| (t, r)).collect();
    assert_eq!(matrix, listed, "the matrix is not .github/release/targets");
    for line in text.lines().filter(|l| l.trim_start().starts_with("uses:") || l.trim_start().starts_with("- uses:")) {
        let reference = line.split("uses:").nth(1).unwrap().trim();
        let sha = reference.split('@').nth(1).unwrap_or("").split_whitespace().next().unwrap_or("");
        assert!(sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()), "not pinned by SHA: {line}");
        assert!(line.contains(" # v"), "no tag comment: {line}");
    }
    for called in ["archive", "sbom", "checksums", "package-manager-files", "package-charts"] {
        assert!(text.contains(&format!(".github/release/{called} ")), "the workflow does not call {called}");
        assert!(release_dir().join(called).is_file(), "{called} missing");
    }
    assert!(text.contains("cargo package --locked --workspace --exclude kfctl-testapi"));
}

#[test]
fn the_release_scripts_pass_shellcheck() {
    let shellcheck = common::test_tool("shellcheck");
    let scripts = ["archive", "checksums", "package-manager-files", "package-charts"].map(|s| release_dir().join(s));
    let out = Command::new(&shellcheck).args(&scripts).output().unwrap();
    ok(&out, "shellcheck");
    let broken = scratch("shellcheck").join("broken");
    std::fs::write(&broken, "#!/usr/bin/env bash\necho $1 `ls`\n").unwrap();
    assert!(
        !Command::new(&shellcheck).arg(&broken).output().unwrap().status.success(),
        "shellcheck passed a broken script"
    );
}
