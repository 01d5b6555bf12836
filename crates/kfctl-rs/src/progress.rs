//! The terminal progress bar: one indicatif bar per install wave, and below it the block that
//! says what is still pending (`kfctl::cluster::progress::pending_block`: every pending
//! object's name, what it waits for and for how long, wrapped to the terminal's width, with the
//! run's elapsed time and deadline). Logs and CI get [`kfctl::cluster::progress::LineProgress`].

use kfctl::cluster::progress::{Event, PendingSince, Progress, pending_block, plain_line};
use std::time::{Duration, Instant};

/// The width the pending block wraps to when the terminal's is unknown.
const DEFAULT_WIDTH: usize = 100;

/// An indicatif bar per wave, its message the pending block.
pub(crate) struct BarProgress {
    bar: Option<indicatif::ProgressBar>,
    since: PendingSince,
}

impl BarProgress {
    pub(crate) fn new() -> Self {
        BarProgress { bar: None, since: PendingSince::default() }
    }
}

impl Default for BarProgress {
    fn default() -> Self {
        Self::new()
    }
}

/// The terminal's width in columns (stderr's, where the bar draws).
fn terminal_width() -> usize {
    terminal_size::terminal_size_of(std::io::stderr()).map_or(DEFAULT_WIDTH, |(w, _)| usize::from(w.0))
}

impl Progress for BarProgress {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::WaveStarted { index, total, name, objects } => {
                let bar = indicatif::ProgressBar::new(*objects as u64);
                let style =
                    indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} ({elapsed})\n{msg}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                bar.set_style(style.progress_chars("=> "));
                bar.set_prefix(format!("[{index}/{total}] {name}"));
                bar.enable_steady_tick(Duration::from_millis(200));
                self.since.reset();
                self.bar = Some(bar);
            }
            Event::Applied { .. } => {
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
            }
            Event::WaveDone { .. } => {
                if let (Some(bar), Some(line)) = (self.bar.take(), plain_line(event)) {
                    bar.finish_and_clear();
                    eprintln!("{line}");
                }
            }
            Event::Waiting { pending, total, clock } => {
                let waited = self.since.observe(pending, Instant::now());
                // one column spare: a line exactly as wide as the terminal wraps on some
                let lines = pending_block(pending, *total, clock, &waited, terminal_width().saturating_sub(1));
                match &self.bar {
                    Some(bar) => bar.set_message(lines.join("\n")),
                    None => eprintln!("{}", lines.join("\n")),
                }
            }
            other => {
                if let Some(line) = plain_line(other) {
                    match &self.bar {
                        Some(bar) => bar.println(line),
                        None => eprintln!("{line}"),
                    }
                }
            }
        }
    }
}

/// Whether `-q/--quiet` was given: cluster verbs then print no progress.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Set by `main` from the command line.
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Whether progress is to stay quiet.
pub(crate) fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}
