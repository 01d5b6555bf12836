//! Times the YAML layer on a large stream (default: the golden build of the whole platform).
//!
//! `cargo run --release --example yaml_bench [FILE] [ROUNDS]`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use kfctl_rs::yaml::{parse_stream, to_yaml_stream};

fn main() {
    let default = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/kubeflow/golden/v1.11.0/example.yaml");
    let path = std::env::args().nth(1).map_or(default, PathBuf::from);
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let text = std::fs::read_to_string(&path).expect("readable input");
    let (mut parse_best, mut write_best) = (Duration::MAX, Duration::MAX);
    let mut docs = Vec::new();
    for _ in 0..rounds {
        drop(std::mem::take(&mut docs));
        let start = Instant::now();
        docs = parse_stream(&text, &path.display().to_string()).expect("valid YAML");
        parse_best = parse_best.min(start.elapsed());
        let start = Instant::now();
        let written = to_yaml_stream(&docs);
        write_best = write_best.min(start.elapsed());
        assert_eq!(written.len(), text.len(), "round trip changes the size");
    }
    println!(
        "{}: {} bytes, {} documents; parse {:.1} ms, write {:.1} ms (best of {rounds})",
        path.display(),
        text.len(),
        docs.len(),
        parse_best.as_secs_f64() * 1e3,
        write_best.as_secs_f64() * 1e3,
    );
}
