//! `global.gateway`: the hostname, TLS and Service type Kubeflow is reached at.
//!
//! Upstream serves the Kubeflow Gateway `kubeflow/kubeflow-gateway` on port 80 for any host
//! (`*`), behind the `istio-system/istio-ingressgateway` Service of type ClusterIP, and tells
//! its users to reach it by port-forward, or to set up HTTPS themselves before exposing it
//! (Kubeflow's web apps use secure cookies). The value sits under `global` because two
//! components act on it: `kubeflow-istio-resources` (the Gateway, the Certificate) and `istio`
//! (the Service). Empty (the default) keeps upstream's objects as they are. Set:
//!
//! - `host`: every server of `kubeflow-gateway` serves that host instead of `*`;
//! - `tls.secretName`: an HTTPS server (443, `mode: SIMPLE`) with `credentialName` = that
//!   Secret, which must exist in `istio-system`, the ingress gateway's namespace (Istio reads
//!   gateway credentials there);
//! - `tls.issuer`: the same server with `credentialName: kubeflow-gateway-tls`, and a
//!   cert-manager `Certificate` of that name in `istio-system` for `host`, issued by that
//!   ClusterIssuer ([`certificate`], added beside the Gateway in kustomize's order);
//! - `httpsRedirect` (default `true`, acting only when TLS is on): the HTTP server answers
//!   with a redirect to HTTPS (`tls.httpsRedirect`), Istio's documented way; `false` keeps it
//!   serving plain HTTP too;
//! - `serviceType`: `spec.type` of `istio-ingressgateway` (ClusterIP, NodePort, LoadBalancer).
//!
//! Both TLS settings at once, an issuer without a host, are refused ([`GatewayError`]); the
//! charts refuse them alike (`fail` in `kfctl.gateway`, `templates/chart/helpers/gateway.tpl`).

use super::object_id::{ObjectId, text};
use super::render::RenderedObject;
use super::schema::Format;
use kfctl_kustomize::{Gvk, KindRanks, SortOrder};
use serde_json::{Value, json};

/// The Kubeflow Gateway (`kubeflow-istio-resources`).
pub(crate) const GATEWAY: ObjectId =
    ObjectId::new("Gateway", "kubeflow-gateway").in_group("networking.istio.io").in_namespace("kubeflow");
/// The namespace of the ingress gateway, where TLS Secrets live.
pub(crate) const INGRESS_NAMESPACE: &str = "istio-system";
/// The ingress gateway's Service (`istio`).
pub(crate) const INGRESS_SERVICE: ObjectId =
    ObjectId::new("Service", "istio-ingressgateway").in_group("").in_namespace(INGRESS_NAMESPACE);
/// The Certificate `tls.issuer` renders, and the Secret cert-manager writes for it.
pub(crate) const CERTIFICATE_NAME: &str = "kubeflow-gateway-tls";
/// The Certificate itself.
pub(crate) const CERTIFICATE: ObjectId =
    ObjectId::new("Certificate", CERTIFICATE_NAME).in_group("cert-manager.io").in_namespace(INGRESS_NAMESPACE);

/// A hostname: a DNS-1123 subdomain, a `*.` wildcard allowed as the first label only.
pub(crate) const HOST_OR_EMPTY: Format = Format {
    pattern: r"^$|^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    max_len: 253,
    expected: "empty or a DNS name (lowercase, e.g. kubeflow.example.com; a wildcard only as the first label, *.example.com; empty serves any host, as upstream's `*`)",
};

/// The Service types `serviceType` takes (`""`: upstream's, ClusterIP).
pub(crate) const SERVICE_TYPES: [&str; 4] = ["", "ClusterIP", "NodePort", "LoadBalancer"];

/// Why `global.gateway` cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GatewayError {
    #[error(
        "global.gateway.tls: secretName `{secret}` and issuer `{issuer}` are both set; give one: secretName for an existing Secret in istio-system, or issuer for a cert-manager ClusterIssuer that issues it"
    )]
    BothTls { secret: String, issuer: String },
    #[error(
        "global.gateway.tls.issuer: `{issuer}` needs a host to issue a certificate for; set global.gateway.host (e.g. kubeflow.example.com)"
    )]
    IssuerWithoutHost { issuer: String },
}

/// Where the HTTPS server's certificate comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tls {
    Off,
    Secret(String),
    Issuer(String),
}

/// The checked `global.gateway` settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Gateway {
    pub host: Option<String>,
    pub tls: Tls,
    pub https_redirect: bool,
    pub service_type: Option<String>,
}

impl Gateway {
    /// The Secret the HTTPS server reads, when TLS is on.
    pub(crate) fn credential_name(&self) -> Option<&str> {
        match &self.tls {
            Tls::Off => None,
            Tls::Secret(name) => Some(name),
            Tls::Issuer(_) => Some(CERTIFICATE_NAME),
        }
    }
}

/// The gateway settings `values` gives (schema-checked first).
pub(crate) fn settings(values: &Value) -> Result<Gateway, GatewayError> {
    let text = |path: &[&str]| {
        super::values::get(values, &[&["global", "gateway"], path].concat())
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let host = text(&["host"]);
    let tls = match (text(&["tls", "secretName"]), text(&["tls", "issuer"])) {
        (Some(secret), Some(issuer)) => return Err(GatewayError::BothTls { secret, issuer }),
        (Some(secret), None) => Tls::Secret(secret),
        (None, Some(issuer)) if host.is_none() => return Err(GatewayError::IssuerWithoutHost { issuer }),
        (None, Some(issuer)) => Tls::Issuer(issuer),
        (None, None) => Tls::Off,
    };
    let redirect = super::values::get(values, &["global", "gateway", "httpsRedirect"]);
    let https_redirect = redirect.and_then(Value::as_bool) != Some(false);
    Ok(Gateway { host, tls, https_redirect, service_type: text(&["serviceType"]) })
}

/// Whether `obj` is the Kubeflow Gateway.
pub(crate) fn is_gateway(obj: &Value) -> bool {
    GATEWAY.matches(obj) && obj.pointer("/spec/servers").is_some_and(Value::is_array)
}

/// Whether `obj` is the ingress gateway's Service.
pub(crate) fn is_ingress_service(obj: &Value) -> bool {
    INGRESS_SERVICE.matches(obj) && obj.pointer("/spec").is_some_and(Value::is_object)
}

/// The Gateway's servers for `gw`, from upstream's (the Helm side, `kfctl.gatewayServers`,
/// computes the same list).
pub(crate) fn servers(upstream: &[Value], gw: &Gateway) -> Vec<Value> {
    let mut out = upstream.to_vec();
    let credential = gw.credential_name();
    for server in out.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(host) = &gw.host {
            server.insert("hosts".into(), json!([host]));
        }
        let http = server.get("port").and_then(|p| p.get("protocol")).and_then(Value::as_str) == Some("HTTP");
        if credential.is_some() && gw.https_redirect && http {
            server.insert("tls".into(), json!({"httpsRedirect": true}));
        }
    }
    if let Some(secret) = credential {
        out.push(json!({
            "hosts": [gw.host.as_deref().unwrap_or("*")],
            "port": {"name": "https", "number": 443, "protocol": "HTTPS"},
            "tls": {"credentialName": secret, "mode": "SIMPLE"},
        }));
    }
    out
}

/// The parameter row's native side: the Gateway's servers and the Service's type.
pub(crate) fn apply(obj: &mut Value, values: &Value) {
    let Ok(gw) = settings(values) else { return };
    if is_gateway(obj)
        && (gw.host.is_some() || gw.tls != Tls::Off)
        && let Some(Value::Array(list)) = obj.pointer_mut("/spec/servers")
    {
        *list = servers(list, &gw);
    }
    if is_ingress_service(obj)
        && let Some(kind) = &gw.service_type
        && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.insert("type".into(), json!(kind));
    }
}

/// The cert-manager Certificate `tls.issuer` renders (the chart export writes its template
/// from this object, with the host and the issuer as points).
pub(crate) fn certificate(host: &str, issuer: &str) -> Value {
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": CERTIFICATE_NAME, "namespace": INGRESS_NAMESPACE},
        "spec": {
            "dnsNames": [host],
            "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": issuer},
            "secretName": CERTIFICATE_NAME,
        },
    })
}

/// kustomize's legacy sort key of an object (`builtins::sort`): the kind's rank, the gvk
/// string, `namespace|name`.
fn legacy_key(ranks: &KindRanks, obj: &Value) -> (i64, String, String) {
    let s = |p: &str| text(obj, p);
    let gvk = Gvk::from_api_version(s("/apiVersion"), s("/kind"));
    let namespace = Some(s("/metadata/namespace")).filter(|n| !n.is_empty()).unwrap_or("~X");
    (ranks.rank(&gvk.kind), gvk.sort_string(), format!("{namespace}|{}", s("/metadata/name")))
}

/// The render's step after the table: with `tls.issuer`, the Certificate, in the Gateway's
/// component, where the profile's output `order` puts it (as one more `resources` entry of the
/// profile's kustomization would: sorted in, or last with `fifo`), with the table applied to
/// it like any object (`global.commonLabels`, …).
pub(crate) fn add_certificate(objects: &mut Vec<RenderedObject>, values: &Value, defaults: &Value, order: &SortOrder) {
    let Ok(Gateway { host: Some(host), tls: Tls::Issuer(issuer), .. }) = settings(values) else { return };
    let Some(component) = objects.iter().find(|o| is_gateway(&o.obj)).map(|o| o.component.clone()) else { return };
    let mut obj = certificate(&host, &issuer);
    if !super::params::keep(&obj, values, &component, &[]) {
        return;
    }
    super::params::apply_all(&mut obj, values, defaults, &component);
    let at = match order {
        SortOrder::Legacy(ranks) => {
            let key = legacy_key(ranks, &obj);
            objects.iter().position(|o| legacy_key(ranks, &o.obj) > key).unwrap_or(objects.len())
        }
        SortOrder::Fifo => objects.len(),
    };
    objects.insert(at, RenderedObject::new(component, obj));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream_gateway() -> Value {
        json!({"apiVersion": "networking.istio.io/v1alpha3", "kind": "Gateway",
               "metadata": {"name": "kubeflow-gateway", "namespace": "kubeflow"},
               "spec": {"selector": {"istio": "ingressgateway"},
                        "servers": [{"hosts": ["*"], "port": {"name": "http", "number": 80, "protocol": "HTTP"}}]}})
    }

    #[test]
    fn empty_values_keep_upstreams_gateway_and_service() {
        let mut gw = upstream_gateway();
        apply(&mut gw, &json!({"global": {"gateway": {"host": "", "tls": {"secretName": "", "issuer": ""}}}}));
        assert_eq!(gw, upstream_gateway());
    }

    #[test]
    fn a_host_with_a_secret_serves_https_and_redirects_http() {
        let mut gw = upstream_gateway();
        let values = json!({"global": {"gateway": {"host": "kf.example.com", "tls": {"secretName": "kf-tls"}}}});
        apply(&mut gw, &values);
        assert_eq!(
            gw.pointer("/spec/servers").unwrap(),
            &json!([
                {"hosts": ["kf.example.com"], "port": {"name": "http", "number": 80, "protocol": "HTTP"}, "tls": {"httpsRedirect": true}},
                {"hosts": ["kf.example.com"], "port": {"name": "https", "number": 443, "protocol": "HTTPS"}, "tls": {"credentialName": "kf-tls", "mode": "SIMPLE"}},
            ])
        );
        let mut plain = upstream_gateway();
        let values = json!({"global": {"gateway": {"tls": {"secretName": "kf-tls"}, "httpsRedirect": false}}});
        apply(&mut plain, &values);
        assert!(plain.pointer("/spec/servers/0/tls").is_none(), "no redirect");
        assert_eq!(plain.pointer("/spec/servers/1/hosts").unwrap(), &json!(["*"]));
    }

    #[test]
    fn the_service_type_changes_only_the_ingress_service() {
        let service = |name: &str| json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "istio-system"}, "spec": {"type": "ClusterIP"}});
        let values = json!({"global": {"gateway": {"serviceType": "LoadBalancer"}}});
        let (mut ingress, mut local) = (service("istio-ingressgateway"), service("cluster-local-gateway"));
        apply(&mut ingress, &values);
        apply(&mut local, &values);
        assert_eq!(ingress.pointer("/spec/type").unwrap(), "LoadBalancer");
        assert_eq!(local, service("cluster-local-gateway"));
    }

    #[test]
    fn bad_tls_settings_are_refused_naming_the_value() {
        let both = json!({"global": {"gateway": {"host": "a.b", "tls": {"secretName": "s", "issuer": "i"}}}});
        assert!(
            settings(&both).unwrap_err().to_string().starts_with("global.gateway.tls: secretName `s` and issuer `i`")
        );
        let no_host = json!({"global": {"gateway": {"tls": {"issuer": "letsencrypt"}}}});
        assert_eq!(settings(&no_host).unwrap_err(), GatewayError::IssuerWithoutHost { issuer: "letsencrypt".into() });
        for bad in ["*", "Kubeflow.Example.com", "a.*.b", "a b", "-a.b", "https://a.b"] {
            assert!(!HOST_OR_EMPTY.matches(bad), "{bad}");
        }
        for good in ["", "kubeflow.example.com", "*.example.com", "localhost"] {
            assert!(HOST_OR_EMPTY.matches(good), "{good}");
        }
    }

    #[test]
    fn the_certificate_goes_where_kustomize_sorts_it() {
        let obj = |api: &str, kind: &str, name: &str| {
            RenderedObject::new(
                "c",
                json!({"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "kubeflow"}}),
            )
        };
        let mut objects = vec![
            obj("v1", "Service", "s"),
            obj("cert-manager.io/v1", "Certificate", "a"),
            obj("networking.istio.io/v1alpha3", "Gateway", "kubeflow-gateway"),
        ];
        objects[2].obj["spec"] = json!({"servers": []});
        let values = json!({"global": {"gateway": {"host": "kf.example.com", "tls": {"issuer": "le"}}}});
        add_certificate(&mut objects, &values, &json!({}), &SortOrder::Legacy(KindRanks::defaults()));
        assert_eq!(objects.len(), 4);
        // One rank and gvk as Certificate `kubeflow/a`: by `namespace|name`, istio-system first.
        assert_eq!(objects[1].obj, certificate("kf.example.com", "le"));
    }
}
