//! Running the dependency graph: each step starts as soon as what it needs is done.
//!
//! A [`Schedule`] holds the run of one [`Graph`]: the steps whose needs are met are queued,
//! the longest chain of waits ahead first ([`Graph::heights`]), then in plan order; objects are applied `concurrency` at a time through the engine's retry loop
//! (`Engine::apply_one`); an applied object that has a readiness rule to wait for, and every
//! gate (an endpoint, a made namespace), joins the waiting set, which is polled every
//! `poll_interval` (each check as the waves checked it: `Engine::judge`, `endpoint_ready`,
//! `converge::not_made`). A step is done when applied and ready; its successors whose needs
//! are all done are queued.
//!
//! [`Schedule::advance`] returns at each checkpoint: when waves are complete in plan order
//! (every object of them and of every earlier wave done) the caller writes them into the
//! record in plan order, so the same plan makes the same record whatever order the applies
//! finished in; when the run finished; or when it stopped (a refusal, a failed object, the
//! deadline, Ctrl-C), after the requests in flight finished, with what they applied handed over
//! by [`Schedule::take_rest`], again in plan order.
//!
//! Each step's time from its start to its readiness is kept, and [`Schedule::critical_path`]
//! gives the longest chain of them ([`Graph::longest_chain`]).

use super::graph::{Graph, Step};
use crate::cluster::ClusterError;
use crate::cluster::api::Applied;
use crate::cluster::engine::{Engine, Note, ObjectError, last_in_time, report_retry};
use crate::cluster::judge::{Verdict, Watch};
use crate::cluster::plan::{Plan, PlannedObject};
use crate::cluster::progress::{Event, FailedObject, Pending, Progress, RunClock};
use futures::future::{BoxFuture, Fuse, FusedFuture};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// What a run needs to read while it runs.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub engine: &'a Engine,
    pub plan: &'a Plan,
    pub graph: &'a Graph,
    /// The plan's objects in plan order (the graph's object nodes).
    pub objects: &'a [&'a PlannedObject],
    pub watch: &'a Watch,
}

/// Where [`Schedule::advance`] stopped.
pub(crate) enum Checkpoint {
    /// These waves (from 0) are now complete, in order.
    Waves(Range<usize>),
    /// Every step is done.
    Finished,
    /// The run stopped; nothing is in flight any more.
    Stopped(ClusterError),
}

/// The longest chain of steps, as the install reports it.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CriticalPath {
    /// Its length: the sum of its steps' times, in seconds.
    pub seconds: f64,
    /// Its steps in order, each with its time from start to ready, in seconds.
    pub steps: Vec<(String, f64)>,
}

/// What woke the run.
enum Woke {
    Note(Note),
    Applied(usize, Result<Applied, ObjectError>),
    Judged(Vec<(usize, Verdict, bool)>),
    Poll,
    Deadline,
    Interrupt,
}

type Applying<'a> = BoxFuture<'a, (usize, Result<Applied, ObjectError>)>;
type Polling<'a> = Fuse<BoxFuture<'a, Vec<(usize, Verdict, bool)>>>;

/// The run of one graph.
pub(crate) struct Schedule<'a> {
    ctx: Ctx<'a>,
    missing: Vec<usize>,
    /// Steps whose needs are done, highest first ([`Graph::heights`]), then in plan order.
    queue: BTreeSet<(Reverse<u32>, usize)>,
    height: Vec<u32>,
    /// Started steps waiting for readiness, by node, with what the last check said.
    waiting: BTreeMap<usize, String>,
    running: FuturesUnordered<Applying<'a>>,
    poll: std::pin::Pin<Box<Polling<'a>>>,
    next_poll: Instant,
    accepted: Vec<Option<Applied>>,
    started: Vec<Option<Instant>>,
    done: Vec<Option<Instant>>,
    wave_left: Vec<usize>,
    wave_started: Vec<Option<Instant>>,
    flushed: usize,
    /// Steps not done yet.
    left: usize,
    crds_left: usize,
    waits_total: usize,
    stop: bool,
    error: Option<ClusterError>,
    notes: (mpsc::UnboundedSender<Note>, mpsc::UnboundedReceiver<Note>),
    interrupt: (Option<watch::Sender<bool>>, watch::Receiver<bool>),
}

impl<'a> Schedule<'a> {
    pub(crate) fn new(ctx: Ctx<'a>) -> Self {
        let nodes = &ctx.graph.nodes;
        let missing: Vec<usize> = nodes.iter().map(|n| n.needs.len()).collect();
        let height = ctx.graph.heights(|n| u32::from(Self::waits(ctx, n)));
        let queue = (0..nodes.len()).filter(|&n| missing[n] == 0).map(|n| queue_key(ctx, &height, n)).collect();
        let mut wave_left = vec![0; ctx.plan.waves.len()];
        for node in nodes.iter().filter(|n| matches!(n.step, Step::Object(_))) {
            wave_left[node.wave] += 1;
        }
        let crds_left = ctx.objects.iter().filter(|o| is_crd(o)).count();
        let interrupt = match ctx.engine.interrupt.clone() {
            Some(rx) => (None, rx),
            None => {
                let (tx, rx) = watch::channel(false);
                (Some(tx), rx)
            }
        };
        let waits_total = (0..nodes.len()).filter(|&n| Self::waits(ctx, n)).count();
        Schedule {
            ctx,
            missing,
            queue,
            height,
            waiting: BTreeMap::new(),
            running: FuturesUnordered::new(),
            poll: Box::pin(Fuse::terminated()),
            next_poll: Instant::now(),
            accepted: vec![None; ctx.objects.len()],
            started: vec![None; nodes.len()],
            done: vec![None; nodes.len()],
            wave_left,
            wave_started: vec![None; ctx.plan.waves.len()],
            flushed: 0,
            left: nodes.len(),
            crds_left,
            waits_total,
            stop: false,
            error: None,
            notes: mpsc::unbounded_channel(),
            interrupt,
        }
    }

    /// Whether a step waits for readiness once started: gates always, objects when their rule is
    /// waited for (every rule, or with `--wait=false` only those later steps need).
    fn waits(ctx: Ctx<'a>, n: usize) -> bool {
        let wait = ctx.engine.settings.wait;
        match ctx.graph.nodes[n].step {
            Step::Object(i) => ctx.objects[i].rule.is_some_and(|rule| wait || rule.gates_later_waves()),
            _ => true,
        }
    }

    /// Run until the next checkpoint.
    pub(crate) async fn advance(&mut self, progress: &mut dyn Progress) -> Checkpoint {
        loop {
            if let Some(waves) = self.completed_waves() {
                return Checkpoint::Waves(waves);
            }
            if !self.stop && self.ctx.engine.interrupted() {
                self.halt(ClusterError::Interrupted { wave: self.current_wave() });
            }
            if !self.stop {
                self.start_ready(progress);
            }
            if self.running.is_empty() && self.stop {
                let error = self.error.take().unwrap_or(ClusterError::Interrupted { wave: self.current_wave() });
                return Checkpoint::Stopped(error);
            }
            if self.left == 0 {
                return Checkpoint::Finished;
            }
            self.step(progress).await;
        }
    }

    async fn step(&mut self, progress: &mut dyn Progress) {
        let deadline = self.ctx.engine.settings.deadline;
        let may_poll = self.poll.is_terminated() && !self.waiting.is_empty() && !self.stop;
        let woke = tokio::select! {
            Some(note) = self.notes.1.recv() => Woke::Note(note),
            Some((n, result)) = self.running.next(), if !self.running.is_empty() => Woke::Applied(n, result),
            verdicts = &mut self.poll, if !self.poll.is_terminated() => Woke::Judged(verdicts),
            _ = tokio::time::sleep_until(self.next_poll.into()), if may_poll => Woke::Poll,
            _ = tokio::time::sleep_until(deadline.into()), if !self.stop => Woke::Deadline,
            Ok(_) = self.interrupt.1.wait_for(|v| *v), if !self.stop => Woke::Interrupt,
        };
        match woke {
            Woke::Note(note) => report_retry(progress, &note),
            Woke::Applied(n, result) => self.applied(n, result, progress),
            Woke::Judged(verdicts) => self.judged(verdicts, progress),
            Woke::Poll => self.start_poll(),
            Woke::Deadline => self.timed_out(),
            Woke::Interrupt => {}
        }
    }

    fn start_ready(&mut self, progress: &mut dyn Progress) {
        let limit = self.ctx.engine.settings.concurrency.max(1);
        while let Some(key) = self.queue.first().copied() {
            let gate = !matches!(self.ctx.graph.nodes[key.1].step, Step::Object(_));
            if !gate && self.running.len() >= limit {
                return;
            }
            self.start(key, progress);
        }
    }

    fn start(&mut self, key: (Reverse<u32>, usize), progress: &mut dyn Progress) {
        let n = key.1;
        self.queue.remove(&key);
        self.started[n] = Some(Instant::now());
        let node = &self.ctx.graph.nodes[n];
        self.wave_begins(node.wave, progress);
        match node.step {
            Step::Object(i) => {
                let (engine, object, tx) = (self.ctx.engine, self.ctx.objects[i], self.notes.0.clone());
                self.running.push(async move { (n, engine.apply_one(object, &tx).await) }.boxed());
            }
            _ => {
                self.waiting.insert(n, String::new());
            }
        }
    }

    fn wave_begins(&mut self, wave: usize, progress: &mut dyn Progress) {
        if self.wave_started[wave].is_some() {
            return;
        }
        self.wave_started[wave] = Some(Instant::now());
        let w = &self.ctx.plan.waves[wave];
        let (index, total, name, objects) = (w.index, self.ctx.plan.waves.len(), w.name.as_str(), w.objects.len());
        progress.event(&Event::WaveStarted { index, total, name, objects });
    }

    /// When a wave started, if it did.
    pub(crate) fn wave_started(&self, wave: usize) -> Option<Instant> {
        self.wave_started[wave]
    }

    fn applied(&mut self, n: usize, result: Result<Applied, ObjectError>, progress: &mut dyn Progress) {
        let Step::Object(i) = self.ctx.graph.nodes[n].step else { return };
        let object = self.ctx.objects[i];
        match result {
            Ok(done) => {
                progress.event(&Event::Applied { object: &object.reference, created: done.created });
                self.accepted[i] = Some(done);
                match Self::waits(self.ctx, n) {
                    true => {
                        self.waiting.insert(n, String::new());
                    }
                    false => self.complete(n),
                }
            }
            Err(ObjectError::Skipped) => {}
            Err(error) => {
                let wave = &self.ctx.plan.waves[self.ctx.graph.nodes[n].wave].name;
                if let Some(error) = self.ctx.engine.object_error(wave, &object.reference, error) {
                    self.halt(error);
                }
                self.stop = true;
            }
        }
    }

    fn halt(&mut self, error: ClusterError) {
        self.stop = true;
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    fn complete(&mut self, n: usize) {
        self.done[n] = Some(Instant::now());
        self.left -= 1;
        let node = &self.ctx.graph.nodes[n];
        if let Step::Object(i) = node.step {
            self.wave_left[node.wave] -= 1;
            if is_crd(self.ctx.objects[i]) {
                self.crds_left = self.crds_left.saturating_sub(1);
                if self.crds_left == 0 {
                    self.ctx.engine.crds_done();
                }
            }
        }
        for &s in &self.ctx.graph.successors[n] {
            self.missing[s] -= 1;
            if self.missing[s] == 0 {
                self.queue.insert(queue_key(self.ctx, &self.height, s));
            }
        }
    }

    fn start_poll(&mut self) {
        let ctx = self.ctx;
        let items: Vec<usize> = self.waiting.keys().copied().collect();
        let deadline = ctx.engine.settings.deadline;
        let round = futures::stream::iter(items)
            .map(move |n| check(ctx, n).map(move |v| (n, v, Instant::now() >= deadline)))
            .buffered(ctx.engine.settings.concurrency.max(1))
            .collect::<Vec<_>>()
            .boxed();
        self.poll.set(round.fuse());
    }

    fn judged(&mut self, verdicts: Vec<(usize, Verdict, bool)>, progress: &mut dyn Progress) {
        self.next_poll = Instant::now() + self.ctx.engine.settings.poll_interval;
        let redactor = &self.ctx.engine.redactor;
        let mut failed: Vec<FailedObject> = Vec::new();
        let mut first_failed = None;
        for (n, verdict, late) in verdicts {
            let Some(before) = self.waiting.get_mut(&n) else { continue };
            match verdict {
                Verdict::Ready => {
                    self.waiting.remove(&n);
                    self.complete(n);
                }
                Verdict::Pending(message) => {
                    let last = last_in_time(std::mem::take(before), message, late);
                    *before = redactor.scrub(&last);
                }
                Verdict::Failed(f) => {
                    first_failed.get_or_insert(self.ctx.graph.nodes[n].wave);
                    let object = self.reference_of(n);
                    failed.push(FailedObject {
                        object,
                        reason: redactor.scrub(&f.reason),
                        message: redactor.scrub(&f.message),
                    });
                }
            }
        }
        if let Some(wave) = first_failed {
            let w = &self.ctx.plan.waves[wave];
            let error = ClusterError::Failed { wave: w.name.clone(), failed };
            return self.halt(error.numbered(w.index, self.ctx.plan.waves.len()));
        }
        if !self.waiting.is_empty() {
            let listed = self.pending();
            let clock = RunClock::of(self.ctx.engine.settings.deadline, self.ctx.engine.settings.timeout);
            progress.event(&Event::Waiting { pending: &listed, total: self.waits_total, clock });
        }
    }

    fn reference_of(&self, n: usize) -> crate::cluster::ObjectRef {
        match &self.ctx.graph.nodes[n].step {
            Step::Object(i) => self.ctx.objects[*i].reference.clone(),
            Step::Endpoint { namespace, name } => crate::cluster::ObjectRef {
                api_version: "v1".into(),
                kind: "Service".into(),
                namespace: Some(namespace.clone()),
                name: name.clone(),
            },
            Step::MadeNamespace { name, .. } => crate::cluster::ObjectRef {
                api_version: "v1".into(),
                kind: "Namespace".into(),
                namespace: None,
                name: name.clone(),
            },
        }
    }

    /// What is still pending, each with what the last check said (or, before anything waits,
    /// the objects not applied yet with what they wait for).
    fn pending(&self) -> Vec<Pending> {
        let mut out: Vec<Pending> =
            self.waiting.iter().map(|(n, m)| Pending { object: self.reference_of(*n), message: m.clone() }).collect();
        if out.is_empty() {
            let blocked = (0..self.done.len()).filter(|&n| self.done[n].is_none() && self.started[n].is_none());
            for n in blocked.filter(|&n| matches!(self.ctx.graph.nodes[n].step, Step::Object(_))) {
                let why = self.ctx.graph.nodes[n].needs.iter().find(|(p, _)| self.done[*p].is_none());
                let message =
                    why.map_or("not applied yet".into(), |(_, w)| format!("not applied: waits until {}", w.describe()));
                out.push(Pending { object: self.reference_of(n), message });
            }
        }
        out
    }

    fn timed_out(&mut self) {
        let first = self.waiting.keys().next().map(|n| self.ctx.graph.nodes[*n].wave);
        let wave = first.map_or_else(|| self.current_wave(), |w| self.ctx.plan.waves[w].name.clone());
        let seconds = self.ctx.engine.settings.timeout.as_secs_f64();
        self.halt(ClusterError::Timeout { wave, seconds, pending: self.pending() });
    }

    /// The first wave not complete, by name.
    fn current_wave(&self) -> String {
        let waves = &self.ctx.plan.waves;
        let at = (0..waves.len()).find(|&w| self.wave_left[w] > 0).unwrap_or(waves.len().saturating_sub(1));
        waves.get(at).map_or_else(String::new, |w| w.name.clone())
    }

    fn completed_waves(&mut self) -> Option<Range<usize>> {
        let from = self.flushed;
        while self.flushed < self.wave_left.len() && self.wave_left[self.flushed] == 0 {
            self.flushed += 1;
        }
        (self.flushed > from).then_some(from..self.flushed)
    }

    /// What the objects of a complete wave applied, in plan order.
    pub(crate) fn take_wave(&mut self, wave: usize) -> Vec<(&'a PlannedObject, Applied)> {
        let indices: Vec<usize> =
            (0..self.ctx.objects.len()).filter(|&n| self.ctx.graph.nodes[n].wave == wave).collect();
        indices.into_iter().filter_map(|i| Some((self.ctx.objects[i], self.accepted[i].take()?))).collect()
    }

    /// What every other object applied, with its wave (from 0), in plan order.
    pub(crate) fn take_rest(&mut self) -> Vec<(usize, &'a PlannedObject, Applied)> {
        let objects = self.ctx.objects;
        let nodes = &self.ctx.graph.nodes;
        (0..objects.len()).filter_map(|i| Some((nodes[i].wave, objects[i], self.accepted[i].take()?))).collect()
    }

    /// The longest chain of steps by their times from start to ready.
    pub(crate) fn critical_path(&self) -> CriticalPath {
        let own: Vec<Duration> = (0..self.done.len())
            .map(|n| match (self.started[n], self.done[n]) {
                (Some(s), Some(d)) => d.saturating_duration_since(s),
                _ => Duration::ZERO,
            })
            .collect();
        let (sum, chain) = self.ctx.graph.longest_chain(&own);
        let steps =
            chain.iter().map(|&n| (self.ctx.graph.describe(self.ctx.objects, n), own[n].as_secs_f64())).collect();
        CriticalPath { seconds: sum.as_secs_f64(), steps }
    }
}

/// One check of a waiting step: its readiness rule, its endpoint, its namespace.
async fn check(ctx: Ctx<'_>, n: usize) -> Verdict {
    match &ctx.graph.nodes[n].step {
        Step::Object(i) => {
            let object = ctx.objects[*i];
            match object.rule {
                Some(rule) => ctx.engine.judge(&object.reference, rule, &object.body, ctx.watch).await,
                None => Verdict::Ready,
            }
        }
        Step::Endpoint { namespace, name } => ctx.engine.endpoint_ready(namespace, name).await.into(),
        Step::MadeNamespace { name, who } => crate::cluster::converge::not_made(ctx.engine, name, who).await.into(),
    }
}

/// Where a ready step goes in the queue: gates first (they cost no apply and wait at once),
/// then the highest, then plan order.
fn queue_key(ctx: Ctx<'_>, height: &[u32], n: usize) -> (Reverse<u32>, usize) {
    match ctx.graph.nodes[n].step {
        Step::Object(_) => (Reverse(height[n]), n),
        _ => (Reverse(u32::MAX), n),
    }
}

fn is_crd(object: &PlannedObject) -> bool {
    object.reference.is_kind("apiextensions.k8s.io", "CustomResourceDefinition")
}
