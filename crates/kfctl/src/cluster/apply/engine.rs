//! Applying a wave and waiting for it: the retry loop, concurrency, interrupts and deadlines.
//!
//! Objects of one wave are independent by construction, so they are applied concurrently
//! (`concurrency` at a time). Each apply runs the retry table: a race is retried with backoff
//! until the deadline, a mistake stops the wave. A stopping wave lets requests already in flight
//! finish, so the record names every object the server accepted. Progress events from the
//! concurrent applies travel over a channel to the one [`Progress`] sink.
//!
//! Waiting polls each pending object's live state with its readiness rule (`crate::cluster::judge`) until
//! all are ready, one has failed ([`ClusterError::Failed`], at once), the deadline passes
//! ([`ClusterError::Timeout`] lists every pending object with its last message) or Ctrl-C
//! arrives.

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Applied, ResourcePath};
use crate::cluster::discovery::Resolver;
use crate::cluster::immutable::{Forced, is_immutable_refusal, refused_field, replaceable_kind};
use crate::cluster::judge::Verdict;
use crate::cluster::mark::{Found, body_for, carries_mark};
use crate::cluster::object::ObjectRef;
use crate::cluster::plan::{PlannedObject, Wave};
use crate::cluster::progress::{Event, FailedObject, Pending, Progress, RunClock};
use crate::cluster::redact::Redactor;
use crate::cluster::retry::{ApiFailure, Backoff, Context, Decision, FailureClass, classify};
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How the engine behaves.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub force_conflicts: bool,
    pub dry_run: bool,
    pub concurrency: usize,
    pub poll_interval: Duration,
    pub backoff: Backoff,
    /// How long a kind may stay missing from discovery after its CRD wave.
    pub crd_grace: Duration,
    pub deadline: Instant,
    /// The whole allowance, for messages.
    pub timeout: Duration,
    /// Wait for every object's readiness, or only for what later waves need
    /// ([`crate::cluster::readiness::Rule::gates_later_waves`]).
    pub wait: bool,
}

/// Why one object did not apply.
#[derive(Debug)]
pub(crate) enum ObjectError {
    Failed(FailureClass, ApiFailure),
    Deadline(ApiFailure),
    /// Server dry run: what the object needs (its CRD, its namespace) is not installed yet, so
    /// the server cannot judge it.
    NotCheckable(&'static str),
    Skipped,
}

/// A retry notice from a concurrent apply.
pub(crate) struct RetryNote {
    object: ObjectRef,
    attempt: u32,
    delay: Duration,
    reason: String,
}

/// What a concurrent apply reports: a retry, or a line (a replace).
pub(crate) enum Note {
    Retry(RetryNote),
    Notice(String),
}

/// The engine of one run.
pub(crate) struct Engine {
    pub api: ApiClient,
    pub resolver: Resolver,
    pub settings: Settings,
    pub redactor: Redactor,
    pub crd_kinds: HashSet<String>,
    pub interrupt: Option<watch::Receiver<bool>>,
    /// Objects to replace before applying (an immutable field changes: [`crate::cluster::immutable`]).
    pub replacements: HashMap<ObjectRef, Forced>,
    crds_done_at: Mutex<Option<Instant>>,
}

impl Engine {
    pub(crate) fn new(api: ApiClient, settings: Settings, redactor: Redactor, crd_kinds: HashSet<String>) -> Self {
        let resolver = Resolver::new(api.clone());
        Engine {
            api,
            resolver,
            settings,
            redactor,
            crd_kinds,
            interrupt: None,
            replacements: HashMap::new(),
            crds_done_at: Mutex::new(None),
        }
    }

    /// Mark the end of the CRD wave: the discovery grace period starts now.
    pub(crate) fn crds_done(&self) {
        if let Ok(mut at) = self.crds_done_at.lock() {
            *at = Some(Instant::now());
        }
    }

    pub(crate) fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|rx| *rx.borrow())
    }

    /// Sleep, cut short by Ctrl-C.
    pub(crate) async fn pause(&self, delay: Duration) {
        let Some(rx) = self.interrupt.clone() else {
            return tokio::time::sleep(delay).await;
        };
        let mut rx = rx;
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = rx.wait_for(|v| *v) => {}
        }
    }

    fn within_grace(&self) -> bool {
        let done = self.crds_done_at.lock().ok().and_then(|at| *at);
        done.is_none_or(|at| at.elapsed() < self.settings.crd_grace)
    }

    /// Run `op` under the retry table until it succeeds, fails fast or the deadline passes.
    pub(crate) async fn retrying<T, F, Fut>(
        &self,
        object: &ObjectRef,
        notes: &mpsc::UnboundedSender<Note>,
        op: F,
    ) -> Result<T, ObjectError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, ApiFailure>>,
    {
        let ctx = Context { crd_in_plan: self.crd_kinds.contains(&object.group_kind()) };
        let mut attempt = 0;
        loop {
            if self.interrupted() {
                return Err(ObjectError::Skipped);
            }
            let mut failure = match op().await {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            failure.message = self.redactor.scrub(&failure.message);
            let (class, decision) = classify(&failure, ctx);
            if self.settings.dry_run && class == FailureClass::KindNotYetServed {
                return Err(ObjectError::NotCheckable("its CRD is not installed yet"));
            }
            if self.settings.dry_run && failure.is_missing_namespace() {
                return Err(ObjectError::NotCheckable("its namespace is not created yet"));
            }
            let give_up = match decision {
                Decision::FailFast => true,
                Decision::RetryWithinGrace => !self.within_grace(),
                Decision::Retry | Decision::RetryAfter => false,
            };
            if give_up {
                return Err(ObjectError::Failed(class, failure));
            }
            let delay = self.settings.backoff.delay_for(decision, &failure, attempt);
            if Instant::now() + delay >= self.settings.deadline {
                return Err(ObjectError::Deadline(failure));
            }
            let note = RetryNote { object: object.clone(), attempt, delay, reason: failure.to_string() };
            let _ = notes.send(Note::Retry(note));
            self.pause(delay).await;
            attempt += 1;
        }
    }

    /// Apply one object: replaced first when the plan says so; replaced after a 422 that says a
    /// field is immutable, for the kinds the table replaces.
    pub(crate) async fn apply_one(
        &self,
        object: &PlannedObject,
        notes: &mpsc::UnboundedSender<Note>,
    ) -> Result<Applied, ObjectError> {
        let r = &object.reference;
        let planned = self.replacements.get(r);
        if let Some(forced) = planned {
            if self.settings.dry_run {
                return Err(ObjectError::NotCheckable("it would be replaced (an immutable field changes)"));
            }
            self.replace(object, forced.remedy, &forced.describe(), notes).await?;
        }
        let absent_seen = AtomicBool::new(false);
        let applied = match self.send_apply(object, notes, &absent_seen).await {
            Err(ObjectError::Failed(_, f))
                if planned.is_none() && !self.settings.dry_run && is_immutable_refusal(&f) =>
            {
                let Some(remedy) = replaceable_kind(r) else {
                    return Err(ObjectError::Failed(FailureClass::Invalid, f));
                };
                let why = format!("{} is immutable (the server refused the patch)", refused_field(&f));
                self.replace(object, remedy, &why, notes).await?;
                self.send_apply(object, notes, &absent_seen).await?
            }
            other => other?,
        };
        // a 201 whose answer was lost reads as 200 on the retry: the object was absent when this
        // run first looked and now carries the mark, so this run's own request created it
        let created_here = absent_seen.load(Ordering::Relaxed) && carries_mark(&applied.live);
        Ok(Applied { created: applied.created || (created_here && !self.settings.dry_run), ..applied })
    }

    /// The server-side apply of one object, under the retry table: the live object is read
    /// first, and the body carries kfctl-rs's mark unless the object is pre-existing
    /// ([`crate::cluster::mark`]); `absent_seen` notes that some attempt found nothing there.
    async fn send_apply(
        &self,
        object: &PlannedObject,
        notes: &mpsc::UnboundedSender<Note>,
        absent_seen: &AtomicBool,
    ) -> Result<Applied, ObjectError> {
        let r = &object.reference;
        self.retrying(r, notes, || async {
            let path = self.resolver.resolve(&r.api_version, &r.kind).await?;
            let namespace = scoped(&path, r);
            let api = self.api.without_retries();
            let found = match api.get(&path, namespace, &r.name).await {
                Ok(live) => Found::of(live.as_ref()),
                Err(f) => return Err(self.forget_unserved(r, f).await),
            };
            if found == Found::Absent {
                absent_seen.store(true, Ordering::Relaxed);
            }
            let body = body_for(&object.body, found);
            let result =
                api.apply(&path, namespace, &r.name, &body, self.settings.force_conflicts, self.settings.dry_run).await;
            match result {
                Err(f) => Err(self.forget_unserved(r, f).await),
                ok => ok,
            }
        })
        .await
    }

    /// A failure saying the resource is not served any more makes discovery ask again.
    async fn forget_unserved(&self, r: &ObjectRef, failure: ApiFailure) -> ApiFailure {
        if failure.is_unserved_resource() {
            self.resolver.forget(&r.api_version).await;
        }
        failure
    }

    /// Apply every object of a wave; `applied` is called for each object the server accepted, in
    /// the wave's order once the wave's applies are done.
    pub(crate) async fn apply_wave(
        &self,
        wave: &Wave,
        progress: &mut dyn Progress,
        applied: &mut dyn FnMut(&PlannedObject, &Applied),
    ) -> Result<(), ClusterError> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Note>();
        let stop = AtomicBool::new(false);
        let mut first_error: Option<ClusterError> = None;
        let mut accepted: Vec<(&PlannedObject, Applied)> = Vec::new();
        {
            let (tx, stop) = (&tx, &stop);
            let mut results = futures::stream::iter(wave.objects.iter())
                .map(|object| async move {
                    if stop.load(Ordering::Relaxed) {
                        return (object, Err(ObjectError::Skipped));
                    }
                    (object, self.apply_one(object, tx).await)
                })
                .buffer_unordered(self.settings.concurrency.max(1));
            loop {
                tokio::select! {
                    Some(note) = rx.recv() => report_retry(progress, &note),
                    next = results.next() => match next {
                        None => break,
                        Some((object, Ok(done))) => {
                            progress.event(&Event::Applied { object: &object.reference, created: done.created });
                            accepted.push((object, done));
                        }
                        Some((object, Err(ObjectError::NotCheckable(why)))) => {
                            let line = format!("dry run: {} not checked, {why}", object.reference);
                            progress.event(&Event::Notice(&line));
                        }
                        Some((object, Err(error))) => {
                            if !matches!(error, ObjectError::Skipped) {
                                stop.store(true, Ordering::Relaxed);
                            }
                            if first_error.is_none() {
                                first_error = self.object_error(&wave.name, &object.reference, error);
                            }
                        }
                    },
                }
            }
        }
        while let Ok(note) = rx.try_recv() {
            report_retry(progress, &note);
        }
        // applies finish in any order; what they tell the record goes in the plan's order, so
        // the same plan makes the same record (and the same deletion order)
        accepted.sort_by_key(|(object, _)| wave.objects.iter().position(|o| std::ptr::eq(o, *object)));
        for (object, done) in &accepted {
            applied(object, done);
        }
        if self.interrupted() {
            return Err(ClusterError::Interrupted { wave: wave.name.clone() });
        }
        first_error.map_or(Ok(()), Err)
    }

    pub(crate) fn object_error(&self, wave: &str, object: &ObjectRef, error: ObjectError) -> Option<ClusterError> {
        let object = object.clone();
        match error {
            ObjectError::Skipped | ObjectError::NotCheckable(_) => None,
            ObjectError::Failed(FailureClass::FieldConflict, failure) => {
                Some(ClusterError::Conflict { object, failure: Box::new(failure) })
            }
            ObjectError::Failed(_, failure) => Some(ClusterError::Refused { object, failure: Box::new(failure) }),
            ObjectError::Deadline(failure) => Some(ClusterError::Timeout {
                wave: wave.to_string(),
                seconds: self.settings.timeout.as_secs_f64(),
                pending: vec![Pending { object, message: format!("not applied: {failure}") }],
            }),
        }
    }

    /// Poll `items` with `check` (None or [`Verdict::Ready`]: ready) until none is pending; a
    /// [`Verdict::Failed`] ends the wait at once with [`ClusterError::Failed`].
    pub(crate) async fn wait_until<T: Clone, V: Into<Verdict>, F, Fut>(
        &self,
        wave: &str,
        items: Vec<(ObjectRef, T)>,
        progress: &mut dyn Progress,
        check: F,
    ) -> Result<(), ClusterError>
    where
        F: Fn(ObjectRef, T) -> Fut,
        Fut: Future<Output = V>,
    {
        let total = items.len();
        let mut pending: Vec<(ObjectRef, T, String)> = items.into_iter().map(|(r, t)| (r, t, String::new())).collect();
        while !pending.is_empty() {
            let deadline = self.settings.deadline;
            let verdicts: Vec<(Verdict, bool)> = futures::stream::iter(pending.iter())
                .map(|(r, t, _)| check(r.clone(), t.clone()).map(move |v| (v.into(), Instant::now() >= deadline)))
                .buffered(self.settings.concurrency.max(1))
                .collect()
                .await;
            let mut failed: Vec<FailedObject> = Vec::new();
            pending = pending
                .into_iter()
                .zip(verdicts)
                .filter_map(|((r, t, before), (verdict, late))| match verdict {
                    Verdict::Ready => None,
                    Verdict::Pending(message) => Some((r, t, last_in_time(before, message, late))),
                    Verdict::Failed(f) => {
                        let (reason, message) = (self.redactor.scrub(&f.reason), self.redactor.scrub(&f.message));
                        failed.push(FailedObject { object: r, reason, message });
                        None
                    }
                })
                .collect();
            if !failed.is_empty() {
                return Err(ClusterError::Failed { wave: wave.to_string(), failed });
            }
            if pending.is_empty() {
                break;
            }
            let listed: Vec<Pending> = pending
                .iter()
                .map(|(r, _, m)| Pending { object: r.clone(), message: self.redactor.scrub(m) })
                .collect();
            let clock = RunClock::of(self.settings.deadline, self.settings.timeout);
            progress.event(&Event::Waiting { pending: &listed, total, clock });
            if self.interrupted() {
                return Err(ClusterError::Interrupted { wave: wave.to_string() });
            }
            let timed_out = || ClusterError::Timeout {
                wave: wave.to_string(),
                seconds: self.settings.timeout.as_secs_f64(),
                pending: listed.clone(),
            };
            let now = Instant::now();
            if now >= self.settings.deadline {
                return Err(timed_out());
            }
            self.pause(self.settings.poll_interval.min(self.settings.deadline - now)).await;
            if Instant::now() >= self.settings.deadline {
                // No time is left for another read: the verdicts just listed are the last.
                return Err(timed_out());
            }
        }
        Ok(())
    }

    /// `None` when the Service has a ready endpoint.
    pub(crate) async fn endpoint_ready(&self, namespace: &str, name: &str) -> Option<String> {
        endpoint_ready(&self.api, &self.resolver, namespace, name).await
    }
}

/// `None` when the Service `namespace/name` has a ready endpoint (its EndpointSlices, else its
/// core Endpoints), else what is wrong: the webhook gate's check, and the preflight's for a
/// dependency the cluster provides.
pub(crate) async fn endpoint_ready(
    api: &ApiClient,
    resolver: &Resolver,
    namespace: &str,
    name: &str,
) -> Option<String> {
    let selector = format!("kubernetes.io/service-name={name}");
    if let Ok(path) = resolver.resolve("discovery.k8s.io/v1", "EndpointSlice").await {
        return match api.list(&path, Some(namespace), Some(&selector)).await {
            Ok(list) if has_ready_slice_endpoint(&list) => None,
            Ok(_) => Some("no ready endpoint".into()),
            Err(f) => Some(format!("cannot list endpoints: {f}")),
        };
    }
    let path =
        ResourcePath { group: String::new(), version: "v1".into(), plural: "endpoints".into(), namespaced: true };
    match api.get(&path, Some(namespace), name).await {
        Ok(Some(ep)) if has_ready_address(&ep) => None,
        Ok(_) => Some("no ready endpoint".into()),
        Err(f) => Some(format!("cannot read endpoints: {f}")),
    }
}

/// The pending message to list: one read that ended past the deadline (often cut off by it)
/// does not replace what the last read in time saw.
pub(crate) fn last_in_time(before: String, now: String, late: bool) -> String {
    if late && !before.is_empty() { before } else { now }
}

/// The namespace to use in a URL for `r` on `path`.
pub(crate) fn scoped<'a>(path: &ResourcePath, r: &'a ObjectRef) -> Option<&'a str> {
    if path.namespaced {
        Some(r.namespace.as_deref().unwrap_or(crate::cluster::object::DEFAULT_NAMESPACE))
    } else {
        None
    }
}

pub(crate) fn report_retry(progress: &mut dyn Progress, note: &Note) {
    match note {
        Note::Retry(note) => progress.event(&Event::Retrying {
            object: &note.object,
            attempt: note.attempt,
            delay: note.delay,
            reason: &note.reason,
        }),
        Note::Notice(line) => progress.event(&Event::Notice(line)),
    }
}

/// An EndpointSlice list with an endpoint not marked unready (unset means ready).
pub(crate) fn has_ready_slice_endpoint(list: &Value) -> bool {
    let slices = list.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    slices
        .iter()
        .flat_map(|s| s.get("endpoints").and_then(Value::as_array).into_iter().flatten())
        .any(|e| e.pointer("/conditions/ready").and_then(Value::as_bool) != Some(false))
}

/// Core Endpoints with at least one ready address.
pub(crate) fn has_ready_address(endpoints: &Value) -> bool {
    let subsets = endpoints.get("subsets").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    subsets.iter().any(|s| s.get("addresses").and_then(Value::as_array).is_some_and(|a| !a.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn endpoint_slices_ready_unless_marked_unready() {
        assert!(has_ready_slice_endpoint(&json!({"items": [{"endpoints": [{"addresses": ["10.0.0.1"]}]}]})));
        let unready = json!({"items": [{"endpoints": [{"conditions": {"ready": false}}]}]});
        assert!(!has_ready_slice_endpoint(&unready));
        assert!(!has_ready_slice_endpoint(&json!({"items": []})));
        assert!(has_ready_address(&json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]})));
        assert!(!has_ready_address(&json!({"subsets": [{"notReadyAddresses": [{"ip": "10.0.0.1"}]}]})));
    }
}
