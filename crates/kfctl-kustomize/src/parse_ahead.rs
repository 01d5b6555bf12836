//! Parsing ahead of the accumulation, on the other cores, while it runs.
//!
//! Accumulation is sequential and consumes object files in a known order: the order in which
//! [`crate::prefetch`] finds them. Rather than parsing every file before accumulating (the
//! accumulating thread idle meanwhile) and then accumulating (the other cores idle), each
//! file gets a [`Slot`] and background jobs on the rayon pool parse the slots front to back
//! while the accumulation starts at once. Whoever reaches a slot first parses it: a
//! background job skips a slot somebody has claimed; the accumulation parses a slot nobody
//! has started itself, and waits only for one being parsed. Nothing here waits on anything
//! but a parse in progress, so nothing can deadlock. A job yields to the pool between files
//! (`rayon::yield_now`): a large file the accumulation parses itself is split across the
//! pool, and without the yield its parts would wait for the jobs to run out of files (the
//! accumulating thread stood idle for 40 ms of a 90 ms `build example` that way).
//!
//! Errors are not kept: a failed parse leaves an empty slot, and the loader parses the file
//! again on the accumulating thread to report the error in context. When the loader is
//! dropped (at the end of a build, or when it failed half-way), the jobs stop at their next
//! file, and the drop waits for the parses in progress: after it, no job holds the build's
//! [`Recorder`] any more (the build cache takes it back whole).
//!
//! The parse itself ([`parse_file`]) lives here too, for both: the loader calls it on the
//! accumulating thread, the jobs ahead of it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::build_cache::inputs::{self, Recorder};
use super::error::{KustomizeError, Result};
use serde_json::Value;

/// Parsed documents of one file, shared between users.
pub(crate) type Docs = Arc<Vec<Value>>;

/// The bare nulls (`key:` with no value) of each document of a file, as JSON pointers.
pub(crate) type BareNulls = Arc<Vec<Vec<String>>>;

/// A file's parsed documents and their bare nulls.
pub(crate) type Parsed = (Docs, BareNulls);

/// One file's parse, done by whichever thread gets to it first.
pub(crate) struct Slot {
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
    pub(crate) fn done(parsed: Parsed) -> Self {
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
    pub(crate) fn get(&self, parse: impl FnOnce() -> Option<Parsed>) -> Option<Parsed> {
        match &*self.resolve(parse) {
            State::Done(parsed) => parsed.clone(),
            State::Queued | State::Parsing => None,
        }
    }

    /// The parse, moved out of the slot, or `None` if it failed or was taken.
    pub(crate) fn take(&self, parse: impl FnOnce() -> Option<Parsed>) -> Option<Parsed> {
        match &mut *self.resolve(parse) {
            State::Done(parsed) => parsed.take(),
            State::Queued | State::Parsing => None,
        }
    }
}

/// Files to parse in order, shared by the background jobs.
pub(crate) struct Queue {
    work: Vec<(PathBuf, Arc<Slot>)>,
    next: AtomicUsize,
    run: Mutex<Run>,
    idle: Condvar,
}

/// Whether the jobs may go on, and how many are parsing now.
struct Run {
    cancelled: bool,
    active: usize,
    recorder: Option<Arc<Recorder>>,
}

impl Queue {
    /// Queue `paths` (in the order they will be consumed); returns the queue and each path's
    /// slot, for the loader's cache.
    pub(crate) fn new(paths: Vec<PathBuf>, recorder: Option<Arc<Recorder>>) -> Arc<Queue> {
        let work = paths.into_iter().map(|p| (p, Arc::new(Slot::queued()))).collect();
        let run = Mutex::new(Run { cancelled: false, active: 0, recorder });
        Arc::new(Queue { work, next: AtomicUsize::new(0), run, idle: Condvar::new() })
    }

    /// The queued paths and their slots.
    pub(crate) fn slots(&self) -> impl Iterator<Item = (&Path, &Arc<Slot>)> {
        self.work.iter().map(|(p, s)| (p.as_path(), s))
    }

    /// Start one background job per pool thread.
    pub(crate) fn start(self: &Arc<Self>) {
        for _ in 0..rayon::current_num_threads() {
            let queue = Arc::clone(self);
            rayon::spawn(move || queue.run());
        }
    }

    /// Stop the jobs at their next file and wait for the parses in progress.
    pub(crate) fn cancel(&self) {
        let mut run = self.lock();
        run.cancelled = true;
        run.recorder = None;
        while run.active > 0 {
            run = self.idle.wait(run).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn run(&self) {
        while let Some(recorder) = self.enter() {
            let next = self.work.get(self.next.fetch_add(1, Ordering::Relaxed));
            if let Some((path, slot)) = next.filter(|(_, slot)| slot.claim()) {
                slot.finish(parse_file(path, recorder.as_deref()).ok());
            }
            drop(recorder);
            self.leave();
            if next.is_none() {
                return;
            }
            // Between files, run what the accumulation handed the pool: a large file it
            // parses itself is split across the pool, and it waits for the parts, which would
            // otherwise wait for these jobs to run out of files.
            while rayon::yield_now() == Some(rayon::Yield::Executed) {}
        }
    }

    /// Count a job in (with the recorder to use), unless the queue was cancelled.
    fn enter(&self) -> Option<Option<Arc<Recorder>>> {
        let mut run = self.lock();
        if run.cancelled {
            return None;
        }
        run.active += 1;
        Some(run.recorder.clone())
    }

    fn leave(&self) {
        let mut run = self.lock();
        run.active -= 1;
        if run.active == 0 {
            self.idle.notify_all();
        }
    }
}

/// Read and parse one object file, recording the read for the build cache.
pub(crate) fn parse_file(path: &Path, recorder: Option<&Recorder>) -> Result<Parsed> {
    let text = inputs::read_text(recorder, path)
        .map_err(|source| KustomizeError::Read { path: path.to_path_buf(), source })?;
    let (docs, bare): (Vec<Value>, Vec<Vec<String>>) =
        kfctl_yaml::parse_resources(&text, &path.display().to_string())?.into_iter().unzip();
    Ok((Arc::new(docs), Arc::new(bare)))
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::remote::NoRemote;
    use std::sync::Arc;

    fn loader() -> Loader {
        Loader::new(Arc::new(NoRemote), crate::LoadRestriction::RootOnly)
    }

    fn files(dir: &std::path::Path, count: usize) -> Vec<std::path::PathBuf> {
        (0..count)
            .map(|i| {
                let path = dir.join(format!("f{i}.yaml"));
                std::fs::write(&path, format!("kind: ConfigMap\nmetadata:\n  name: m{i}\n")).expect("write");
                path
            })
            .collect()
    }

    #[test]
    fn queued_files_are_taken_whole_whoever_parsed_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths = files(dir.path(), 40);
        let loader = loader();
        loader.prefetch(paths.clone());
        for (i, path) in paths.iter().enumerate() {
            let (docs, _) = loader.take_documents(path).expect("parsed");
            assert_eq!(docs.len(), 1);
            assert_eq!(docs[0]["metadata"]["name"], format!("m{i}"));
        }
        // Taken files are gone from the cache: reading one again parses it again.
        assert_eq!(loader.documents(&paths[0]).expect("parsed again")[0]["metadata"]["name"], "m0");
    }

    #[test]
    fn a_file_that_fails_in_the_background_reports_its_error_to_the_consumer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.yaml");
        std::fs::write(&path, "kind: [unclosed\n").expect("write");
        let loader = loader();
        loader.prefetch(vec![path.clone(), path.clone()]);
        let error = loader.take_documents(&path).expect_err("a syntax error");
        assert!(error.to_string().contains("bad.yaml"), "{error}");
    }
}
