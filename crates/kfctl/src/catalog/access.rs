//! How a person reaches the platform and logs in, read from the render itself.
//!
//! An install that ends with "installed: 653 objects" leaves the person where they started:
//! where is the UI, and who am I there? [`describe`] answers from the objects that were
//! applied, so it holds for any values: the Kubeflow Gateway's host and TLS
//! (`global.gateway`), the ingress Service's type, Dex's static logins and connectors, or an
//! external OIDC issuer (no Dex rendered). The install's summary prints it, and so do the
//! exported charts' `NOTES.txt` (in Helm's words for the same facts). The objects it reads are
//! named once, in `super::gateway` and `super::identity`; the demo login in
//! [`super::credentials`].

use super::credentials::DEFAULT_LOGIN;
use super::gateway::{GATEWAY, INGRESS_NAMESPACE, INGRESS_SERVICE};
use super::identity::is_dex_config;
use super::object_id::text;
use serde::Serialize;
use serde_json::Value;

/// The local port the port-forward hint uses.
pub(crate) const LOCAL_PORT: u16 = 8080;

/// How to reach the UI and log in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Access {
    /// The steps to open the central dashboard, in order.
    pub reach: Vec<String>,
    /// Who to log in as.
    pub login: String,
}

/// How to reach what `objects` install, or `None` when they hold no Kubeflow Gateway (a
/// profile without the web entry point). `default_login`: upstream's demo login is still in
/// the objects.
pub fn describe(objects: &[&Value], default_login: bool) -> Option<Access> {
    let gateway = objects.iter().find(|o| GATEWAY.matches(o))?;
    let service_type =
        objects.iter().find(|o| INGRESS_SERVICE.matches(o)).map_or("ClusterIP", |s| text(s, "/spec/type")).to_string();
    Some(Access { reach: reach(gateway, &service_type), login: login(objects, default_login) })
}

/// The first host the Gateway serves other than `*`, and whether any server is HTTPS.
fn host_and_tls(gateway: &Value) -> (Option<String>, bool) {
    let servers = gateway.pointer("/spec/servers").and_then(Value::as_array).cloned().unwrap_or_default();
    let tls = servers.iter().any(|s| text(s, "/port/protocol").eq_ignore_ascii_case("https"));
    let host = servers
        .iter()
        .flat_map(|s| s.get("hosts").and_then(Value::as_array).cloned().unwrap_or_default())
        .filter_map(|h| h.as_str().map(str::to_string))
        .find(|h| h != "*");
    (host, tls)
}

fn reach(gateway: &Value, service_type: &str) -> Vec<String> {
    let service = format!("{INGRESS_NAMESPACE}/{}", INGRESS_SERVICE.name);
    let scheme = |tls: bool| if tls { "https" } else { "http" };
    match (host_and_tls(gateway), service_type) {
        ((Some(host), tls), _) => vec![
            format!("point {host}'s DNS at the address of the Service {service} (type {service_type})"),
            format!("open {}://{host}/", scheme(tls)),
        ],
        ((None, tls), "LoadBalancer") => vec![
            format!(
                "find the address: kubectl -n {INGRESS_NAMESPACE} get service {} (EXTERNAL-IP)",
                INGRESS_SERVICE.name
            ),
            format!("open {}://<EXTERNAL-IP>/", scheme(tls)),
        ],
        ((None, _), _) => vec![
            format!("kubectl port-forward -n {INGRESS_NAMESPACE} svc/{} {LOCAL_PORT}:80", INGRESS_SERVICE.name),
            format!("open http://localhost:{LOCAL_PORT}/"),
        ],
    }
}

/// The facts the charts' `NOTES.txt` says the same steps with (in Helm's words, from values).
pub(crate) fn facts() -> Value {
    serde_json::json!({
        "namespace": INGRESS_NAMESPACE,
        "service": INGRESS_SERVICE.name,
        "local_port": LOCAL_PORT,
        "default_login": DEFAULT_LOGIN,
    })
}

/// The emails of Dex's static logins (`staticPasswords`) and its connectors' names.
fn dex_logins(config: &str) -> (Vec<String>, Vec<String>) {
    let doc = match kfctl_yaml::parse_stream(config, "Dex's config.yaml") {
        Ok(docs) => docs.into_iter().next().unwrap_or(Value::Null),
        Err(_) => return (Vec::new(), Vec::new()),
    };
    let list = |key: &str, field: &str| -> Vec<String> {
        let items = doc.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
        items.iter().filter_map(|i| i.get(field).and_then(Value::as_str).map(str::to_string)).collect()
    };
    (list("staticPasswords", "email"), list("connectors", "name"))
}

fn login(objects: &[&Value], default_login: bool) -> String {
    let Some(dex) = objects.iter().find(|o| is_dex_config(o)) else {
        return "log in at your OIDC provider (oauth2-proxy.oidc.issuerURL)".into();
    };
    let (emails, connectors) = dex_logins(text(dex, "/data/config.yaml"));
    let through = if connectors.is_empty() { String::new() } else { format!(", or through {}", connectors.join(", ")) };
    if default_login {
        return format!(
            "log in as {DEFAULT_LOGIN}{through} (upstream's demo login: replace it before anyone else can reach the cluster, see `kfctl-rs secrets generate`)"
        );
    }
    match emails.as_slice() {
        [] if connectors.is_empty() => "log in with the account your Dex configuration defines".into(),
        [] => format!("log in through {}", connectors.join(", ")),
        _ => format!("log in as {} with the password you set{through}", emails.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gateway(servers: Value) -> Value {
        json!({"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
               "metadata": {"name": "kubeflow-gateway", "namespace": "kubeflow"}, "spec": {"servers": servers}})
    }

    fn service(kind: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "istio-ingressgateway", "namespace": "istio-system"}, "spec": {"type": kind}})
    }

    fn dex(config: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dex", "namespace": "auth"},
               "data": {"config.yaml": config}})
    }

    const ANY_HOST: &str = r#"[{"hosts": ["*"], "port": {"name": "http", "number": 80, "protocol": "HTTP"}}]"#;

    #[test]
    fn upstreams_defaults_mean_a_port_forward_and_the_demo_login() {
        let objects = [
            gateway(serde_json::from_str(ANY_HOST).unwrap()),
            service("ClusterIP"),
            dex("staticPasswords:\n- email: user@example.com\n"),
        ];
        let access = describe(&objects.iter().collect::<Vec<_>>(), true).unwrap();
        assert_eq!(
            access.reach,
            ["kubectl port-forward -n istio-system svc/istio-ingressgateway 8080:80", "open http://localhost:8080/"]
        );
        assert!(
            access.login.starts_with("log in as user@example.com / 12341234 (upstream's demo login"),
            "{}",
            access.login
        );
    }

    #[test]
    fn a_host_with_tls_is_opened_by_https_and_own_logins_are_named_without_a_password() {
        let servers = json!([{"hosts": ["kubeflow.example.com"], "port": {"number": 443, "protocol": "HTTPS"}}]);
        let objects = [
            gateway(servers),
            service("LoadBalancer"),
            dex(
                "staticPasswords:\n- email: a@x.io\n- email: b@x.io\nconnectors:\n- {type: github, id: gh, name: GitHub}\n",
            ),
        ];
        let access = describe(&objects.iter().collect::<Vec<_>>(), false).unwrap();
        assert_eq!(access.reach[1], "open https://kubeflow.example.com/");
        assert!(access.reach[0].contains("istio-system/istio-ingressgateway (type LoadBalancer)"));
        assert_eq!(access.login, "log in as a@x.io, b@x.io with the password you set, or through GitHub");
    }

    #[test]
    fn a_load_balancer_without_host_names_its_address_and_no_dex_means_the_oidc_provider() {
        let objects = [gateway(serde_json::from_str(ANY_HOST).unwrap()), service("LoadBalancer")];
        let access = describe(&objects.iter().collect::<Vec<_>>(), false).unwrap();
        assert!(access.reach[0].contains("kubectl -n istio-system get service istio-ingressgateway"));
        assert_eq!(access.reach[1], "open http://<EXTERNAL-IP>/");
        assert!(access.login.contains("OIDC provider"));
        assert!(describe(&[&service("ClusterIP")], true).is_none());
    }
}
