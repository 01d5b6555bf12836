//! Dependencies the cluster provides (`<name>.provided=true`), checked before any write.
//!
//! The catalog says what Kubeflow's own objects need from a cluster's cert-manager, Istio,
//! Knative Serving, Dex or oauth2-proxy ([`crate::catalog::provided`]); this module asks the
//! cluster, in the preflight, whether its copy has it:
//!
//! 1. every kind of the dependency's API groups that the plan's objects use is served at the
//!    version they use (discovery lists a CRD's version once it is established); kinds whose
//!    CRD the plan itself brings are the install's own;
//! 2. each needed object exists; a Service marked `ready: endpoints` has a ready address (the
//!    webhook or gateway behind it answers); a `contains` text is at its field.
//!
//! Everything missing is reported at once, per dependency, with what Kubeflow uses it for, how
//! to make it, and the other way out: let kfctl-rs install the dependency
//! (`--set <name>.provided=false`). [`handed_over`] gives the components whose recorded objects
//! prune must release rather than delete once the cluster provides them.

use crate::catalog::provided::{Dependency, Need, Readiness};
use crate::cluster::ClusterError;
use crate::cluster::api::ApiClient;
use crate::cluster::discovery::Resolver;
use crate::cluster::plan::Plan;
use serde_json::Value;
use std::collections::BTreeSet;

/// Check every provided dependency; `Err` names everything missing, nothing is written.
pub(crate) async fn check(
    api: &ApiClient,
    resolver: &Resolver,
    plan: &Plan,
    provided: &[Dependency],
) -> Result<(), ClusterError> {
    let mut problems = Vec::new();
    for dep in provided {
        let mut missing = served_kinds(resolver, plan, dep).await?;
        for need in &dep.needs {
            if let Some(problem) = need_problem(api, resolver, need).await? {
                missing.push(problem);
            }
        }
        if !missing.is_empty() {
            problems.push(format!(
                "`{name}.provided` is true, but the cluster's {name} lacks what Kubeflow needs:\n{}\n  install {name} first, or let kfctl-rs install it ({})",
                missing.iter().map(|m| format!("  - {m}")).collect::<Vec<_>>().join("\n"),
                dep.install_it_flag(),
                name = dep.name,
            ));
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(ClusterError::Preflight(problems.join("\n"))),
    }
}

/// The kinds of the dependency's groups the plan uses that discovery does not serve.
async fn served_kinds(resolver: &Resolver, plan: &Plan, dep: &Dependency) -> Result<Vec<String>, ClusterError> {
    let used: BTreeSet<(String, String)> = plan
        .objects()
        .filter(|o| dep.serves(&o.reference.api_version))
        .filter(|o| !plan.crd_kinds.contains_key(&o.reference.group_kind()))
        .map(|o| (o.reference.api_version.clone(), o.reference.kind.clone()))
        .collect();
    let mut missing = Vec::new();
    for (api_version, kind) in used {
        let users: BTreeSet<&str> = plan
            .objects()
            .filter(|o| o.reference.api_version == api_version && o.reference.kind == kind)
            .map(|o| o.component.as_str())
            .collect();
        if !is_served(resolver, &api_version, &kind).await? {
            let verb = if users.len() == 1 { "uses" } else { "use" };
            missing.push(format!(
                "{kind} ({api_version}) is not served (its CRD, established at {}): {} {verb} it",
                api_version.rsplit_once('/').map_or("v1", |(_, v)| v),
                users.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(missing)
}

async fn is_served(resolver: &Resolver, api_version: &str, kind: &str) -> Result<bool, ClusterError> {
    match resolver.resolve(api_version, kind).await {
        Ok(_) => Ok(true),
        Err(f) if f.is_no_kind_match() || f.status == Some(404) => Ok(false),
        Err(f) => Err(ClusterError::Api { what: "discovery".into(), failure: Box::new(f) }),
    }
}

/// What is wrong with one needed object, if anything.
async fn need_problem(api: &ApiClient, resolver: &Resolver, need: &Need) -> Result<Option<String>, ClusterError> {
    let absent = |what: &str| {
        let create = need.create.as_ref().map_or(String::new(), |c| format!("; create it: {c}"));
        Some(format!("{} {what} ({}){create}", need.shown(), need.why))
    };
    let path = match resolver.resolve(&need.api_version, &need.kind).await {
        Ok(path) => path,
        Err(f) if f.is_no_kind_match() || f.status == Some(404) => {
            return Ok(absent("is missing: its kind is not served"));
        }
        Err(f) => return Err(api_failure(f)),
    };
    let Some(live) = api.get(&path, need.namespace.as_deref(), &need.name).await.map_err(api_failure)? else {
        return Ok(absent("is missing"));
    };
    if need.ready == Some(Readiness::Endpoints) {
        let namespace = need.namespace.as_deref().unwrap_or(crate::cluster::object::DEFAULT_NAMESPACE);
        if let Some(reason) = crate::cluster::engine::endpoint_ready(api, resolver, namespace, &need.name).await {
            return Ok(absent(&format!("has {reason}")));
        }
    }
    if let Some(contains) = &need.contains {
        let pointer = format!("/{}", contains.field.replace('.', "/"));
        let text = live.pointer(&pointer).and_then(Value::as_str).unwrap_or_default();
        if !text.contains(&contains.text) {
            return Ok(absent(&format!("has no `{}` in {}", contains.text, contains.field)));
        }
    }
    Ok(None)
}

fn api_failure(f: crate::cluster::retry::ApiFailure) -> ClusterError {
    ClusterError::Api { what: "provided dependency".into(), failure: Box::new(f) }
}

/// The components whose objects the cluster provides, by the dependency names a record keeps:
/// their recorded objects are released by prune, never deleted.
pub(crate) fn handed_over(provided: &[String]) -> Vec<String> {
    let table = crate::catalog::Catalog::embedded().map(|c| c.provided).unwrap_or_default();
    table.into_iter().filter(|d| provided.contains(&d.name)).flat_map(|d| d.components).collect()
}
