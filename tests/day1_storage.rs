//! Issue 14 item 4, second half, `pipelines.database`: Kubeflow Pipelines on an external MySQL.
//! The value changes exactly the two objects every Pipelines server reads the database from
//! (`pipeline-install-config`, `mysql-secret`), real Helm of the exported chart with the same
//! `--set` equals the render, real kustomize of `template --as-kustomization` prints it byte
//! for byte, and half-given settings are refused naming the value, in kfctl-rs and Helm.

use crate::day1_support as support;

use serde_json::{Value, json};
use support::{assert_helm_equals, assert_kustomize_equals, assert_refused, default_render, delta, render, s};

/// The components the database values change (Pipelines' config and Secret), with what they need.
const DATABASE: [&str; 6] =
    ["pipelines", "cert-manager", "istio", "istio-crds", "istio-namespace", "kubeflow-namespace"];

const EXTERNAL: [&str; 4] = [
    "pipelines.database.host=mysql.db.example.com",
    "pipelines.database.port=3307",
    "pipelines.database.user=kfp",
    "pipelines.database.password=s3cret-Pa55",
];

/// Every env var of the platform's pods that takes the database host from a ConfigMap.
fn host_readers(objs: &[Value]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for obj in objs.iter().filter(|o| s(o, "/kind") == "Deployment") {
        let containers = obj.pointer("/spec/template/spec/containers").and_then(Value::as_array).into_iter().flatten();
        for env in containers.flat_map(|c| c.get("env").and_then(Value::as_array).into_iter().flatten()) {
            let key = env.pointer("/valueFrom/configMapKeyRef/key").and_then(Value::as_str);
            if matches!(key, Some("dbHost" | "mysqlHost")) {
                out.push((s(obj, "/metadata/name").to_string(), env["valueFrom"]["configMapKeyRef"].clone()));
            }
        }
    }
    out
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn an_external_database_changes_only_the_install_config_and_the_login() {
    let after = render(&EXTERNAL);
    let d = delta(default_render(), &after);
    assert!(d.added.is_empty() && d.removed.is_empty(), "{d:?}");
    let changed: Vec<String> = d.changed.iter().map(|(o, _)| kfctl_yaml::compare::object_label(o)).collect();
    assert_eq!(changed, ["ConfigMap kubeflow/pipeline-install-config", "Secret kubeflow/mysql-secret"]);
    for (old, new) in &d.changed {
        let mut expected = old.clone();
        match s(old, "/kind") {
            "ConfigMap" => {
                for (key, value) in [
                    ("dbHost", "mysql.db.example.com"),
                    ("mysqlHost", "mysql.db.example.com"),
                    ("dbPort", "3307"),
                    ("mysqlPort", "3307"),
                ] {
                    assert!(old["data"][key].is_string(), "upstream has {key}");
                    expected["data"][key] = json!(value);
                }
            }
            _ => {
                assert_eq!(old["stringData"], json!({"password": "", "username": "root"}), "upstream's login");
                expected["stringData"] = json!({"password": "s3cret-Pa55", "username": "kfp"});
            }
        }
        assert_eq!(new, &expected);
    }
    // The servers read the host from that ConfigMap (so the change reaches every one of them).
    let readers = host_readers(&after);
    let names: std::collections::BTreeSet<&str> = readers.iter().map(|(n, _)| n.as_str()).collect();
    assert!(["cache-server", "metadata-grpc-deployment", "ml-pipeline"].iter().all(|n| names.contains(n)), "{names:?}");
    assert!(readers.iter().all(|(_, r)| r["name"] == "pipeline-install-config"), "{readers:?}");
    assert_helm_equals(&after, &EXTERNAL);
    let files = assert_kustomize_equals("database", &DATABASE, &EXTERNAL);
    assert_eq!(files, ["kustomization.yaml"]);
}

/// Without a port upstream's 3306 stays; the in-cluster MySQL is kept (upstream's multi-user
/// overlays include it) and can be scaled to 0 with the existing replicas value.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn without_a_port_upstreams_stays_and_the_in_cluster_mysql_can_be_scaled_to_zero() {
    let sets = [EXTERNAL[0], EXTERNAL[2], EXTERNAL[3], "pipelines.replicas.mysql=0"];
    let after = render(&sets);
    let config = after.iter().find(|o| s(o, "/metadata/name") == "pipeline-install-config").unwrap();
    assert_eq!((s(config, "/data/dbPort"), s(config, "/data/mysqlPort")), ("3306", "3306"));
    let mysql = after.iter().find(|o| s(o, "/kind") == "Deployment" && s(o, "/metadata/name") == "mysql").unwrap();
    assert_eq!(mysql.pointer("/spec/replicas"), Some(&json!(0)));
    assert_helm_equals(&after, &sets);
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn half_given_or_malformed_database_settings_are_refused_in_kfctl_rs_and_helm() {
    let password_only = "pipelines.database: password set but host, user missing";
    assert_refused(&["pipelines.database.password=x"], password_only, password_only);
    let no_password = "pipelines.database: host, user set but password missing";
    assert_refused(&[EXTERNAL[0], EXTERNAL[2]], no_password, no_password);
    let port_only = "pipelines.database: port set but host, user, password missing";
    assert_refused(&["pipelines.database.port=3306"], port_only, port_only);
    for port in ["0", "70000"] {
        let set = format!("pipelines.database.port={port}");
        let expected = format!("pipelines.database.port: {port} is not a TCP port (1 to 65535)");
        assert_refused(&[EXTERNAL[0], EXTERNAL[2], EXTERNAL[3], &set], &expected, &expected);
    }
    for host in ["mysql.example.com:3306", "MySQL.example.com", "tcp://mysql"] {
        let set = format!("pipelines.database.host={host}");
        assert_refused(
            &[&set, EXTERNAL[2], EXTERNAL[3]],
            "`pipelines.database.host` must be empty or a host name",
            "/database/host",
        );
    }
}
