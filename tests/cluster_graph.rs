//! The install as a dependency graph, against the test API server (the in-repo test double,
//! no real cluster): with CRDs Established 2 s after they are created and workloads ready 3 s
//! after each change, kind's profile of the release under test installs in at most 1.3 times
//! its critical path (the longest chain of steps, each from its start to its readiness, which
//! the same run measures and reports: a ratio within one run, not a timed threshold).

use crate::common;

use common::cluster::{Cluster, kind_render};
use kfctl::cluster::install;
use kfctl::cluster::progress::RecordingProgress;
use kfctl_testapi::{StatusRule, Target as Rule, TestApiConfig};
use std::time::{Duration, Instant};

const CRD_DELAY: Duration = Duration::from_secs(2);
const READY_DELAY: Duration = Duration::from_secs(3);

/// A test server whose CRDs and workloads take their time, with cert-manager's controller as a
/// status rule (its resources ready at once).
fn slow_cluster(crd: Duration, ready: Duration) -> Cluster {
    let mut config = TestApiConfig::default().crd_established_after(crd).workloads_ready_after(ready);
    for kind in ["Certificate", "Issuer", "ClusterIssuer"] {
        config =
            config.status_rule(StatusRule::ready_after(Rule::kind(kind).in_group("cert-manager.io"), Duration::ZERO));
    }
    Cluster::start(config)
}

/// One install of kind's profile: the wall time around `install`, the critical path it
/// reported (zero by waves, which report none), and how many waves the plan had.
async fn install_kind(crd: Duration, ready: Duration, by_waves: bool) -> (Duration, Duration, Vec<(String, f64)>) {
    let cluster = slow_cluster(crd, ready);
    let version = common::release();
    let mut options = cluster.options_for("kind", version);
    options.timeout = Duration::from_secs(300);
    options.by_waves = by_waves;
    let objects = kind_render(version);
    let started = Instant::now();
    let report = install(objects, options, &mut RecordingProgress::default()).await.unwrap();
    let wall = started.elapsed();
    assert_eq!(report.waves_done, report.waves_total);
    assert!(cluster.record().unwrap().is_complete());
    let path = report.critical_path.unwrap_or_default();
    (wall, Duration::from_secs_f64(path.seconds), path.steps)
}

fn show(label: &str, wall: Duration, critical: Duration, steps: &[(String, f64)]) {
    eprintln!("{label}: wall {:.2}s, critical path {:.2}s", wall.as_secs_f64(), critical.as_secs_f64());
    for (step, seconds) in steps.iter().filter(|(_, s)| *s >= 0.05) {
        eprintln!("  {seconds:>6.2}s  {step}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
async fn kind_installs_within_1_3_times_its_critical_path_with_slow_crds_and_workloads() {
    let (wall, critical, steps) = install_kind(CRD_DELAY, READY_DELAY, false).await;
    show("by the graph", wall, critical, &steps);
    // the chain holds at least one CRD's and one workload's delay: the delays were applied
    assert!(critical >= CRD_DELAY + READY_DELAY, "critical path {critical:?}: {steps:#?}");
    assert!(
        steps.iter().any(|(s, _)| s.starts_with("CustomResourceDefinition ")) || critical >= READY_DELAY * 2,
        "{steps:#?}"
    );
    let bound = critical.mul_f64(1.3);
    assert!(wall <= bound, "wall {wall:?} over 1.3 × the critical path {critical:?} ({bound:?}): {steps:#?}");
}

fn seconds_from_env(name: &str, default: Duration) -> Duration {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).map_or(default, Duration::from_secs_f64)
}

/// Before and after: kind's install by waves and by the graph on the same slow server
/// (`KFCTL_BENCH_CRD_DELAY`, `KFCTL_BENCH_READY_DELAY` in seconds; 2 and 3 by default). Run
/// with `cargo test -p kfctl-rs --test tests -- --ignored cluster_graph::benchmark
/// --nocapture` (figures in tests/bench/README.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture cluster_graph::benchmark"]
async fn benchmark_kind_by_waves_and_by_graph() {
    let crd = seconds_from_env("KFCTL_BENCH_CRD_DELAY", CRD_DELAY);
    let ready = seconds_from_env("KFCTL_BENCH_READY_DELAY", READY_DELAY);
    eprintln!("kind's profile of {}, CRD delay {crd:?}, ready delay {ready:?}", common::release());
    let (wall, _, _) = install_kind(crd, ready, true).await;
    eprintln!("by waves: wall {:.2}s", wall.as_secs_f64());
    let (wall, critical, steps) = install_kind(crd, ready, false).await;
    show("by the graph", wall, critical, &steps);
}
