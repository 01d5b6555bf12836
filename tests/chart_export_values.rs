//! Issue 27 item 1: values given at `chart export` are the chart's defaults, which another
//! value at install time replaces in every subchart as in kfctl-rs, and a `null` removes, in
//! the umbrella and in a subchart installed alone; a GUIDE recipe's export renders under real
//! Helm with its own defaults.

use crate::common;

use kfctl_yaml::compare;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HASH: &str = "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72";

fn native(sets: &[&str], files: &[PathBuf]) -> Vec<Value> {
    let mut request = common::render_request_set("multi-tenant", sets);
    request.value_files = files.to_vec();
    let rendered = kfctl::catalog::render(&request).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    rendered.objects.into_iter().map(|o| o.obj).collect()
}

fn export(name: &str, args: &[&str]) -> PathBuf {
    let out = common::scratch("chart-export-values", name).join("kubeflow");
    let run = common::kfctl_offline(
        &[&["chart", "export", "--profile", "multi-tenant", "--out", out.to_str().unwrap()], args].concat(),
    );
    assert!(run.status.success(), "export {args:?}: {}", String::from_utf8_lossy(&run.stderr));
    out
}

fn helm(chart: &Path, sets: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(common::tool("helm-template"));
    cmd.arg(chart);
    for s in sets {
        cmd.args(["--set", s]);
    }
    cmd.stdin(Stdio::null()).output().expect("helm-template runs")
}

/// Values given at export are the chart's defaults (the umbrella's and each subchart's): at
/// install time another value replaces each of them as in kfctl-rs, and a `null` removes it, in
/// every subchart. Under `global:` that needs the export's care: Helm copies an umbrella's
/// `global:` defaults into each subchart's values as it loads the dependencies (helm/helm#6277),
/// where a null cannot reach them, so the globals given at export stand apart, under
/// `exportedGlobal:` (values.yaml says so), and the templates coalesce `global:` over them. The
/// four globals issue 27 names, and a nested key, are pinned down here; GUIDE.md says so.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn values_given_at_export_are_defaults_another_value_replaces_and_a_null_removes_in_every_subchart() {
    let user = format!("global.users[0].passwordHash={HASH}");
    let given = [
        "global.commonLabels.team=ml",
        "global.imageRegistry=registry.example.com",
        "global.storageClass=fast",
        "global.users[0].email=alice@example.com",
        user.as_str(),
        "global.podSecurity.namespaces=baseline",
        "global.gateway.host=kubeflow.example.com",
        "katib.replicas.katib-ui=3",
    ];
    let mut args = Vec::new();
    for s in &given {
        args.extend(["--set", *s]);
    }
    let chart = export("given", &args);
    assert_set_apart(&chart, &["commonLabels", "imageRegistry", "storageClass", "users", "podSecurity", "gateway"]);
    let exported = native(&given, &[]);
    common::assert_helm_equals_native(&exported, &helm(&chart, &[]), "the export's own defaults");
    assert_lints(&chart, "the export given globals");
    // a list is replaced whole, as Helm replaces a default list: the user gives all of it
    let other_user = format!("global.users[0].passwordHash={HASH}");
    let other = [
        "global.commonLabels.team=platform",
        "global.commonLabels.owner=bob",
        "global.imageRegistry=mirror.example.org",
        "global.storageClass=standard",
        "global.users[0].email=bob@example.com",
        other_user.as_str(),
        "katib.replicas.katib-ui=2",
    ];
    let expected = native(&[&given[..], &other[..]].concat(), &[]);
    common::assert_helm_equals_native(&expected, &helm(&chart, &other), "other values over the export's");
    // A null over a key with a default inside one (the PSS level, the gateway host) removes it
    // as well: the chart's schema lets it through where kfctl-rs's default stands.
    let nulls = [
        "global.commonLabels=null",
        "global.imageRegistry=null",
        "global.storageClass=null",
        "global.users=null",
        "global.podSecurity.namespaces=null",
        "global.gateway.host=null",
    ];
    for null in nulls {
        let undone = native(&[&given[..], &[null]].concat(), &[]);
        assert!(compare::unordered_report(&exported, &undone, 1).is_some(), "kfctl-rs: {null} changes nothing");
        common::assert_helm_equals_native(&undone, &helm(&chart, &[null]), &format!("--set {null}"));
    }
    // Installed alone, a subchart takes the same null from its own exportedGlobal.
    let katib = chart.join("charts/katib");
    let katib_objects = |objects: Vec<Value>| -> Vec<Value> {
        let names: std::collections::BTreeSet<String> =
            common::helm_objects(&helm(&katib, &[]), "katib alone").iter().map(compare::object_label).collect();
        objects.into_iter().filter(|o| names.contains(&compare::object_label(o))).collect()
    };
    let without_labels = katib_objects(native(&[&given[..], &["global.commonLabels=null"]].concat(), &[]));
    common::assert_helm_equals_native(
        &without_labels,
        &helm(&katib, &["global.commonLabels=null"]),
        "katib alone, null",
    );
    // A null inside a map no default stands under (a label's value) is refused by both
    // schemas: kfctl-rs keeps it as the label's value, and so does Helm, the export's labels
    // standing apart from `global:`.
    let nested = "global.commonLabels.team=null";
    let request = common::render_request_set("multi-tenant", &[&given[..], &[nested]].concat());
    let refused = kfctl::catalog::render(&request).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("`global.commonLabels.team` must be a string, got null"), "kfctl-rs: {nested}: {refused}");
    let helm_refused = helm(&chart, &[nested]);
    let stderr = String::from_utf8_lossy(&helm_refused.stderr);
    assert!(!helm_refused.status.success(), "Helm rendered --set {nested}");
    assert!(stderr.contains("at '/global/commonLabels/team': got null, want string"), "Helm: {nested}: {stderr}");
}

/// The chart's values.yaml (and each subchart's) holds `keys` under `exportedGlobal:`, with its
/// comment, and not under `global:`.
fn assert_set_apart(chart: &Path, keys: &[&str]) {
    for values in [chart.join("values.yaml"), chart.join("charts/katib/values.yaml")] {
        let text = std::fs::read_to_string(&values).unwrap();
        let doc: Value = kfctl_yaml::parse_stream(&text, "values.yaml").unwrap().remove(0);
        for key in keys {
            assert!(doc["exportedGlobal"].get(key).is_some(), "{}: exportedGlobal.{key} missing", values.display());
            assert!(doc["global"].get(key).is_none(), "{}: global.{key} still there", values.display());
        }
        assert!(text.contains("# -- The `global:` values given at export"), "{}: no comment", values.display());
    }
}

/// `helm lint --strict` passes on the chart.
fn assert_lints(chart: &Path, what: &str) {
    let lint = Command::new(common::tool("helm-lint")).arg(chart).arg("--strict").output().unwrap();
    assert!(lint.status.success(), "{what}: {}", String::from_utf8_lossy(&lint.stdout));
}

/// An export given no global sets none apart, and a null over a global default renders as
/// kfctl-rs renders it.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn an_export_given_no_global_sets_none_apart_and_nulls_reset_its_defaults() {
    let chart = export("no-global", &["--set", "katib.replicas.katib-ui=3"]);
    let values = std::fs::read_to_string(chart.join("values.yaml")).unwrap();
    assert!(!values.contains("exportedGlobal"), "{values}");
    let sets = ["katib.replicas.katib-ui=3", "global.commonLabels=null", "global.imageRegistry=null"];
    common::assert_helm_equals_native(&native(&sets, &[]), &helm(&chart, &sets[1..]), "nulls over global defaults");
    let _ = std::fs::remove_dir_all(chart.parent().unwrap());
}

/// Every ready values file (`values/*.yaml`, the GUIDE's recipes) exported into a chart: real
/// Helm renders it with the chart's own defaults as kfctl-rs renders the file, and `helm lint
/// --strict` passes (the external-OIDC recipe once wrote a chart whose own checks failed).
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn every_values_recipe_exports_a_chart_helm_renders_with_its_own_defaults() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::repo_root().join("values"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let chart = export(&name, &["-f", file.to_str().unwrap()]);
        let what = format!("export -f values/{name}.yaml, helm template with its defaults");
        common::assert_helm_equals_native(&native(&[], &[file]), &helm(&chart, &[]), &what);
        assert_lints(&chart, &name);
        let _ = std::fs::remove_dir_all(chart.parent().unwrap());
    }
}
