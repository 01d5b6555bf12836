//! Issue 14 item 3, `global.gateway`: each setting changes exactly the objects it should (the
//! valued render against the default one, object by object), real Helm of the exported chart
//! with the same `--set` equals the render, real kustomize of `template --as-kustomization`
//! prints it byte for byte, and bad input is a usage error naming the value in kfctl-rs and a
//! refusal in Helm (the schema, or `fail` in `kfctl.gateway`).

use crate::common;
use crate::day1_support as support;

use serde_json::{Value, json};
use support::{assert_helm_equals, assert_kustomize_equals, assert_refused, default_render, delta, render, s};

fn is_kubeflow_gateway(obj: &Value) -> bool {
    s(obj, "/kind") == "Gateway"
        && s(obj, "/metadata/namespace") == "kubeflow"
        && s(obj, "/metadata/name") == "kubeflow-gateway"
}

fn upstream_http_server() -> Value {
    json!({"hosts": ["*"], "port": {"name": "http", "number": 80, "protocol": "HTTP"}})
}

/// The acceptance case: `host` + `tls.secretName` — the Kubeflow Gateway serves the host,
/// HTTPS from that Secret, and HTTP redirects to HTTPS (the default `httpsRedirect`); nothing
/// else changes.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn host_and_tls_secret_serve_the_host_with_tls_from_that_secret() {
    let sets = ["global.gateway.host=kubeflow.example.com", "global.gateway.tls.secretName=kubeflow-tls"];
    let after = render(&sets);
    let d = delta(default_render(), &after);
    assert!(d.added.is_empty() && d.removed.is_empty(), "{d:?}");
    assert_eq!(
        d.changed.len(),
        1,
        "only the Kubeflow Gateway: {:?}",
        d.changed.iter().map(|(o, _)| kfctl_yaml::compare::object_label(o)).collect::<Vec<_>>()
    );
    let (old, new) = &d.changed[0];
    assert!(is_kubeflow_gateway(new));
    assert_eq!(old.pointer("/spec/servers").unwrap(), &json!([upstream_http_server()]), "upstream's Gateway");
    let mut expected = old.clone();
    expected["spec"]["servers"] = json!([
        {"hosts": ["kubeflow.example.com"], "port": {"name": "http", "number": 80, "protocol": "HTTP"}, "tls": {"httpsRedirect": true}},
        {"hosts": ["kubeflow.example.com"], "port": {"name": "https", "number": 443, "protocol": "HTTPS"},
         "tls": {"credentialName": "kubeflow-tls", "mode": "SIMPLE"}},
    ]);
    assert_eq!(new, &expected);
    // `values/gateway-tls.yaml` is this case as a values file.
    let mut request = common::render_request(support::PROFILE, Vec::new());
    request.value_files = vec![common::repo_root().join("values/gateway-tls.yaml")];
    let from_file: Vec<Value> = kfctl::catalog::render(&request).unwrap().objects.into_iter().map(|o| o.obj).collect();
    assert!(from_file == after, "values/gateway-tls.yaml renders as the --set flags do");
    assert_helm_equals(&after, &sets);
    let files = assert_kustomize_equals("gateway-secret", &support::GATEWAY, &sets);
    assert_eq!(files, ["kustomization.yaml"], "a patch, no added object");
}

/// `tls.issuer`: the same HTTPS server reading `kubeflow-gateway-tls`, and a cert-manager
/// Certificate of that name for the host in istio-system — the one object added.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn an_issuer_adds_a_certificate_for_the_host_and_the_gateway_reads_its_secret() {
    let sets = ["global.gateway.host=kubeflow.example.com", "global.gateway.tls.issuer=letsencrypt-prod"];
    let after = render(&sets);
    let d = delta(default_render(), &after);
    assert!(d.removed.is_empty(), "{d:?}");
    assert_eq!(d.changed.len(), 1);
    assert_eq!(d.changed[0].1.pointer("/spec/servers/1/tls/credentialName").unwrap(), "kubeflow-gateway-tls");
    assert_eq!(
        d.added,
        [json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": {"name": "kubeflow-gateway-tls", "namespace": "istio-system"},
                "spec": {"dnsNames": ["kubeflow.example.com"],
                         "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "letsencrypt-prod"},
                         "secretName": "kubeflow-gateway-tls"}})]
    );
    assert_helm_equals(&after, &sets);
    let files = assert_kustomize_equals("gateway-issuer", &support::GATEWAY, &sets);
    assert_eq!(files, ["added-by-values.yaml", "kustomization.yaml"]);
    // Values that reach every object reach the added one too, natively and in Helm alike.
    let labelled = [&sets[..], &["global.commonLabels.team=ml"]].concat();
    let after = render(&labelled);
    let cert =
        after.iter().find(|o| s(o, "/kind") == "Certificate" && s(o, "/metadata/namespace") == "istio-system").unwrap();
    assert_eq!(cert.pointer("/metadata/labels/team").unwrap(), "ml");
    assert_helm_equals(&after, &labelled);
    // Without the Gateway's component there is nothing to add it beside.
    let without = render(&[&sets[..], &["kubeflow-istio-resources.enabled=false"]].concat());
    assert!(!without.iter().any(|o| s(o, "/metadata/name") == "kubeflow-gateway-tls"));
}

/// `serviceType` changes the ingress gateway Service's type and nothing else; TLS without a
/// host keeps `*`, and `httpsRedirect=false` leaves the HTTP server serving.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn service_type_and_tls_without_redirect() {
    let sets = ["global.gateway.serviceType=LoadBalancer"];
    let after = render(&sets);
    let d = delta(default_render(), &after);
    assert!(d.added.is_empty() && d.removed.is_empty() && d.changed.len() == 1, "{d:?}");
    let (old, new) = &d.changed[0];
    assert_eq!(
        (s(new, "/kind"), s(new, "/metadata/namespace"), s(new, "/metadata/name")),
        ("Service", "istio-system", "istio-ingressgateway")
    );
    let mut expected = old.clone();
    expected["spec"]["type"] = json!("LoadBalancer");
    assert_eq!(new, &expected, "upstream's ClusterIP becomes LoadBalancer, nothing else");
    assert_helm_equals(&after, &sets);
    assert_kustomize_equals("gateway-service-type", &support::GATEWAY, &sets);

    let sets = [
        "global.gateway.tls.secretName=kubeflow-tls",
        "global.gateway.httpsRedirect=false",
        "global.gateway.serviceType=NodePort",
    ];
    let after = render(&sets);
    let d = delta(default_render(), &after);
    assert_eq!(d.changed.len(), 2, "the Gateway and the Service");
    let gateway = after.iter().find(|o| is_kubeflow_gateway(o)).unwrap();
    assert_eq!(gateway.pointer("/spec/servers/0").unwrap(), &upstream_http_server(), "HTTP still served, any host");
    assert_eq!(gateway.pointer("/spec/servers/1/hosts").unwrap(), &json!(["*"]));
    assert_helm_equals(&after, &sets);
    assert_kustomize_equals("gateway-no-redirect", &support::GATEWAY, &sets);
}

/// Empty settings are upstream's objects, byte for byte (the parity suites prove the defaults).
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn empty_gateway_values_keep_upstreams_objects() {
    let sets = [
        "global.gateway.host=",
        "global.gateway.tls.secretName=",
        "global.gateway.tls.issuer=",
        "global.gateway.serviceType=",
        "global.gateway.httpsRedirect=false",
    ];
    assert_eq!(&render(&sets), default_render());
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn bad_gateway_settings_are_refused_naming_the_value_in_kfctl_rs_and_helm() {
    let both =
        ["global.gateway.host=kf.example.com", "global.gateway.tls.secretName=kf-tls", "global.gateway.tls.issuer=le"];
    assert_refused(
        &both,
        "global.gateway.tls: secretName `kf-tls` and issuer `le` are both set",
        "global.gateway.tls: secretName `kf-tls` and issuer `le` are both set",
    );
    let no_host = ["global.gateway.tls.issuer=le"];
    assert_refused(
        &no_host,
        "global.gateway.tls.issuer: `le` needs a host",
        "global.gateway.tls.issuer: `le` needs a host",
    );
    for host in ["*", "a.*.example.com", "Kubeflow.Example.com", "https://kf.example.com", "kf.example.com:443"] {
        let set = format!("global.gateway.host={host}");
        assert_refused(&[&set], "`global.gateway.host` must be empty or a DNS name", "/global/gateway/host");
    }
    assert_refused(
        &["global.gateway.serviceType=External"],
        "`global.gateway.serviceType` must be one of",
        "/global/gateway/serviceType",
    );
    assert_refused(
        &["global.gateway.tls.secretName=Bad_Secret"],
        "`global.gateway.tls.secretName`",
        "/global/gateway/tls/secretName",
    );
}
