//! An install by the dependency graph (`crate::cluster::apply::graph`): the run's side of it.
//!
//! Namespaces the plan makes must not be Terminating (an uninstall just deleted them): that is
//! waited for first, as the namespace wave did. Then the [`Schedule`] runs; at each checkpoint
//! the waves it completed are written into the record in plan order (their objects, `reach`,
//! the save) and announced as done, so the record says how far the run got in the plan's own
//! terms. When the run stops, what the applies in flight did is noted too, in plan order,
//! before the error goes up. A finished run keeps its critical path for the report.

use super::Run;
use crate::cluster::ClusterError;
use crate::cluster::converge;
use crate::cluster::engine::Engine;
use crate::cluster::graph::Graph;
use crate::cluster::judge::Watch;
use crate::cluster::order::Class;
use crate::cluster::plan::{Plan, PlannedObject};
use crate::cluster::progress::{Event, Progress};
use crate::cluster::schedule::{Checkpoint, Ctx, Schedule};
use std::ops::Range;

impl Run {
    /// Every object by the dependency graph, recording complete waves as they come.
    pub(super) async fn by_graph(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        progress: &mut dyn Progress,
    ) -> Result<(), ClusterError> {
        for wave in plan.waves.iter().filter(|w| w.class == Class::Namespace) {
            converge::wait_for_namespace_wave(engine, wave, progress).await?;
        }
        let graph = Graph::build(plan);
        let objects: Vec<&PlannedObject> = plan.objects().collect();
        let watch = Watch::default();
        let ctx = Ctx { engine, plan, graph: &graph, objects: &objects, watch: &watch };
        let mut schedule = Schedule::new(ctx);
        self.stage_at(plan, 0);
        loop {
            match schedule.advance(progress).await {
                Checkpoint::Waves(waves) => self.waves_complete(engine, plan, &mut schedule, waves, progress).await,
                Checkpoint::Finished => break,
                Checkpoint::Stopped(error) => {
                    for (wave, object, applied) in schedule.take_rest() {
                        self.note(object, plan.waves[wave].index, &applied);
                    }
                    return Err(error);
                }
            }
        }
        self.critical_path = Some(schedule.critical_path());
        Ok(())
    }

    async fn waves_complete(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        schedule: &mut Schedule<'_>,
        waves: Range<usize>,
        progress: &mut dyn Progress,
    ) {
        for w in waves.clone() {
            let wave = &plan.waves[w];
            for (object, applied) in schedule.take_wave(w) {
                self.note(object, wave.index, &applied);
            }
            self.waves_done = wave.index;
            if let Some(record) = &mut self.record {
                record.reach(wave.index, &wave.name);
            }
            let elapsed = schedule.wave_started(w).map(|at| at.elapsed()).unwrap_or_default();
            progress.event(&Event::WaveDone { index: wave.index, name: &wave.name, elapsed });
        }
        self.stage_at(plan, waves.end);
        self.save(engine).await;
    }

    /// The stage for the record's `lastRun`: the first wave not complete.
    fn stage_at(&mut self, plan: &Plan, wave: usize) {
        if let Some(w) = plan.waves.get(wave) {
            self.stage = format!("wave {}/{}: {}", w.index, plan.waves.len(), w.name);
        }
    }
}
