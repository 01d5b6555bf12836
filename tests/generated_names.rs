//! Issue 13, item 2: a value that changes a generated ConfigMap's or Secret's content renames
//! it exactly as real kustomize would if the same edit were made to the generator's input, so
//! the workloads that mount it roll.
//!
//! The oracle is real kustomize (`../shared/tools/kustomize-build`) on a copy of the snapshot
//! made by `localize-snapshot`, with the edit made in upstream's input files; the render is
//! `kfctl-rs template` with the values. The Helm side of the same names is checked by the
//! credentials and Pod Security sets of `tests/helm_chart.rs`' matrix.

use crate::common;

use std::path::Path;
use std::process::Command;

/// One edit: the value given to kfctl-rs, and the text upstream's input files hold for it.
struct Edit {
    set: &'static str,
    upstream_text: &'static str,
    new_text: &'static str,
}

/// Upstream's credentials, each with the file text that holds it upstream and a new value.
const EDITS: &[Edit] = &[
    // oauth2-proxy's generated Secret (hashed): common/oauth2-proxy/base/kustomization.yaml.
    Edit {
        set: "oauth2-proxy.cookieSecret",
        upstream_text: "7d16fee92f8d11b8940b081b3f8b8acb",
        new_text: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    },
    // The OIDC client secret: the same kustomization's literal and Dex's secret_params.env.
    Edit {
        set: "global.oidcClientSecret",
        upstream_text: "pUBnBOY80SnXgjibTYM9ZWNzY2xreNGQok",
        new_text: "a-client-secret-of-our-own-9876543",
    },
    // Dex's static password (common/dex/base/dex-passwords.yaml; not hashed upstream).
    Edit {
        set: "dex.staticUser.passwordHash",
        upstream_text: "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72",
        new_text: "$2y$12$abcdefghijklmnopqrstuu5J3m1Qk5mGJ8y0pXzV4a7r6mQeYl4Eq",
    },
];

fn localized_copy(dir: &Path) {
    let out = Command::new(common::tool("localize-snapshot")).arg(common::release()).arg(dir).output().unwrap();
    assert!(out.status.success(), "localize-snapshot: {}", String::from_utf8_lossy(&out.stderr));
}

/// Make every edit in every file of the copied tree that holds the upstream text.
fn edit_inputs(tree: &Path, edits: &[Edit]) -> usize {
    let mut edited = 0;
    for entry in walk(tree) {
        let Ok(text) = std::fs::read_to_string(&entry) else { continue };
        let mut new = text.clone();
        for e in edits {
            new = new.replace(e.upstream_text, e.new_text);
        }
        if new != text {
            std::fs::write(&entry, new).unwrap();
            edited += 1;
        }
    }
    edited
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() { stack.push(path) } else { files.push(path) }
        }
    }
    files
}

fn kfctl_template(edits: &[Edit]) -> String {
    let mut cmd = Command::new(common::binary());
    cmd.args(["template", "--profile", "multi-tenant", "--version", common::release(), "--source"])
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir());
    for e in edits {
        cmd.arg("--set-string").arg(format!("{}={}", e.set, e.new_text));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "kfctl-rs template: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn credentials_rename_generated_secrets_as_kustomize_does_on_an_edited_copy() {
    let dir = tempfile::tempdir().unwrap();
    localized_copy(dir.path());
    let edited = edit_inputs(&dir.path().join("manifests"), EDITS);
    assert!(edited >= 3, "the credentials live in at least three upstream files, edited {edited}");
    let out = Command::new(common::tool("kustomize-build")).arg(dir.path().join("manifests/example")).output().unwrap();
    assert!(out.status.success(), "kustomize: {}", String::from_utf8_lossy(&out.stderr));
    let kustomize = String::from_utf8(out.stdout).unwrap();
    let golden = std::fs::read_to_string(common::example_golden()).unwrap();
    assert_ne!(kustomize, golden, "the edit changes real kustomize's output");
    assert!(!kustomize.contains("oauth2-proxy-h675gf55ht"), "real kustomize renames the Secret");
    let ours = kfctl_template(EDITS);
    if ours != kustomize {
        let ours_objects = kfctl_yaml::parse_stream(&ours, "kfctl-rs").unwrap();
        let theirs = kfctl_yaml::parse_stream(&kustomize, "kustomize").unwrap();
        let report = kfctl_yaml::compare::ordered_report(&theirs, &ours_objects, 20).unwrap_or_default();
        panic!("kfctl-rs differs from real kustomize of the edited copy:\n{report}");
    }
}
