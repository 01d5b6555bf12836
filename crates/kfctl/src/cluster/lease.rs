//! One kfctl-rs at a time per cluster: a `coordination.k8s.io/v1` Lease in `kfctl-system`.
//!
//! install, upgrade and uninstall take the Lease `kfctl-system/kfctl-rs-lock` before their
//! first write and release it at the end, also on failure. Taking it is optimistic concurrency
//! on the server: a create (409 when someone else created it first) or, for a stale lease, a
//! replace carrying the `resourceVersion` read (409 when someone else took it over first). A
//! second run waits (bounded, with progress) while the lease is held and then fails naming the
//! holder and since when. A lease is stale once `renewTime + leaseDurationSeconds` has passed;
//! the duration is the run's own deadline plus a margin, so a run never outlives its lease
//! and a crashed run's lease is taken over after it.

use super::ClusterError;
use super::api::{ApiClient, ResourcePath};
use super::progress::{Event, Progress};
use super::record::{RECORD_NAMESPACE, labels};
use super::retry::ApiFailure;
use k8s_openapi::jiff::Timestamp;
use kube::core::Request;
use kube::core::params::PostParams;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

pub const LEASE_NAME: &str = "kfctl-rs-lock";
/// Added to a run's deadline for its lease's duration.
const MARGIN: Duration = Duration::from_secs(60);

/// Lease errors.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "lease {RECORD_NAMESPACE}/{LEASE_NAME}: held by {holder} since {since} (expires {expires}); another kfctl-rs \
         run is changing this cluster; wait for it to finish (or, if it crashed, for the lease to expire) and re-run"
    )]
    Held { holder: String, since: String, expires: String },
}

fn leases() -> ResourcePath {
    ResourcePath {
        group: "coordination.k8s.io".into(),
        version: "v1".into(),
        plural: "leases".into(),
        namespaced: true,
    }
}

/// A held lease; [`Lease::release`] gives it back.
pub struct Lease {
    api: ApiClient,
    pub holder: String,
}

/// Who we are: the operation, host, process and a nonce.
pub fn holder_identity(operation: &str) -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    let mut nonce = [0u8; 4];
    let _ = getrandom::fill(&mut nonce);
    format!("kfctl-rs {operation} on {host} (pid {}, {})", std::process::id(), hex::encode(nonce))
}

/// The current time (without jiff's `std` feature, which this crate does not enable).
pub fn now() -> Timestamp {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    Timestamp::from_nanosecond(since.as_nanos() as i128).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn now_micro() -> String {
    now().strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

fn body(holder: &str, ttl: Duration, resource_version: Option<&str>) -> Value {
    let now = now_micro();
    let mut metadata = json!({"name": LEASE_NAME, "namespace": RECORD_NAMESPACE, "labels": labels()});
    if let Some(rv) = resource_version {
        metadata["resourceVersion"] = json!(rv);
    }
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata,
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": ttl.as_secs().max(1),
                 "acquireTime": now, "renewTime": now}})
}

/// When a lease expires, if it can be read.
fn expiry(lease: &Value) -> Option<Timestamp> {
    let renewed = lease.pointer("/spec/renewTime").or(lease.pointer("/spec/acquireTime"))?.as_str()?;
    let seconds = lease.pointer("/spec/leaseDurationSeconds")?.as_i64()?;
    let renewed: Timestamp = renewed.parse().ok()?;
    renewed.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds)).ok()
}

fn text(lease: &Value, pointer: &str) -> String {
    lease.pointer(pointer).and_then(Value::as_str).unwrap_or("?").to_string()
}

fn api_error(what: &str, failure: ApiFailure) -> ClusterError {
    ClusterError::Api { what: format!("lease {RECORD_NAMESPACE}/{LEASE_NAME}: {what}"), failure: Box::new(failure) }
}

impl Lease {
    /// Take the lease for a run whose deadline is `run_timeout`, waiting up to `wait` for a holder.
    pub async fn acquire(
        api: &ApiClient,
        operation: &str,
        run_timeout: Duration,
        wait: Duration,
        progress: &mut dyn Progress,
    ) -> Result<Lease, ClusterError> {
        let holder = holder_identity(operation);
        let ttl = run_timeout + MARGIN;
        let started = Instant::now();
        let mut announced = String::new();
        loop {
            let live =
                api.get(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await.map_err(|f| api_error("read", f))?;
            let taken = match &live {
                None => create(api, &body(&holder, ttl, None)).await?,
                Some(lease) if expiry(lease).is_none_or(|at| at < now()) => {
                    let rv = lease.pointer("/metadata/resourceVersion").and_then(Value::as_str);
                    let took = replace(api, &body(&holder, ttl, rv)).await?;
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
                return Ok(Lease { api: api.clone(), holder });
            }
            let Some(lease) = live else {
                // another run created it first, or the create met a transient failure: re-read
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let (who, since) = (text(&lease, "/spec/holderIdentity"), text(&lease, "/spec/acquireTime"));
            if started.elapsed() >= wait {
                let expires = expiry(&lease).map_or("?".into(), |t| t.to_string());
                return Err(LeaseError::Held { holder: who, since, expires }.into());
            }
            if announced != who {
                let line = format!("waiting for lease {RECORD_NAMESPACE}/{LEASE_NAME}: held by {who} since {since}");
                progress.event(&Event::Notice(&line));
                announced = who;
            }
            tokio::time::sleep(Duration::from_millis(500).min(wait.saturating_sub(started.elapsed()))).await;
        }
    }

    /// Give the lease back if it is still ours (best effort: a failed release expires anyway).
    pub async fn release(self) {
        let Ok(Some(live)) = self.api.get(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await else { return };
        if live.pointer("/spec/holderIdentity").and_then(Value::as_str) == Some(self.holder.as_str()) {
            let _ = self.api.delete(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await;
        }
    }
}

/// Whether the retry table would retry this failure. The lease's writes are sent once each
/// (resending a create of a taken name, or a replace with a stale `resourceVersion`, can only
/// fail again): a transient failure counts as not taken, and [`Lease::acquire`] re-reads.
fn retried(f: &ApiFailure) -> bool {
    let (_, decision) = super::retry::classify(f, super::retry::Context::default());
    matches!(decision, super::retry::Decision::Retry | super::retry::Decision::RetryAfter)
}

/// POST the lease: `false` when someone created it first.
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

/// PUT the lease with the `resourceVersion` read: `false` when someone changed it first.
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
        let fresh = body("me", Duration::from_secs(30), Some("7"));
        assert_eq!(fresh.pointer("/metadata/resourceVersion"), Some(&json!("7")));
        assert!(expiry(&fresh).unwrap() > now());
        assert!(holder_identity("install").starts_with("kfctl-rs install on "));
    }
}
