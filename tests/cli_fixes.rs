//! Issue 39's small command-line fixes, as a user meets them: `--timeout 1` is refused as
//! kubectl refuses it; `images -o yaml` prints the same data as `-o json`; an enumeration's
//! message shows its empty choice; `adopt` takes `--allow-default-credentials` as install does;
//! `status` lists components by name; `-q/--quiet` silences an install's progress. Cluster
//! cases run against the test API server (the in-repo test double; no real cluster).

use crate::common;
use crate::common::cluster::Cluster;

use kfctl_testapi::TestApiConfig;
use serde_json::Value;
use std::process::Command;

fn kfctl(args: &[&str]) -> std::process::Output {
    Command::new(common::binary()).args(args).output().unwrap()
}

#[test]
fn a_timeout_without_a_unit_is_refused_as_kubectl_refuses_it() {
    let out = kfctl(&["status", "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a duration needs a unit, like 1s"), "{out:?}");
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn images_yaml_is_the_json_data_and_an_enumeration_shows_its_empty_choice() {
    let json = common::kfctl_offline(&["images", "--profile", "minimal", "-o", "json"]);
    let yaml = common::kfctl_offline(&["images", "--profile", "minimal", "-o", "yaml"]);
    assert!(yaml.status.success(), "{}", String::from_utf8_lossy(&yaml.stderr));
    let from_json: Value = serde_json::from_slice(&json.stdout).unwrap();
    let from_yaml = kfctl_yaml::parse_stream(&String::from_utf8_lossy(&yaml.stdout), "yaml").unwrap().remove(0);
    assert_eq!(from_json, from_yaml);

    let out = common::kfctl_offline(&["template", "--profile", "minimal", "--set", "global.crds=some"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(r#"must be one of "", "only", "skip""#), "{stderr}");
}

#[test]
fn adopt_takes_allow_default_credentials_as_install_does() {
    let out = kfctl(&["adopt", "--profile", "kind", "--allow-default-credentials", "--help"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let help = String::from_utf8_lossy(&kfctl(&["adopt", "--help"]).stdout).to_string();
    assert!(help.contains("--allow-default-credentials"), "{help}");
}

fn objects_file(dir: &std::path::Path) -> String {
    let path = dir.join("objects.yaml");
    let docs = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: zz\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zz-settings\n  namespace: zz\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: aa\n";
    std::fs::write(&path, docs).unwrap();
    path.display().to_string()
}

#[test]
fn quiet_installs_without_progress() {
    let cluster = Cluster::start(TestApiConfig::default());
    let kubeconfig = cluster.kubeconfig.to_str().unwrap().to_string();
    let objects = objects_file(cluster.dir.path());
    let install = ["install", "--profile", "minimal", "--objects", &objects, "--kubeconfig", &kubeconfig, "--yes"];
    let loud = kfctl(&[&install[..], &["--timeout", "60s", "--kubernetes-versions", ">=1.0.0"]].concat());
    assert!(loud.status.success(), "{}", String::from_utf8_lossy(&loud.stderr));
    assert!(
        String::from_utf8_lossy(&loud.stderr).contains("applying"),
        "progress without -q: {}",
        String::from_utf8_lossy(&loud.stderr)
    );
    let quiet = kfctl(&[&install[..], &["-q", "--timeout", "60s", "--kubernetes-versions", ">=1.0.0"]].concat());
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(quiet.status.success(), "{stderr}");
    assert!(!stderr.contains("applying"), "-q printed progress: {stderr}");
    assert!(stderr.contains("best-effort"), "the notice always prints: {stderr}");
}

#[tokio::test]
async fn status_lists_components_by_name_not_in_apply_order() {
    use kfctl::catalog::RenderedObject;
    use kfctl::cluster::progress::RecordingProgress;
    use serde_json::json;
    let cluster = Cluster::start(TestApiConfig::default());
    // applied first (a Namespace), named last
    let objects = vec![
        RenderedObject::new("zeta", json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "zz"}})),
        RenderedObject::new(
            "alpha",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "zz"}}),
        ),
    ];
    kfctl::cluster::install(objects, cluster.options_for("minimal", "v1"), &mut RecordingProgress::default())
        .await
        .unwrap();
    let report = kfctl::cluster::status::status(&cluster.target(), 4).await.unwrap();
    let names: Vec<&str> = report.components.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["alpha", "zeta"]);
}
