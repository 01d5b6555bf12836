//! Judging one object while a wave waits: ready, pending, or failed.
//!
//! The readiness table (`crate::cluster::readiness`) judges what the live object says about itself. Two
//! of its failure facts need more, and this module supplies it:
//!
//! * **pods** ([`FailsWhen::PodsWaiting`]): the workload's pods are listed by its
//!   `spec.selector.matchLabels`, only once it was still pending at an earlier poll and then at
//!   most every [`POD_LIST_EVERY`], so a wave that gets ready on its own lists nothing; a
//!   Deployment's pods count only when they belong to its newest ReplicaSet (listed only when a
//!   pod looks failed). A list the server refuses judges nothing.
//! * **stalls** ([`FailsWhen::NoProgressFor`]): a [`Watch`] keeps each object's rollout counters
//!   between polls and fails it when they stood still past the row's bound.
//!
//! `status` reads once: it judges the table's condition facts and pods ([`pods_failure`]), not
//! stalls.

use crate::cluster::api::{ApiClient, ResourcePath};
use crate::cluster::engine::{Engine, scoped};
use crate::cluster::object::ObjectRef;
use crate::cluster::readiness::{
    self, FailsWhen, Failure, POD_LIST_EVERY, Readiness, Rule, newest_replica_set, pod_failure, pod_selector,
    progress_marker,
};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// What a wait learns about one object at one poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Ready,
    Pending(String),
    Failed(Failure),
}

impl From<Option<String>> for Verdict {
    fn from(pending: Option<String>) -> Self {
        pending.map_or(Verdict::Ready, Verdict::Pending)
    }
}

/// What one wave's wait remembers between polls, per object.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    seen: Mutex<HashMap<ObjectRef, Seen>>,
}

#[derive(Debug)]
struct Seen {
    polls: u32,
    pods_listed: Option<Instant>,
    marker: String,
    still_since: Instant,
}

/// What [`Watch::observe`] decides for one pending object.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Observed {
    /// Its rollout counters stood still past a bound.
    pub stalled: Option<Failure>,
    /// Its pods are due to be listed.
    pub list_pods: bool,
}

impl Watch {
    /// Note a pending object's live state at `now` against its failure `facts`.
    pub(crate) fn observe(&self, r: &ObjectRef, live: &Value, facts: &[FailsWhen], now: Instant) -> Observed {
        let Ok(mut seen) = self.seen.lock() else { return Observed { stalled: None, list_pods: false } };
        let marker = progress_marker(live);
        let entry = seen.entry(r.clone()).or_insert_with(|| Seen {
            polls: 0,
            pods_listed: None,
            marker: marker.clone(),
            still_since: now,
        });
        entry.polls += 1;
        if entry.marker != marker {
            entry.marker = marker;
            entry.still_since = now;
        }
        let still = now.saturating_duration_since(entry.still_since);
        let stalled = facts.iter().find_map(|fact| match fact {
            FailsWhen::NoProgressFor(bound) if still > *bound => Some(Failure {
                reason: "RolloutStalled".into(),
                message: format!("no rollout progress for {}s ({})", still.as_secs(), entry.marker),
            }),
            _ => None,
        });
        let due = entry.pods_listed.is_none_or(|at| now.saturating_duration_since(at) >= POD_LIST_EVERY);
        let list_pods = facts.contains(&FailsWhen::PodsWaiting) && entry.polls >= 2 && due;
        if list_pods {
            entry.pods_listed = Some(now);
        }
        Observed { stalled, list_pods }
    }
}

/// Seconds since the epoch, for the table's time-bound facts.
pub(crate) fn now_seconds() -> i64 {
    crate::cluster::lease::now().as_second()
}

impl Engine {
    /// The verdict on one object of a wave, `watch` keeping what earlier polls saw.
    pub(crate) async fn judge(&self, r: &ObjectRef, rule: Rule, body: &Value, watch: &Watch) -> Verdict {
        let path = match self.resolver.resolve(&r.api_version, &r.kind).await {
            Ok(path) => path,
            Err(f) => return Verdict::Pending(f.message),
        };
        let live = match self.api.get(&path, scoped(&path, r), &r.name).await {
            Ok(Some(live)) => live,
            Ok(None) => return Verdict::Pending("not found".into()),
            Err(f) => return Verdict::Pending(format!("cannot read: {f}")),
        };
        match readiness::verdict(r, rule, &live, now_seconds()) {
            Readiness::Ready if rule == Rule::CrdEstablished => self.crd_served(body).await.into(),
            Readiness::Ready => Verdict::Ready,
            Readiness::Failed(failure) => Verdict::Failed(failure),
            Readiness::Pending(message) => {
                let facts = readiness::fails_when(r);
                let observed = watch.observe(r, &live, facts, Instant::now());
                let from_pods = if observed.list_pods { pods_failure(&self.api, r, &live).await } else { None };
                observed.stalled.or(from_pods).map_or(Verdict::Pending(message), Verdict::Failed)
            }
        }
    }

    /// Whether discovery serves every served version of a CRD's kind.
    async fn crd_served(&self, crd: &Value) -> Option<String> {
        let group = crd.pointer("/spec/group").and_then(Value::as_str)?;
        let kind = crd.pointer("/spec/names/kind").and_then(Value::as_str)?;
        let versions = crd.pointer("/spec/versions").and_then(Value::as_array).cloned().unwrap_or_default();
        for version in versions.iter().filter(|v| v.get("served").and_then(Value::as_bool) != Some(false)) {
            let Some(name) = version.get("name").and_then(Value::as_str) else {
                continue;
            };
            let api_version = format!("{group}/{name}");
            if self.resolver.resolve(&api_version, kind).await.is_err() {
                return Some(format!("Established, {kind} not yet served by discovery at {api_version}"));
            }
        }
        None
    }
}

fn resource(group: &str, plural: &str) -> ResourcePath {
    ResourcePath { group: group.into(), version: "v1".into(), plural: plural.into(), namespaced: true }
}

/// A failed container among a workload's current pods, when its selector is plain labels and
/// the server lists them; `None` otherwise.
pub(crate) async fn pods_failure(api: &ApiClient, r: &ObjectRef, live: &Value) -> Option<Failure> {
    let selector = pod_selector(live)?;
    let namespace = r.namespace.as_deref().unwrap_or(crate::cluster::object::DEFAULT_NAMESPACE);
    let pods = api.list(&resource("", "pods"), Some(namespace), Some(&selector)).await.ok()?;
    let failure = pod_failure(live, &pods, None)?;
    if !r.is_kind("apps", "Deployment") {
        return Some(failure);
    }
    let sets = api.list(&resource("apps", "replicasets"), Some(namespace), Some(&selector)).await.ok();
    let newest = sets.and_then(|sets| newest_replica_set(live, &sets));
    match newest {
        Some(newest) => pod_failure(live, &pods, Some(&newest)),
        None => Some(failure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn sts() -> ObjectRef {
        ObjectRef {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            namespace: Some("kf".into()),
            name: "s".into(),
        }
    }

    fn live(ready: i64) -> Value {
        json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "replicas": 2, "readyReplicas": ready}})
    }

    #[test]
    fn a_rollout_standing_still_past_its_bound_stalls_and_progress_resets_it() {
        let watch = Watch::default();
        let facts = readiness::fails_when(&sts());
        let t0 = Instant::now();
        assert_eq!(watch.observe(&sts(), &live(1), facts, t0).stalled, None);
        let bound = readiness::ROLLOUT_STALL;
        assert_eq!(watch.observe(&sts(), &live(1), facts, t0 + bound).stalled, None, "at the bound is not past it");
        // a counter moved: the clock starts again
        assert_eq!(watch.observe(&sts(), &live(2), facts, t0 + bound + Duration::from_secs(1)).stalled, None);
        let late = t0 + bound * 2 + Duration::from_secs(2);
        let stalled = watch.observe(&sts(), &live(2), facts, late).stalled.unwrap();
        assert_eq!(stalled.reason, "RolloutStalled");
        assert!(stalled.message.starts_with("no rollout progress for 601s"), "{}", stalled.message);
    }

    #[test]
    fn pods_are_listed_from_the_second_poll_and_then_at_a_modest_rate() {
        let watch = Watch::default();
        let facts = readiness::fails_when(&sts());
        let t0 = Instant::now();
        let at = |secs: u64| watch.observe(&sts(), &live(0), facts, t0 + Duration::from_secs(secs)).list_pods;
        assert!(!at(0), "the first poll lists nothing");
        assert!(at(2));
        assert!(!at(4));
        assert!(at(2 + POD_LIST_EVERY.as_secs()));
        let crd = ObjectRef { kind: "CustomResourceDefinition".into(), ..sts() };
        let no_pods = || watch.observe(&crd, &json!({}), readiness::fails_when(&crd), t0).list_pods;
        assert!(!no_pods() && !no_pods(), "kinds without pod facts never list pods");
    }

    #[test]
    fn verdicts_from_optional_messages() {
        assert_eq!(Verdict::from(None), Verdict::Ready);
        assert_eq!(Verdict::from(Some("0/1 ready".to_string())), Verdict::Pending("0/1 ready".into()));
    }
}
