//! Installing rendered objects onto a cluster in one ordered pass, and keeping a record of it.
//!
//! Upstream installs with `while ! kustomize build example | kubectl apply --server-side
//! --force-conflicts -f -; do sleep 20; done`. kfctl-rs gets to a working platform in one pass.
//!
//! The modules are grouped by what they do; each keeps its name at `cluster::<module>`:
//!
//! | folder | module | role |
//! |--------|--------|------|
//! | `api/` | [`api`], `discovery`, [`object`], [`redact`] | the only I/O: raw calls through kube, kind → URL resolution, object references, Secret values never shown |
//! | `apply/` | [`plan`], `order`, `graph`, `schedule`, `prepare`, `engine`, [`retry`], [`immutable`], `replace`, `converge` | rendered objects → ordered waves (the ordering tables) and the dependency graph over them, the apply body, applying a wave with retries (the retry table), replacing what cannot be patched, converging onto what is there |
//! | `readiness/` | `readiness`, `judge`, [`progress`] | the readiness table and its failure rows, one object's verdict while a wave waits, what is happening and what is pending, as events |
//! | `state/` | [`record`], [`lease`], `unlock`, [`mark`], `ownership`, [`prune`] | the install record, one run at a time (and freeing a crashed run's lock), the ownership mark on what kfctl-rs creates, deletes checked against the cluster, the prune/keep table |
//! | `lifecycle/` | [`session`], [`preflight`], `provided`, [`install`](mod@install), [`upgrade`], [`uninstall`], [`rollback`], [`adopt`], [`status`], [`diff`], [`check`], [`postcheck`], [`bundle`], [`verify`], [`kind`] | the verbs: one run opened once, the checks before any write, install and upgrade (converge), removing, returning to the previous release, taking over another tool's platform, reporting and previewing, the checklists before and after an install, the support bundle, the end-to-end verification, the Kind configuration |
//!
//! Every failure maps to an exit code ([`crate::exit::ExitStatus`]): the API server refusing or
//! unreachable is 5, objects not ready (or no answer) by the deadline 6, an object that failed
//! (a Deployment past its progress deadline, a failed Job: the readiness table) 1, Ctrl-C 130, a kubeconfig
//! that cannot be used (unreadable, or a server that is not http/https) 2.

/// Requests in flight at once for the objects of one wave (apply, read, delete, dry run), the
/// default of every verb's `--concurrency`.
pub const DEFAULT_CONCURRENCY: usize = 16;

mod failure;

pub mod api;
mod apply;
mod lifecycle;
pub(crate) mod readiness;
mod state;

pub(crate) use api::discovery;
pub use api::object;
pub use api::redact;
pub(crate) use apply::converge;
pub(crate) use apply::engine;
pub(crate) use apply::graph;
pub use apply::immutable;
pub(crate) use apply::order;
pub use apply::plan;
pub(crate) use apply::prepare;
pub use apply::retry;
pub(crate) use apply::schedule;
pub use lifecycle::adopt;
pub use lifecycle::bundle;
pub use lifecycle::check;
pub use lifecycle::diff;
pub use lifecycle::install;
pub use lifecycle::kind;
pub use lifecycle::live;
pub use lifecycle::postcheck;
pub use lifecycle::preflight;
pub(crate) use lifecycle::provided;
pub use lifecycle::rollback;
pub use lifecycle::session;
pub use lifecycle::status;
pub use lifecycle::uninstall;
pub use lifecycle::upgrade;
pub use lifecycle::verify;
pub(crate) use readiness::judge;
pub use readiness::progress;
pub use state::lease;
pub use state::mark;
pub(crate) use state::ownership;
pub use state::prune;
pub use state::record;
pub(crate) use state::unlock;

pub use install::{DryRun, InstallOptions, InstallReport, install};
pub use object::ObjectRef;
pub(crate) use progress::{FailedObject, Pending};
pub use record::{InstallMeta, InstallRecord};

use retry::ApiFailure;

/// Everything that can stop a cluster operation.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No client could be built from the kubeconfig.
    #[error(transparent)]
    Connect(#[from] api::ConnectError),
    /// The API server does not answer at its address.
    #[error(
        "{server}: API server unreachable{}: {failure}; check the kubeconfig's server address and that the cluster is running",
        while_doing(failure)
    )]
    Unreachable {
        /// The API server's address.
        server: String,
        /// The last failure.
        failure: Box<ApiFailure>,
    },
    /// The rendered objects do not make a plan (an incomplete or duplicate object, a catalog
    /// order error).
    #[error("rendered objects: {0}")]
    Plan(#[from] plan::PlanError),
    /// A preflight check failed; the text says which.
    #[error("preflight: {0}")]
    Preflight(String),
    /// The rendered objects keep upstream's default credentials and `--allow-default-credentials`
    /// was not passed.
    #[error(
        "security: profile {profile}: the rendered objects keep upstream's default credentials ({}); \
         set your own in the values, or pass --allow-default-credentials to accept them",
        crate::catalog::credentials::DEFAULT_LOGIN
    )]
    DefaultCredentials {
        /// The profile rendered.
        profile: String,
    },
    /// The kind profile's default credentials are about to go to a cluster that is not a Kind
    /// cluster.
    #[error(
        "security: {server}: not a Kind cluster (no node has a kind:// provider id), and the rendered objects keep \
         upstream's default credentials ({}), which the kind profile accepts on Kind only; set your own in the values, \
         or pass --allow-default-credentials to accept them",
        crate::catalog::credentials::DEFAULT_LOGIN
    )]
    DefaultCredentialsOffKind {
        /// The API server's address.
        server: String,
    },
    /// The API server refused an apply.
    #[error("{object}: the API server refused it: {failure}")]
    Refused {
        /// The object refused.
        object: ObjectRef,
        /// The server's answer.
        failure: Box<ApiFailure>,
    },
    /// An apply conflicts with another field manager and `--force-conflicts` was not passed.
    #[error(
        "{object}: {}; another field manager owns {}; if the cluster already runs this dependency, leave it to the \
         cluster (`<component>.provided=true`), or re-run with --force-conflicts to take the fields over (an object \
         kfctl-rs did not create stays another's: never deleted)",
        failure.message,
        describe_conflicts(failure)
    )]
    Conflict {
        /// The object whose apply conflicts.
        object: ObjectRef,
        /// The server's answer, with the conflicting fields.
        failure: Box<ApiFailure>,
    },
    /// Objects did not become ready by the deadline.
    #[error("timed out after {seconds:.0}s in wave {wave}; still pending:\n{}", list_pending(pending))]
    Timeout {
        /// The wave waited on.
        wave: String,
        /// How long the install ran.
        seconds: f64,
        /// The objects still not ready, each with why.
        pending: Vec<Pending>,
    },
    /// Objects of a wave failed (a Deployment past its progress deadline, a failed Job, pods
    /// that crash or cannot pull their image): waiting would not make them ready, so the wave
    /// ends at once.
    #[error(
        "wave {wave}: {}; fix {} ({}) and run install again, which resumes",
        list_failed(failed),
        if failed.len() == 1 { "it" } else { "them" },
        describe_hints(failed)
    )]
    Failed {
        /// The wave, numbered when the install knows its place (`12/20 (kubeflow: ...)`).
        wave: String,
        /// The objects that failed, each with its reason and message.
        failed: Vec<FailedObject>,
    },
    /// The run was interrupted; the record keeps what was applied.
    #[error(
        "interrupted in wave {wave}; progress recorded in {}/{}, re-run install to resume",
        record::RECORD_NAMESPACE,
        record::RECORD_NAME
    )]
    Interrupted {
        /// The wave running when it stopped.
        wave: String,
    },
    /// The cluster has no install record.
    #[error(
        "no install record: configmap {}/{} not found; nothing was installed by kfctl-rs on this cluster",
        record::RECORD_NAMESPACE,
        record::RECORD_NAME
    )]
    NoRecord,
    /// `-n/--namespace` names a namespace none of the objects asked about is in.
    #[error(
        "namespace {namespace:?}: {what} hold no object in it; their namespaces: {}; name one of them with \
         -n/--namespace, or leave it out for every object",
        held.join(", ")
    )]
    NoObjectInNamespace {
        /// The namespace given.
        namespace: String,
        /// The objects asked about ("the install record's objects", "the rendered objects").
        what: &'static str,
        /// The namespaces those objects are in.
        held: Vec<String>,
    },
    /// The install record cannot be read or written.
    #[error(transparent)]
    Record(#[from] record::RecordError),
    /// An API call failed.
    #[error("{what}{}: {failure}", while_doing(failure))]
    Api {
        /// What the call was for.
        what: String,
        /// The failure.
        failure: Box<ApiFailure>,
    },
    /// The API server gave no answer before the deadline.
    #[error(
        "{server}: no answer in time while {what}{}: {failure}; waited the whole --timeout of {}; check that the API server is up and answering, or raise --timeout",
        while_doing(failure),
        api::seconds(*timeout)
    )]
    NoAnswer {
        /// The API server's address.
        server: String,
        /// What the call was for.
        what: String,
        /// The deadline waited.
        timeout: std::time::Duration,
        /// The last failure.
        failure: Box<ApiFailure>,
    },
    /// The API server accepts connections but gave no answer within a bound shorter than the
    /// run's deadline (the preflight's question for its version): the same cause as
    /// [`ClusterError::NoAnswer`], said without claiming the whole `--timeout`.
    #[error(
        "{server}: no answer while {what}{}: {failure}; the server accepts connections but does not answer; check \
         that the API server is up and answering (not wedged, and not behind a proxy that holds requests)",
        while_doing(failure)
    )]
    Silent {
        /// The API server's address.
        server: String,
        /// What the call was for.
        what: String,
        /// The last failure.
        failure: Box<ApiFailure>,
    },
    /// An upgrade refused to go on.
    #[error(transparent)]
    Lifecycle(#[from] upgrade::LifecycleError),
    /// A rollback refused to go on.
    #[error(transparent)]
    Rollback(#[from] rollback::RollbackError),
    /// Another run holds the lease, or the lease was lost.
    #[error(transparent)]
    Lease(#[from] lease::LeaseError),
    /// `adopt` refused.
    #[error(transparent)]
    Adopt(Box<adopt::AdoptError>),
    /// `verify` could not start.
    #[error(transparent)]
    Verify(#[from] verify::VerifyError),
    /// The support bundle could not be written.
    #[error(transparent)]
    Bundle(#[from] bundle::BundleError),
}

impl From<adopt::AdoptError> for ClusterError {
    fn from(e: adopt::AdoptError) -> Self {
        ClusterError::Adopt(Box::new(e))
    }
}

impl ClusterError {
    /// The error with its wave numbered `index/total` ([`ClusterError::Failed`]; others as they are).
    pub(crate) fn numbered(self, index: usize, total: usize) -> ClusterError {
        match self {
            ClusterError::Failed { wave, failed } => {
                ClusterError::Failed { wave: format!("{index}/{total} ({wave})"), failed }
            }
            other => other,
        }
    }

    /// A failed call while doing `what`: [`ClusterError::NoAnswer`] when the run's `--timeout`
    /// ended it, else `otherwise(failure)`.
    pub(crate) fn settle(
        api: &api::ApiClient,
        what: impl Into<String>,
        failure: ApiFailure,
        otherwise: impl FnOnce(ApiFailure) -> ClusterError,
    ) -> ClusterError {
        if Self::ended_by_timeout(api, &failure) { Self::no_answer(api, what, failure) } else { otherwise(failure) }
    }

    /// Whether the run's `--timeout` (set with [`api::ApiClient::within`]) ended the call.
    pub(crate) fn ended_by_timeout(api: &api::ApiClient, failure: &ApiFailure) -> bool {
        api.timeout.is_some() && failure.out_of_time
    }

    /// [`ClusterError::NoAnswer`]: the call ended by the run's `--timeout` while doing `what`.
    pub(crate) fn no_answer(api: &api::ApiClient, what: impl Into<String>, failure: ApiFailure) -> ClusterError {
        ClusterError::NoAnswer {
            server: api.server.clone(),
            what: what.into(),
            timeout: api.timeout.unwrap_or_default(),
            failure: Box::new(failure),
        }
    }
}

/// ` (GET /version)`: the request a failure comes from, when known.
fn while_doing(failure: &ApiFailure) -> String {
    if failure.request.is_empty() { String::new() } else { format!(" ({})", failure.request) }
}

fn describe_conflicts(failure: &ApiFailure) -> String {
    if failure.conflicts.is_empty() {
        return "a field of it".into();
    }
    let parts: Vec<String> =
        failure.conflicts.iter().map(|c| format!("{} (manager \"{}\")", c.field, c.manager)).collect();
    parts.join(", ")
}

/// `Deployment kf/web failed: ProgressDeadlineExceeded: ...; Job kf/j failed: ...`
fn list_failed(failed: &[FailedObject]) -> String {
    let one = |f: &FailedObject| {
        let message = f.message.trim().trim_end_matches('.');
        let message = if message.is_empty() { String::new() } else { format!(": {message}") };
        format!("{} failed: {}{message}", f.object, f.reason)
    };
    failed.iter().map(one).collect::<Vec<_>>().join("; ")
}

/// `kubectl describe deployment -n kf web; ...`: where to read more about each failed object.
fn describe_hints(failed: &[FailedObject]) -> String {
    let one = |f: &FailedObject| {
        let r = &f.object;
        let kind = r.kind.to_lowercase();
        let resource = if order::BUILTIN_GROUPS.contains(&r.group()) { kind } else { format!("{kind}.{}", r.group()) };
        match &r.namespace {
            Some(ns) => format!("kubectl describe {resource} -n {ns} {}", r.name),
            None => format!("kubectl describe {resource} {}", r.name),
        }
    };
    failed.iter().map(one).collect::<Vec<_>>().join("; ")
}

fn list_pending(pending: &[Pending]) -> String {
    let lines: Vec<String> = pending.iter().map(|p| format!("  {} ({})", p.object, p.message)).collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{Code, ExitStatus};
    use retry::FieldConflict;

    fn object() -> ObjectRef {
        ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("kf".into()),
            name: "d".into(),
        }
    }

    #[test]
    fn conflict_names_the_field_and_the_other_manager() {
        let failure = ApiFailure {
            status: Some(409),
            message: "Apply failed with 1 conflict".into(),
            conflicts: vec![FieldConflict { field: ".spec.replicas".into(), manager: "helm".into() }],
            ..Default::default()
        };
        let text = ClusterError::Conflict { object: object(), failure: Box::new(failure) }.to_string();
        assert!(text.contains(".spec.replicas (manager \"helm\")") && text.contains("--force-conflicts"), "{text}");
    }

    #[test]
    fn timeout_lists_every_pending_object_and_exits_6() {
        let err = ClusterError::Timeout {
            wave: "platform".into(),
            seconds: 3.0,
            pending: vec![Pending { object: object(), message: "0/1 ready".into() }],
        };
        assert!(err.to_string().contains("Deployment kf/d (0/1 ready)"));
        assert_eq!(err.exit_code(), Code::Timeout);
        assert_eq!(ClusterError::Interrupted { wave: "x".into() }.exit_code(), Code::Interrupted);
        assert_eq!(ClusterError::DefaultCredentials { profile: "p".into() }.exit_code(), Code::Security);
    }

    #[test]
    fn failed_names_object_reason_message_and_hint_and_exits_1() {
        let failed = FailedObject {
            object: object(),
            reason: "ProgressDeadlineExceeded".into(),
            message: "ReplicaSet \"d-5d8f\" has timed out progressing.".into(),
        };
        let err =
            ClusterError::Failed { wave: "kf: services and workloads".into(), failed: vec![failed] }.numbered(12, 20);
        assert_eq!(
            err.to_string(),
            "wave 12/20 (kf: services and workloads): Deployment kf/d failed: ProgressDeadlineExceeded: ReplicaSet \
             \"d-5d8f\" has timed out progressing; fix it (kubectl describe deployment -n kf d) and run install again, \
             which resumes"
        );
        assert_eq!(err.exit_code(), Code::Failure);
        let cert = ObjectRef {
            api_version: "cert-manager.io/v1".into(),
            kind: "Certificate".into(),
            namespace: Some("kf".into()),
            name: "c".into(),
        };
        let two = vec![
            FailedObject { object: cert, reason: "Failed".into(), message: String::new() },
            FailedObject { object: object(), reason: "CrashLoopBackOff".into(), message: "pod d-1 container c".into() },
        ];
        let text = ClusterError::Failed { wave: "w".into(), failed: two }.to_string();
        assert!(
            text.contains("Certificate kf/c failed: Failed; Deployment kf/d failed: CrashLoopBackOff: pod d-1"),
            "{text}"
        );
        assert!(
            text.contains(
                "fix them (kubectl describe certificate.cert-manager.io -n kf c; kubectl describe deployment -n kf d)"
            ),
            "{text}"
        );
    }
}
