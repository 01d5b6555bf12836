//! Admission webhooks, simulated (opt-in: [`super::TestApiConfig::simulate_webhooks`]).
//!
//! On a real cluster a write covered by a `Mutating`/`ValidatingWebhookConfiguration` fails
//! until the webhook can be called: its Service needs a ready endpoint, and its serving
//! certificate must be trusted through the configuration's `caBundle` (which cert-manager's
//! cainjector fills in). Installers must order their steps around that. With simulation on, the
//! test API server reproduces it: for every webhook whose rules match the write (API group,
//! version, resource or `resource/subresource`, operation, scope, `namespaceSelector`,
//! `objectSelector`) and whose `failurePolicy` is `Fail` (the default), the write is refused
//! with upstream's 500 "failed calling webhook ... connection refused" while the Service's
//! Endpoints have no ready address, and with the x509 "certificate signed by unknown authority"
//! while `caBundle` is empty. A webhook given by `url` is taken as reachable. Webhook
//! configurations themselves are never subject to webhooks, as upstream exempts them. Nothing is
//! mutated: a reachable webhook admits everything.

use serde_json::Value;

use super::discovery::ResourceType;
use super::errors::ApiError;
use super::state::State;
use super::store::ObjectKey;

const GROUP: &str = "admissionregistration.k8s.io";

/// A write, as webhook rules see it.
#[derive(Clone, Debug)]
pub(crate) struct Admission<'a> {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'a str,
    /// Subresource written (`status`).
    pub subresource: Option<&'a str>,
    /// Namespace of the object.
    pub namespace: Option<&'a str>,
    /// The object (incoming or live), for `objectSelector`.
    pub object: Option<&'a Value>,
}

fn listed(values: &Value, want: &str) -> bool {
    values.as_array().is_some_and(|vs| vs.iter().any(|v| v == "*" || v == want))
}

fn resource_listed(resources: &Value, resource: &str, subresource: Option<&str>) -> bool {
    let Some(resources) = resources.as_array() else { return false };
    resources.iter().filter_map(Value::as_str).any(|r| match (r.split_once('/'), subresource) {
        (None, None) => r == "*" || r == resource,
        (Some((res, sub)), Some(want)) => (res == "*" || res == resource) && (sub == "*" || sub == want),
        _ => false,
    })
}

fn rule_matches(rule: &Value, rt: &ResourceType, admission: &Admission) -> bool {
    let scope = rule["scope"].as_str().unwrap_or("*");
    let scope_ok = scope == "*" || (scope == "Namespaced") == rt.namespaced;
    listed(&rule["apiGroups"], &rt.group)
        && listed(&rule["apiVersions"], &rt.version)
        && listed(&rule["operations"], admission.operation)
        && resource_listed(&rule["resources"], &rt.resource, admission.subresource)
        && scope_ok
}

/// A `metav1.LabelSelector` (matchLabels and matchExpressions) against labels; empty matches all.
pub(crate) fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let exact = selector["matchLabels"].as_object().is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    let expressions = selector["matchExpressions"].as_array().is_none_or(|es| {
        es.iter().all(|e| {
            let key = e["key"].as_str().unwrap_or("");
            let values: Vec<&str> =
                e["values"].as_array().map(|v| v.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            match e["operator"].as_str().unwrap_or("") {
                "In" => label(key).is_some_and(|l| values.contains(&l)),
                "NotIn" => label(key).is_none_or(|l| !values.contains(&l)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            }
        })
    });
    exact && expressions
}

fn webhook_applies(state: &State, webhook: &Value, rt: &ResourceType, admission: &Admission) -> bool {
    if webhook["failurePolicy"].as_str() == Some("Ignore") {
        return false;
    }
    let rules = webhook["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !rules.iter().any(|r| rule_matches(r, rt, admission)) {
        return false;
    }
    let empty = Value::Null;
    let object_labels = admission.object.map(|o| &o["metadata"]["labels"]).unwrap_or(&empty);
    let namespace_labels = match admission.namespace {
        Some(ns) => {
            state.store.get(&ObjectKey::new("", "namespaces", None, ns)).map(|e| e.object["metadata"]["labels"].clone())
        }
        None if rt.kind == "Namespace" => Some(object_labels.clone()),
        None => None,
    };
    let namespace_ok = namespace_labels.is_none_or(|labels| selector_matches(&webhook["namespaceSelector"], &labels));
    namespace_ok && selector_matches(&webhook["objectSelector"], object_labels)
}

/// Why calling the webhook would fail, if it would.
fn call(state: &State, webhook: &Value) -> Result<(), ApiError> {
    let name = webhook["name"].as_str().unwrap_or("");
    let client = &webhook["clientConfig"];
    let service = &client["service"];
    let Some(svc) = service["name"].as_str() else { return Ok(()) };
    let ns = service["namespace"].as_str().unwrap_or("default");
    let url = format!(
        "https://{svc}.{ns}.svc:{}{}?timeout={}s",
        service["port"].as_i64().unwrap_or(443),
        service["path"].as_str().unwrap_or(""),
        webhook["timeoutSeconds"].as_i64().unwrap_or(10)
    );
    let endpoints = state.store.get(&ObjectKey::new("", "endpoints", Some(ns), svc));
    let ready = endpoints.is_some_and(|e| {
        e.object["subsets"]
            .as_array()
            .is_some_and(|ss| ss.iter().any(|s| s["addresses"].as_array().is_some_and(|a| !a.is_empty())))
    });
    if !ready {
        return Err(ApiError::webhook_refused(name, &url));
    }
    if client["caBundle"].as_str().is_none_or(str::is_empty) {
        return Err(ApiError::webhook_untrusted(name, &url));
    }
    Ok(())
}

/// Run the write past every matching webhook (mutating first, then validating).
pub(crate) fn admit(state: &State, rt: &ResourceType, admission: &Admission) -> Result<(), ApiError> {
    if !state.config.simulate_webhooks || rt.group == GROUP {
        return Ok(());
    }
    for resource in ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"] {
        for (_, entry) in state.store.list(GROUP, resource, None) {
            let webhooks = entry.object["webhooks"].as_array().map(Vec::as_slice).unwrap_or_default();
            for webhook in webhooks.iter().filter(|w| webhook_applies(state, w, rt, admission)) {
                call(state, webhook)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "webhooks_tests.rs"]
mod tests;
