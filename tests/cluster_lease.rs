//! The lease that cannot strand anyone, against the test API server (the in-repo test double of
//! a Kubernetes API server; no real cluster): a lost Lease-create answer is recognised as our
//! own, a working run renews its short lease, a killed run's lease is taken over within its
//! duration, `unlock` frees a held lease at once, and a run whose lease was deleted under it
//! says so.

use crate::common::cluster::Cluster;

use kfctl::catalog::RenderedObject;
use kfctl::cluster::api::ApiClient;
use kfctl::cluster::lease::{Lease, LeaseError, LeaseTiming, unlock};
use kfctl::cluster::progress::RecordingProgress;
use kfctl::cluster::record::RECORD_NAMESPACE;
use kfctl::cluster::uninstall::{UninstallOptions, uninstall};
use kfctl::cluster::{ClusterError, InstallOptions, install};
use kfctl::exit::{Code, ExitStatus};
use kfctl_testapi::{FaultAction, FaultRule, Hold, ObjectKey, RequestMatch, TestApiConfig};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const LEASE: &str = "kfctl-rs-lock";

fn objects() -> Vec<RenderedObject> {
    let docs = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kf"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "kf"}, "data": {"a": "1"}}),
    ];
    docs.into_iter().map(|obj| RenderedObject::new("platform", obj)).collect()
}

fn options(cluster: &Cluster) -> InstallOptions {
    let mut o = cluster.options_for("minimal", "v1");
    o.lock_wait = Duration::from_secs(20);
    o
}

fn lease_key() -> ObjectKey {
    ObjectKey::new("coordination.k8s.io", "leases", Some(RECORD_NAMESPACE), LEASE)
}

fn lease(cluster: &Cluster) -> Option<Value> {
    cluster.server.object(&lease_key())
}

fn micro(at: std::time::SystemTime) -> String {
    let since = at.duration_since(std::time::UNIX_EPOCH).unwrap();
    let t = k8s_openapi::jiff::Timestamp::from_nanosecond(since.as_nanos() as i128).unwrap();
    t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

/// The lease a run killed `renewed_ago` after its last renewal leaves behind.
fn left_behind(renewed_ago: Duration, duration_seconds: u64) -> Value {
    let renewed = micro(std::time::SystemTime::now() - renewed_ago);
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": LEASE, "namespace": RECORD_NAMESPACE, "annotations": {"kfctl-rs.io/host": "ci-runner"}},
        "spec": {"holderIdentity": "kfctl-rs install on ci-runner (pid 7, 0badf00d)", "leaseDurationSeconds": duration_seconds,
                 "acquireTime": renewed, "renewTime": renewed}})
}

fn waited(progress: &RecordingProgress) -> bool {
    progress.lines.iter().any(|l| l.contains("waiting for lease"))
}

#[tokio::test]
async fn a_lost_lease_create_answer_is_ours_and_install_and_uninstall_leave_the_lease_free() {
    let lose =
        || FaultRule::new(RequestMatch::any().method("POST").resource("leases"), FaultAction::LoseResponse).times(1);
    let cluster = Cluster::start(TestApiConfig::default().fault(lose()));
    let mut progress = RecordingProgress::default();
    install(objects(), options(&cluster), &mut progress).await.unwrap();
    let creates = cluster.server.requests().into_iter().filter(|r| r.method == "POST" && r.path.contains("/leases"));
    assert_eq!(creates.map(|r| r.status).collect::<Vec<_>>(), [201], "the create was served, its answer lost");
    assert!(!waited(&progress), "the run waited for its own lease: {:?}", progress.lines);
    assert!(lease(&cluster).is_none(), "the lease stays after install");

    cluster.server.set_fault(lose());
    let mut progress = RecordingProgress::default();
    let options = UninstallOptions { lock_wait: Duration::from_secs(20), ..Default::default() };
    uninstall(&cluster.target(), &options, &mut progress).await.unwrap();
    assert!(!waited(&progress), "{:?}", progress.lines);
    assert!(lease(&cluster).is_none() && cluster.record().is_none());
}

#[tokio::test]
async fn a_killed_runs_lease_is_taken_over_once_its_short_duration_passed() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(objects(), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    let default = LeaseTiming::default().duration;
    cluster.server.seed(left_behind(default + Duration::from_secs(5), default.as_secs())).unwrap();
    let mut progress = RecordingProgress::default();
    install(objects(), options(&cluster), &mut progress).await.unwrap();
    assert!(progress.lines.iter().any(|l| l.contains("took over a stale lease")), "{:?}", progress.lines);
    assert!(!waited(&progress));

    // killed 2 s before its lease ends: the next run waits those 2 s, not the old 21 minutes
    let started = Instant::now();
    cluster.server.seed(left_behind(default - Duration::from_secs(2), default.as_secs())).unwrap();
    let mut progress = RecordingProgress::default();
    install(objects(), options(&cluster), &mut progress).await.unwrap();
    assert!(waited(&progress) && progress.lines.iter().any(|l| l.contains("took over a stale lease")));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(lease(&cluster).is_none());
}

#[tokio::test]
async fn a_working_run_renews_its_short_lease_so_nobody_takes_it_over() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(objects(), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    let api = ApiClient::connect(&cluster.target()).await.unwrap();
    let timing = LeaseTiming { duration: Duration::from_secs(1), renew_every: Duration::from_millis(200) };
    let held =
        Lease::acquire(&api, "install", timing, Duration::ZERO, &mut RecordingProgress::default()).await.unwrap();
    let first = lease(&cluster).unwrap();
    assert_eq!(first["spec"]["leaseDurationSeconds"], 1);
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let renewed = lease(&cluster).unwrap();
    assert_eq!(renewed["spec"]["acquireTime"], first["spec"]["acquireTime"]);
    assert_ne!(renewed["spec"]["renewTime"], first["spec"]["renewTime"], "not renewed");
    let mut quiet = RecordingProgress::default();
    let other = Lease::acquire(&api, "install", timing, Duration::from_millis(300), &mut quiet).await;
    let err = other.err().expect("a renewed lease was taken over");
    assert!(err.to_string().contains(&format!("held by {}", held.holder)), "{err}");
    held.release().await.unwrap();
    assert!(lease(&cluster).is_none());
}

#[tokio::test]
async fn a_held_lease_names_the_way_out_and_unlock_frees_it_at_once_with_force_while_renewed() {
    let cluster = Cluster::start(TestApiConfig::default());
    install(objects(), options(&cluster), &mut RecordingProgress::default()).await.unwrap();
    assert_eq!(unlock(&cluster.target(), Duration::from_secs(60), false).await.unwrap(), None, "nothing to unlock");
    cluster.server.seed(left_behind(Duration::from_secs(3), 45)).unwrap();
    let mut short = options(&cluster);
    short.lock_wait = Duration::from_millis(300);
    let err = install(objects(), short, &mut RecordingProgress::default()).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("held by kfctl-rs install on ci-runner (pid 7, 0badf00d)"), "{text}");
    assert!(text.contains("run `kfctl-rs unlock` to free it now"), "{text}");
    assert_eq!(err.exit_code(), Code::Cluster);

    let refused = unlock(&cluster.target(), Duration::from_secs(60), false).await.unwrap_err();
    let text = refused.to_string();
    assert!(matches!(refused, ClusterError::Lease(LeaseError::Renewed { .. })), "{text}");
    assert!(
        text.contains("held by kfctl-rs install on ci-runner (pid 7, 0badf00d) on host ci-runner")
            && text.contains("still being renewed")
            && text.contains("pass --force"),
        "{text}"
    );
    assert_eq!(refused.exit_code(), Code::Cluster);
    assert!(lease(&cluster).is_some(), "a renewed lease is kept without --force");
    let unlocked = unlock(&cluster.target(), Duration::from_secs(60), true).await.unwrap().expect("a lease was held");
    assert_eq!((unlocked.host.as_str(), unlocked.expired), ("ci-runner", false));
    assert!(unlocked.renewed_seconds_ago.is_some_and(|s| (2..=10).contains(&s)), "{unlocked:?}");
    let line = unlocked.describe();
    assert!(line.contains("on host ci-runner") && line.contains("it now works without the lock"), "{line}");
    assert!(lease(&cluster).is_none());
    let started = Instant::now();
    let mut progress = RecordingProgress::default();
    install(objects(), options(&cluster), &mut progress).await.unwrap();
    assert!(!waited(&progress) && started.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_unlock_verb_prints_whose_lease_it_deleted() {
    let cluster = Cluster::start(TestApiConfig::default());
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kfctl-rs"))
            .args(["unlock", "--kubeconfig"])
            .arg(&cluster.kubeconfig)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(run().contains("nothing to unlock"));
    cluster
        .server
        .seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": RECORD_NAMESPACE}}))
        .unwrap();
    cluster.server.seed(left_behind(Duration::from_secs(120), 45)).unwrap();
    let out = run();
    assert!(out.starts_with("deleted lease kfctl-system/kfctl-rs-lock of kfctl-rs install on ci-runner"), "{out}");
    assert!(out.contains("last renewed 2m 0s ago") || out.contains("last renewed 2m 1s ago"), "{out}");
    assert!(out.contains("(expired: its run stopped renewing it)"), "{out}");
    assert!(lease(&cluster).is_none());
}

#[test]
fn the_unlock_verb_refuses_a_renewed_lease_without_force_naming_the_holder() {
    let cluster = Cluster::start(TestApiConfig::default());
    let unlock = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kfctl-rs"))
            .args(["unlock", "--kubeconfig"])
            .arg(&cluster.kubeconfig)
            .args(extra)
            .output()
            .unwrap()
    };
    cluster
        .server
        .seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": RECORD_NAMESPACE}}))
        .unwrap();
    cluster.server.seed(left_behind(Duration::from_secs(2), 45)).unwrap();
    let refused = unlock(&[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("held by kfctl-rs install on ci-runner (pid 7, 0badf00d)") && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(lease(&cluster).is_some(), "nothing deleted without --force");
    let forced = unlock(&["--force"]);
    let out = String::from_utf8_lossy(&forced.stdout);
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    assert!(out.contains("still being renewed: if that run is alive, it now works without the lock"), "{out}");
    assert!(lease(&cluster).is_none());
}

#[tokio::test]
async fn a_run_whose_lease_is_deleted_under_it_says_so() {
    // the install's first apply waits until the lease has been deleted (by `unlock`)
    let deleted = Hold::until(RequestMatch::any().method("DELETE").resource("leases"), 1).answered_with(200);
    let first_apply = RequestMatch::any().method("PATCH").resource("namespaces").name("kf");
    let cluster =
        Cluster::start(TestApiConfig::default().fault(FaultRule::new(first_apply, FaultAction::Hold(deleted))));
    let target = cluster.target();
    let mut progress = RecordingProgress::default();
    let unlocker = async {
        while lease(&cluster).is_none() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        unlock(&target, Duration::from_secs(60), true).await.unwrap().expect("the install's lease")
    };
    let (outcome, unlocked) = tokio::join!(install(objects(), options(&cluster), &mut progress), unlocker);
    assert!(unlocked.holder.starts_with("kfctl-rs install on "));
    let err = outcome.unwrap_err();
    assert!(matches!(err, ClusterError::Lease(LeaseError::Lost { .. })), "{err}");
    assert!(err.to_string().contains("lost it while it worked (deleted by someone else"), "{err}");
    assert!(cluster.server.requests().iter().all(|r| !r.hold_expired));
}
