//! The ordering tables: which wave an object belongs to.
//!
//! Upstream installs by re-applying everything every 20 seconds until CRD and webhook races
//! settle. kfctl-rs instead sorts objects into waves so each one is applied after what it needs
//! exists and works. Two tables decide:
//!
//! 1. The foundations (`foundations:` in `charts/catalog.yaml`, read by [`InstallOrder`]): the
//!    components others depend on, in dependency order — cert-manager, Istio, JobSet.
//!    Everything else is [`PLATFORM`]. An object belongs to a foundation by the component the
//!    render tagged it with (or a foundation's `parts` and `namespaces`); a custom resource
//!    belongs to the foundation that serves its API group.
//! 2. [`KIND_CLASSES`]: what kind of step a kind is (namespace, CRD, configuration, workload,
//!    webhook). Kinds not listed are configuration when built in, custom resources otherwise.
//!
//! 3. The namespace makers (`namespaceMakers:` in `charts/catalog.yaml`): an object in a
//!    namespace that no Namespace of the render makes but a controller makes from a custom
//!    resource of the render (the Profiles controller, from a Profile) belongs to
//!    [`MADE_NAMESPACES`], installed after the platform once the namespace exists.
//!
//! The waves then are: namespaces; CRDs; configuration (RBAC, ServiceAccounts, ConfigMaps,
//! Secrets...); then per foundation in order: its Services and workloads, its mutating
//! webhooks, its custom resources; then what goes in made namespaces, by class; and
//! ValidatingWebhookConfigurations last.

use crate::catalog::Catalog;
use crate::catalog::component::{Foundation, NamespaceMaker};
use crate::cluster::object::ObjectRef;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// A step class: what applying an object of this kind means for ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Class {
    Namespace,
    Crd,
    Config,
    Workload,
    MutatingWebhook,
    CustomResource,
    ValidatingWebhook,
}

/// The wave group of everything no foundation holds, installed after the foundations.
pub(crate) const PLATFORM: &str = "platform";

/// The wave group of objects in namespaces a controller makes, installed after the platform.
pub(crate) const MADE_NAMESPACES: &str = "in namespaces controllers make";

/// The foundations of the install, in order, and the namespace makers, from the catalog.
#[derive(Debug, Clone)]
pub(crate) struct InstallOrder {
    pub foundations: Vec<Foundation>,
    pub namespace_makers: Vec<NamespaceMaker>,
}

/// Kinds by class; unlisted built-in kinds are [`Class::Config`], unlisted others custom resources.
pub(crate) const KIND_CLASSES: &[(&str, Class)] = &[
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
pub(crate) const BUILTIN_GROUPS: &[&str] = &[
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
pub(crate) fn class_of(r: &ObjectRef) -> Class {
    let gk = r.group_kind();
    if let Some((_, class)) = KIND_CLASSES.iter().find(|(k, _)| *k == gk) {
        return *class;
    }
    if BUILTIN_GROUPS.contains(&r.group()) { Class::Config } else { Class::CustomResource }
}

fn group_matches(group: &str, served: &str) -> bool {
    group == served || group.strip_suffix(served).is_some_and(|rest| rest.ends_with('.'))
}

impl InstallOrder {
    /// The foundations of a catalog.
    pub(crate) fn from_catalog(catalog: &Catalog) -> Self {
        InstallOrder { foundations: catalog.foundations.clone(), namespace_makers: catalog.namespace_makers.clone() }
    }

    /// The foundations of the catalog compiled into the binary (read once).
    pub(crate) fn embedded() -> Result<&'static InstallOrder, String> {
        static ORDER: OnceLock<Result<InstallOrder, String>> = OnceLock::new();
        ORDER
            .get_or_init(|| Catalog::embedded().map(|c| InstallOrder::from_catalog(&c)).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The foundation serving an API group, if one does.
    pub(crate) fn foundation_of_group(&self, group: &str) -> &str {
        self.foundations
            .iter()
            .find(|f| f.api_groups.iter().any(|served| group_matches(group, served)))
            .map_or(PLATFORM, |f| f.name.as_str())
    }

    /// The foundation holding an object of `component` (not a custom resource).
    pub(crate) fn foundation_of_component(&self, component: &str, r: &ObjectRef) -> &str {
        let holds = |f: &Foundation| {
            f.components.iter().any(|c| c == component)
                || f.parts.iter().any(|p| p.component == component && r.name.starts_with(p.name_prefix.as_str()))
                || r.namespace.as_ref().is_some_and(|ns| f.namespaces.contains(ns))
        };
        self.foundations.iter().find(|f| holds(f)).map_or(PLATFORM, |f| f.name.as_str())
    }

    /// The foundation of an object the render tagged with `component`: custom resources by API
    /// group, CRDs by the group they define, everything else by its component.
    pub(crate) fn foundation_of(&self, component: &str, r: &ObjectRef, doc: &serde_json::Value) -> &str {
        match class_of(r) {
            Class::CustomResource => self.foundation_of_group(r.group()),
            Class::Crd => {
                doc.pointer("/spec/group").and_then(|g| g.as_str()).map_or(PLATFORM, |g| self.foundation_of_group(g))
            }
            _ => self.foundation_of_component(component, r),
        }
    }

    /// The namespaces controllers make from `docs` (named after each object of a maker kind),
    /// less those a Namespace of `docs` makes: each with who makes it from what.
    pub(crate) fn made_namespaces<'a>(
        &self,
        docs: impl Iterator<Item = &'a serde_json::Value> + Clone,
    ) -> BTreeMap<String, String> {
        let named = |d: &serde_json::Value| d.pointer("/metadata/name").and_then(|n| n.as_str()).map(str::to_string);
        let made_by_namespace: BTreeSet<String> =
            docs.clone().filter(|d| d["kind"] == "Namespace").filter_map(named).collect();
        let mut out = BTreeMap::new();
        for doc in docs {
            let group = doc["apiVersion"].as_str().and_then(|a| a.split_once('/')).map_or("", |(g, _)| g);
            let Some(maker) =
                self.namespace_makers.iter().find(|m| m.api_group == group && doc["kind"] == m.kind.as_str())
            else {
                continue;
            };
            if let Some(name) = named(doc).filter(|n| !made_by_namespace.contains(n)) {
                out.insert(name.clone(), format!("{} makes it from {} {name}", maker.controller, maker.kind));
            }
        }
        out
    }

    /// Where an object of `class` in `foundation` goes.
    pub(crate) fn wave_key(&self, class: Class, foundation: &str) -> WaveKey {
        let rank = self.foundations.iter().position(|f| f.name == foundation).unwrap_or(self.foundations.len()) as u8;
        if foundation == MADE_NAMESPACES {
            let rank = self.foundations.len() as u8 + 1;
            return match class {
                Class::ValidatingWebhook => WaveKey { phase: 2, component: 0, class },
                _ => WaveKey { phase: 1, component: rank, class },
            };
        }
        match class {
            Class::Namespace | Class::Crd | Class::Config => WaveKey { phase: 0, component: 0, class },
            Class::ValidatingWebhook => WaveKey { phase: 2, component: 0, class },
            _ => WaveKey { phase: 1, component: rank, class },
        }
    }
}

/// Every distinct (namespace, name) Service a webhook configuration calls, in order.
pub(crate) fn webhook_services(doc: &serde_json::Value) -> Vec<(String, String)> {
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
pub(crate) struct WaveKey {
    pub phase: u8,
    pub component: u8,
    pub class: Class,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(api: &str, kind: &str, ns: Option<&str>, name: &str) -> ObjectRef {
        ObjectRef { api_version: api.into(), kind: kind.into(), namespace: ns.map(Into::into), name: name.into() }
    }

    fn order() -> &'static InstallOrder {
        InstallOrder::embedded().unwrap()
    }

    fn wave_key(class: Class, foundation: &str) -> WaveKey {
        order().wave_key(class, foundation)
    }

    /// The foundation of an object the render tagged with `component`.
    fn foundation_of(component: &str, r: &ObjectRef, doc: &serde_json::Value) -> &'static str {
        order().foundation_of(component, r, doc)
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
    fn foundations_rule_cert_manager_before_its_certificates_and_everything_else() {
        let cert = r("cert-manager.io/v1", "Certificate", Some("kubeflow"), "serving-cert");
        assert_eq!(foundation_of("katib", &cert, &json!({})), "cert-manager");
        let cm_workload = wave_key(Class::Workload, "cert-manager");
        assert!(cm_workload < wave_key(Class::CustomResource, "cert-manager"));
        assert!(wave_key(Class::CustomResource, "cert-manager") < wave_key(Class::Workload, "istio"));
        assert_eq!(order().foundation_of_group("acme.cert-manager.io"), "cert-manager");
        assert_eq!(order().foundation_of_group("evilcert-manager.io"), PLATFORM);
    }

    #[test]
    fn foundations_rule_istio_before_its_resources_and_platform_workloads() {
        let vs = r("networking.istio.io/v1", "VirtualService", Some("kubeflow"), "ui");
        assert_eq!(foundation_of("centraldashboard", &vs, &json!({})), "istio");
        let cni = r("apps/v1", "DaemonSet", Some("kube-system"), "istio-cni-node");
        assert_eq!(foundation_of("istio", &cni, &json!({})), "istio");
        let jwks = r("apps/v1", "Deployment", Some("istio-system"), "cluster-jwks-proxy");
        assert_eq!(foundation_of("oauth2-proxy", &jwks, &json!({})), "istio");
        assert!(wave_key(Class::CustomResource, "istio") < wave_key(Class::Workload, PLATFORM));
    }

    #[test]
    fn foundations_rule_jobset_before_trainer_runtimes() {
        let jobset = r("apps/v1", "Deployment", Some("kubeflow-system"), "jobset-controller-manager");
        assert_eq!(foundation_of("trainer", &jobset, &json!({})), "jobset");
        let trainer = r("apps/v1", "Deployment", Some("kubeflow-system"), "kubeflow-trainer-controller-manager");
        assert_eq!(foundation_of("trainer", &trainer, &json!({})), PLATFORM);
        let runtime = r("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", None, "torch-distributed");
        assert_eq!(foundation_of("trainer", &runtime, &json!({})), PLATFORM);
        assert!(wave_key(Class::Workload, "jobset") < wave_key(Class::CustomResource, PLATFORM));
    }

    #[test]
    fn foundations_rule_webhooks_install_with_their_component() {
        let doc = json!({"webhooks": [{"clientConfig": {"service": {"namespace": "istio-system", "name": "istiod"}}}]});
        let hook = r("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", None, "sidecar-injector");
        assert_eq!(foundation_of("istio", &hook, &doc), "istio");
    }

    #[test]
    fn foundations_come_from_the_catalog_in_install_order() {
        let names: Vec<&str> = order().foundations.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["cert-manager", "istio", "jobset"]);
    }
}
