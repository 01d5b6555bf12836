//! Issue 27 item 1: values given at `chart export` are the chart's defaults, which another
//! value at install time replaces in every subchart as in kfctl-rs (Helm's limit on `null` over
//! an exported global, and the way around it, are pinned down here); a GUIDE recipe's export
//! renders under real Helm with its own defaults.

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

/// Values given at export are the chart's defaults (the umbrella's and each subchart's), and
/// at install time another value replaces each of them as in kfctl-rs. A `null` over an
/// exported global does not undo it, whatever each subchart's `values.yaml` holds: the umbrella
/// lists its subcharts as `dependencies`, and Helm, processing them as it loads the chart, copies
/// the umbrella's `global:` into each subchart's values (`<component>.global`) before the
/// install's values apply, so a null that deletes the umbrella's key leaves every subchart's
/// copy (helm/helm#6277, #9806). Nulling each copy too undoes it as kfctl-rs does. The four
/// globals issue 27 names are pinned down here; GUIDE.md says so.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn values_given_at_export_are_defaults_another_value_replaces_a_null_needs_every_copy_nulled() {
    let user = format!("global.users[0].passwordHash={HASH}");
    let given = [
        "global.commonLabels.team=ml",
        "global.imageRegistry=registry.example.com",
        "global.storageClass=fast",
        "global.users[0].email=alice@example.com",
        user.as_str(),
        "katib.replicas.katib-ui=3",
    ];
    let mut args = Vec::new();
    for s in &given {
        args.extend(["--set", *s]);
    }
    let chart = export("given", &args);
    let exported = native(&given, &[]);
    common::assert_helm_equals_native(&exported, &helm(&chart, &[]), "the export's own defaults");
    // a list is replaced whole, as Helm replaces a default list: the user gives all of it
    let other_user = format!("global.users[0].passwordHash={HASH}");
    let other = [
        "global.commonLabels.team=platform",
        "global.imageRegistry=mirror.example.org",
        "global.storageClass=standard",
        "global.users[0].email=bob@example.com",
        other_user.as_str(),
        "katib.replicas.katib-ui=2",
    ];
    let expected = native(&[&given[..], &other[..]].concat(), &[]);
    common::assert_helm_equals_native(&expected, &helm(&chart, &other), "other values over the export's");
    let subcharts = subcharts(&chart);
    for null in
        ["global.commonLabels=null", "global.imageRegistry=null", "global.storageClass=null", "global.users=null"]
    {
        let undone = native(&[&given[..], &[null]].concat(), &[]);
        assert!(compare::unordered_report(&exported, &undone, 1).is_some(), "kfctl-rs: {null} changes nothing");
        let kept = format!(
            "--set {null} (Helm keeps the export's value, helm/helm#6277; if it now undoes it, compare it with \
             kfctl-rs's render with the null and say so in GUIDE.md)"
        );
        common::assert_helm_equals_native(&exported, &helm(&chart, &[null]), &kept);
        let copies: Vec<String> = subcharts.iter().map(|c| format!("{c}.{null}")).collect();
        let everywhere: Vec<&str> = std::iter::once(null).chain(copies.iter().map(String::as_str)).collect();
        let what = format!("--set {null} with each subchart's copy nulled too");
        common::assert_helm_equals_native(&undone, &helm(&chart, &everywhere), &what);
    }
}

/// The exported chart's subcharts, by name.
fn subcharts(chart: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(chart.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 20, "multi-tenant has its subcharts: {names:?}");
    names
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
        let lint = Command::new(common::tool("helm-lint")).arg(&chart).arg("--strict").output().unwrap();
        assert!(lint.status.success(), "{name}: {}", String::from_utf8_lossy(&lint.stdout));
        let _ = std::fs::remove_dir_all(chart.parent().unwrap());
    }
}
