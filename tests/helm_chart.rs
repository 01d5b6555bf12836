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
//!   native parameter table on it, so the Helm side is checked on all 653 real objects
//!   whatever state the engine is in.

mod common;

use kfctl_rs::catalog::render::{self, Prepared, RenderedObject};
use kfctl_rs::catalog::{Catalog, RenderRequest, params, profile, values};
use kfctl_rs::chart::{self, ExportOptions};
use kfctl_rs::compare;
use kfctl_rs::source::MirrorResolver;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

fn binary() -> PathBuf {
    std::env::var_os("KFCTL_TEST_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kfctl-rs")))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kfctl-helm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One set of values, given the same way to Helm and to kfctl-rs: `--set`s and a file.
struct ValueSet {
    name: &'static str,
    sets: Vec<String>,
    file: Option<PathBuf>,
}

fn value_set(name: &'static str, sets: &[&str], file: Option<Value>) -> ValueSet {
    let file = file.map(|doc| {
        let path = scratch(&format!("values-{name}")).join("values.yaml");
        std::fs::write(&path, kfctl_rs::yaml::to_yaml(&doc)).unwrap();
        path
    });
    ValueSet { name, sets: sets.iter().map(|s| s.to_string()).collect(), file }
}

/// `kfctl-rs secrets generate` once: a file of fresh credentials.
fn secrets_file() -> PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = scratch("secrets").join("secrets.yaml");
        let out = Command::new(binary()).args(["secrets", "generate", "-o"]).arg(&path).output().unwrap();
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
        value_set("replicas", &["katib.replicas.katib-ui=3", "oauth2-proxy.replicas.oauth2-proxy=3", "cert-manager.replicas.cert-manager-webhook=2"], None),
        value_set("resources", &[], Some(resources)),
        credentials,
        value_set("pss", &["global.podSecurity.profiles=restricted", "global.podSecurity.namespaces=baseline"], None),
        value_set("pss-off", &["global.podSecurity.profiles=off,global.podSecurity.namespaces=off"], None),
        value_set("scheduling", &[], Some(scheduling)),
        value_set("pull-secrets", &["global.imagePullSecrets={regcred,mirror-pull}"], None),
        value_set("common-metadata", &["global.commonLabels.team=ml", "global.commonAnnotations.owner=platform@example.com"], None),
        value_set("image-override", &["katib.images.katib-ui=my.registry.io/katib/ui:dev", "global.imageRegistry=registry.example.com/mirror/"], None),
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
    let out = Command::new(common::shared_dir().join("tools/helm-template")).arg(chart).args(args).output().expect("helm-template runs");
    assert!(out.status.success(), "helm template {} {args:?} failed: {}", chart.display(), String::from_utf8_lossy(&out.stderr));
    parse_docs(&String::from_utf8(out.stdout).unwrap(), "helm template output")
}

/// A YAML stream read one document at a time (documents are separated by `---` lines), so
/// each stays within the reader's per-document budgets however long the stream is.
fn parse_docs(text: &str, origin: &str) -> Vec<Value> {
    let mut docs = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.extend(kfctl_rs::yaml::parse_stream(&current, origin).unwrap_or_else(|e| panic!("{origin}: {e}")));
            current.clear();
        } else {
            current.push_str(line);
        }
    }
    docs.extend(kfctl_rs::yaml::parse_stream(&current, origin).unwrap_or_else(|e| panic!("{origin}: {e}")));
    docs
}

fn helm_lint(chart: &Path) -> Output {
    Command::new(common::shared_dir().join("tools/helm-lint")).arg(chart).arg("--strict").output().expect("helm-lint runs")
}

fn assert_same(expected: &[Value], actual: &[Value], what: &str) {
    if let Some(report) = compare::unordered_report(expected, actual, 25) {
        panic!("{what}: helm template differs from kfctl-rs ({} vs {} objects):\n{report}", expected.len(), actual.len());
    }
}

// ---------------------------------------------------------------------------------------------
// Golden-backed: the Helm side against the native table on upstream's 653 objects.

/// multi-tenant's objects from the golden `example.yaml`, each tagged with the first component
/// (catalog order) whose own golden folders hold an object of the same identity.
fn golden_prepared() -> &'static Prepared {
    static PREPARED: OnceLock<Prepared> = OnceLock::new();
    PREPARED.get_or_init(|| {
        let catalog = Catalog::embedded().unwrap();
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
                let component = owner.get(&compare::identity(&obj)).cloned().unwrap_or_else(|| panic!("{} has no component", compare::object_label(&obj)));
                RenderedObject { component, obj }
            })
            .collect();
        let defaults = render::defaults(&catalog, &resolved, &objects);
        let schema = render::schema_for(&defaults);
        Prepared { catalog, profile: resolved, user: json!({}), effective: defaults.clone(), defaults, schema, objects }
    })
}

/// What `render()` does after `prepare()`, for values layered on the prepared effective ones.
fn native_params(prepared: &Prepared, set: &ValueSet) -> Vec<Value> {
    let mut effective = prepared.effective.clone();
    if let Some(f) = &set.file {
        let doc = kfctl_rs::yaml::parse_stream(&std::fs::read_to_string(f).unwrap(), "values").unwrap().remove(0);
        values::merge(&mut effective, &doc);
    }
    for s in &set.sets {
        values::merge(&mut effective, &values::parse_set(s).unwrap());
    }
    prepared
        .objects
        .iter()
        .filter(|o| effective.get(&o.component).and_then(|c| c.get("enabled")) != Some(&json!(false)))
        .filter(|o| params::keep(&o.obj, &effective))
        .map(|o| {
            let mut obj = o.obj.clone();
            params::apply_all(&mut obj, &effective, &prepared.defaults, &o.component);
            obj
        })
        .collect()
}

fn golden_export() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let options = ExportOptions { chart_name: "kubeflow".into(), app_version: "v1.11.0".into(), export_args: Vec::new(), argocd: None };
        let started = Instant::now();
        let files = chart::export(golden_prepared(), &options).unwrap_or_else(|e| panic!("export: {e}"));
        let dir = scratch("golden").join("kubeflow");
        chart::write::write_folder(&dir, files.iter().map(|(p, t)| (p.as_str(), t.as_str())), false).unwrap();
        println!("golden-backed export: {} files in {:?}", files.len(), started.elapsed());
        dir
    })
}

#[test]
fn golden_backed_chart_equals_the_native_table_with_default_values() {
    let started = Instant::now();
    let helm = helm_template(golden_export(), &[]);
    println!("helm template of 653 objects: {:?}", started.elapsed());
    let expected: Vec<Value> = golden_prepared().objects.iter().map(|o| o.obj.clone()).collect();
    assert_eq!(helm.len(), 653);
    assert_same(&expected, &helm, "golden-backed multi-tenant, default values");
}

#[test]
fn golden_backed_chart_equals_the_native_table_for_every_value_set() {
    let mut failures = Vec::new();
    for set in matrix() {
        let expected = native_params(golden_prepared(), &set);
        let helm = helm_template(golden_export(), &helm_args(&set));
        match compare::unordered_report(&expected, &helm, 10) {
            None => println!("golden-backed {}: {} objects equal", set.name, helm.len()),
            Some(report) => failures.push(format!("value set {} ({} expected, {} from helm):\n{report}", set.name, expected.len(), helm.len())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
