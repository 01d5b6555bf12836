//! `kfctl-rs unlock`: free the cluster's lease at once, saying whose it was.
//!
//! A run that crashed or was killed leaves its [`crate::cluster::lease`] behind until its short
//! duration passes; `unlock` deletes it now. It reads the lease first so it can say whose it
//! was (holder, host, how long held, when last renewed, whether it had expired). A lease still
//! being renewed (not expired) belongs to a run that may be alive: `unlock` refuses it, naming
//! the holder, unless `--force` ([`LeaseError::Renewed`]); forced, the report says so.

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Target};
use crate::cluster::lease::{HOST_ANNOTATION, LEASE_NAME, LeaseError, api_error, expiry, leases, now, text};
use crate::cluster::record::RECORD_NAMESPACE;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

/// The lease `unlock` deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unlocked {
    /// The run that held it.
    pub holder: String,
    /// The host it ran on.
    pub host: String,
    /// `acquireTime`, as stored.
    pub(crate) acquired: String,
    /// `renewTime`, as stored.
    pub(crate) renewed: String,
    /// Seconds since it was acquired (`None` when unreadable).
    pub(crate) held_seconds: Option<i64>,
    /// Seconds since it was last renewed (`None` when unreadable).
    pub renewed_seconds_ago: Option<i64>,
    /// Whether it had expired already (its run stopped renewing it).
    pub expired: bool,
}

impl Unlocked {
    /// `deleted lease kfctl-system/kfctl-rs-lock of <holder> on host <h>: held 5m 3s, last
    /// renewed 2m 1s ago (expired)`.
    pub fn describe(&self) -> String {
        let ago = |s: Option<i64>| s.map_or("?".to_string(), age);
        let state = if self.expired {
            "expired: its run stopped renewing it".to_string()
        } else {
            "still being renewed: if that run is alive, it now works without the lock".to_string()
        };
        format!(
            "deleted lease {RECORD_NAMESPACE}/{LEASE_NAME} of {} on host {}: held {}, last renewed {} ago ({state})",
            self.holder,
            self.host,
            ago(self.held_seconds),
            ago(self.renewed_seconds_ago)
        )
    }
}

/// `75` → `1m 15s`.
pub(crate) fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, m, _) => format!("{h}h {m}m"),
    }
}

fn seconds_since(lease: &Value, pointer: &str) -> Option<i64> {
    let at: Timestamp = lease.pointer(pointer)?.as_str()?.parse().ok()?;
    Some(now().as_second() - at.as_second())
}

/// The holder's host: the annotation, else parsed from `kfctl-rs <op> on <host> (pid ...)`.
fn host_of(lease: &Value) -> String {
    let annotated = lease.pointer("/metadata/annotations").and_then(|a| a.get(HOST_ANNOTATION)).and_then(Value::as_str);
    let parsed = || {
        let holder = lease.pointer("/spec/holderIdentity").and_then(Value::as_str)?;
        let (_, rest) = holder.split_once(" on ")?;
        Some(rest.split(" (").next().unwrap_or(rest).to_string())
    };
    annotated.map(str::to_string).or_else(parsed).unwrap_or_else(|| "?".into())
}

/// What a lease says about its holder (for `unlock`'s report).
pub(crate) fn describe_lease(lease: &Value) -> Unlocked {
    Unlocked {
        holder: text(lease, "/spec/holderIdentity"),
        host: host_of(lease),
        acquired: text(lease, "/spec/acquireTime"),
        renewed: text(lease, "/spec/renewTime"),
        held_seconds: seconds_since(lease, "/spec/acquireTime"),
        renewed_seconds_ago: seconds_since(lease, "/spec/renewTime"),
        expired: expiry(lease).is_none_or(|at| at < now()),
    }
}

/// Delete the lease; `None` when no lease was held. A lease still being renewed is deleted only
/// with `force` ([`LeaseError::Renewed`] otherwise). Every call is over within `timeout`.
pub async fn unlock(
    target: &Target,
    timeout: std::time::Duration,
    force: bool,
) -> Result<Option<Unlocked>, ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout);
    let read = |f| ClusterError::settle(&api, "reading the lease", f, |f| api_error("read", f));
    let Some(lease) = api.get(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await.map_err(read)? else {
        return Ok(None);
    };
    let held = describe_lease(&lease);
    if !held.expired && !force {
        let renewed = held.renewed_seconds_ago.map_or("?".to_string(), age);
        return Err(LeaseError::Renewed { holder: held.holder, host: held.host, renewed }.into());
    }
    let gone = api.delete(&leases(), Some(RECORD_NAMESPACE), LEASE_NAME).await.map_err(|f| api_error("delete", f))?;
    Ok(gone.then_some(held))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_lease_is_described_by_holder_host_age_and_expiry() {
        let lease = json!({"spec": {"holderIdentity": "kfctl-rs install on ci-7 (pid 9, ab)", "leaseDurationSeconds": 45,
            "acquireTime": "2020-01-01T00:00:00.000000Z", "renewTime": "2020-01-01T00:05:00.000000Z"}});
        let described = describe_lease(&lease);
        assert_eq!((described.host.as_str(), described.expired), ("ci-7", true));
        assert!(described.held_seconds.unwrap() > described.renewed_seconds_ago.unwrap());
        let line = described.describe();
        assert!(line.starts_with("deleted lease kfctl-system/kfctl-rs-lock of kfctl-rs install on ci-7"), "{line}");
        assert!(line.ends_with("(expired: its run stopped renewing it)"), "{line}");
        let annotated = json!({"metadata": {"annotations": {HOST_ANNOTATION: "box"}}, "spec": {}});
        assert_eq!(host_of(&annotated), "box");
        assert_eq!((age(5), age(75), age(3700)), ("5s".into(), "1m 15s".into(), "1h 1m".into()));
    }
}
