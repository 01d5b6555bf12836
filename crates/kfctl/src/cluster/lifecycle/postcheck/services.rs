//! The post-install items that follow traffic: webhooks (a caBundle, a Service with ready
//! endpoints), the Kubeflow Gateway and its ingress, the login path (Dex, oauth2-proxy), and
//! sidecar injection on the namespaces the Profiles controller makes.

use super::{Live, item, listed};
use crate::cluster::api::ApiClient;
use crate::cluster::check::{Checked, Mark};
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::endpoint_ready;
use crate::cluster::preflight;
use serde_json::Value;

/// The label the Profiles controller puts on the namespaces it makes.
pub(crate) const PROFILE_NAMESPACE_LABEL: &str = "app.kubernetes.io/part-of=kubeflow-profile";

/// The label by which Istio injects its sidecar into a namespace's pods.
const INJECTION_LABEL: (&str, &str) = ("istio-injection", "enabled");

/// The Kubeflow Gateway, and the Service of the ingress gateway it selects.
const GATEWAY: (&str, &str) = ("kubeflow", "kubeflow-gateway");
const INGRESS: (&str, &str) = ("istio-system", "istio-ingressgateway");

/// The login path's Services, checked when recorded.
const LOGIN: &[(&str, &str)] = &[("auth", "dex"), ("oauth2-proxy", "oauth2-proxy")];

fn is_webhook_configuration(l: &Live<'_>) -> bool {
    let r = &l.entry.reference;
    r.group() == "admissionregistration.k8s.io"
        && matches!(r.kind.as_str(), "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration")
}

/// Every webhook of every recorded webhook configuration: a caBundle, and its Service (when
/// it calls one) with a ready endpoint.
pub(super) async fn webhooks(api: &ApiClient, resolver: &Resolver, lives: &[Live<'_>]) -> Checked {
    let mut seen = 0;
    let mut wrong = Vec::new();
    let mut services: Vec<(String, String)> = Vec::new();
    for l in lives.iter().filter(|l| is_webhook_configuration(l)) {
        let Some(live) = &l.object else { continue };
        let hooks = live.get("webhooks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        for hook in hooks {
            seen += 1;
            let name = format!("{}/{}", l.entry.reference.name, hook.get("name").and_then(Value::as_str).unwrap_or(""));
            let bundle = hook.pointer("/clientConfig/caBundle").and_then(Value::as_str).unwrap_or("");
            if bundle.is_empty() {
                wrong.push(format!("{name} (no caBundle)"));
            }
            let service = hook.pointer("/clientConfig/service");
            let at = |key: &str| service.and_then(|s| s.get(key)).and_then(Value::as_str).map(str::to_string);
            let Some(service) = at("namespace").zip(at("name")) else { continue };
            if services.contains(&service) {
                continue;
            }
            let (ns, svc) = &service;
            if let Some(why) = endpoint_ready(api, resolver, ns, svc).await {
                wrong.push(format!("{name} (service {ns}/{svc}: {why})"));
            }
            services.push(service);
        }
    }
    match (seen, wrong.len()) {
        (0, _) => item("webhooks", Mark::Pass, "none recorded", None),
        (_, 0) => item("webhooks", Mark::Pass, format!("{seen} webhooks, {} services ready", services.len()), None),
        (_, n) => item(
            "webhooks",
            Mark::Fail,
            format!("{n} problem(s): {}", listed(&wrong)),
            Some(
                "a webhook without a caBundle or a ready Service refuses the writes it covers: check cert-manager's \
                 cainjector and the Service's pods (`kubectl get endpointslices -n NAMESPACE`)",
            ),
        ),
    }
}

fn recorded<'a, 'b>(lives: &'b [Live<'a>], kind: &str, (ns, name): (&str, &str)) -> Option<&'b Live<'a>> {
    lives.iter().find(|l| {
        let r = &l.entry.reference;
        r.kind == kind && r.name == name && r.namespace.as_deref() == Some(ns)
    })
}

/// The Gateway `kubeflow/kubeflow-gateway` present and its ingress Service with a ready endpoint.
pub(super) async fn gateway(api: &ApiClient, resolver: &Resolver, lives: &[Live<'_>]) -> Checked {
    let Some(gateway) = recorded(lives, "Gateway", GATEWAY) else {
        return item("gateway", Mark::Pass, "no Kubeflow Gateway in the record: nothing to check", None);
    };
    if gateway.object.is_none() {
        let hint = "run install again, which re-creates it";
        return item("gateway", Mark::Fail, format!("{} missing", gateway.entry.reference), Some(hint));
    }
    match endpoint_ready(api, resolver, INGRESS.0, INGRESS.1).await {
        None => item(
            "gateway",
            Mark::Pass,
            format!("{}/{} and service {}/{} ready", GATEWAY.0, GATEWAY.1, INGRESS.0, INGRESS.1),
            None,
        ),
        Some(why) => item(
            "gateway",
            Mark::Fail,
            format!("service {}/{}: {why}", INGRESS.0, INGRESS.1),
            Some(
                "the ingress gateway's pods (label istio=ingressgateway) are not ready: `kubectl get pods -n istio-system`",
            ),
        ),
    }
}

/// The login path's recorded Services with a ready endpoint.
pub(super) async fn login(api: &ApiClient, resolver: &Resolver, lives: &[Live<'_>]) -> Checked {
    let mut checked = Vec::new();
    let mut wrong = Vec::new();
    for &(ns, name) in LOGIN {
        if recorded(lives, "Service", (ns, name)).is_none() {
            continue;
        }
        checked.push(format!("{ns}/{name}"));
        if let Some(why) = endpoint_ready(api, resolver, ns, name).await {
            wrong.push(format!("service {ns}/{name}: {why}"));
        }
    }
    match (checked.len(), wrong.len()) {
        (0, _) => item("login", Mark::Pass, "no Dex or oauth2-proxy in the record: nothing to check", None),
        (_, 0) => item("login", Mark::Pass, format!("{} ready", checked.join(", ")), None),
        (_, _) => item(
            "login",
            Mark::Fail,
            wrong.join("; "),
            Some("nobody can log in until they serve: `kubectl get pods -n auth -n oauth2-proxy`, and their logs"),
        ),
    }
}

/// Every namespace the Profiles controller made carries `istio-injection=enabled`.
pub(super) async fn injection(api: &ApiClient) -> Checked {
    let namespaces = preflight::path("", "v1", "namespaces", false);
    let list = match api.list(&namespaces, None, Some(PROFILE_NAMESPACE_LABEL)).await {
        Ok(list) => list,
        Err(f) => return item("injection", Mark::Warn, format!("cannot list namespaces: {f}"), None),
    };
    let items = list.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let lacking: Vec<String> = items
        .iter()
        .filter(|ns| {
            ns.pointer("/metadata/labels").and_then(|l| l.get(INJECTION_LABEL.0)).and_then(Value::as_str)
                != Some(INJECTION_LABEL.1)
        })
        .filter_map(|ns| ns.pointer("/metadata/name").and_then(Value::as_str).map(str::to_string))
        .collect();
    match (items.len(), lacking.len()) {
        (0, _) => item("injection", Mark::Pass, "no Profile namespace yet", None),
        (n, 0) => {
            item("injection", Mark::Pass, format!("{n} Profile namespace(s) labelled istio-injection=enabled"), None)
        }
        (n, m) => item(
            "injection",
            Mark::Fail,
            format!("{m} of {n} Profile namespace(s) without istio-injection=enabled: {}", listed(&lacking)),
            Some(
                "their notebooks get no sidecar and the gateway cannot reach them: check the Profiles controller's \
                 logs, or `kubectl label namespace NAME istio-injection=enabled` and restart the pods",
            ),
        ),
    }
}
