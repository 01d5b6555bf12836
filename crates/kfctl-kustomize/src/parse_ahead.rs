//! Parsing ahead of the accumulation, on the other cores, while it runs.
//!
//! Accumulation is sequential and consumes object files in a known order: the order in which
//! [`crate::prefetch`] finds them. Rather than parsing every file before accumulating (the
//! accumulating thread idle meanwhile) and then accumulating (the other cores idle), each
//! file gets a [`Slot`] and background jobs on the rayon pool parse the slots front to back
//! while the accumulation starts at once. Whoever reaches a slot first parses it: a
//! background job skips a slot somebody has claimed; the accumulation parses a slot nobody
//! has started itself, and waits only for one being parsed. Nothing here waits on anything
//! but a parse in progress, so nothing can deadlock.
//!
//! Errors are not kept: a failed parse leaves an empty slot, and the loader parses the file
//! again on the accumulating thread to report the error in context. When the loader is
//! dropped (a build failed half-way, say), the jobs stop at their next file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::build_cache::inputs::Recorder;
use super::loader::{BareNulls, Docs};

/// A file's parsed documents and their bare nulls.
pub type Parsed = (Docs, BareNulls);

/// One file's parse, done by whichever thread gets to it first.
pub struct Slot {
    state: Mutex<State>,
    ready: Condvar,
}

enum State {
    Queued,
    Parsing,
    /// `None`: the parse failed, or the documents were taken.
    Done(Option<Parsed>),
}

impl Slot {
    /// A slot holding a finished parse.
    pub fn done(parsed: Parsed) -> Self {
        Slot { state: Mutex::new(State::Done(Some(parsed))), ready: Condvar::new() }
    }

    fn queued() -> Self {
        Slot { state: Mutex::new(State::Queued), ready: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Claim the parse if nobody has started it.
    fn claim(&self) -> bool {
        let mut state = self.lock();
        let queued = matches!(*state, State::Queued);
        if queued {
            *state = State::Parsing;
        }
        queued
    }

    fn finish(&self, parsed: Option<Parsed>) {
        *self.lock() = State::Done(parsed);
        self.ready.notify_all();
    }

    /// The finished state: parsed here with `parse` if nobody has started, else waited for.
    fn resolve(&self, parse: impl FnOnce() -> Option<Parsed>) -> MutexGuard<'_, State> {
        if self.claim() {
            self.finish(parse());
        }
        let mut state = self.lock();
        while matches!(*state, State::Parsing) {
            state = self.ready.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state
    }

    /// The parse (shared), or `None` if it failed or was taken.
    pub fn get(&self, parse: impl FnOnce() -> Option<Parsed>) -> Option<Parsed> {
        match &*self.resolve(parse) {
            State::Done(parsed) => parsed.clone(),
            State::Queued | State::Parsing => None,
        }
    }

    /// The parse, moved out of the slot, or `None` if it failed or was taken.
    pub fn take(&self, parse: impl FnOnce() -> Option<Parsed>) -> Option<Parsed> {
        match &mut *self.resolve(parse) {
            State::Done(parsed) => parsed.take(),
            State::Queued | State::Parsing => None,
        }
    }
}

/// Files to parse in order, shared by the background jobs.
pub struct Queue {
    work: Vec<(PathBuf, Arc<Slot>)>,
    next: AtomicUsize,
    cancelled: AtomicBool,
    recorder: Option<Arc<Recorder>>,
}

impl Queue {
    /// Queue `paths` (in the order they will be consumed); returns the queue and each path's
    /// slot, for the loader's cache.
    pub fn new(paths: Vec<PathBuf>, recorder: Option<Arc<Recorder>>) -> Arc<Queue> {
        let work = paths.into_iter().map(|p| (p, Arc::new(Slot::queued()))).collect();
        Arc::new(Queue { work, next: AtomicUsize::new(0), cancelled: AtomicBool::new(false), recorder })
    }

    /// The queued paths and their slots.
    pub fn slots(&self) -> impl Iterator<Item = (&Path, &Arc<Slot>)> {
        self.work.iter().map(|(p, s)| (p.as_path(), s))
    }

    /// Start one background job per pool thread.
    pub fn start(self: &Arc<Self>) {
        for _ in 0..rayon::current_num_threads() {
            let queue = Arc::clone(self);
            rayon::spawn(move || queue.run());
        }
    }

    /// Stop the jobs at their next file.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    fn run(&self) {
        while !self.cancelled.load(Ordering::Relaxed) {
            let Some((path, slot)) = self.work.get(self.next.fetch_add(1, Ordering::Relaxed)) else { return };
            if slot.claim() {
                slot.finish(super::loader::parse_file(path, self.recorder.as_deref()).ok());
            }
        }
    }
}
