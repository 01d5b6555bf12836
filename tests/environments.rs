//! Issue 28 item 3: the environments people install on, as values files (`values/`) and, where
//! values cannot say it, a profile (GUIDE.md "Environments"). Each renders, real Helm of the
//! export agrees with kfctl-rs on it, and it changes only what its guide says: the test diffs
//! each against the default render, object by object.

use crate::common;

use kfctl::catalog::render;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// `Kind namespace/name` of each object, with the object.
fn by_identity(objects: Vec<Value>) -> BTreeMap<String, Value> {
    let s = |o: &Value, p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    objects
        .into_iter()
        .map(|o| (format!("{} {}/{}", s(&o, "/kind"), s(&o, "/metadata/namespace"), s(&o, "/metadata/name")), o))
        .collect()
}

fn render_with(profile: &str, file: Option<&PathBuf>) -> (Vec<(String, Value)>, Vec<Value>) {
    let mut request = common::render_request_set(profile, &[]);
    request.value_files = file.into_iter().cloned().collect();
    let rendered = render(&request).unwrap_or_else(|e| panic!("{profile} {file:?}: {e}"));
    let tagged = rendered.objects.iter().map(|o| (o.component.clone(), o.obj.clone())).collect();
    (tagged, rendered.objects.into_iter().map(|o| o.obj).collect())
}

/// What changed against the default render: (removed, added, changed) identities.
fn changes(default: &[Value], with: &[Value]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (before, after) = (by_identity(default.to_vec()), by_identity(with.to_vec()));
    let removed = before.keys().filter(|k| !after.contains_key(*k)).cloned().collect();
    let added = after.keys().filter(|k| !before.contains_key(*k)).cloned().collect();
    let changed =
        after.iter().filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v)).map(|(k, _)| k.clone()).collect();
    (removed, added, changed)
}

fn values(name: &str) -> PathBuf {
    common::repo_root().join("values").join(name)
}

fn helm_with_file(file: &PathBuf) -> std::process::Output {
    Command::new(common::tool("helm-template"))
        .arg(common::exported_multi_tenant())
        .arg("-f")
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .expect("helm-template runs")
}

/// A provided Istio and cert-manager (and OpenShift, which names the same two): exactly their
/// components' objects go, nothing else changes, and real Helm agrees.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn existing_istio_and_cert_manager_leave_out_exactly_their_objects() {
    let (tagged, default) = render_with("multi-tenant", None);
    let theirs = ["cert-manager", "istio", "istio-crds", "istio-namespace"];
    // Kubeflow's own ClusterIssuer, in cert-manager's folder, stays: it is Kubeflow's
    let kubeflows = |o: &Value| o["kind"] == "ClusterIssuer" && o["metadata"]["name"] == "kubeflow-self-signing-issuer";
    let mut expected: Vec<String> = by_identity(
        tagged.into_iter().filter(|(c, o)| theirs.contains(&c.as_str()) && !kubeflows(o)).map(|(_, o)| o).collect(),
    )
    .into_keys()
    .collect();
    expected.sort();
    for name in ["existing-istio-cert-manager.yaml", "openshift.yaml"] {
        let file = values(name);
        let (_, with) = render_with("multi-tenant", Some(&file));
        let (removed, added, changed) = changes(&default, &with);
        assert_eq!(removed, expected, "{name}: what goes");
        assert!(added.is_empty() && changed.is_empty(), "{name}: added {added:?}, changed {changed:?}");
        common::assert_helm_equals_native(&with, &helm_with_file(&file), name);
    }
}

/// A cloud load balancer with TLS from an issuer: the ingress Service's type, the Kubeflow
/// Gateway (host, HTTPS, redirect) and one new Certificate; nothing else.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn a_cloud_load_balancer_with_tls_changes_the_gateway_its_service_and_adds_a_certificate() {
    let (_, default) = render_with("multi-tenant", None);
    let file = values("cloud-load-balancer-tls.yaml");
    let (_, with) = render_with("multi-tenant", Some(&file));
    let (removed, added, changed) = changes(&default, &with);
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(added, ["Certificate istio-system/kubeflow-gateway-tls"]);
    assert_eq!(changed, ["Gateway kubeflow/kubeflow-gateway", "Service istio-system/istio-ingressgateway"]);
    let service = by_identity(with.clone()).remove("Service istio-system/istio-ingressgateway").unwrap();
    assert_eq!(service["spec"]["type"], "LoadBalancer");
    common::assert_helm_equals_native(&with, &helm_with_file(&file), "cloud-load-balancer-tls.yaml");
}

/// GKE needs upstream's `gke` Istio overlay (a variant, so a profile, as GUIDE.md shows): only
/// the Istio CNI DaemonSet changes, to GKE's writable CNI folder.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn the_gke_profile_of_the_guide_changes_only_istios_cni_folder() {
    let guide = std::fs::read_to_string(common::repo_root().join("GUIDE.md")).unwrap();
    let profile = guide
        .split("```yaml\n# gke.yaml")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("GUIDE.md shows the gke profile");
    let path = common::scratch("environments", "gke").join("gke.yaml");
    std::fs::write(&path, format!("# gke.yaml{profile}")).unwrap();
    let (_, default) = render_with("multi-tenant", None);
    let (_, with) = render_with(path.to_str().unwrap(), None);
    let (removed, added, changed) = changes(&default, &with);
    assert!(removed.is_empty() && added.is_empty(), "{removed:?} {added:?}");
    assert_eq!(changed, ["DaemonSet kube-system/istio-cni-node"]);
    let text = kfctl_yaml::to_yaml(&by_identity(with).remove("DaemonSet kube-system/istio-cni-node").unwrap());
    assert!(text.contains("/home/kubernetes/bin"), "{text}");
}
