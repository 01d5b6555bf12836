//! `kfctl-rs check --pre`: the preflight as a checklist, every item judged, nothing written.
//!
//! `install`'s preflight stops at the first refusal. This runs every item of [`ITEMS`] (the one
//! table of what is checked and where GUIDE explains it) and marks each ✔ (passes), ✘ (fails:
//! an install would be refused or would not work) or ! (works, but look), with what was found
//! and what to do. A server that does not answer fails the first item and ends the list. Each
//! item asks the API server what it needs once; its failures are the item's, not the run's.

use super::postcheck::Drift;
use super::preflight;
use crate::catalog::RenderedObject;
use crate::catalog::provided::Dependency;
use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Target};
use crate::cluster::discovery::Resolver;
use crate::cluster::mark::carries_mark;
use crate::cluster::plan::Plan;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

mod admission;
mod arch;
mod capacity;

/// One item of the checklist: its id, what it checks, and GUIDE's section on it.
#[derive(Debug, Clone, Copy)]
pub struct Item {
    /// Short id (`-o json`'s key).
    pub id: &'static str,
    /// What it checks.
    pub title: &'static str,
}

/// Every item, in the order they run.
pub const ITEMS: &[Item] = &[
    Item { id: "api", title: "the API server answers" },
    Item { id: "kubernetes", title: "Kubernetes in the release's range" },
    Item { id: "provided", title: "dependencies the cluster provides" },
    Item { id: "kinds", title: "every kind served, or defined by the plan" },
    Item { id: "access", title: "RBAC allows what the plan writes" },
    Item { id: "existing", title: "no CRD or webhook of the plan already there from someone else" },
    Item { id: "storage", title: "a default StorageClass for the PersistentVolumeClaims" },
    Item { id: "capacity", title: "nodes with room for the plan's requests" },
    Item { id: "architectures", title: "node architectures the images are built for" },
    Item { id: "pod-security", title: "Pod Security admission lets the plan's pods in" },
    Item { id: "record", title: "no other kfctl-rs install or run" },
];

/// Where GUIDE explains the checks.
pub const GUIDE: &str = "GUIDE.md#check-before-verify-after";

/// How an item came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mark {
    /// ✔
    Pass,
    /// ! (works, but look)
    Warn,
    /// ✘
    Fail,
}

/// One judged item.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// The item's id.
    pub id: &'static str,
    /// What it checks.
    pub title: &'static str,
    /// How it came out.
    pub mark: Mark,
    /// What was found.
    pub detail: String,
    /// What to do, when it did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The drift item's fields, when they were compared (after an install).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
}

/// The checklist.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The API server's address.
    pub server: String,
    /// The release checked for.
    pub release: String,
    /// Every item run, in order.
    pub items: Vec<Checked>,
    /// Where GUIDE explains them.
    pub guide: &'static str,
}

impl CheckReport {
    /// Whether an item failed (`check` exits non-zero).
    pub fn failed(&self) -> bool {
        self.items.iter().any(|i| i.mark == Mark::Fail)
    }

    /// One line per item, its hint below it, then the verdict.
    pub fn render_text(&self) -> String {
        let heading = format!("checking {} for Kubeflow {}", self.server, self.release);
        self.render_with(&heading, "ready to install")
    }

    /// [`CheckReport::render_text`] under `heading`, ending with `passed` when no item failed.
    pub(crate) fn render_with(&self, heading: &str, passed: &str) -> String {
        let mut out = format!("{heading}\n");
        for item in &self.items {
            let mark = match item.mark {
                Mark::Pass => "✔",
                Mark::Warn => "!",
                Mark::Fail => "✘",
            };
            out.push_str(&format!("{mark} {}: {}\n", item.title, item.detail));
            for line in item.drift.iter().flat_map(Drift::lines) {
                out.push_str(&format!("    {line}\n"));
            }
            if let Some(hint) = &item.hint {
                out.push_str(&format!("    {hint}\n"));
            }
        }
        let failed = self.items.iter().filter(|i| i.mark == Mark::Fail).count();
        match failed {
            0 => out.push_str(&format!("{passed}\n")),
            n => out.push_str(&format!("{n} item(s) failed; see {}\n", self.guide)),
        }
        out
    }
}

/// What `check --pre` needs besides the rendered objects.
#[derive(Debug, Clone)]
pub struct PreCheckOptions {
    /// The cluster.
    pub target: Target,
    /// The release, for messages.
    pub release: String,
    /// Kubernetes versions the release supports.
    pub supported: semver::VersionReq,
    /// Dependencies the cluster is to provide.
    pub provided: Vec<Dependency>,
    /// The whole run's deadline.
    pub timeout: Duration,
}

fn item(id: &'static str, mark: Mark, detail: impl Into<String>, hint: Option<String>) -> Checked {
    let title = ITEMS.iter().find(|i| i.id == id).map_or(id, |i| i.title);
    Checked { id, title, mark, detail: detail.into(), hint, drift: None }
}

fn failed(id: &'static str, error: &ClusterError, hint: &str) -> Checked {
    item(id, Mark::Fail, error.to_string(), Some(hint.to_string()))
}

/// Judge every item of [`ITEMS`] for `objects` on the cluster; writes nothing. `Err` only when
/// the objects make no plan or the kubeconfig cannot be used.
pub async fn check_pre(objects: &[RenderedObject], opts: &PreCheckOptions) -> Result<CheckReport, ClusterError> {
    let plan = Plan::build(objects)?;
    let api = ApiClient::connect(&opts.target).await?.within(opts.timeout);
    let resolver = Resolver::new(api.clone());
    let mut report =
        CheckReport { server: api.server.clone(), release: opts.release.clone(), items: Vec::new(), guide: GUIDE };
    let version = match preflight::server_version(&api).await {
        Ok(version) => version,
        Err(e) => {
            report.items.push(failed(
                "api",
                &e,
                "check the kubeconfig's server and context, and that the cluster runs",
            ));
            return Ok(report);
        }
    };
    report.items.push(item("api", Mark::Pass, format!("Kubernetes {version}"), None));
    report.items.push(kubernetes(&version, opts));
    report.items.push(provided(&api, &resolver, &plan, opts).await);
    let resources = preflight::resources_of(&resolver, &plan).await;
    report.items.push(match &resources {
        Ok(r) => item("kinds", Mark::Pass, format!("{} resources", r.len()), None),
        Err(e) => failed("kinds", e, "install the CRDs the objects need first, or leave their component out"),
    });
    report.items.push(match resources {
        Ok(r) => match preflight::check_access(&api, &r).await {
            Ok(()) => item("access", Mark::Pass, "create and patch allowed for every resource", None),
            Err(e) => failed("access", &e, "run as a cluster administrator, or have one grant the verbs named"),
        },
        Err(_) => item("access", Mark::Warn, "not checked: some kinds are not served", None),
    });
    report.items.push(existing(&api, &plan).await);
    report.items.push(storage(&api, &plan).await);
    let nodes = capacity::nodes(&api).await;
    report.items.push(capacity::check(&nodes, &plan));
    report.items.push(match &nodes {
        Ok(nodes) => arch::architectures(nodes, &crate::catalog::images::collect(&bodies(objects))),
        Err(_) => item("architectures", Mark::Warn, "not checked: nodes cannot be listed", None),
    });
    report.items.push(admission::pod_security(&api, &plan).await);
    report.items.push(record(&api).await);
    Ok(report)
}

fn bodies(objects: &[RenderedObject]) -> Vec<Value> {
    objects.iter().map(|o| o.obj.clone()).collect()
}

fn kubernetes(version: &str, opts: &PreCheckOptions) -> Checked {
    match preflight::check_version(version, &opts.supported) {
        Ok(()) => item("kubernetes", Mark::Pass, format!("{version} is in {}", opts.supported), None),
        Err(why) => item(
            "kubernetes",
            Mark::Fail,
            why,
            Some(format!("use a cluster in {}'s range, or another --version", opts.release)),
        ),
    }
}

async fn provided(api: &ApiClient, resolver: &Resolver, plan: &Plan, opts: &PreCheckOptions) -> Checked {
    if opts.provided.is_empty() {
        return item("provided", Mark::Pass, "none: kfctl-rs installs every dependency", None);
    }
    let names: Vec<&str> = opts.provided.iter().map(|d| d.name.as_str()).collect();
    match crate::cluster::provided::check(api, resolver, plan, &opts.provided).await {
        Ok(()) => item("provided", Mark::Pass, format!("{} ready", names.join(", ")), None),
        Err(e) => failed("provided", &e, "install them first, or let kfctl-rs install them (`<name>.provided=false`)"),
    }
}

/// CRDs and webhook configurations the plan brings that exist without kfctl-rs's mark.
async fn existing(api: &ApiClient, plan: &Plan) -> Checked {
    let mut found = Vec::new();
    let watched = ["CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];
    for object in plan.objects().filter(|o| watched.contains(&o.reference.kind.as_str())) {
        let r = &object.reference;
        let path = match r.kind.as_str() {
            "CustomResourceDefinition" => {
                preflight::path("apiextensions.k8s.io", "v1", "customresourcedefinitions", false)
            }
            "MutatingWebhookConfiguration" => {
                preflight::path("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", false)
            }
            _ => preflight::path("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false),
        };
        match api.get(&path, None, &r.name).await {
            Ok(Some(live)) if !carries_mark(&live) => found.push(format!("{r} (managed by {})", managers(&live))),
            Ok(_) => {}
            Err(f) => return item("existing", Mark::Warn, format!("cannot read {r}: {f}"), None),
        }
    }
    match found.len() {
        0 => item("existing", Mark::Pass, "none", None),
        n => item(
            "existing",
            Mark::Fail,
            format!("{n} already there, not kfctl-rs's: {}", found.join("; ")),
            Some(
                "if the cluster runs that dependency, leave it to the cluster (`<component>.provided=true`); \
                 `kfctl-rs adopt` takes over a platform installed another way; kfctl-rs never deletes them either way"
                    .into(),
            ),
        ),
    }
}

fn managers(live: &Value) -> String {
    let mut names: Vec<&str> = live
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("manager").and_then(Value::as_str))
        .collect();
    names.dedup();
    if names.is_empty() { "no field manager".into() } else { names.join(", ") }
}

/// A default StorageClass, when a PersistentVolumeClaim of the plan names no class.
async fn storage(api: &ApiClient, plan: &Plan) -> Checked {
    let claims = plan
        .objects()
        .filter(|o| o.reference.kind == "PersistentVolumeClaim" && o.body.pointer("/spec/storageClassName").is_none())
        .count();
    if claims == 0 {
        return item("storage", Mark::Pass, "no claim needs a default StorageClass", None);
    }
    match api.list(&preflight::path("storage.k8s.io", "v1", "storageclasses", false), None, None).await {
        Ok(list) => match preflight::default_storage_class(&list) {
            Some(class) => item("storage", Mark::Pass, format!("{class} is the default"), None),
            None => item(
                "storage",
                Mark::Fail,
                format!("no default StorageClass: {claims} PersistentVolumeClaims would stay Pending"),
                Some(
                    "mark one default (`kubectl annotate storageclass NAME storageclass.kubernetes.io/is-default-class=true`), or set `global.storageClass`"
                        .into(),
                ),
            ),
        },
        Err(f) => item("storage", Mark::Warn, format!("cannot list StorageClasses: {f}"), None),
    }
}

/// Another install's record, or a run holding the lease.
async fn record(api: &ApiClient) -> Checked {
    match super::install::read_record(api).await {
        Ok(None) => item("record", Mark::Pass, "no kfctl-rs install here", None),
        Ok(Some(r)) => item(
            "record",
            Mark::Warn,
            format!("kfctl-rs installed {} (profile {}) here", r.meta.upstream_version, r.meta.profile),
            Some("`kfctl-rs upgrade` converges it; `install` does too".into()),
        ),
        Err(e) => item("record", Mark::Warn, e.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_has_a_title_and_the_text_marks_each() {
        let report = CheckReport {
            server: "https://x".into(),
            release: "26.03.1".into(),
            items: vec![
                item("api", Mark::Pass, "Kubernetes v1.35.0", None),
                item("storage", Mark::Fail, "no default StorageClass", Some("mark one".into())),
            ],
            guide: GUIDE,
        };
        let text = report.render_text();
        assert!(text.contains("✔ the API server answers: Kubernetes v1.35.0\n"), "{text}");
        assert!(text.contains(
            "✘ a default StorageClass for the PersistentVolumeClaims: no default StorageClass\n    mark one\n"
        ));
        assert!(text.ends_with("1 item(s) failed; see GUIDE.md#check-before-verify-after\n"), "{text}");
        assert!(report.failed());
        let ids: Vec<&str> = ITEMS.iter().map(|i| i.id).collect();
        let mut unique = ids.clone();
        unique.dedup();
        assert_eq!(ids, unique);
    }
}
