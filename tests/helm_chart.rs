//! Issue 5's contract, checked with real Helm (`../shared/tools/helm-template`, `helm-lint`):
//! `helm template` of an exported chart equals `kfctl-rs template` with the same profile and
//! values — as sets of objects by kind, namespace and name, each equal as data — for every
//! built-in profile and a matrix of non-default values; `helm lint --strict` passes on the
//! umbrella chart and every subchart; exports are deterministic; bad input is exit 2 with no
//! folder left behind.
//!
//! Two sources of objects feed the same checks:
//! - the acceptance tests run the real pipeline: `kfctl-rs chart export` (the binary) against
//!   `catalog::render` with the same values;
//! - `golden_backed_*` builds the export's input from upstream's golden `example.yaml` (every
//!   object tagged with its component by the per-folder goldens) and compares Helm with the
//!   native parameter table on it, so the Helm side is checked on every real object of the release
//!   whatever state the engine is in.

use crate::common;

use kfctl::catalog::render::{Prepared, RenderedObject};
use kfctl::catalog::strvals::{self, SetFlag, SetKind};
use kfctl::catalog::{Catalog, RenderRequest, params, profile, values};
use kfctl::chart::{self, ExportOptions};
use kfctl::source::MirrorResolver;
use kfctl_yaml::compare;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

fn binary() -> PathBuf {
    std::env::var_os("KFCTL_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kfctl-rs")))
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("helm", name)
}

/// One set of values, given the same way to Helm and to kfctl-rs: `--set`s and a file.
struct ValueSet {
    name: &'static str,
    sets: Vec<String>,
    file: Option<PathBuf>,
}

fn value_set(name: &'static str, sets: &[&str], file: Option<Value>) -> ValueSet {
    // A folder per call: tests that build the matrix at the same time must not remove each
    // other's files (a scratch folder is emptied when it is taken).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let file = file.map(|doc| {
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = scratch(&format!("values-{name}-{call}")).join("values.yaml");
        std::fs::write(&path, kfctl_yaml::to_yaml(&doc)).unwrap();
        path
    });
    ValueSet { name, sets: sets.iter().map(|s| s.to_string()).collect(), file }
}

/// `kfctl-rs secrets generate` once: a file of fresh credentials.
fn secrets_file() -> PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = scratch("secrets").join("secrets.yaml");
        let out = Command::new(binary())
            .args(["secrets", "generate", "--print-password", "--out"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        path
    })
    .clone()
}

/// The non-default value sets of the matrix (multi-tenant names).
fn matrix() -> Vec<ValueSet> {
    let scheduling = json!({
        "global": {"nodeSelector": {"kubernetes.io/os": "linux", "pool": "general"}, "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "kubeflow", "effect": "NoSchedule"}]},
        "trainer": {"nodeSelector": {"nvidia.com/gpu.present": "true"}, "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 300}],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100"]}]}]}}}},
    });
    let resources = json!({"pipelines": {"resources": {"ml-pipeline": {"ml-pipeline-api-server": {"limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": 1}}}}},
                           "oauth2-proxy": {"resources": {"oauth2-proxy": {"oauth2-proxy": {"requests": {"cpu": "100m"}}}}}});
    let mut credentials = value_set("credentials", &[], None);
    credentials.file = Some(secrets_file());
    vec![
        value_set("registry", &["global.imageRegistry=registry.example.com"], None),
        value_set("katib-disabled", &["katib.enabled=false"], None),
        value_set(
            "replicas",
            &[
                "katib.replicas.katib-ui=3",
                "oauth2-proxy.replicas.oauth2-proxy=3",
                "cert-manager.replicas.cert-manager-webhook=2",
            ],
            None,
        ),
        value_set("resources", &[], Some(resources)),
        credentials,
        value_set("pss", &["global.podSecurity.profiles=restricted", "global.podSecurity.namespaces=baseline"], None),
        value_set("pss-off", &["global.podSecurity.profiles=off,global.podSecurity.namespaces=off"], None),
        value_set("scheduling", &[], Some(scheduling)),
        value_set("pull-secrets", &["global.imagePullSecrets={regcred,mirror-pull}"], None),
        value_set(
            "common-metadata",
            &["global.commonLabels.team=ml", "global.commonAnnotations.owner=platform@example.com"],
            None,
        ),
        value_set(
            "image-override",
            &["katib.images.katib-ui=my.registry.io/katib/ui:dev", "global.imageRegistry=registry.example.com/mirror/"],
            None,
        ),
        value_set("crds-only", &["global.crds=only"], None),
        value_set("crds-skip", &["global.crds=skip"], None),
    ]
}

fn helm_args(set: &ValueSet) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(f) = &set.file {
        args.extend(["-f".to_string(), f.display().to_string()]);
    }
    for s in &set.sets {
        args.extend(["--set".to_string(), s.clone()]);
    }
    args
}

fn helm_template(chart: &Path, args: &[String]) -> Vec<Value> {
    let out = Command::new(common::tool("helm-template")).arg(chart).args(args).output().expect("helm-template runs");
    assert!(
        out.status.success(),
        "helm template {} {args:?} failed: {}",
        chart.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    parse_docs(&String::from_utf8(out.stdout).unwrap(), "helm template output")
}

/// A YAML stream read one document at a time (documents are separated by `---` lines), so
/// each stays within the reader's per-document budgets however long the stream is.
fn parse_docs(text: &str, origin: &str) -> Vec<Value> {
    let mut docs = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.extend(kfctl_yaml::parse_stream(&current, origin).unwrap_or_else(|e| panic!("{origin}: {e}")));
            current.clear();
        } else {
            current.push_str(line);
        }
    }
    docs.extend(kfctl_yaml::parse_stream(&current, origin).unwrap_or_else(|e| panic!("{origin}: {e}")));
    docs
}

fn helm_lint(chart: &Path) -> Output {
    Command::new(common::tool("helm-lint")).arg(chart).arg("--strict").output().expect("helm-lint runs")
}

fn assert_same(expected: &[Value], actual: &[Value], what: &str) {
    if let Some(report) = compare::unordered_report(expected, actual, 25) {
        panic!(
            "{what}: helm template differs from kfctl-rs ({} vs {} objects):\n{report}",
            expected.len(),
            actual.len()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Golden-backed: the Helm side against the native table on every object of upstream example/.

/// multi-tenant's objects from the golden `example.yaml`, each tagged with the first component
/// (catalog order) whose own golden folders hold an object of the same identity.
fn golden_prepared() -> &'static Prepared {
    static PREPARED: OnceLock<Prepared> = OnceLock::new();
    PREPARED.get_or_init(|| {
        let catalog = Catalog::for_release(common::release()).unwrap();
        let resolved = profile::resolve("multi-tenant", &catalog).unwrap();
        let read = |p: &Path| parse_docs(&std::fs::read_to_string(p).unwrap(), &p.display().to_string());
        let example = read(&common::golden_dir().join("example.yaml"));
        let mut owner: BTreeMap<(String, String, String, String), String> = BTreeMap::new();
        for (name, variant) in &resolved.components {
            for path in catalog.get(name).unwrap().paths(variant).unwrap() {
                let golden = common::golden_dir().join(format!("{path}.yaml"));
                for obj in read(&golden) {
                    owner.entry(compare::identity(&obj)).or_insert_with(|| name.clone());
                }
            }
        }
        let objects: Vec<RenderedObject> = example
            .into_iter()
            .map(|obj| {
                let component = owner
                    .get(&compare::identity(&obj))
                    .cloned()
                    .unwrap_or_else(|| panic!("{} has no component", compare::object_label(&obj)));
                RenderedObject::new(component, obj)
            })
            .collect();
        prepared_from(catalog, resolved, objects)
    })
}

/// What `render()` does after `prepare()`, for values layered on the prepared effective ones.
fn native_params(prepared: &Prepared, set: &ValueSet) -> Vec<Value> {
    let mut effective = prepared.effective.clone();
    if let Some(f) = &set.file {
        let doc = kfctl_yaml::parse_stream(&std::fs::read_to_string(f).unwrap(), "values").unwrap().remove(0);
        values::merge(&mut effective, &doc);
    }
    let mut user = json!({});
    for s in &set.sets {
        strvals::parse_into(&SetFlag::new(SetKind::Set, s.clone()), &mut user).unwrap();
    }
    values::merge(&mut effective, &user);
    let (mut objects, hashed): (Vec<RenderedObject>, Vec<_>) = prepared
        .objects
        .iter()
        .filter(|o| effective.get(&o.component).and_then(|c| c.get("enabled")) != Some(&json!(false)))
        .filter(|o| params::keep(&o.obj, &effective, &o.component, &prepared.catalog.provided))
        .map(|o| {
            let hashed = kfctl::catalog::rehash::HashedName::of(&o.obj);
            let mut o = o.clone();
            params::apply_all(&mut o.obj, &effective, &prepared.defaults, &o.component);
            (o, hashed)
        })
        .unzip();
    kfctl::catalog::rehash::rename_changed(&mut objects, &hashed).expect("whole objects rename");
    objects.into_iter().map(|o| o.obj).collect()
}

fn golden_export() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let options = ExportOptions {
            chart_name: "kubeflow".into(),
            app_version: common::release().into(),
            export_args: Vec::new(),
            argocd: None,
        };
        let started = Instant::now();
        let files = chart::export(golden_prepared(), &options).unwrap_or_else(|e| panic!("export: {e}"));
        let dir = scratch("golden").join("kubeflow");
        chart::write::write_folder(&dir, files.iter().map(|(p, t)| (p.as_str(), t.as_str())), false).unwrap();
        println!("golden-backed export: {} files in {:?}", files.len(), started.elapsed());
        dir
    })
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn golden_backed_chart_equals_the_native_table_with_default_values() {
    let started = Instant::now();
    let helm = helm_template(golden_export(), &[]);
    println!("helm template of {} objects: {:?}", helm.len(), started.elapsed());
    let expected: Vec<Value> = golden_prepared().objects.iter().map(|o| o.obj.clone()).collect();
    assert_eq!(helm.len(), common::example_object_count());
    assert_same(&expected, &helm, "golden-backed multi-tenant, default values");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn golden_backed_chart_equals_the_native_table_for_every_value_set() {
    let mut failures = Vec::new();
    for set in matrix() {
        let expected = native_params(golden_prepared(), &set);
        let helm = helm_template(golden_export(), &helm_args(&set));
        failures.extend(compare_set("golden-backed", set.name, &expected, &helm));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `None` when Helm's objects equal the expected ones (said on stdout), else the failure.
fn compare_set(suite: &str, set: &str, expected: &[Value], helm: &[Value]) -> Option<String> {
    match compare::unordered_report(expected, helm, 10) {
        None => {
            println!("{suite} {set}: {} objects equal", helm.len());
            None
        }
        Some(report) => {
            Some(format!("value set {set} ({} expected, {} from helm):\n{report}", expected.len(), helm.len()))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The real pipeline: `kfctl-rs chart export` against `kfctl-rs template` (catalog::render).

fn export_cli(profile: &str, out: &Path, extra: &[&str]) -> Output {
    Command::new(binary())
        .args(["chart", "export", "--profile", profile, "--version", common::release(), "--source"])
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir())
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("kfctl-rs runs")
}

/// The export of `profile` with default values (made once per test run; multi-tenant with
/// `--argocd`).
fn exported(profile: &str) -> PathBuf {
    static DIRS: OnceLock<std::sync::Mutex<BTreeMap<String, PathBuf>>> = OnceLock::new();
    let mut dirs = DIRS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    dirs.entry(profile.to_string())
        .or_insert_with(|| {
            let out = scratch(&format!("export-{profile}")).join("kubeflow");
            let started = Instant::now();
            let extra: &[&str] = if profile == "multi-tenant" {
                &[
                    "--argocd",
                    "--argocd-repo-url",
                    "https://git.example.com/ml/platform.git",
                    "--argocd-path",
                    "clusters/prod/kubeflow",
                ]
            } else {
                &[]
            };
            let result = export_cli(profile, &out, extra);
            assert!(result.status.success(), "export {profile}: {}", String::from_utf8_lossy(&result.stderr));
            println!("export {profile}: {:?}", started.elapsed());
            out
        })
        .clone()
}

fn template(profile: &str, set: &ValueSet) -> Vec<Value> {
    let request = RenderRequest {
        profile: profile.into(),
        components: Vec::new(),
        value_files: set.file.iter().cloned().collect(),
        sets: set.sets.iter().map(|s| SetFlag::new(SetKind::Set, s.clone())).collect(),
        manifests_dir: common::manifests_dir(),
        remote: Arc::new(MirrorResolver { root: common::mirror_dir() }),
        layout: common::layout(),
    };
    let rendered =
        kfctl::catalog::render(&request).unwrap_or_else(|e| panic!("render {profile} with {}: {e}", set.name));
    rendered.objects.into_iter().map(|o| o.obj).collect()
}

fn defaults_only() -> ValueSet {
    ValueSet { name: "defaults", sets: Vec::new(), file: None }
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn every_builtin_profile_exports_to_a_chart_helm_renders_as_kfctl_rs_templates() {
    for profile in profile::builtin_names() {
        let chart = exported(profile);
        let started = Instant::now();
        let helm = helm_template(&chart, &[]);
        let helm_time = started.elapsed();
        let expected = template(profile, &defaults_only());
        assert_same(&expected, &helm, &format!("profile {profile}, default values"));
        println!("profile {profile}: {} objects equal (helm template {helm_time:?})", helm.len());
    }
}

/// A null deletes the default it stands on (Helm's coalescing), in `global` as in a component:
/// Helm and kfctl-rs both render the defaults again, even over a value a `-f` file set.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn nulls_reset_globals_and_component_values_to_their_defaults() {
    let chart = exported("multi-tenant");
    let nulls = value_set(
        "nulls",
        &[
            "global.nodeSelector=null",
            "global.podSecurity=null",
            "global.imagePullSecrets=null",
            "global.imageRegistry=null",
            "katib.replicas.katib-ui=null",
            "trainer.enabled=null",
        ],
        Some(serde_json::json!({"katib": {"replicas": {"katib-ui": 3}}, "global": {"imageRegistry": "r.example.com"}})),
    );
    let expected = template("multi-tenant", &nulls);
    assert_same(&template("multi-tenant", &defaults_only()), &expected, "kfctl-rs: nulls give the defaults");
    assert_same(&expected, &helm_template(&chart, &helm_args(&nulls)), "helm: nulls");
}

/// One values file disabling components serves every export: on `minimal`, which holds neither,
/// `katib.enabled: false` (a file) and `--set ray.enabled=false` render as `kfctl-rs template`
/// does; enabling a component the chart does not hold is refused by the schema, naming it.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn every_component_can_be_disabled_in_every_export() {
    let chart = exported("minimal");
    let disabled = value_set(
        "disable-absent",
        &["ray.enabled=false"],
        Some(serde_json::json!({"katib": {"enabled": false}, "pipelines": {"enabled": false}})),
    );
    let helm = helm_template(&chart, &helm_args(&disabled));
    assert_same(&template("minimal", &disabled), &helm, "minimal with absent components disabled");
    let out = Command::new(common::tool("helm-template")).arg(&chart).args(["--set", "katib.enabled=true"]).output();
    let out = out.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("katib"), "helm accepted katib.enabled=true: {stderr}");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn a_subchart_installed_on_its_own_renders_its_components_objects() {
    let chart = exported("multi-tenant");
    let request = RenderRequest {
        profile: "multi-tenant".into(),
        components: Vec::new(),
        value_files: Vec::new(),
        sets: vec![SetFlag::new(SetKind::Set, "global.imageRegistry=registry.example.com")],
        manifests_dir: common::manifests_dir(),
        remote: Arc::new(MirrorResolver { root: common::mirror_dir() }),
        layout: common::layout(),
    };
    let rendered = kfctl::catalog::render(&request).unwrap();
    for component in ["katib", "dex"] {
        let expected: Vec<Value> =
            rendered.objects.iter().filter(|o| o.component == component).map(|o| o.obj.clone()).collect();
        let helm = helm_template(
            &chart.join("charts").join(component),
            &["--set".into(), "global.imageRegistry=registry.example.com".into()],
        );
        assert!(!expected.is_empty());
        assert_same(&expected, &helm, &format!("subchart {component} on its own"));
        assert!(
            helm_template(&chart.join("charts").join(component), &["--set".into(), "enabled=false".into()]).is_empty()
        );
    }
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn multi_tenant_chart_equals_template_for_every_value_set() {
    let chart = exported("multi-tenant");
    let defaults = template("multi-tenant", &defaults_only());
    let mut failures = Vec::new();
    for set in matrix() {
        let expected = template("multi-tenant", &set);
        assert!(
            compare::unordered_report(&defaults, &expected, 1).is_some(),
            "value set {} changes nothing: the check would be vacuous",
            set.name
        );
        let helm = helm_template(&chart, &helm_args(&set));
        failures.extend(compare_set("multi-tenant", set.name, &expected, &helm));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn values_given_at_export_become_the_charts_defaults() {
    for (name, sets) in [
        ("registry", vec!["global.imageRegistry=registry.example.com"]),
        ("katib-disabled", vec!["katib.enabled=false"]),
    ] {
        let out = scratch(&format!("export-with-{name}")).join("kubeflow");
        let mut extra = Vec::new();
        for s in &sets {
            extra.extend(["--set", s]);
        }
        let result = export_cli("multi-tenant", &out, &extra);
        assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
        let set = value_set(if name == "registry" { "at-export-registry" } else { "at-export-katib" }, &sets, None);
        let expected = template("multi-tenant", &set);
        let helm = helm_template(&out, &[]);
        assert_same(&expected, &helm, &format!("export with {sets:?}, plain helm template"));
        println!(
            "export with {sets:?}: plain helm template equals kfctl-rs template with them ({} objects)",
            helm.len()
        );
    }
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn helm_lint_strict_passes_on_the_umbrella_and_every_subchart() {
    for profile in profile::builtin_names() {
        let chart = exported(profile);
        let mut charts = vec![chart.clone()];
        let mut subcharts: Vec<PathBuf> =
            std::fs::read_dir(chart.join("charts")).unwrap().map(|e| e.unwrap().path()).collect();
        subcharts.sort();
        charts.extend(subcharts);
        for c in &charts {
            let out = helm_lint(c);
            assert!(
                out.status.success(),
                "helm lint --strict {}:\n{}",
                c.display(),
                String::from_utf8_lossy(&out.stdout)
            );
        }
        println!("profile {profile}: helm lint --strict passes on {} charts", charts.len());
    }
}

fn folder_bytes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(path.strip_prefix(root).unwrap().display().to_string(), std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn exporting_twice_gives_byte_identical_folders() {
    let first = exported("multi-tenant");
    let again = scratch("export-again").join("kubeflow");
    let result = export_cli(
        "multi-tenant",
        &again,
        &[
            "--argocd",
            "--argocd-repo-url",
            "https://git.example.com/ml/platform.git",
            "--argocd-path",
            "clusters/prod/kubeflow",
        ],
    );
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let (a, b) = (folder_bytes(&first), folder_bytes(&again));
    assert!(a.len() > 600, "{} files", a.len());
    let differing: Vec<&String> =
        a.keys().filter(|k| a.get(*k) != b.get(*k)).chain(b.keys().filter(|k| !a.contains_key(*k))).collect();
    assert!(differing.is_empty(), "files differ between two exports: {differing:?}");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn exported_charts_carry_versions_notice_schema_and_readme() {
    let chart = exported("multi-tenant");
    let doc =
        |p: &str| kfctl_yaml::parse_stream(&std::fs::read_to_string(chart.join(p)).unwrap(), p).unwrap().remove(0);
    let umbrella = doc("Chart.yaml");
    assert_eq!(umbrella["version"], kfctl::chart::scaffold::chart_version(common::release()));
    assert!(umbrella["version"].as_str().unwrap().ends_with(&format!("+kfctl.{}", env!("CARGO_PKG_VERSION"))));
    assert_eq!(umbrella["appVersion"], common::release());
    let deps = umbrella["dependencies"].as_array().unwrap();
    assert!(deps.iter().all(|d| d["condition"] == json!(format!("{}.enabled", d["name"].as_str().unwrap()))));
    let katib = doc("charts/katib/Chart.yaml");
    assert_eq!((katib["name"].as_str(), katib["appVersion"].as_str()), (Some("katib"), Some(common::release())));
    let values = doc("charts/katib/values.yaml");
    assert!(
        values["global"].is_object() && values["images"]["katib-ui"].is_string() && values["enabled"] == json!(true)
    );
    let notes = std::fs::read_to_string(chart.join("charts/katib/templates/NOTES.txt")).unwrap();
    assert!(notes.contains(kfctl::notice::BEST_EFFORT));
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(chart.join("values.schema.json")).unwrap()).unwrap();
    assert_eq!(schema.pointer("/properties/global/properties/crds/enum").unwrap(), &json!(["", "only", "skip"]));
    let readme = std::fs::read_to_string(chart.join("charts/katib/README.md")).unwrap();
    assert!(readme.contains("| `replicas.katib-ui` | `1` |"), "katib README lists its values");
    assert!(std::fs::read_to_string(chart.join("README.md")).unwrap().contains("global.crds=only"));
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn argocd_applications_sync_in_install_order_and_point_at_the_charts() {
    let chart = exported("multi-tenant");
    let catalog = Catalog::for_release(common::release()).unwrap();
    let mut waves: BTreeMap<String, i64> = BTreeMap::new();
    for entry in std::fs::read_dir(chart.join("argocd/apps")).unwrap() {
        let path = entry.unwrap().path();
        let app = kfctl_yaml::parse_stream(&std::fs::read_to_string(&path).unwrap(), "app").unwrap().remove(0);
        let component = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            app.pointer("/spec/source/path").unwrap(),
            &json!(format!("clusters/prod/kubeflow/charts/{component}"))
        );
        assert_eq!(app.pointer("/spec/source/repoURL").unwrap(), "https://git.example.com/ml/platform.git");
        assert!(chart.join("charts").join(&component).join("Chart.yaml").is_file());
        let wave = app
            .pointer("/metadata/annotations/argocd.argoproj.io~1sync-wave")
            .and_then(Value::as_str)
            .unwrap()
            .parse()
            .unwrap();
        waves.insert(component, wave);
    }
    assert_eq!(waves.len(), std::fs::read_dir(chart.join("charts")).unwrap().count());
    for (component, wave) in &waves {
        for dep in &catalog.get(component).unwrap().dependencies {
            assert!(
                waves[dep] < *wave,
                "{component} (wave {wave}) syncs before its dependency {dep} (wave {})",
                waves[dep]
            );
        }
    }
    let root = kfctl_yaml::parse_stream(&std::fs::read_to_string(chart.join("argocd/root.yaml")).unwrap(), "root")
        .unwrap()
        .remove(0);
    assert_eq!(root.pointer("/spec/source/path").unwrap(), "clusters/prod/kubeflow/argocd/apps");
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn helm_refuses_what_kfctl_rs_refuses() {
    let chart = exported("multi-tenant");
    for (set, expect) in [
        ("katib.replicas.katib-ui=three", "katib"),
        ("katib.enabeld=false", "enabeld"),
        ("global.podSecurity.profiles=strict", "profiles"),
    ] {
        let out = Command::new(common::tool("helm-template")).arg(&chart).args(["--set", set]).output().unwrap();
        assert!(!out.status.success(), "helm accepted --set {set}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("schema") && stderr.contains(expect), "--set {set}: {stderr}");
    }
    let out = Command::new(common::tool("helm-template"))
        .arg(&chart)
        .args(["--set", "cert-manager.enabled=false"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs cert-manager"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn bad_input_is_a_usage_error_and_leaves_no_folder_behind() {
    let dir = scratch("bad-input");
    let listing = |d: &Path| -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let taken = dir.join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("notes.txt"), "mine").unwrap();
    let out = export_cli("minimal", &taken, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not empty"));
    let out = export_cli("minimal", &taken, &["--force"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "--force never replaces a folder kfctl-rs did not write: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(listing(&taken), ["notes.txt"]);
    let fresh = dir.join("fresh");
    let out = export_cli("minimal", &fresh, &["--set", "trainer.enabeld=false"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("trainer.enabeld"));
    let out = export_cli("minimal", &fresh, &["--name", "Kubeflow"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::write(dir.join("a-file"), "x").unwrap();
    let out = export_cli("minimal", &dir.join("a-file").join("chart"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(listing(&dir), ["a-file", "taken"], "no chart or staging folder is left behind");
    let ok = export_cli("minimal", &fresh, &[]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let again = export_cli("minimal", &fresh, &["--force"]);
    assert!(again.status.success(), "--force replaces an earlier export: {}", String::from_utf8_lossy(&again.stderr));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("is up to date"),
        "the same files again leave the earlier export as it was: {}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(listing(&dir), ["a-file", "fresh", "taken"]);
}

// ---------------------------------------------------------------------------------------------
// Edge cases upstream does not have, on a small hand-made component.

fn edge_prepared() -> Prepared {
    let catalog = Catalog::for_release(common::release()).unwrap();
    let resolved = profile::Resolved {
        name: "edge".into(),
        description: "hand-made edge cases".into(),
        kubernetes: "cluster".into(),
        allow_default_credentials: false,
        components: ["cert-manager", "kubeflow-namespace", "katib"]
            .iter()
            .map(|c| (c.to_string(), "default".to_string()))
            .collect(),
        values: json!({}),
        example: false,
        warnings: Vec::new(),
        changes: Default::default(),
    };
    let pod = |image: &str| json!({"containers": [{"name": "main", "image": image}]});
    let katib = vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "edge", "namespace": "kubeflow",
               "labels": {"app": "{{ not a template }}", "x": "a `quoted` */ text"}, "annotations": {"note": "line 1\r\nline 2 — ünïcode {{- trim }}"}},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "edge"}}, "template": {"metadata": {"labels": {"app": "edge"}}, "spec": {
                   "imagePullSecrets": [{"name": "existing"}], "nodeSelector": {"kubernetes.io/os": "linux", "pool": "upstream"},
                   "tolerations": [{"key": "a", "operator": "Exists", "tolerationSeconds": 60}], "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}]}},
                   "initContainers": [{"name": "init", "image": "busybox:1.36"}],
                   "containers": [{"name": "main", "image": "ghcr.io/kubeflow/edge:v1", "resources": {"limits": {"cpu": 1.5, "memory": "1Gi"}}},
                                  {"name": "side", "image": "localhost:5000/side@sha256:0123", "args": ["{{.Values}}", "`x`"]}]}}}}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "edge-db", "namespace": "kubeflow", "labels": null},
               "spec": {"replicas": 1, "serviceName": "edge-db", "template": {"spec": {"containers": [{"name": "db", "image": "mysql:8.0", "resources": {}}]}}}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "edge-cron", "namespace": "kubeflow"},
               "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": pod("docker.io/library/alpine:3")}}}}}),
        json!({"apiVersion": "example.com/v1", "kind": "PodSet", "metadata": {"name": "edge-pods", "namespace": "kubeflow"},
               "spec": {"pods": [pod("quay.io/a/b:c"), {"containers": [{"name": "c", "image": "quay.io/a/b:c"}], "nodeSelector": {"zone": "a"}}]}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "edge-labels", "namespace": "kubeflow"},
               "data": {"namespace-labels.yaml": "a: \"x\"\r\npod-security.kubernetes.io/enforce: \"baseline\"\npod-security.kubernetes.io/enforce: \"baseline\"\r\n",
                        "template.tpl": "{{ .Values.x }} and `backquotes` and KFCTL POINT", "empty": ""}}),
    ];
    let namespaces = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow", "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "plain"}}),
    ];
    let cert = vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cm", "namespace": "cert-manager"}, "spec": {"template": {"spec": pod("quay.io/jetstack/cert-manager-controller:v1.16.1")}}}),
    ];
    let tag = |component: &str, objs: Vec<Value>| {
        objs.into_iter().map(|obj| RenderedObject::new(component, obj)).collect::<Vec<_>>()
    };
    let mut objects = tag("cert-manager", cert);
    objects.extend(tag("kubeflow-namespace", namespaces));
    objects.extend(tag("katib", katib));
    prepared_from(catalog, resolved, objects)
}

/// What `prepare()` gives for `objects` with default values (no object depends on another
/// component here).
fn prepared_from(catalog: Catalog, resolved: profile::Resolved, objects: Vec<RenderedObject>) -> Prepared {
    let defaults = kfctl::catalog::defaults::defaults(&catalog, &resolved, &objects);
    let schema = kfctl::catalog::defaults::schema_for(&defaults);
    Prepared {
        catalog,
        profile: resolved,
        user: json!({}),
        effective: defaults.clone(),
        defaults,
        schema,
        objects,
        peers: Vec::new(),
        peer_variants: None,
    }
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn edge_cases_render_identically_in_helm_and_kfctl_rs() {
    let prepared = edge_prepared();
    let options = ExportOptions {
        chart_name: "edge".into(),
        app_version: "v0.0.0-test".into(),
        export_args: Vec::new(),
        argocd: None,
    };
    let files = chart::export(&prepared, &options).unwrap_or_else(|e| panic!("{e}"));
    let dir = scratch("edge").join("edge");
    chart::write::write_folder(&dir, files.iter().map(|(p, t)| (p.as_str(), t.as_str())), false).unwrap();
    let everything = json!({
        "global": {"imageRegistry": "mirror.example.com:5000/", "imagePullSecrets": ["regcred"], "nodeSelector": {"pool": "global", "disk": "ssd"},
                   "tolerations": [{"key": "g", "operator": "Exists"}], "commonLabels": {"pod-security.kubernetes.io/enforce": "privileged", "app": "overridden"},
                   "commonAnnotations": {"note": "replaced"}, "podSecurity": {"namespaces": "baseline", "profiles": "off"}},
        "katib": {"nodeSelector": {"pool": "katib"}, "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]}}},
                  "replicas": {"edge": 5, "edge-db": 0}, "resources": {"edge": {"main": {"requests": {"cpu": "250m"}}, "side": {"limits": {"memory": "64Mi"}}}, "edge-db": {"db": {"limits": {"cpu": 2}}}},
                  "images": {"edge": "ghcr.io/kubeflow/edge:v2", "b": ""}},
    });
    let sets = [
        value_set("edge-defaults", &[], None),
        value_set("edge-everything", &[], Some(everything)),
        value_set(
            "edge-pss-restricted",
            &[
                "global.podSecurity.profiles=restricted,global.podSecurity.namespaces=off",
                "global.commonLabels.team=ml",
            ],
            None,
        ),
        value_set("edge-katib-off", &["katib.enabled=false"], None),
    ];
    for set in &sets {
        let expected = native_params(&prepared, set);
        let helm = helm_template(&dir, &helm_args(set));
        assert_same(&expected, &helm, &format!("edge cases, {}", set.name));
    }
    let lint = helm_lint(&dir);
    assert!(lint.status.success(), "{}", String::from_utf8_lossy(&lint.stdout));
}

/// Helm's stored form of a release, estimated: base64(gzip(JSON of the chart's own files —
/// subcharts are not serialized — and the rendered manifest)). Helm keeps it in one Secret,
/// which Kubernetes caps at 1 MiB.
fn estimated_release_size(chart: &Path, args: &[String]) -> usize {
    use std::io::Write;
    let out = Command::new(common::tool("helm-template")).arg(chart).args(args).output().unwrap();
    assert!(out.status.success());
    let mut files = Vec::new();
    let mut stack = vec![chart.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(chart).unwrap().display().to_string();
            if rel == "charts" || rel == "argocd" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(json!({"name": rel, "data": params::base64_encode(&std::fs::read(&path).unwrap())}));
            }
        }
    }
    let release =
        serde_json::to_vec(&json!({"chart": {"templates": files}, "manifest": String::from_utf8_lossy(&out.stdout)}))
            .unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&release).unwrap();
    params::base64_encode(&gz.finish().unwrap()).len()
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn the_documented_two_step_install_fits_helm_release_limits() {
    const SECRET_LIMIT: usize = 1 << 20;
    let skip = ["--set".to_string(), "global.crds=skip".to_string()];
    for profile in profile::builtin_names() {
        let chart = exported(profile);
        let size = estimated_release_size(&chart, &skip);
        println!("profile {profile}: release of step 2 (global.crds=skip) ~{} KiB", size / 1024);
        assert!(
            size < SECRET_LIMIT,
            "profile {profile}: the step-2 release (~{size} bytes) exceeds Helm's 1 MiB Secret"
        );
    }
    let trainer = exported("multi-tenant").join("charts/trainer");
    let size = estimated_release_size(&trainer, &skip);
    println!("trainer on its own, global.crds=skip: ~{} KiB", size / 1024);
    assert!(size < SECRET_LIMIT, "the trainer chart on its own (~{size} bytes) exceeds Helm's 1 MiB Secret");
}
