//! `kfctl-rs check` after an install: the installed platform as a checklist, nothing written.
//!
//! The counterpart of `check --pre` ([`super::check`]), in the same shape ([`CheckReport`],
//! each item ✔/✘/! with what was found and what to do). It reads the install record and every
//! object it lists once, then judges the items of [`ITEMS`]:
//!
//! - **present**: every recorded object exists;
//! - **drift**: each exists as the object the install made or adopted (its recorded UID), and
//!   the fields kfctl-rs applies hold the values it applied: the objects rendered again for the
//!   record ([`Rendered`]) applied as a server dry run and compared with the live ones, as `diff`
//!   does; each drifted field with its path, both values and the manager owning it now
//!   (`drift`; a warning, with how to restore or keep the change);
//! - **ready**: the install's readiness table, as `status` judges it ([`super::status`]);
//! - **crds**, **webhooks**, **certificates**, **gateway**, **login**, **injection**: the parts a
//!   working Kubeflow needs beyond readiness (`services` module).
//!
//! A server that does not answer fails the first item and ends the list; so does a cluster
//! without a record.

use super::check::{CheckReport, Checked, Item, Mark};
use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Target};
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::scoped;
use crate::cluster::install::read_record;
use crate::cluster::preflight;
use crate::cluster::readiness::{Readiness, Rule};
use crate::cluster::record::{InstallMeta, InstallRecord, InventoryEntry};
use futures::StreamExt;
use serde_json::Value;
use std::time::Duration;

mod drift;
mod owners;
mod services;

pub use drift::{Drift, DriftedField, DriftedObject, FIELDS_SHOWN, Rendered, SHOWN};

/// Every item, in the order they run.
pub const ITEMS: &[Item] = &[
    Item { id: "api", title: "the API server answers" },
    Item { id: "record", title: "the install record: complete, last run succeeded" },
    Item { id: "present", title: "every recorded object present" },
    Item { id: "drift", title: "recorded objects as installed: their UID, the fields kfctl-rs applied" },
    Item { id: "ready", title: "recorded workloads and resources ready" },
    Item { id: "crds", title: "recorded CRDs Established" },
    Item { id: "webhooks", title: "webhooks with a caBundle and a Service with ready endpoints" },
    Item { id: "certificates", title: "cert-manager Certificates Ready" },
    Item { id: "gateway", title: "the Kubeflow Gateway and its ingress with ready endpoints" },
    Item { id: "login", title: "the login path (Dex, oauth2-proxy) with ready endpoints" },
    Item { id: "injection", title: "sidecar injection on Profile namespaces" },
];

/// Where GUIDE explains the items.
pub const GUIDE: &str = "GUIDE.md#after-the-install";

/// Requests in flight at once while reading the recorded objects.
const CONCURRENCY: usize = crate::cluster::DEFAULT_CONCURRENCY;

/// Names listed in one item's detail before `and N more`.
const LISTED: usize = 10;

/// One recorded object as read now.
pub(crate) struct Live<'a> {
    pub(crate) entry: &'a InventoryEntry,
    /// The live object; `None` when it does not exist or could not be read (`error`).
    pub(crate) object: Option<Value>,
    pub(crate) error: Option<String>,
}

pub(crate) fn item(id: &'static str, mark: Mark, detail: impl Into<String>, hint: Option<&str>) -> Checked {
    let title = ITEMS.iter().find(|i| i.id == id).map_or(id, |i| i.title);
    Checked { id, title, mark, detail: detail.into(), hint: hint.map(str::to_string), drift: None }
}

/// `a, b, c and 4 more`.
pub(crate) fn listed(names: &[String]) -> String {
    let shown = names.iter().take(LISTED).cloned().collect::<Vec<_>>().join(", ");
    match names.len().saturating_sub(LISTED) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// What the install record says was installed, for the caller to render before
/// [`check_installed`]; `None` when there is no record or it cannot be read now (the check
/// says why). `Err` only when the kubeconfig cannot be used or the deadline ended the read.
pub async fn installed_meta(target: &Target, timeout: Duration) -> Result<Option<InstallMeta>, ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout);
    match read_record(&api).await {
        Ok(record) => Ok(record.map(|r| r.meta)),
        Err(e @ ClusterError::NoAnswer { .. }) => Err(e),
        Err(_) => Ok(None),
    }
}

/// Judge every item of [`ITEMS`] on the installed platform, the drift item's fields against
/// `rendered`; writes nothing (the dry runs persist nothing). Every call within `timeout` (one
/// deadline for the run). `Err` only when the kubeconfig cannot be used or the deadline ended
/// a call.
pub async fn check_installed(
    target: &Target,
    timeout: Duration,
    rendered: &Rendered,
) -> Result<CheckReport, ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout);
    check_with(&api, rendered).await
}

/// [`check_installed`] on a connected client.
pub(crate) async fn check_with(api: &ApiClient, rendered: &Rendered) -> Result<CheckReport, ClusterError> {
    let mut report =
        CheckReport { server: api.server.clone(), release: String::new(), items: Vec::new(), guide: GUIDE };
    match preflight::server_version(api).await {
        Ok(version) => report.items.push(item("api", Mark::Pass, format!("Kubernetes {version}"), None)),
        Err(e) => {
            let hint = "check the kubeconfig's server and context, and that the cluster runs";
            report.items.push(item("api", Mark::Fail, e.to_string(), Some(hint)));
            return Ok(report);
        }
    }
    let Some(record) = read_record(api).await? else {
        let hint = "nothing was installed by kfctl-rs here: `kfctl-rs install`, or `kfctl-rs adopt` for a platform installed another way";
        report.items.push(item("record", Mark::Fail, ClusterError::NoRecord.to_string(), Some(hint)));
        return Ok(report);
    };
    report.release = record.meta.upstream_version.clone();
    report.items.push(record_item(&record));
    let resolver = Resolver::new(api.clone());
    let lives = read_all(api, &resolver, &record).await?;
    report.items.push(present(&lives));
    report.items.push(drift::drift(api, &record, &lives, rendered).await?);
    report.items.push(ready(api).await?);
    report.items.push(crds(&lives));
    report.items.push(services::webhooks(api, &resolver, &lives).await);
    report.items.push(certificates(&lives));
    report.items.push(services::gateway(api, &resolver, &lives).await);
    report.items.push(services::login(api, &resolver, &lives).await);
    report.items.push(services::injection(api).await);
    Ok(report)
}

/// The checklist as text, ending with the verdict.
pub fn render_text(report: &CheckReport) -> String {
    let heading = match report.release.as_str() {
        "" => format!("checking the install on {}", report.server),
        release => format!("checking the install of Kubeflow {release} on {}", report.server),
    };
    report.render_with(&heading, "the install passes every check")
}

fn record_item(record: &InstallRecord) -> Checked {
    let what = format!(
        "{} (profile {}), {}/{} waves",
        record.meta.upstream_version, record.meta.profile, record.waves_done, record.waves_total
    );
    match &record.last_run {
        Some(run) if !run.succeeded => item(
            "record",
            Mark::Fail,
            format!("{what}; the last {} failed at {}", run.operation, run.stage),
            Some("fix what its error names (`kfctl-rs status` shows it) and run install again, which resumes"),
        ),
        _ if !record.is_complete() => item(
            "record",
            Mark::Fail,
            format!("{what}: the last run stopped before its last wave"),
            Some("run install again, which resumes"),
        ),
        _ => item("record", Mark::Pass, what, None),
    }
}

/// Read every recorded object once; an error only when the deadline ended a read.
async fn read_all<'a>(
    api: &ApiClient,
    resolver: &Resolver,
    record: &'a InstallRecord,
) -> Result<Vec<Live<'a>>, ClusterError> {
    let read = |entry: &'a InventoryEntry| async move {
        let r = &entry.reference;
        let failed = |f: crate::cluster::retry::ApiFailure| {
            if ClusterError::ended_by_timeout(api, &f) {
                Err(ClusterError::no_answer(api, format!("reading {r}"), f))
            } else {
                Ok(Live { entry, object: None, error: Some(f.to_string()) })
            }
        };
        let path = match resolver.resolve(&r.api_version, &r.kind).await {
            Ok(path) => path,
            Err(f) => return failed(f),
        };
        match api.get(&path, scoped(&path, r), &r.name).await {
            Ok(object) => Ok(Live { entry, object, error: None }),
            Err(f) => failed(f),
        }
    };
    let lives: Vec<Result<Live<'a>, ClusterError>> =
        futures::stream::iter(record.inventory.iter()).map(read).buffered(CONCURRENCY).collect().await;
    lives.into_iter().collect()
}

fn present(lives: &[Live<'_>]) -> Checked {
    let missing: Vec<String> = lives
        .iter()
        .filter(|l| l.object.is_none())
        .map(|l| match &l.error {
            Some(e) => format!("{} (cannot read: {e})", l.entry.reference),
            None => l.entry.reference.to_string(),
        })
        .collect();
    match missing.len() {
        0 => item("present", Mark::Pass, format!("{} objects", lives.len()), None),
        n => item(
            "present",
            Mark::Fail,
            format!("{n} of {} missing: {}", lives.len(), listed(&missing)),
            Some("run install again (or upgrade), which re-creates what is missing"),
        ),
    }
}

/// The readiness `status` judges, less the missing objects `present` names.
async fn ready(api: &ApiClient) -> Result<Checked, ClusterError> {
    let status = match super::status::status_with(api, CONCURRENCY, None).await {
        Ok(status) => status,
        Err(e @ ClusterError::NoAnswer { .. }) => return Err(e),
        Err(e) => return Ok(item("ready", Mark::Warn, format!("not checked: {e}"), None)),
    };
    let mut wrong = Vec::new();
    for c in &status.components {
        wrong.extend(c.failed.iter().map(|f| format!("{} failed ({})", f.object, f.reason)));
        wrong.extend(
            c.pending.iter().filter(|p| p.message != "missing").map(|p| format!("{} ({})", p.object, p.message)),
        );
    }
    let checked: usize = status.components.iter().map(|c| c.objects).sum();
    Ok(match wrong.len() {
        0 => item("ready", Mark::Pass, format!("{checked} objects ready"), None),
        n => item(
            "ready",
            Mark::Fail,
            format!("{n} not ready: {}", listed(&wrong)),
            Some("`kfctl-rs status` shows each; `kubectl describe` the object and its pods' events"),
        ),
    })
}

fn of_kind<'a, 'b>(
    lives: &'b [Live<'a>],
    group: &'b str,
    kind: &'b str,
) -> impl Iterator<Item = (&'b Live<'a>, &'b Value)> {
    lives.iter().filter(move |l| l.entry.reference.is_kind(group, kind)).filter_map(|l| Some((l, l.object.as_ref()?)))
}

/// Objects of `group`/`kind` that `rule` does not judge ready, each with why.
fn not_ready(lives: &[Live<'_>], group: &str, kind: &str, rule: Rule) -> (usize, Vec<String>) {
    let mut seen = 0;
    let mut wrong = Vec::new();
    for (l, live) in of_kind(lives, group, kind) {
        seen += 1;
        match rule.evaluate(live) {
            Readiness::Ready => {}
            Readiness::Pending(why) => wrong.push(format!("{} ({why})", l.entry.reference.name)),
            Readiness::Failed(f) => wrong.push(format!("{} ({})", l.entry.reference.name, f.reason)),
        }
    }
    (seen, wrong)
}

fn crds(lives: &[Live<'_>]) -> Checked {
    let (seen, wrong) = not_ready(lives, "apiextensions.k8s.io", "CustomResourceDefinition", Rule::CrdEstablished);
    match wrong.len() {
        0 => item("crds", Mark::Pass, format!("{seen} Established"), None),
        n => item(
            "crds",
            Mark::Fail,
            format!("{n} of {seen} not Established: {}", listed(&wrong)),
            Some("`kubectl describe crd NAME` shows why (a name conflict, an invalid schema)"),
        ),
    }
}

fn certificates(lives: &[Live<'_>]) -> Checked {
    let (seen, wrong) = not_ready(lives, "cert-manager.io", "Certificate", Rule::ReadyCondition);
    match (seen, wrong.len()) {
        (0, _) => item("certificates", Mark::Pass, "none recorded", None),
        (_, 0) => item("certificates", Mark::Pass, format!("{seen} Ready"), None),
        (_, n) => item(
            "certificates",
            Mark::Fail,
            format!("{n} of {seen} not Ready: {}", listed(&wrong)),
            Some("`kubectl describe certificate -n NAMESPACE NAME` and cert-manager's logs show why (its issuer)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_unique_and_the_text_ends_with_the_verdict() {
        let mut ids: Vec<&str> = ITEMS.iter().map(|i| i.id).collect();
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), count);
        let report = CheckReport {
            server: "https://x".into(),
            release: "26.03.1".into(),
            items: vec![item("present", Mark::Pass, "3 objects", None)],
            guide: GUIDE,
        };
        let text = render_text(&report);
        assert!(text.starts_with("checking the install of Kubeflow 26.03.1 on https://x\n"), "{text}");
        assert!(text.contains("✔ every recorded object present: 3 objects\n"), "{text}");
        assert!(text.ends_with("the install passes every check\n"), "{text}");
    }

    #[test]
    fn long_lists_are_cut() {
        let names: Vec<String> = (0..13).map(|i| format!("o{i}")).collect();
        assert!(listed(&names).ends_with("o9 and 3 more"));
    }
}
