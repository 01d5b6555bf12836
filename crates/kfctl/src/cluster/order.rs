//! The ordering tables: which wave an object belongs to.
//!
//! Upstream installs by re-applying everything every 20 seconds until CRD and webhook races
//! settle. kfctl-rs instead sorts objects into waves so each one is applied after what it needs
//! exists and works. Two tables decide:
//!
//! 1. [`COMPONENTS`]: the foundations other components depend on, in dependency order.
//!    cert-manager must be ready before any Certificate or Issuer exists (its webhook validates
//!    them and its controller issues the Secrets later workloads mount); Istio's control plane
//!    and sidecar injector must be ready before the workloads it injects and before its own
//!    resources; JobSet must be ready before Trainer's runtimes. Everything else is `platform`.
//!    An object belongs to the first component whose namespace, name prefix or API group
//!    matches; a webhook configuration belongs to the component of the Service it calls, and a
//!    custom resource to the component that serves its API group.
//! 2. [`KIND_CLASSES`]: what kind of step a kind is (namespace, CRD, configuration, workload,
//!    webhook). Kinds not listed are configuration when built in, custom resources otherwise.
//!
//! The waves then are: namespaces; CRDs; configuration (RBAC, ServiceAccounts, ConfigMaps,
//! Secrets...); then per component in order: its Services and workloads, its mutating webhooks,
//! its custom resources; and ValidatingWebhookConfigurations last.

use super::object::ObjectRef;
use serde::Serialize;

/// A step class: what applying an object of this kind means for ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Namespace,
    Crd,
    Config,
    Workload,
    MutatingWebhook,
    CustomResource,
    ValidatingWebhook,
}

/// A component the install orders by, matched on namespace, name prefix or API group.
#[derive(Debug)]
pub struct ComponentRule {
    pub name: &'static str,
    pub namespaces: &'static [&'static str],
    pub name_prefixes: &'static [&'static str],
    /// API groups the component serves; a group matches itself and its subdomains.
    pub api_groups: &'static [&'static str],
}

/// Foundations in dependency order; anything unmatched is [`PLATFORM`], installed after them.
pub const COMPONENTS: &[ComponentRule] = &[
    ComponentRule {
        name: "cert-manager",
        namespaces: &["cert-manager"],
        name_prefixes: &["cert-manager"],
        api_groups: &["cert-manager.io"],
    },
    ComponentRule {
        name: "istio",
        namespaces: &["istio-system"],
        name_prefixes: &["istio"],
        api_groups: &["istio.io"],
    },
    ComponentRule { name: "jobset", namespaces: &[], name_prefixes: &["jobset"], api_groups: &["jobset.x-k8s.io"] },
];

/// The component of everything no foundation rule matches.
pub const PLATFORM: &str = "platform";

/// Kinds by class; unlisted built-in kinds are [`Class::Config`], unlisted others custom resources.
pub const KIND_CLASSES: &[(&str, Class)] = &[
    ("Namespace", Class::Namespace),
    ("apiextensions.k8s.io/CustomResourceDefinition", Class::Crd),
    ("Service", Class::Workload),
    ("Pod", Class::Workload),
    ("ReplicationController", Class::Workload),
    ("apps/Deployment", Class::Workload),
    ("apps/StatefulSet", Class::Workload),
    ("apps/DaemonSet", Class::Workload),
    ("apps/ReplicaSet", Class::Workload),
    ("batch/Job", Class::Workload),
    ("batch/CronJob", Class::Workload),
    ("autoscaling/HorizontalPodAutoscaler", Class::Workload),
    ("apiregistration.k8s.io/APIService", Class::Workload),
    ("admissionregistration.k8s.io/MutatingWebhookConfiguration", Class::MutatingWebhook),
    ("admissionregistration.k8s.io/ValidatingWebhookConfiguration", Class::ValidatingWebhook),
    ("admissionregistration.k8s.io/ValidatingAdmissionPolicy", Class::ValidatingWebhook),
    ("admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding", Class::ValidatingWebhook),
];

/// API groups served by Kubernetes itself; kinds of other groups are custom resources.
pub const BUILTIN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "rbac.authorization.k8s.io",
    "networking.k8s.io",
    "storage.k8s.io",
    "scheduling.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "node.k8s.io",
    "certificates.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "events.k8s.io",
    "resource.k8s.io",
    "authorization.k8s.io",
    "authentication.k8s.io",
];

/// The class of an object's kind.
pub fn class_of(r: &ObjectRef) -> Class {
    let gk = r.group_kind();
    if let Some((_, class)) = KIND_CLASSES.iter().find(|(k, _)| *k == gk) {
        return *class;
    }
    if BUILTIN_GROUPS.contains(&r.group()) { Class::Config } else { Class::CustomResource }
}

fn group_matches(group: &str, served: &str) -> bool {
    group == served || group.strip_suffix(served).is_some_and(|rest| rest.ends_with('.'))
}

fn rule_matches(rule: &ComponentRule, namespace: Option<&str>, name: &str) -> bool {
    namespace.is_some_and(|ns| rule.namespaces.contains(&ns)) || rule.name_prefixes.iter().any(|p| name.starts_with(p))
}

/// The component serving an API group, if a foundation does.
pub fn component_of_group(group: &str) -> &'static str {
    COMPONENTS
        .iter()
        .find(|rule| rule.api_groups.iter().any(|served| group_matches(group, served)))
        .map_or(PLATFORM, |rule| rule.name)
}

/// The component of a namespaced or named object (not a custom resource).
pub fn component_of_name(namespace: Option<&str>, name: &str) -> &'static str {
    COMPONENTS.iter().find(|rule| rule_matches(rule, namespace, name)).map_or(PLATFORM, |rule| rule.name)
}

/// The component of an object: custom resources by API group, CRDs by the group they define,
/// webhook configurations by the Service they call, everything else by namespace and name.
pub fn component_of(r: &ObjectRef, doc: &serde_json::Value) -> &'static str {
    match class_of(r) {
        Class::CustomResource => component_of_group(r.group()),
        Class::Crd => doc.pointer("/spec/group").and_then(|g| g.as_str()).map_or(PLATFORM, component_of_group),
        Class::MutatingWebhook | Class::ValidatingWebhook => first_webhook_service(doc)
            .map_or_else(|| component_of_name(None, &r.name), |(ns, name)| component_of_name(Some(&ns), &name)),
        _ => component_of_name(r.namespace.as_deref(), &r.name),
    }
}

/// Labels that name the application an object belongs to, in order of preference.
pub const APP_LABELS: &[&str] = &["app.kubernetes.io/part-of", "app.kubernetes.io/name", "app"];

/// The application an object belongs to, for status reports: the foundation component when it
/// is one, else the first [`APP_LABELS`] label, else the namespace, else [`PLATFORM`].
pub fn app_of(component: &str, r: &ObjectRef, doc: &serde_json::Value) -> String {
    if component != PLATFORM {
        return component.to_string();
    }
    let labels = doc.pointer("/metadata/labels");
    APP_LABELS
        .iter()
        .find_map(|key| labels.and_then(|l| l.get(*key)).and_then(|v| v.as_str()))
        .map(str::to_string)
        .or_else(|| r.namespace.clone())
        .unwrap_or_else(|| PLATFORM.to_string())
}

/// The (namespace, name) of the Service the first webhook of a configuration calls.
pub fn first_webhook_service(doc: &serde_json::Value) -> Option<(String, String)> {
    webhook_services(doc).into_iter().next()
}

/// Every distinct (namespace, name) Service a webhook configuration calls, in order.
pub fn webhook_services(doc: &serde_json::Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for hook in doc.get("webhooks").and_then(|w| w.as_array()).into_iter().flatten() {
        let service = hook.pointer("/clientConfig/service");
        let ns = service.and_then(|s| s.get("namespace")).and_then(|v| v.as_str());
        let name = service.and_then(|s| s.get("name")).and_then(|v| v.as_str());
        if let (Some(ns), Some(name)) = (ns, name) {
            let pair = (ns.to_string(), name.to_string());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

/// A wave's position: global classes first and last, component waves in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WaveKey {
    pub phase: u8,
    pub component: u8,
    pub class: Class,
}

/// Where an object of `class` in `component` goes.
pub fn wave_key(class: Class, component: &str) -> WaveKey {
    let component_rank = COMPONENTS.iter().position(|c| c.name == component).unwrap_or(COMPONENTS.len()) as u8;
    match class {
        Class::Namespace | Class::Crd | Class::Config => WaveKey { phase: 0, component: 0, class },
        Class::ValidatingWebhook => WaveKey { phase: 2, component: 0, class },
        _ => WaveKey { phase: 1, component: component_rank, class },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(api: &str, kind: &str, ns: Option<&str>, name: &str) -> ObjectRef {
        ObjectRef { api_version: api.into(), kind: kind.into(), namespace: ns.map(Into::into), name: name.into() }
    }

    #[test]
    fn kind_classes_table_rule_namespaces_come_first() {
        assert_eq!(class_of(&r("v1", "Namespace", None, "kf")), Class::Namespace);
        assert!(wave_key(Class::Namespace, PLATFORM) < wave_key(Class::Crd, PLATFORM));
    }

    #[test]
    fn kind_classes_table_rule_crds_before_configuration() {
        assert_eq!(class_of(&r("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "a.b")), Class::Crd);
        assert!(wave_key(Class::Crd, PLATFORM) < wave_key(Class::Config, PLATFORM));
    }

    #[test]
    fn kind_classes_table_rule_unlisted_builtins_are_configuration() {
        for (api, kind) in [("rbac.authorization.k8s.io/v1", "ClusterRole"), ("v1", "ServiceAccount"), ("v1", "Secret")]
        {
            assert_eq!(class_of(&r(api, kind, None, "x")), Class::Config, "{kind}");
        }
        assert!(wave_key(Class::Config, PLATFORM) < wave_key(Class::Workload, "cert-manager"));
    }

    #[test]
    fn kind_classes_table_rule_services_and_workloads_together() {
        assert_eq!(class_of(&r("v1", "Service", Some("a"), "x")), Class::Workload);
        assert_eq!(class_of(&r("apps/v1", "Deployment", Some("a"), "x")), Class::Workload);
    }

    #[test]
    fn kind_classes_table_rule_unknown_groups_are_custom_resources() {
        assert_eq!(class_of(&r("example.org/v1", "Widget", Some("a"), "x")), Class::CustomResource);
    }

    #[test]
    fn kind_classes_table_rule_validating_webhooks_last() {
        let last = wave_key(Class::ValidatingWebhook, "cert-manager");
        for class in [Class::Workload, Class::MutatingWebhook, Class::CustomResource] {
            assert!(wave_key(class, PLATFORM) < last, "{class:?}");
        }
    }

    #[test]
    fn kind_classes_table_rule_mutating_webhooks_after_their_workloads_before_their_resources() {
        let w = wave_key(Class::Workload, "istio");
        let m = wave_key(Class::MutatingWebhook, "istio");
        let c = wave_key(Class::CustomResource, "istio");
        assert!(w < m && m < c);
    }

    #[test]
    fn components_table_rule_cert_manager_before_its_certificates_and_everything_else() {
        let cert = r("cert-manager.io/v1", "Certificate", Some("kubeflow"), "serving-cert");
        assert_eq!(component_of(&cert, &json!({})), "cert-manager");
        let cm_workload = wave_key(Class::Workload, "cert-manager");
        assert!(cm_workload < wave_key(Class::CustomResource, "cert-manager"));
        assert!(wave_key(Class::CustomResource, "cert-manager") < wave_key(Class::Workload, "istio"));
        assert_eq!(component_of_group("acme.cert-manager.io"), "cert-manager");
        assert_eq!(component_of_group("evilcert-manager.io"), PLATFORM);
    }

    #[test]
    fn components_table_rule_istio_before_its_resources_and_platform_workloads() {
        let vs = r("networking.istio.io/v1", "VirtualService", Some("kubeflow"), "ui");
        assert_eq!(component_of(&vs, &json!({})), "istio");
        let cni = r("apps/v1", "DaemonSet", Some("kube-system"), "istio-cni-node");
        assert_eq!(component_of(&cni, &json!({})), "istio");
        assert!(wave_key(Class::CustomResource, "istio") < wave_key(Class::Workload, PLATFORM));
    }

    #[test]
    fn components_table_rule_jobset_before_trainer_runtimes() {
        let jobset = r("apps/v1", "Deployment", Some("kubeflow-system"), "jobset-controller-manager");
        assert_eq!(component_of(&jobset, &json!({})), "jobset");
        let runtime = r("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", None, "torch-distributed");
        assert_eq!(component_of(&runtime, &json!({})), PLATFORM);
        assert!(wave_key(Class::Workload, "jobset") < wave_key(Class::CustomResource, PLATFORM));
    }

    #[test]
    fn apps_come_from_foundations_then_labels_then_namespace() {
        let d = r("apps/v1", "Deployment", Some("kubeflow"), "ml-pipeline");
        let labelled =
            json!({"metadata": {"labels": {"app": "ml-pipeline", "app.kubernetes.io/part-of": "kubeflow-pipelines"}}});
        assert_eq!(app_of(PLATFORM, &d, &labelled), "kubeflow-pipelines");
        assert_eq!(app_of(PLATFORM, &d, &json!({})), "kubeflow");
        assert_eq!(app_of("istio", &d, &labelled), "istio");
        assert_eq!(app_of(PLATFORM, &r("v1", "Namespace", None, "x"), &json!({})), PLATFORM);
    }

    #[test]
    fn components_table_rule_webhooks_follow_the_service_they_call() {
        let doc = json!({"webhooks": [{"clientConfig": {"service": {"namespace": "istio-system", "name": "istiod"}}}]});
        let hook = r("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", None, "sidecar-injector");
        assert_eq!(component_of(&hook, &doc), "istio");
    }
}
