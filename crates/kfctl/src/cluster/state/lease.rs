//! One kfctl-rs at a time per cluster: a `coordination.k8s.io/v1` Lease in `kfctl-system`.
//!
//! install, upgrade and uninstall take the Lease `kfctl-system/kfctl-rs-lock` before their
//! first write and release it at the end, also on failure. Taking it is optimistic concurrency
//! on the server: a create (409 when someone else created it first) or, for a stale lease, a
//! replace carrying the `resourceVersion` read (409 when someone else took it over first).
//!
//! A lock that cannot strand anyone:
//! * the holder identity is the run's own (operation, host, pid and a random nonce), so when the
//!   answer to a create or replace is lost (the server applied it, the connection dropped), the
//!   re-read shows our own identity and the run goes on holding it instead of waiting for itself;
//! * the lease is short ([`LeaseTiming::duration`], 45 s) and renewed while the run works (a
//!   background task every [`LeaseTiming::renew_every`], 10 s), so a crashed or killed run frees
//!   the cluster within a minute; a lease past `renewTime + leaseDurationSeconds` is taken over;
//! * a second run waits (bounded, with progress) while the lease is held and then fails naming
//!   the holder, its host and since when, and the way out: [`unlock`] (`kfctl-rs unlock`)
//!   deletes a held lease at once, saying whose it was and how old.
//!
//! A run whose lease was taken over or deleted while it worked (renewals failed for longer than
//! the duration, or someone unlocked it) learns it at release: [`Lease::release`] reports
//! [`LeaseError::Lost`].

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath};
use crate::cluster::progress::{Event, Progress};
use crate::cluster::record::{RECORD_NAMESPACE, labels};
use crate::cluster::retry::ApiFailure;
use k8s_openapi::jiff::Timestamp;
use kube::core::Request;
use kube::core::params::PostParams;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::cluster::unlock::{Unlocked, unlock};

pub(crate) const LEASE_NAME: &str = "kfctl-rs-lock";
/// How long past the run's deadline releasing the lease may still take: a run that timed out
/// must not leave the cluster locked until the lease expires.
const RELEASE_GRACE: Duration = Duration::from_secs(10);
/// The annotation naming the holder's host (also inside the holder identity).
pub(crate) const HOST_ANNOTATION: &str = "kfctl-rs.io/host";

/// How a lost lease was lost when it is simply gone.
const DELETED: &str = "deleted by someone else, e.g. `kfctl-rs unlock`";

/// How long a lease lives and how often its run renews it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTiming {
    /// `leaseDurationSeconds`: a run that stops renewing frees the cluster this long after its
    /// last renewal.
    pub duration: Duration,
    /// How often a working run renews its lease (well inside `duration`).
    pub renew_every: Duration,
}

impl Default for LeaseTiming {
    fn default() -> Self {
        LeaseTiming { duration: Duration::from_secs(45), renew_every: Duration::from_secs(10) }
    }
}

/// Lease errors.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another run holds the lease.
    #[error(
        "lease {RECORD_NAMESPACE}/{LEASE_NAME}: held by {holder} since {since} (last renewed {renewed}, expires \
         {expires} unless renewed); another kfctl-rs run is changing this cluster; wait for it to finish, or, if it \
         crashed, for the lease to expire, or run `kfctl-rs unlock` to free it now"
    )]
    Held {
        /// The run holding it.
        holder: String,
        /// When it took it.
        since: String,
        /// When it last renewed it.
        renewed: String,
        /// When it expires unless renewed.
        expires: String,
    },
    /// `unlock` without `--force` found the lease still being renewed: its run may be alive.
    #[error(
        "lease {RECORD_NAMESPACE}/{LEASE_NAME}: held by {holder} on host {host} and still being renewed (last \
         {renewed} ago): that run may still be working; wait for it to finish, or pass --force to delete the lease \
         anyway (that run would then go on without the lock)"
    )]
    Renewed {
        /// The run holding it.
        holder: String,
        /// The host it runs on.
        host: String,
        /// How long ago it was last renewed (`4s`).
        renewed: String,
    },
    /// This run lost its lease while it worked.
    #[error(
        "lease {RECORD_NAMESPACE}/{LEASE_NAME}: this run ({holder}) lost it while it worked ({by}); another run may \
         have changed the cluster at the same time; check `kfctl-rs status` and re-run"
    )]
    Lost {
        /// This run.
        holder: String,
        /// How it was lost (e.g. `taken over by <holder>`).
        by: String,
    },
}

pub(crate) fn leases() -> ResourcePath {
    ResourcePath {
        group: "coordination.k8s.io".into(),
        version: "v1".into(),
        plural: "leases".into(),
        namespaced: true,
    }
}

/// A held lease, renewed in the background; [`Lease::release`] gives it back.
pub struct Lease {
    api: ApiClient,
    /// This run's identity as the lease records it (operation, host, process id).
    pub holder: String,
    renewal: tokio::task::JoinHandle<()>,
    /// Set by the renewal task when the lease stopped being ours: by whom.
    lost: Arc<Mutex<Option<String>>>,
}

/// This host's name.
pub(crate) fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Who we are: the operation, host, process and a nonce (unique to this run).
pub(crate) fn holder_identity(operation: &str) -> String {
    let mut nonce = [0u8; 4];
    let _ = getrandom::fill(&mut nonce);
    format!("kfctl-rs {operation} on {} (pid {}, {})", host_name(), std::process::id(), hex::encode(nonce))
}

/// The current time (without jiff's `std` feature, which this crate does not enable).
pub(crate) fn now() -> Timestamp {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    Timestamp::from_nanosecond(since.as_nanos() as i128).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn now_micro() -> String {
    now().strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

/// A lease held by `holder`: acquired now, or at `acquired` when renewing.
fn body(holder: &str, ttl: Duration, resource_version: Option<&str>, acquired: Option<&str>) -> Value {
    let now = now_micro();
    let mut metadata = json!({"name": LEASE_NAME, "namespace": RECORD_NAMESPACE, "labels": labels(),
        "annotations": {HOST_ANNOTATION: host_name()}});
    if let Some(rv) = resource_version {
        metadata["resourceVersion"] = json!(rv);
    }
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata,
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": ttl.as_secs().max(1),
                 "acquireTime": acquired.unwrap_or(&now), "renewTime": now}})
}

/// When a lease expires, if it can be read.
pub(crate) fn expiry(lease: &Value) -> Option<Timestamp> {
    let renewed = lease.pointer("/spec/renewTime").or(lease.pointer("/spec/acquireTime"))?.as_str()?;
    let seconds = lease.pointer("/spec/leaseDurationSeconds")?.as_i64()?;
    let renewed: Timestamp = renewed.parse().ok()?;
    renewed.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds)).ok()
}

pub(crate) fn text(lease: &Value, pointer: &str) -> String {
    lease.pointer(pointer).and_then(Value::as_str).unwrap_or("?").to_string()
}

fn holder_of(lease: &Value) -> Option<&str> {
    lease.pointer("/spec/holderIdentity").and_then(Value::as_str)
}

pub(crate) fn api_error(what: &str, failure: ApiFailure) -> ClusterError {
    ClusterError::Api { what: format!("lease {RECORD_NAMESPACE}/{LEASE_NAME}: {what}"), failure: Box::new(failure) }
}

impl Lease {
    /// Take the lease for `operation`, waiting up to `wait` for another holder, and renew it
    /// in the background until [`Lease::release`].
    pub async fn acquire(
        api: &ApiClient,
        operation: &str,
        timing: LeaseTiming,
        wait: Duration,
        progress: &mut dyn Progress,
    ) -> Result<Lease, ClusterError> {
        let holder = holder_identity(operation);
        let started = Instant::now();
        let mut announced = String::new();
        loop {
            let live =
                api.get(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await.map_err(|f| api_error("read", f))?;
            let taken = match &live {
                // ours already: a create or take-over whose answer was lost
                Some(lease) if holder_of(lease) == Some(holder.as_str()) => true,
                None => create(api, &body(&holder, timing.duration, None, None)).await?,
                Some(lease) if expiry(lease).is_none_or(|at| at < now()) => {
                    let rv = lease.pointer("/metadata/resourceVersion").and_then(Value::as_str);
                    let took = replace(api, &body(&holder, timing.duration, rv, None)).await?;
                    if took {
                        let line = format!(
                            "took over a stale lease {RECORD_NAMESPACE}/{LEASE_NAME} of {} (renewed {})",
                            text(lease, "/spec/holderIdentity"),
                            text(lease, "/spec/renewTime")
                        );
                        progress.event(&Event::Notice(&line));
                    }
                    took
                }
                Some(_) => false,
            };
            if taken {
                return Ok(Lease::renewing(api, holder, timing));
            }
            let Some(lease) = live.filter(|l| expiry(l).is_some_and(|at| at >= now())) else {
                // a write refused (someone else was first) or unanswered: read the truth again
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let (who, since) = (text(&lease, "/spec/holderIdentity"), text(&lease, "/spec/acquireTime"));
            if started.elapsed() >= wait {
                let expires = expiry(&lease).map_or("?".into(), |t| t.to_string());
                let renewed = text(&lease, "/spec/renewTime");
                return Err(LeaseError::Held { holder: who, since, renewed, expires }.into());
            }
            if announced != who {
                let line = format!("waiting for lease {RECORD_NAMESPACE}/{LEASE_NAME}: held by {who} since {since}");
                progress.event(&Event::Notice(&line));
                announced = who;
            }
            tokio::time::sleep(Duration::from_millis(500).min(wait.saturating_sub(started.elapsed()))).await;
        }
    }

    /// Start renewing a lease just taken.
    fn renewing(api: &ApiClient, holder: String, timing: LeaseTiming) -> Lease {
        let lost = Arc::new(Mutex::new(None));
        let task = renew_until_lost(api.clone(), holder.clone(), timing, lost.clone());
        Lease { api: api.clone(), holder, renewal: tokio::spawn(task), lost }
    }

    /// Stop renewing and give the lease back if it is still ours (best effort: one that cannot
    /// be deleted expires within its short duration). `Lost` when it stopped being ours while
    /// the run worked.
    pub async fn release(self) -> Result<(), LeaseError> {
        self.renewal.abort();
        let lost = self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(by) = lost {
            return Err(LeaseError::Lost { holder: self.holder, by });
        }
        // a run that timed out releases all the same, or the next run waits for the lease to expire
        let api = self.api.with_grace(RELEASE_GRACE);
        let by = match api.get(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await {
            Err(_) => return Ok(()),
            Ok(Some(live)) if holder_of(&live) == Some(self.holder.as_str()) => {
                let _ = api.delete(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await;
                return Ok(());
            }
            Ok(Some(live)) => format!("taken over by {}", text(&live, "/spec/holderIdentity")),
            Ok(None) => DELETED.to_string(),
        };
        Err(LeaseError::Lost { holder: self.holder, by })
    }
}

/// Renew every `timing.renew_every` until the lease is not ours any more; a failed renewal is
/// tried again at the next tick (the lease outlives several missed ones).
async fn renew_until_lost(api: ApiClient, holder: String, timing: LeaseTiming, lost: Arc<Mutex<Option<String>>>) {
    let api = api.with_budget(timing.renew_every);
    loop {
        tokio::time::sleep(timing.renew_every).await;
        let Ok(live) = api.get(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await else { continue };
        let by = match &live {
            None => DELETED.to_string(),
            Some(lease) if holder_of(lease) != Some(holder.as_str()) => {
                format!("taken over by {}", text(lease, "/spec/holderIdentity"))
            }
            Some(lease) => {
                let rv = lease.pointer("/metadata/resourceVersion").and_then(Value::as_str);
                let acquired = lease.pointer("/spec/acquireTime").and_then(Value::as_str);
                // refused (409) or unanswered: the next tick reads the truth again
                let _ = replace(&api, &body(&holder, timing.duration, rv, acquired)).await;
                continue;
            }
        };
        *lost.lock().unwrap_or_else(|p| p.into_inner()) = Some(by);
        return;
    }
}

/// Whether the retry table would retry this failure. The lease's writes are sent once each
/// (resending a create of a taken name, or a replace with a stale `resourceVersion`, can only
/// fail again): a transient failure counts as not taken, and [`Lease::acquire`] re-reads.
fn retried(f: &ApiFailure) -> bool {
    let (_, decision) = crate::cluster::retry::classify(f, crate::cluster::retry::Context::default());
    matches!(decision, crate::cluster::retry::Decision::Retry | crate::cluster::retry::Decision::RetryAfter)
}

/// POST the lease: `false` when someone created it first (or the answer did not come).
async fn create(api: &ApiClient, lease: &Value) -> Result<bool, ClusterError> {
    let bytes = serde_json::to_vec(lease).unwrap_or_default();
    let request = Request::new(leases().collection(Some(RECORD_NAMESPACE)))
        .create(&PostParams::default(), bytes)
        .map_err(|e| api_error("build request", ApiFailure { message: e.to_string(), ..Default::default() }))?;
    match api.without_retries().call(request).await {
        Ok(_) => Ok(true),
        Err(f) if f.status == Some(409) || retried(&f) => Ok(false),
        Err(f) => Err(api_error("create", f)),
    }
}

/// PUT the lease with the `resourceVersion` read: `false` when someone changed it first (or
/// the answer did not come).
async fn replace(api: &ApiClient, lease: &Value) -> Result<bool, ClusterError> {
    let bytes = serde_json::to_vec(lease).unwrap_or_default();
    let request = Request::new(leases().collection(Some(RECORD_NAMESPACE)))
        .replace(LEASE_NAME, &PostParams::default(), bytes)
        .map_err(|e| api_error("build request", ApiFailure { message: e.to_string(), ..Default::default() }))?;
    match api.without_retries().call(request).await {
        Ok(_) => Ok(true),
        Err(f) if matches!(f.status, Some(409) | Some(404)) || retried(&f) => Ok(false),
        Err(f) => Err(api_error("take over", f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_expires_its_duration_after_its_renewal() {
        let lease = json!({"spec": {"renewTime": "2026-01-01T00:00:00.000000Z", "leaseDurationSeconds": 60}});
        assert_eq!(expiry(&lease).unwrap().to_string(), "2026-01-01T00:01:00Z");
        assert!(expiry(&json!({"spec": {}})).is_none());
        let fresh = body("me", Duration::from_secs(30), Some("7"), None);
        assert_eq!(fresh.pointer("/metadata/resourceVersion"), Some(&json!("7")));
        assert!(expiry(&fresh).unwrap() > now());
        assert_eq!(fresh.pointer("/spec/acquireTime"), fresh.pointer("/spec/renewTime"));
        let renewed = body("me", Duration::from_secs(30), Some("8"), Some("2026-01-01T00:00:00.000000Z"));
        assert_eq!(renewed.pointer("/spec/acquireTime"), Some(&json!("2026-01-01T00:00:00.000000Z")));
        assert!(holder_identity("install").starts_with("kfctl-rs install on "));
        assert_ne!(holder_identity("install"), holder_identity("install"), "each run has its own identity");
    }

    #[test]
    fn the_default_lease_is_short_and_renewed_well_inside_its_duration() {
        let timing = LeaseTiming::default();
        assert!(timing.duration <= Duration::from_secs(60));
        assert!(timing.renew_every * 3 < timing.duration);
    }

    #[test]
    fn a_held_lease_says_how_to_free_it() {
        let held = LeaseError::Held { holder: "h".into(), since: "s".into(), renewed: "r".into(), expires: "e".into() };
        assert!(held.to_string().contains("run `kfctl-rs unlock` to free it now"), "{held}");
    }
}
