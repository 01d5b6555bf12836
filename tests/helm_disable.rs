//! Issue 39: one component turned off. For every component of `multi-tenant` (upstream's
//! `example/`), `kfctl-rs template --set C.enabled=false` must equal real Helm of the default
//! export with the same flag, and real kustomize of `example/` without C's line. kustomize
//! resolves references across components (a Certificate names whichever component's prefixed
//! Issuer it finds; a var one component declares fills another's CRD), so the charts must
//! compute those fields from which components are installed, not bake the whole build's.
//! A component the others need cannot be turned off alone: both sides refuse it.
//!
//! Three tests split the components between them, so they run beside each other.

use crate::common;

use kfctl::catalog::Catalog;
use kfctl_yaml::compare;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const PROFILE: &str = "multi-tenant";
const PARTS: usize = 3;

/// The components of the profile (with their variants), every `PARTS`th from `part`.
fn components(part: usize) -> Vec<(String, String)> {
    let prepared = kfctl::catalog::render::prepare(&common::render_request_set(PROFILE, &[])).unwrap();
    prepared.profile.components.iter().skip(part).step_by(PARTS).cloned().collect()
}

/// `kfctl-rs template`'s objects with `component` off, or its refusal.
fn native(component: &str) -> Result<Vec<Value>, String> {
    let flag = format!("{component}.enabled=false");
    let rendered = kfctl::catalog::render(&common::render_request_set(PROFILE, &[&flag])).map_err(|e| e.to_string())?;
    Ok(rendered.objects.into_iter().map(|o| o.obj).collect())
}

/// Real Helm of the default export with `component` off.
fn helm(component: &str) -> std::process::Output {
    Command::new(common::tool("helm-template"))
        .arg(common::exported_multi_tenant())
        .args(["--set", &format!("{component}.enabled=false")])
        .output()
        .expect("helm-template runs")
}

/// The `example/` entries that are `component`'s folders.
fn example_lines(catalog: &Catalog, component: &str, variant: &str) -> Vec<String> {
    let paths = catalog.get(component).ok().and_then(|d| d.paths(variant).ok().map(<[String]>::to_vec));
    paths.unwrap_or_default().into_iter().map(|p| format!("../{p}")).collect()
}

/// Real kustomize of `example/` without `lines`, in a folder beside it in the localized copy;
/// `None` when `example/` does not list each of them once.
fn kustomize_without(component: &str, lines: &[String]) -> Option<Vec<Value>> {
    let manifests = common::localized_snapshot();
    let text = std::fs::read_to_string(manifests.join("example/kustomization.yaml")).unwrap();
    let kept: Vec<&str> = text.lines().filter(|line| !lines.iter().any(|entry| is_entry(line, entry))).collect();
    if text.lines().count() - kept.len() != lines.len() {
        return None; // example/ does not hold the component's folders as the catalog names them
    }
    let dir = manifests.join(format!("example-without-{component}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kustomization.yaml"), kept.join("\n") + "\n").unwrap();
    Some(build(&dir))
}

/// Whether `line` is the `resources:` item `entry` (a comment may follow).
fn is_entry(line: &str, entry: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix("- ") else { return false };
    let item = rest.split(" #").next().unwrap_or_default().trim();
    item == entry
}

fn build(dir: &Path) -> Vec<Value> {
    let out = Command::new(common::tool("kustomize-build")).arg(dir).output().expect("kustomize-build runs");
    assert!(out.status.success(), "kustomize {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    kfctl_yaml::parse_stream(&String::from_utf8(out.stdout).unwrap(), "kustomize output").unwrap()
}

/// Each component of `part`, turned off alone, on all three sides; the differences, together.
fn check_part(part: usize) {
    let catalog = Catalog::for_release(common::release()).unwrap();
    let mut failures = Vec::new();
    let (mut checked, mut against_kustomize) = (Vec::new(), 0);
    for (component, variant) in components(part) {
        let helm_out = helm(&component);
        match native(&component) {
            Err(refusal) => {
                if helm_out.status.success() {
                    failures.push(format!("{component}: kfctl-rs refuses ({refusal}) but Helm renders"));
                }
            }
            Ok(objects) => {
                if !helm_out.status.success() {
                    failures.push(format!("{component}: Helm refuses: {}", String::from_utf8_lossy(&helm_out.stderr)));
                    continue;
                }
                let helm_docs = common::helm_objects(&helm_out, &component);
                if let Some(report) = compare::unordered_report(&objects, &helm_docs, 10) {
                    failures.push(format!("{component}: Helm differs from kfctl-rs:\n{report}"));
                }
                let lines = example_lines(&catalog, &component, &variant);
                if let Some(built) = kustomize_without(&component, &lines) {
                    against_kustomize += 1;
                    if let Some(report) = compare::unordered_report(&built, &objects, 10) {
                        failures
                            .push(format!("{component}: kfctl-rs differs from kustomize without {lines:?}:\n{report}"));
                    }
                }
                checked.push(component);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(!checked.is_empty(), "part {part}: no component could be turned off alone");
    assert!(against_kustomize > 0, "part {part}: example/ holds none of {checked:?} as the catalog names them");
    eprintln!(
        "part {part}: {} components off alone, {against_kustomize} against kustomize: {checked:?}",
        checked.len()
    );
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn components_turned_off_alone_render_alike_part_1() {
    check_part(0);
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn components_turned_off_alone_render_alike_part_2() {
    check_part(1);
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn components_turned_off_alone_render_alike_part_3() {
    check_part(2);
}

#[test]
fn an_example_entry_is_found_with_or_without_a_comment() {
    assert!(is_entry("- ../common/dex/overlays/oauth2-proxy", "../common/dex/overlays/oauth2-proxy"));
    assert!(is_entry("  - ../a/b  # why", "../a/b"));
    assert!(!is_entry("- ../a/bc", "../a/b"));
    assert!(!is_entry("# - ../a/b", "../a/b"));
}
