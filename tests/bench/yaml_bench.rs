//! Times the YAML layer on a large stream (default: the golden build of the whole platform).
//!
//! `cargo run --release --example yaml_bench [FILE] [ROUNDS]`
//!
//! Prints the best wall time of each phase, and the CPU time the process spent on it (summed
//! over its threads from `/proc/self/task/*/schedstat`), which stays meaningful on a busy
//! machine where wall time does not.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use kfctl_yaml::{parse_stream, to_yaml_stream};

/// CPU time used so far by all threads of this process, in nanoseconds (0 where unavailable).
fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

#[derive(Clone, Copy)]
struct Best {
    wall: Duration,
    cpu: Duration,
}

impl Best {
    fn measure<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let (wall, cpu) = (Instant::now(), cpu_ns());
        let out = f();
        self.wall = self.wall.min(wall.elapsed());
        self.cpu = self.cpu.min(Duration::from_nanos(cpu_ns().saturating_sub(cpu)));
        out
    }

    fn show(self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        format!("{:.1} ms wall, {:.1} ms CPU", ms(self.wall), ms(self.cpu))
    }
}

fn main() {
    let default = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/kubeflow/golden/v1.11.0/example.yaml");
    let path = std::env::args().nth(1).map_or(default, PathBuf::from);
    let rounds: usize = std::env::args().nth(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let text = std::fs::read_to_string(&path).expect("readable input");
    let origin = path.display().to_string();
    let unset = Best { wall: Duration::MAX, cpu: Duration::MAX };
    let (mut parse, mut write) = (unset, unset);
    let mut docs = Vec::new();
    let mut written = String::new();
    for _ in 0..rounds {
        drop(std::mem::take(&mut docs));
        docs = parse.measure(|| parse_stream(&text, &origin).expect("valid YAML"));
        written = write.measure(|| to_yaml_stream(&docs));
    }
    println!(
        "{origin}: {} bytes, {} documents, best of {rounds}; written back {}\n  parse: {}\n  write: {}",
        text.len(),
        docs.len(),
        if written == text { "byte for byte".to_string() } else { format!("as {} bytes", written.len()) },
        parse.show(),
        write.show()
    );
}
