//! `global.gateway`, Helm side: the points of [`crate::catalog::gateway`] and the template of
//! the object it adds.
//!
//! The Kubeflow Gateway's `spec.servers` is one point (`kfctl.gatewayServers` rebuilds the
//! list as `gateway::servers` does), the ingress Service's `spec.type` another. The
//! Certificate `tls.issuer` adds has no upstream object to become a template, so
//! [`added_templates`] writes one from the native side's own object
//! ([`gateway::certificate`]), in the chart of the component holding the Gateway: it is marked
//! like any object (its host and issuer are points, `global.commonLabels` and the rest reach
//! it as they reach every object) and wrapped in `kfctl.gatewayIssuer`, so it renders only
//! when an issuer is set, as the native render adds it only then.

use super::object;
use super::params::{Marks, PointError, Scope, Step};
use crate::catalog::gateway;
use crate::catalog::render::RenderedObject;
use serde_json::Value;

/// `gateway::apply` (and the added Certificate): the points of the row.
pub(crate) fn mark_gateway(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    if gateway::is_gateway(obj)
        && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
    {
        marks.mark(spec, "servers", Step::GatewayServers);
    }
    if gateway::is_ingress_service(obj)
        && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
    {
        marks.mark(spec, "type", Step::GatewayServiceType);
    }
    if gateway::CERTIFICATE.matches(obj) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            marks.mark(spec, "dnsNames", Step::GatewayCertificate { field: "dnsNames" });
        }
        if let Some(issuer) = obj.pointer_mut("/spec/issuerRef").and_then(Value::as_object_mut) {
            marks.mark(issuer, "name", Step::GatewayCertificate { field: "issuer" });
        }
    }
}

/// The templates of the objects values add to the chart of a component with `objects`:
/// (file name under `templates/`, text).
pub(crate) fn added_templates(
    objects: &[&RenderedObject],
    scope: &Scope,
    app_version: &str,
) -> Result<Vec<(String, String)>, PointError> {
    if !objects.iter().any(|o| gateway::is_gateway(&o.obj)) {
        return Ok(Vec::new());
    }
    let cert = gateway::certificate("kubeflow.example.com", "issuer");
    let header = format!(
        "{}: added by global.gateway.tls.issuer (kubeflow/manifests {app_version}, component {}); written by kfctl-rs, do not edit",
        kfctl_yaml::compare::object_label(&cert),
        scope.component
    );
    let text = object::template(&cert, scope, &header, false)?;
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let wrapped = format!("{first}\n{{{{- if include \"kfctl.gatewayIssuer\" (list $) }}}}\n{rest}{{{{- end }}}}\n");
    Ok(vec![(format!("kfctl-added-certificate-{}.yaml", gateway::CERTIFICATE_NAME), wrapped)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_certificate_template_renders_only_with_an_issuer_and_has_its_points() {
        let gw = RenderedObject::new(
            "kubeflow-istio-resources",
            json!({"apiVersion": "networking.istio.io/v1alpha3", "kind": "Gateway", "metadata": {"name": "kubeflow-gateway", "namespace": "kubeflow"}, "spec": {"servers": []}}),
        );
        let defaults = json!({});
        let scope = Scope { component: "kubeflow-istio-resources", defaults: &defaults };
        let files = added_templates(&[&gw], &scope, "v1.11.0").unwrap();
        assert_eq!(files.len(), 1);
        let text = &files[0].1;
        assert!(text.lines().nth(1) == Some("{{- if include \"kfctl.gatewayIssuer\" (list $) }}"), "{text}");
        assert!(text.contains("include \"kfctl.gatewayCertificate\" (list $ \"dnsNames\""), "{text}");
        assert!(text.contains("include \"kfctl.gatewayCertificate\" (list $ \"issuer\""), "{text}");
        assert!(text.ends_with("{{- end }}\n{{- end }}\n"), "{text}");
        assert!(added_templates(&[], &scope, "v1.11.0").unwrap().is_empty());
    }
}
