//! The terminal progress bar: one indicatif bar per install wave, its message the line that
//! says what is still pending. Logs and CI get [`kfctl::cluster::progress::LineProgress`].

use kfctl::cluster::progress::{Event, Progress, plain_line};
use std::time::Duration;

/// An indicatif bar per wave, its message the waiting line.
pub struct BarProgress {
    bar: Option<indicatif::ProgressBar>,
}

impl BarProgress {
    pub fn new() -> Self {
        BarProgress { bar: None }
    }
}

impl Default for BarProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress for BarProgress {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::WaveStarted { index, total, name, objects } => {
                let bar = indicatif::ProgressBar::new(*objects as u64);
                let style = indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                bar.set_style(style.progress_chars("=> "));
                bar.set_prefix(format!("[{index}/{total}] {name}"));
                bar.enable_steady_tick(Duration::from_millis(200));
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
            other => {
                if let Some(line) = plain_line(other) {
                    match &self.bar {
                        Some(bar) if matches!(other, Event::Waiting { .. }) => bar.set_message(line),
                        Some(bar) => bar.println(line),
                        None => eprintln!("{line}"),
                    }
                }
            }
        }
    }
}
