//! Upgrade = converge: the checks and the plan of an install onto a cluster that has a record.
//!
//! `install` and `upgrade` run the same code ([`crate::cluster::install`](mod@crate::cluster::install)); `upgrade` only refuses when
//! nothing is installed and says `from → to`. Before anything is applied, every CRD of the new
//! render is compared with the live one: a version still listed in the live CRD's
//! `status.storedVersions` must stay in `spec.versions`, or objects stored in it become
//! unreadable, so such a change is refused with a hint (`check_stored_versions`).
//!
//! [`change_plan`] is the plan with a verdict per object (`create`, `update`, `replace`,
//! `blocked`, `unchanged`, `prune`) and the guarded objects that would be kept: the server judges
//! create/update/unchanged by a dry-run apply ([`crate::cluster::diff`]), the table of
//! [`crate::cluster::immutable`] decides replace (and blocked: a PVC or CRD change that cannot be
//! applied, with what to do), the record and [`crate::cluster::prune`] decide prune and keep.

use crate::catalog::RenderedObject;
use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath, Target};
use crate::cluster::diff::{self, Action};
use crate::cluster::install::read_record;
use crate::cluster::object::{ObjectRef, is_crd};
use crate::cluster::plan::Plan;
use crate::cluster::prune::{self, Kept, identity};
use crate::cluster::record::InstallMeta;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;

/// Refusals of the lifecycle (upgrade, prune, uninstall).
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// The new render drops a CRD version the live CRD still lists in `status.storedVersions`.
    #[error(
        "customresourcedefinition {crd}: the new render drops version(s) {}, which the live CRD's \
         status.storedVersions still lists; objects stored in them would become unreadable; nothing was applied; \
         migrate the stored objects to a kept version (e.g. kube-storage-version-migrator), remove the old \
         version(s) from status.storedVersions, then re-run",
        versions.join(", ")
    )]
    StoredVersionDropped {
        /// The CRD's name.
        crd: String,
        /// The dropped versions still stored.
        versions: Vec<String>,
    },
    /// `upgrade` found no install record.
    #[error(
        "upgrade: nothing installed by kfctl-rs on {server} (no install record); use `kfctl-rs install` for a first install"
    )]
    NothingInstalled {
        /// The API server's address.
        server: String,
    },
    /// An immutable field changes on a kind that is never replaced (a PVC, a CRD).
    #[error("{object}: {field} cannot change in place; nothing was written; {hint}")]
    CannotApply {
        /// The object that cannot be applied.
        object: Box<ObjectRef>,
        /// The immutable field that changes.
        field: String,
        /// What to do instead.
        hint: String,
    },
}

fn crds() -> ResourcePath {
    ResourcePath {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        plural: "customresourcedefinitions".into(),
        namespaced: false,
    }
}

/// The versions `status.storedVersions` lists that `new_crd` no longer has.
pub(crate) fn dropped_stored_versions(live: &Value, new_crd: &Value) -> Vec<String> {
    let kept: HashSet<&str> = new_crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    let stored = live.pointer("/status/storedVersions").and_then(Value::as_array).into_iter().flatten();
    stored.filter_map(Value::as_str).filter(|v| !kept.contains(v)).map(str::to_string).collect()
}

/// Refuse a plan whose CRDs drop a stored version; reads each live CRD, writes nothing.
pub(crate) async fn check_stored_versions(api: &ApiClient, plan: &Plan) -> Result<(), ClusterError> {
    for object in plan.objects().filter(|o| is_crd(&o.body)) {
        let name = &object.reference.name;
        let live = api.get(&crds(), None, name).await.map_err(|f| ClusterError::Api {
            what: format!("read customresourcedefinition {name}"),
            failure: Box::new(f),
        })?;
        let Some(live) = live else { continue };
        let versions = dropped_stored_versions(&live, &object.body);
        if !versions.is_empty() {
            return Err(LifecycleError::StoredVersionDropped { crd: name.clone(), versions }.into());
        }
    }
    Ok(())
}

/// What converging would do to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// The object does not exist: it is created.
    Create,
    /// The object exists and its fields change: it is applied.
    Update,
    /// Delete, wait until gone, create: an immutable field changes ([`crate::cluster::immutable`]).
    Replace,
    /// An immutable field of a kind never replaced (a PVC, a CRD) changes: the run stops.
    Blocked,
    /// The object exists as rendered: nothing changes.
    Unchanged,
    /// The object is in the record but not in the render: it is deleted.
    Prune,
}

/// One object of the change plan.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedChange {
    /// The planned object (or the recorded one, for a prune).
    #[serde(flatten)]
    pub object: ObjectRef,
    /// The wave it is applied in (or deleted in).
    pub wave: usize,
    pub(crate) component: String,
    /// What converging would do to it.
    pub change: Change,
    /// Why a replace or a stop: the field and what happens (`roleRef is immutable: ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// It exists without kfctl-rs's mark: applied, never deleted ([`crate::cluster::mark`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub preexisting: bool,
}

impl ChangePlan {
    /// How many planned objects exist without kfctl-rs's mark.
    pub fn preexisting(&self) -> usize {
        self.objects.iter().filter(|o| o.preexisting).count()
    }
}

/// The plan against a cluster: what is installed, and what each object would undergo.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangePlan {
    /// The API server's address.
    pub server: String,
    /// What the record says is installed (`None`: nothing).
    pub from: Option<InstallMeta>,
    /// Every planned object in apply order, then the prunes in deletion order.
    pub objects: Vec<PlannedChange>,
    /// Guarded or pre-existing objects the render dropped, kept and why.
    pub kept: Vec<Kept>,
    /// The kept objects summed up by why they are kept, one line each.
    pub kept_summary: Vec<String>,
}

/// [`change_plan_within`] the default `crate::cluster::status::VERB_TIMEOUT`.
pub async fn change_plan(
    objects: &[RenderedObject],
    target: &Target,
    purge: bool,
    concurrency: usize,
) -> Result<ChangePlan, ClusterError> {
    change_plan_within(objects, target, purge, concurrency, crate::cluster::status::VERB_TIMEOUT, &[]).await
}

/// Judge every planned object against the cluster and list prunes and keeps; writes nothing.
/// One connection and one deadline (`timeout`, the run's `--timeout`) for the record and every
/// object's dry run; a call it ends is [`ClusterError::NoAnswer`] saying what it waited for.
/// `provided`: the dependencies the new render leaves to the cluster (their recorded objects
/// are released, not pruned).
pub async fn change_plan_within(
    objects: &[RenderedObject],
    target: &Target,
    purge: bool,
    concurrency: usize,
    timeout: std::time::Duration,
    provided: &[String],
) -> Result<ChangePlan, ClusterError> {
    let plan = Plan::build(objects)?;
    let redactor = crate::cluster::redact::Redactor::from_docs(objects.iter().map(|o| &o.obj));
    let api = ApiClient::connect(target).await?.within(timeout).with_redactor(redactor);
    let record = read_record(&api).await?;
    let judged = diff::diff_with(&api, objects, concurrency).await?;
    let mut changes: Vec<PlannedChange> = plan
        .objects()
        .zip(judged)
        .map(|(o, d)| PlannedChange {
            object: o.reference.clone(),
            wave: plan.wave_of(&o.reference).unwrap_or(0),
            component: o.component.clone(),
            change: match d.action {
                Action::Create | Action::Unknown => Change::Create,
                Action::Change => Change::Update,
                Action::Replace => Change::Replace,
                Action::Blocked => Change::Blocked,
                Action::Unchanged => Change::Unchanged,
            },
            reason: (matches!(d.action, Action::Replace | Action::Blocked) || d.preexisting)
                .then(|| d.note.clone().unwrap_or_default()),
            preexisting: d.preexisting,
        })
        .collect();
    let held: HashSet<_> = plan.objects().map(|o| identity(&o.reference)).collect();
    let set = record
        .as_ref()
        .map(|r| {
            let handed_over = crate::cluster::provided::handed_over(provided);
            prune::prune_set(&r.inventory, |o| held.contains(&identity(o)), purge, &handed_over)
        })
        .unwrap_or_default();
    changes.extend(set.delete.iter().map(|e| PlannedChange {
        object: e.reference.clone(),
        wave: e.wave,
        component: e.component.clone(),
        change: Change::Prune,
        reason: None,
        preexisting: false,
    }));
    Ok(ChangePlan {
        server: api.server.clone(),
        from: record.map(|r| r.meta),
        objects: changes,
        kept_summary: prune::kept_summary(&set.kept),
        kept: prune::kept_with_reasons(&set),
    })
}

/// `v1.10.2 (multi-tenant) → v1.11.0 (multi-tenant)`.
pub fn from_to(from: &InstallMeta, to: &InstallMeta) -> String {
    format!("{} ({}) → {} ({})", from.upstream_version, from.profile, to.upstream_version, to.profile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_dropped_stored_version_is_found_a_kept_one_is_not() {
        let live = json!({"status": {"storedVersions": ["v1alpha1", "v1"]}});
        let next = json!({"spec": {"versions": [{"name": "v1"}, {"name": "v2"}]}});
        assert_eq!(dropped_stored_versions(&live, &next), ["v1alpha1"]);
        let keeps = json!({"spec": {"versions": [{"name": "v1alpha1"}, {"name": "v1"}]}});
        assert!(dropped_stored_versions(&live, &keeps).is_empty());
        let text = LifecycleError::StoredVersionDropped { crd: "x.io".into(), versions: vec!["v1alpha1".into()] };
        assert!(text.to_string().contains("status.storedVersions") && text.to_string().contains("nothing was applied"));
    }

    #[test]
    fn from_to_names_versions_and_profiles() {
        let meta =
            |v: &str| InstallMeta { profile: "multi-tenant".into(), upstream_version: v.into(), ..Default::default() };
        assert_eq!(from_to(&meta("v1.10.2"), &meta("v1.11.0")), "v1.10.2 (multi-tenant) → v1.11.0 (multi-tenant)");
    }
}
