//! Changes the API server refuses to patch: one table, read by the install (replace before it
//! applies), `upgrade --plan` and `diff` (shown as `replace`), and by the 422 fallback.
//!
//! Each [`Rule`] names a kind, the field an update may not change, how the field is compared with
//! the live object, and the [`Remedy`]: kinds that hold no data are **replaced** (deleted, waited
//! for until gone, created again); a StatefulSet is deleted with `propagationPolicy: Orphan`, so
//! its pods and their PVCs stay and the new StatefulSet adopts them; a PersistentVolumeClaim or a
//! CustomResourceDefinition is never replaced (its data, or every custom resource of its kind,
//! would go) — the run **stops before anything is written**, naming the object, the field and
//! what to do ([`crate::cluster::upgrade::LifecycleError::CannotApply`]).
//!
//! Detection compares the rendered object with the live one (`forced`), so the plan shows the
//! replace before any write and no apply is sent to be refused. Should a 422 still say a field
//! is immutable (a rule this table lacks, a server newer than it), the kinds the table replaces
//! are replaced anyway ([`is_immutable_refusal`], `replaceable_kind`); the 422's words are data
//! here too (`REFUSALS`).
//!
//! The test API server keeps its own copy of these rules (`kfctl-testapi/src/immutable.rs`), on
//! purpose: a test double reading this table would agree with every mistake in it;
//! `tests/cluster_replace.rs` holds the two in agreement.

use crate::cluster::ClusterError;
use crate::cluster::api::ApiClient;
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::scoped;
use crate::cluster::mark::carries_mark;
use crate::cluster::object::ObjectRef;
use crate::cluster::plan::Plan;
use crate::cluster::retry::ApiFailure;
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

/// What to do when a rendered object changes an immutable field of the live one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Remedy {
    /// Delete (background), wait until gone, create.
    Replace,
    /// Delete with `propagationPolicy: Orphan` (pods and PVCs stay), wait until gone, create.
    ReplaceOrphan,
    /// Never replaced: stop before anything is written.
    Stop,
}

/// How a rule compares the rendered field with the live one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// The field (a JSON pointer) is atomic: any difference, when the render sets it.
    Atomic(&'static str),
    /// Every value the render sets under the field must equal the live one (the server defaults
    /// the rest).
    Fields(&'static str),
    /// `spec` but the listed keys, compared as [`Compare::Fields`].
    SpecExcept(&'static [&'static str]),
    /// A Service's cluster IP: once set, it stays (headless stays headless; ExternalName exempt).
    ClusterIp,
}

/// One immutable field.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// `group/Kind` (bare `Kind` for the core group).
    pub group_kind: &'static str,
    /// The field as people write it (`spec.selector`).
    pub field: &'static str,
    pub(crate) compare: Compare,
    pub(crate) remedy: Remedy,
    /// What to do, for [`Remedy::Stop`].
    pub(crate) hint: &'static str,
}

const STATEFULSET_MUTABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

const PVC_HINT: &str = "a claim's spec cannot change after creation except resources.requests; to give the workload \
     a claim with the new spec, create it under another name, copy the data and point the workload at it, or, if \
     the data may go, delete the claim yourself and re-run";
const CRD_HINT: &str = "replacing a CustomResourceDefinition would delete every custom resource of its kind; keep \
     the live value in the render (a profile patch), or move the custom resources to a new CRD yourself";

const fn replace(group_kind: &'static str, field: &'static str, compare: Compare) -> Rule {
    Rule { group_kind, field, compare, remedy: Remedy::Replace, hint: "" }
}

/// The immutable fields, as kube-apiserver 1.33 enforces them.
pub const RULES: &[Rule] = &[
    replace("apps/Deployment", "spec.selector", Compare::Atomic("/spec/selector")),
    replace("apps/DaemonSet", "spec.selector", Compare::Atomic("/spec/selector")),
    replace("apps/ReplicaSet", "spec.selector", Compare::Atomic("/spec/selector")),
    replace("batch/Job", "spec.selector", Compare::Atomic("/spec/selector")),
    replace("batch/Job", "spec.template", Compare::Fields("/spec/template")),
    replace("Service", "spec.clusterIP", Compare::ClusterIp),
    replace("rbac.authorization.k8s.io/RoleBinding", "roleRef", Compare::Atomic("/roleRef")),
    replace("rbac.authorization.k8s.io/ClusterRoleBinding", "roleRef", Compare::Atomic("/roleRef")),
    Rule {
        group_kind: "apps/StatefulSet",
        field: "spec",
        compare: Compare::SpecExcept(STATEFULSET_MUTABLE),
        remedy: Remedy::ReplaceOrphan,
        hint: "",
    },
    Rule {
        group_kind: "PersistentVolumeClaim",
        field: "spec",
        compare: Compare::SpecExcept(&["resources", "volumeAttributesClassName"]),
        remedy: Remedy::Stop,
        hint: PVC_HINT,
    },
    Rule {
        group_kind: "apiextensions.k8s.io/CustomResourceDefinition",
        field: "spec.scope",
        compare: Compare::Atomic("/spec/scope"),
        remedy: Remedy::Stop,
        hint: CRD_HINT,
    },
    Rule {
        group_kind: "apiextensions.k8s.io/CustomResourceDefinition",
        field: "spec.names.kind",
        compare: Compare::Atomic("/spec/names/kind"),
        remedy: Remedy::Stop,
        hint: CRD_HINT,
    },
];

/// The words of kube-apiserver's 422 for an immutable field (`field.Invalid` / `Forbidden`).
pub(crate) const REFUSALS: &[&str] = &[
    "field is immutable",
    "cannot change roleRef",
    "may not change once set",
    "updates to statefulset spec for fields other than",
    "spec is immutable after creation",
];

/// A rendered object that cannot be applied onto the live one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forced {
    pub(crate) object: ObjectRef,
    /// The field that forces it (`spec.selector`, `spec.volumeClaimTemplates[0].spec.storageClassName`).
    pub(crate) field: String,
    pub(crate) remedy: Remedy,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) hint: String,
}

impl Forced {
    /// `roleRef is immutable: delete, wait until gone, create`.
    pub fn describe(&self) -> String {
        match self.remedy {
            Remedy::Replace => format!("{} is immutable: delete, wait until gone, create", self.field),
            Remedy::ReplaceOrphan => {
                format!("{} is immutable: delete (pods and PVCs kept), wait until gone, create", self.field)
            }
            Remedy::Stop => format!("{} cannot change in place; {}", self.field, self.hint),
        }
    }
}

/// Every field `rendered` sets whose live value differs (dotted paths, `[i]` for list items):
/// values the render does not set are the server's (defaults) and do not count; lists are
/// compared item by item and must have the same length.
pub(crate) fn differences(rendered: &Value, live: &Value, path: &str, out: &mut Vec<String>) {
    match rendered {
        Value::Null => {}
        Value::Object(map) => {
            for (k, v) in map {
                let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match live.get(k) {
                    Some(l) => differences(v, l, &sub, out),
                    None if is_empty(v) => {}
                    None => out.push(sub),
                }
            }
        }
        Value::Array(items) => match live.as_array() {
            Some(l) if l.len() == items.len() => {
                for (i, (r, l)) in items.iter().zip(l).enumerate() {
                    differences(r, l, &format!("{path}[{i}]"), out);
                }
            }
            _ => out.push(path.to_string()),
        },
        scalar if same_scalar(scalar, live) => {}
        _ => out.push(path.to_string()),
    }
}

fn first_difference(rendered: &Value, live: &Value, path: &str) -> Option<String> {
    let mut out = Vec::new();
    differences(rendered, live, path, &mut out);
    out.into_iter().next()
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.values().all(is_empty),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn same_scalar(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

/// The field of `rule` that `rendered` would change on `live`, if any.
fn violation(rule: &Rule, rendered: &Value, live: &Value) -> Option<String> {
    match rule.compare {
        Compare::Atomic(p) => {
            let new = rendered.pointer(p)?;
            (live.pointer(p) != Some(new)).then(|| dotted(p))
        }
        Compare::Fields(p) => {
            first_difference(rendered.pointer(p)?, live.pointer(p).unwrap_or(&Value::Null), &dotted(p))
        }
        Compare::SpecExcept(mutable) => {
            let spec = rendered.get("spec")?.as_object()?;
            let live_spec = live.get("spec").unwrap_or(&Value::Null);
            spec.iter().filter(|(k, _)| !mutable.contains(&k.as_str())).find_map(|(k, v)| match live_spec.get(k) {
                Some(l) => first_difference(v, l, &format!("spec.{k}")),
                None if is_empty(v) => None,
                None => Some(format!("spec.{k}")),
            })
        }
        Compare::ClusterIp => {
            let ip = |v: &Value| v.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("").to_string();
            let external = |v: &Value| v.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName");
            let (new, old) = (ip(rendered), ip(live));
            let changes = !new.is_empty() && !old.is_empty() && new != old;
            (changes && !external(rendered) && !external(live)).then(|| rule.field.to_string())
        }
    }
}

/// Whether applying `rendered` onto `live` would change an immutable field, and the remedy.
pub(crate) fn forced(object: &ObjectRef, rendered: &Value, live: &Value) -> Option<Forced> {
    let gk = object.group_kind();
    let mut hits = RULES.iter().filter(|r| r.group_kind == gk).filter_map(|rule| {
        violation(rule, rendered, live).map(|field| Forced {
            object: object.clone(),
            field,
            remedy: rule.remedy,
            hint: rule.hint.to_string(),
        })
    });
    hits.next()
}

/// Whether the table names the kind at all (only those are read before a run).
pub(crate) fn has_rules(object: &ObjectRef) -> bool {
    let gk = object.group_kind();
    RULES.iter().any(|r| r.group_kind == gk)
}

/// The remedy of a kind whose apply a 422 refused as immutable: replace for the kinds the table
/// replaces, nothing for the kinds it never replaces or does not know.
pub(crate) fn replaceable_kind(object: &ObjectRef) -> Option<Remedy> {
    let gk = object.group_kind();
    let remedy = RULES.iter().find(|r| r.group_kind == gk)?.remedy;
    (remedy != Remedy::Stop).then_some(remedy)
}

/// A 422 that says a field is immutable (kube-apiserver's words, `REFUSALS`).
pub fn is_immutable_refusal(failure: &ApiFailure) -> bool {
    failure.status == Some(422) && REFUSALS.iter().any(|words| failure.message.contains(words))
}

/// The 422's field, from `... is invalid: spec.selector: Invalid value: ...`.
pub(crate) fn refused_field(failure: &ApiFailure) -> String {
    let after = failure.message.split(" is invalid: ").nth(1).unwrap_or("");
    after.trim_start_matches('[').split(": ").next().unwrap_or("").to_string()
}

/// Read the live object of every planned object the table names and judge it; writes nothing.
/// A [`Remedy::Stop`] is an error naming the object, the field and what to do.
/// A replace deletes the object first: an object without kfctl-rs's mark (it existed before the
/// install) is never kfctl-rs's to delete, so its replace becomes a stop saying what to do.
fn unless_preexisting(forced: Forced, live: &Value) -> Forced {
    if carries_mark(live) || forced.remedy == Remedy::Stop {
        return forced;
    }
    let hint = format!(
        "replacing it means deleting it, and it existed before the install (no kfctl-rs mark): kfctl-rs never deletes \
         what it did not create; delete {} yourself if it may go, then re-run",
        forced.object
    );
    Forced { remedy: Remedy::Stop, hint, ..forced }
}

pub(crate) async fn plan_replacements(
    api: &ApiClient,
    resolver: &Resolver,
    plan: &Plan,
) -> Result<Vec<Forced>, ClusterError> {
    let candidates: Vec<_> = plan.objects().filter(|o| has_rules(&o.reference)).collect();
    let judged: Vec<Result<Option<Forced>, ClusterError>> = futures::stream::iter(candidates)
        .map(|o| async move {
            let r = &o.reference;
            let refused = |f: ApiFailure| ClusterError::Refused { object: r.clone(), failure: Box::new(f) };
            let path = resolver.resolve(&r.api_version, &r.kind).await.map_err(refused)?;
            let live = api.get(&path, scoped(&path, r), &r.name).await.map_err(refused)?;
            Ok(live.and_then(|live| forced(r, &o.body, &live).map(|f| unless_preexisting(f, &live))))
        })
        .buffered(16)
        .collect()
        .await;
    let mut found = Vec::new();
    for verdict in judged {
        if let Some(forced) = verdict? {
            if forced.remedy == Remedy::Stop {
                let Forced { object, field, hint, .. } = forced;
                let object = Box::new(object);
                return Err(crate::cluster::upgrade::LifecycleError::CannotApply { object, field, hint }.into());
            }
            found.push(forced);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(api: &str, kind: &str) -> ObjectRef {
        ObjectRef { api_version: api.into(), kind: kind.into(), namespace: Some("kf".into()), name: "x".into() }
    }

    #[test]
    fn a_selector_or_role_ref_change_is_a_replace_a_replica_change_is_not() {
        let live = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}}, "strategy": {"type": "RollingUpdate"}}});
        let scaled = json!({"spec": {"replicas": 3, "selector": {"matchLabels": {"app": "a"}}}});
        assert_eq!(forced(&r("apps/v1", "Deployment"), &scaled, &live), None);
        let moved = json!({"spec": {"selector": {"matchLabels": {"app": "b"}}}});
        let f = forced(&r("apps/v1", "Deployment"), &moved, &live).unwrap();
        assert_eq!((f.field.as_str(), f.remedy), ("spec.selector", Remedy::Replace));
        assert_eq!(f.describe(), "spec.selector is immutable: delete, wait until gone, create");
        let rb =
            |n: &str| json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": n}});
        let crb = r("rbac.authorization.k8s.io/v1", "ClusterRoleBinding");
        assert_eq!(forced(&crb, &rb("a"), &rb("b")).unwrap().field, "roleRef");
        assert_eq!(forced(&crb, &rb("a"), &rb("a")), None);
    }

    #[test]
    fn statefulsets_orphan_claims_stop_and_defaults_do_not_count() {
        let live = json!({"spec": {"replicas": 1, "podManagementPolicy": "OrderedReady", "serviceName": "db",
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"storageClassName": "a", "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}]}});
        let same = json!({"spec": {"replicas": 2, "serviceName": "db", "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"storageClassName": "a"}}]}});
        assert_eq!(forced(&r("apps/v1", "StatefulSet"), &same, &live), None);
        let other = json!({"spec": {"serviceName": "db", "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"storageClassName": "b"}}]}});
        let f = forced(&r("apps/v1", "StatefulSet"), &other, &live).unwrap();
        assert_eq!(
            (f.field.as_str(), f.remedy),
            ("spec.volumeClaimTemplates[0].spec.storageClassName", Remedy::ReplaceOrphan)
        );
        let pvc = |class: &str, size: &str| json!({"spec": {"storageClassName": class, "resources": {"requests": {"storage": size}}}});
        assert_eq!(forced(&r("v1", "PersistentVolumeClaim"), &pvc("a", "2Gi"), &pvc("a", "1Gi")), None);
        let f = forced(&r("v1", "PersistentVolumeClaim"), &pvc("b", "1Gi"), &pvc("a", "1Gi")).unwrap();
        assert_eq!((f.field.as_str(), f.remedy), ("spec.storageClassName", Remedy::Stop));
        assert!(f.describe().contains("copy the data"));
    }

    #[test]
    fn cluster_ips_once_set_and_the_422_fallback() {
        let svc = |ip: &str| json!({"spec": {"clusterIP": ip}});
        assert_eq!(forced(&r("v1", "Service"), &svc("None"), &json!({"spec": {}})), None);
        assert_eq!(forced(&r("v1", "Service"), &svc("None"), &svc("10.0.0.1")).unwrap().field, "spec.clusterIP");
        let failure = ApiFailure {
            status: Some(422),
            message: "Job.batch \"j\" is invalid: spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable".into(),
            ..Default::default()
        };
        assert!(is_immutable_refusal(&failure));
        assert_eq!(refused_field(&failure), "spec.template");
        assert_eq!(replaceable_kind(&r("batch/v1", "Job")), Some(Remedy::Replace));
        assert_eq!(replaceable_kind(&r("v1", "PersistentVolumeClaim")), None);
        assert_eq!(replaceable_kind(&r("v1", "ConfigMap")), None);
    }
}
