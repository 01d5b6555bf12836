//! The install plan as data: ordered waves, each object with what it waits for.
//!
//! [`Plan::build`] is pure: it sorts rendered objects, each tagged with its catalog component,
//! into waves with the tables of `crate::cluster::order` (the foundations come from the catalog) and
//! attaches the readiness rules of `crate::cluster::readiness`. Each planned object keeps its
//! component, for the install record and `status`. It holds exactly
//! the objects it was given (a duplicate is an error, not a silent overwrite), keeps their input
//! order within a wave, and serializes (`--plan -o json`) without any Secret value: objects
//! show apiVersion, kind, namespace and name only.

use crate::catalog::RenderedObject;
use crate::cluster::object::{ObjectRef, Scopes, crd_kinds};
use crate::cluster::order::{self, Class, InstallOrder, WaveKey};
use crate::cluster::prepare::apply_body;
use crate::cluster::readiness::{Rule, rule_for};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A plan that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// An object lacks `apiVersion`, `kind` or `metadata.name`.
    #[error("{0}; every object needs apiVersion, kind and metadata.name")]
    Incomplete(String),
    /// An object appears twice in the render.
    #[error("{0}: appears twice in the rendered objects; each object must be unique")]
    Duplicate(ObjectRef),
    /// The catalog's install order data is invalid.
    #[error("catalog: {0}; the install order comes from charts/catalog.yaml, fix it and rebuild")]
    Catalog(String),
}

/// The whole plan.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The waves, in apply order.
    pub waves: Vec<Wave>,
    /// sha256 of the apply bodies in plan order: equal plans apply equal bytes.
    pub(crate) digest: String,
    /// `group/Kind` of every CRD in the plan, to its CRD name.
    #[serde(skip)]
    pub(crate) crd_kinds: HashMap<String, String>,
}

/// One wave: applied together, then waited for.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Wave {
    /// Its number, from 1.
    pub index: usize,
    /// Its name: what it applies (`namespaces`, `custom resource definitions`, ...), with the
    /// component for per-component waves.
    pub name: String,
    pub(crate) class: Class,
    pub(crate) component: Option<String>,
    /// Conditions checked before the wave is applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// Namespaces a controller makes that must exist before the wave is applied, each with
    /// who makes it from what.
    #[serde(skip)]
    pub(crate) made_namespaces: Vec<(String, String)>,
    /// What the wave waits for after applying, one line per distinct rule.
    pub waits_for: Vec<String>,
    /// Its objects, in apply order.
    pub objects: Vec<PlannedObject>,
}

/// One object of a wave.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedObject {
    /// Where the object lives.
    #[serde(flatten)]
    pub reference: ObjectRef,
    /// The catalog component the render tagged it with (the record and `status` keep it).
    pub(crate) component: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) waits_for: Option<&'static str>,
    /// Services (namespace, name) a webhook configuration calls.
    #[serde(skip)]
    pub(crate) calls: Vec<(String, String)>,
    #[serde(skip)]
    pub(crate) rule: Option<Rule>,
    /// The body to apply (may hold Secret values: never serialized).
    #[serde(skip)]
    pub(crate) body: Value,
}

impl Plan {
    /// Sort tagged objects into waves.
    pub fn build(objects: &[RenderedObject]) -> Result<Plan, PlanError> {
        let order = InstallOrder::embedded().map_err(PlanError::Catalog)?;
        let docs = || objects.iter().map(|o| &o.obj);
        let scopes = Scopes::from_docs(docs());
        let mut seen = HashSet::new();
        let made = order.made_namespaces(docs());
        let mut grouped: BTreeMap<(WaveKey, String), Vec<PlannedObject>> = BTreeMap::new();
        for (index, object) in objects.iter().enumerate() {
            let reference = scopes.normalize(ObjectRef::from_value(&object.obj, index).map_err(PlanError::Incomplete)?);
            if !seen.insert(reference.clone()) {
                return Err(PlanError::Duplicate(reference));
            }
            let class = order::class_of(&reference);
            let in_made = reference.namespace.as_ref().is_some_and(|ns| made.contains_key(ns));
            let foundation = match in_made {
                true => order::MADE_NAMESPACES.to_string(),
                false => order.foundation_of(&object.component, &reference, &object.obj).to_string(),
            };
            let key = order.wave_key(class, &foundation);
            let label = if key.phase == 1 { foundation.clone() } else { String::new() };
            grouped.entry((key, label)).or_default().push(planned(object, reference, class));
        }
        let waves: Vec<Wave> = grouped
            .into_iter()
            .enumerate()
            .map(|(i, ((key, foundation), objects))| make_wave(i + 1, key.class, &foundation, objects, &made))
            .collect();
        let digest = digest_of(&waves);
        Ok(Plan { waves, digest, crd_kinds: crd_kinds(docs()) })
    }

    /// Every planned object, in apply order.
    pub fn objects(&self) -> impl Iterator<Item = &PlannedObject> {
        self.waves.iter().flat_map(|w| w.objects.iter())
    }

    /// The wave index (1-based) an object is applied in.
    pub fn wave_of(&self, r: &ObjectRef) -> Option<usize> {
        self.waves.iter().find(|w| w.objects.iter().any(|o| &o.reference == r)).map(|w| w.index)
    }

    /// Whether the plan installs the CRD serving `group/Kind`.
    pub(crate) fn has_crd_for(&self, group_kind: &str) -> bool {
        self.crd_kinds.contains_key(group_kind)
    }
}

fn planned(object: &RenderedObject, reference: ObjectRef, class: Class) -> PlannedObject {
    let doc = &object.obj;
    let rule = rule_for(&reference, doc);
    let calls = match class {
        Class::MutatingWebhook | Class::ValidatingWebhook => order::webhook_services(doc),
        _ => Vec::new(),
    };
    let body = apply_body(doc, reference.namespace.is_none());
    PlannedObject {
        reference,
        component: object.component.clone(),
        waits_for: rule.map(Rule::describe),
        calls,
        rule,
        body,
    }
}

fn wave_name(class: Class, component: &str) -> String {
    let what = match class {
        Class::Namespace => return "namespaces".into(),
        Class::Crd => return "custom resource definitions".into(),
        Class::Config if component.is_empty() => {
            return "configuration (RBAC, service accounts, config maps, secrets)".into();
        }
        Class::Config => "configuration",
        Class::ValidatingWebhook => return "validating webhooks".into(),
        Class::Workload => "services and workloads",
        Class::MutatingWebhook => "mutating webhooks",
        Class::CustomResource => "custom resources",
    };
    format!("{component}: {what}")
}

fn make_wave(
    index: usize,
    class: Class,
    component: &str,
    objects: Vec<PlannedObject>,
    made: &BTreeMap<String, String>,
) -> Wave {
    let mut waits_for: Vec<String> = Vec::new();
    for rule in objects.iter().filter_map(|o| o.rule) {
        let line = rule.describe().to_string();
        if !waits_for.contains(&line) {
            waits_for.push(line);
        }
    }
    let mut made_namespaces: Vec<(String, String)> = Vec::new();
    for namespace in objects.iter().filter_map(|o| o.reference.namespace.as_ref()) {
        if let Some(who) = made.get(namespace).filter(|_| !made_namespaces.iter().any(|(n, _)| n == namespace)) {
            made_namespaces.push((namespace.clone(), who.clone()));
        }
    }
    let mut before = match class {
        Class::MutatingWebhook | Class::ValidatingWebhook => {
            vec!["each Service the webhooks call has a ready endpoint".to_string()]
        }
        Class::CustomResource => {
            vec!["their CRDs are Established and served by discovery".to_string()]
        }
        _ => Vec::new(),
    };
    before.extend(made_namespaces.iter().map(|(n, who)| format!("namespace {n} exists ({who})")));
    let component = (!component.is_empty()).then(|| component.to_string());
    Wave {
        index,
        name: wave_name(class, component.as_deref().unwrap_or("")),
        class,
        component,
        before,
        made_namespaces,
        waits_for,
        objects,
    }
}

fn digest_of(waves: &[Wave]) -> String {
    let mut hasher = Sha256::new();
    for object in waves.iter().flat_map(|w| &w.objects) {
        hasher.update(serde_json::to_vec(&object.body).unwrap_or_default());
        hasher.update(b"\n");
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Objects as a pre-rendered stream would give them.
    fn tagged(docs: Vec<Value>) -> Vec<RenderedObject> {
        crate::catalog::attribute::attribute_prerendered(&crate::catalog::Catalog::embedded().unwrap(), docs)
    }

    fn obj(api: &str, kind: &str, ns: Option<&str>, name: &str) -> Value {
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        json!({"apiVersion": api, "kind": kind, "metadata": meta})
    }

    fn crd(group: &str, kind: &str, plural: &str) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced", "names": {"kind": kind, "plural": plural}}})
    }

    #[test]
    fn plan_orders_namespaces_crds_config_workloads_resources_validating() {
        let docs = vec![
            obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, "v"),
            obj("example.org/v1", "Widget", Some("kf"), "w"),
            obj("apps/v1", "Deployment", Some("kf"), "d"),
            obj("v1", "ConfigMap", Some("kf"), "c"),
            crd("example.org", "Widget", "widgets"),
            obj("v1", "Namespace", None, "kf"),
        ];
        let plan = Plan::build(&tagged(docs)).unwrap();
        let kinds: Vec<&str> = plan.objects().map(|o| o.reference.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "CustomResourceDefinition",
                "ConfigMap",
                "Deployment",
                "Widget",
                "ValidatingWebhookConfiguration"
            ]
        );
        assert_eq!(plan.waves.iter().map(|w| w.index).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
        assert!(plan.has_crd_for("example.org/Widget"));
    }

    #[test]
    fn plan_rejects_duplicates_and_incomplete_objects() {
        let cm = obj("v1", "ConfigMap", Some("kf"), "c");
        assert!(matches!(Plan::build(&tagged(vec![cm.clone(), cm])), Err(PlanError::Duplicate(_))));
        let nameless = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        assert!(matches!(Plan::build(&tagged(vec![nameless])), Err(PlanError::Incomplete(_))));
    }

    #[test]
    fn plan_json_never_shows_secret_values() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "kf"},
            "stringData": {"password": "hunter2-very-secret"}});
        let plan = Plan::build(&tagged(vec![secret])).unwrap();
        let text = serde_json::to_string(&plan).unwrap();
        assert!(!text.contains("hunter2-very-secret"));
        assert!(text.contains("\"name\":\"s\""));
    }

    #[test]
    fn plan_digest_depends_on_content() {
        let a = Plan::build(&tagged(vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "1"}}),
        ]))
        .unwrap();
        let b = Plan::build(&tagged(vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "2"}}),
        ]))
        .unwrap();
        assert_ne!(a.digest, b.digest);
        assert_eq!(a.digest.len(), 64);
    }

    #[test]
    fn plan_keeps_each_objects_component_and_orders_foundations_by_it() {
        let objects = vec![
            RenderedObject::new("trainer", obj("apps/v1", "Deployment", Some("kf"), "trainer")),
            RenderedObject::new("istio", obj("apps/v1", "Deployment", Some("kf"), "d")),
        ];
        let plan = Plan::build(&objects).unwrap();
        let components: Vec<&str> = plan.objects().map(|o| o.component.as_str()).collect();
        assert_eq!(components, ["istio", "trainer"]);
        assert_eq!(plan.waves[0].component.as_deref(), Some("istio"));
        assert_eq!(plan.waves[1].component.as_deref(), Some("platform"));
    }
}
