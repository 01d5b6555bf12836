//! Exit codes, decided by error types.
//!
//! Every error type of the library (and of the engine and YAML crates below it) answers
//! [`ExitStatus::exit_code`] from its variant, never from its message. The binary walks an
//! error chain with [`code_of`] and takes the first answer.
//!
//! The codes and their meanings are one table, `Code::TABLE`, which `--help` prints and the
//! README's "Exit codes" copies (a test holds them equal).

use crate::catalog::CatalogError;
use crate::catalog::existing_secrets::ExistingSecretsError;
use crate::catalog::external_store::DatabaseError;
use crate::catalog::gateway::GatewayError;
use crate::catalog::identity::IdentityError;
use crate::catalog::images::RegistryError;
use crate::catalog::schema::SchemaError;
use crate::catalog::users::UsersError;
use crate::catalog::values::SetError;
use crate::chart::ChartError;
use crate::chart::package::PackageError;
use crate::chart::provenance::ProvenanceError;
use crate::chart::write::WriteError;
use crate::cluster::ClusterError;
use crate::cluster::adopt::AdoptError;
use crate::cluster::api::ConnectError;
use crate::cluster::lease::LeaseError;
use crate::cluster::plan::PlanError;
use crate::cluster::rollback::RollbackError;
use crate::cluster::upgrade::LifecycleError;
use crate::input::InputError;
use crate::source::SourceError;
use kfctl_kustomize::KustomizeError;
use kfctl_kustomize::remote::RemoteError;
use kfctl_yaml::YamlError;

/// The process exit code of a finished command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Success (`compare`: equal; `diff`: no change).
    Success = 0,
    /// The operation failed (`compare`, `diff`: differences).
    Failure = 1,
    /// A bad flag, value or input.
    Usage = 2,
    /// Upstream could not be fetched, verified or found.
    Source = 3,
    /// A refusal for safety (load restriction, hostile archive, digest mismatch).
    Security = 4,
    /// The API server refused or could not be reached.
    Cluster = 5,
    /// Objects did not become ready in time, or no answer by the deadline.
    Timeout = 6,
    /// Interrupted.
    Interrupted = 130,
}

impl Code {
    /// Every code with its meaning: the one table the README's "Exit codes", `kfctl-rs
    /// --help` and this module's docs say (a test holds the README to it).
    pub(crate) const TABLE: [(Code, &'static str); 8] = [
        (Code::Success, "success (`compare`: equal; `diff`: no change)"),
        (Code::Failure, "the operation failed (`compare`, `diff`: differences)"),
        (Code::Usage, "usage: a bad flag, value or input"),
        (Code::Source, "source: upstream could not be fetched, verified or found"),
        (Code::Security, "security refusal (load restriction, hostile archive, digest mismatch)"),
        (Code::Cluster, "cluster: the API server refused or could not be reached"),
        (Code::Timeout, "timeout: objects did not become ready in time, or no answer by the deadline"),
        (Code::Interrupted, "interrupted"),
    ];

    /// The table as `--help` prints it.
    pub fn help_text() -> String {
        let rows: Vec<String> =
            Code::TABLE.iter().map(|(code, meaning)| format!("  {:>3}  {meaning}", *code as u8)).collect();
        format!("Exit codes:\n{}", rows.join("\n"))
    }

    /// The table as the README's Markdown.
    #[cfg(test)]
    pub(crate) fn markdown_table() -> String {
        let rows: Vec<String> =
            Code::TABLE.iter().map(|(code, meaning)| format!("| {} | {meaning} |", *code as u8)).collect();
        format!("| code | meaning |\n|---|---|\n{}\n", rows.join("\n"))
    }
}

impl From<Code> for std::process::ExitCode {
    fn from(code: Code) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

/// An error that knows the exit code it ends the process with.
pub trait ExitStatus {
    /// The code this error ends the process with.
    fn exit_code(&self) -> Code;
}

/// The exit code of one error in a chain, when its type is one of the library's.
pub fn code_of(err: &(dyn std::error::Error + 'static)) -> Option<Code> {
    macro_rules! try_types {
        ($($ty:ty),*) => {
            $(if let Some(e) = err.downcast_ref::<$ty>() { return Some(e.exit_code()); })*
        };
    }
    try_types!(
        ClusterError,
        SourceError,
        CatalogError,
        ChartError,
        WriteError,
        PackageError,
        ProvenanceError,
        SchemaError,
        SetError,
        RegistryError,
        IdentityError,
        LifecycleError,
        LeaseError,
        PlanError,
        KustomizeError,
        RemoteError,
        InputError,
        YamlError
    );
    None
}

impl ExitStatus for YamlError {
    fn exit_code(&self) -> Code {
        Code::Failure
    }
}

impl ExitStatus for RemoteError {
    fn exit_code(&self) -> Code {
        match self {
            RemoteError::Refused { .. } => Code::Security,
            _ => Code::Source,
        }
    }
}

impl ExitStatus for KustomizeError {
    fn exit_code(&self) -> Code {
        match self {
            KustomizeError::OutsideRoot { .. } => Code::Security,
            KustomizeError::Remote(remote) => remote.exit_code(),
            _ => Code::Failure,
        }
    }
}

impl ExitStatus for SourceError {
    fn exit_code(&self) -> Code {
        match self {
            SourceError::NotAnArchive { .. } => Code::Usage,
            _ if self.is_security() => Code::Security,
            _ => Code::Source,
        }
    }
}

impl ExitStatus for InputError {
    fn exit_code(&self) -> Code {
        Code::Usage
    }
}

impl ExitStatus for SchemaError {
    fn exit_code(&self) -> Code {
        Code::Usage
    }
}

impl ExitStatus for SetError {
    fn exit_code(&self) -> Code {
        Code::Usage
    }
}

impl ExitStatus for RegistryError {
    fn exit_code(&self) -> Code {
        Code::Usage
    }
}

/// The values' users, existing Secrets, gateway and external database settings: the user's input.
macro_rules! usage_errors {
    ($($ty:ty),*) => {
        $(impl ExitStatus for $ty {
            fn exit_code(&self) -> Code {
                Code::Usage
            }
        })*
    };
}
usage_errors!(UsersError, ExistingSecretsError, GatewayError, DatabaseError);

impl ExitStatus for IdentityError {
    fn exit_code(&self) -> Code {
        match self {
            IdentityError::InlineSecret { .. } => Code::Security,
            _ => Code::Usage,
        }
    }
}

impl ExitStatus for CatalogError {
    fn exit_code(&self) -> Code {
        match self {
            CatalogError::Build(build) => build.exit_code(),
            CatalogError::Data { .. } => Code::Failure,
            CatalogError::TooManyPeers { .. } | CatalogError::PeerVariantMissing { .. } => Code::Failure,
            CatalogError::ProfileFile { .. } => Code::Usage,
            CatalogError::Identity(identity) => identity.exit_code(),
            CatalogError::Schema(e) => e.exit_code(),
            CatalogError::Set(e) => e.exit_code(),
            CatalogError::Registry(e) => e.exit_code(),
            CatalogError::Users(e) => e.exit_code(),
            CatalogError::ExistingSecrets(e) => e.exit_code(),
            CatalogError::Gateway(e) => e.exit_code(),
            CatalogError::Database(e) => e.exit_code(),
            _ => Code::Usage,
        }
    }
}

impl ExitStatus for ChartError {
    fn exit_code(&self) -> Code {
        match self {
            ChartError::BadName { .. } | ChartError::NotInProfile { .. } => Code::Usage,
            _ => Code::Failure,
        }
    }
}

impl ExitStatus for WriteError {
    fn exit_code(&self) -> Code {
        match self {
            WriteError::NotAnExport { .. } => Code::Security,
            _ => Code::Usage,
        }
    }
}

impl ExitStatus for PackageError {
    fn exit_code(&self) -> Code {
        match self {
            PackageError::BadChart { .. } => Code::Failure,
            PackageError::Io { .. } => Code::Usage,
        }
    }
}

impl ExitStatus for ProvenanceError {
    fn exit_code(&self) -> Code {
        match self {
            ProvenanceError::NoGpg { .. } => Code::Usage,
            ProvenanceError::BadChart { .. } | ProvenanceError::Refused { .. } => Code::Failure,
        }
    }
}

impl ExitStatus for ClusterError {
    fn exit_code(&self) -> Code {
        match self {
            ClusterError::Plan(plan) => plan.exit_code(),
            ClusterError::Connect(connect) => connect.exit_code(),
            ClusterError::NoObjectInNamespace { .. } | ClusterError::Bundle(_) => Code::Usage,
            ClusterError::DefaultCredentials { .. } | ClusterError::DefaultCredentialsOffKind { .. } => Code::Security,
            ClusterError::Timeout { .. } | ClusterError::NoAnswer { .. } | ClusterError::Silent { .. } => Code::Timeout,
            ClusterError::Failed { .. } => Code::Failure,
            ClusterError::Interrupted { .. } => Code::Interrupted,
            ClusterError::Rollback(rollback) => rollback.exit_code(),
            ClusterError::Lifecycle(lifecycle) => lifecycle.exit_code(),
            ClusterError::Lease(lease) => lease.exit_code(),
            ClusterError::Adopt(adopt) => adopt.exit_code(),
            _ => Code::Cluster,
        }
    }
}

/// The rendered objects do not make a plan: the user's input.
impl ExitStatus for PlanError {
    fn exit_code(&self) -> Code {
        Code::Usage
    }
}

/// No client from the kubeconfig: the user's input.
impl ExitStatus for ConnectError {
    fn exit_code(&self) -> Code {
        Code::Usage
    }
}

/// An upgrade the cluster's state refuses (nothing installed, a stored version dropped).
impl ExitStatus for LifecycleError {
    fn exit_code(&self) -> Code {
        Code::Cluster
    }
}

/// Another run holds the lease, or lost it.
impl ExitStatus for LeaseError {
    fn exit_code(&self) -> Code {
        Code::Cluster
    }
}

/// A cluster `adopt` refuses (a record already, nothing of the release, another release).
impl ExitStatus for AdoptError {
    fn exit_code(&self) -> Code {
        Code::Cluster
    }
}

impl ExitStatus for RollbackError {
    fn exit_code(&self) -> Code {
        match self {
            RollbackError::NotThePrevious { .. } | RollbackError::ValuesDiffer { .. } => Code::Usage,
            _ => Code::Cluster,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_and_help_say_the_one_table() {
        let readme = include_str!("../../../README.md");
        assert!(
            readme.contains(&Code::markdown_table()),
            "README's Exit codes differ from Code::TABLE:\n{}",
            Code::markdown_table()
        );
        let help = Code::help_text();
        assert!(Code::TABLE.iter().all(|(code, meaning)| help.contains(&format!("{:>3}  {meaning}", *code as u8))));
    }

    #[test]
    fn codes_come_from_variants() {
        let refused = RemoteError::Refused { url: "u".into(), reason: "r".into() };
        assert_eq!(code_of(&KustomizeError::Remote(refused)), Some(Code::Security));
        let outside = KustomizeError::OutsideRoot { path: "/a".into(), root: "/b".into() };
        assert_eq!(code_of(&outside), Some(Code::Security));
        assert_eq!(code_of(&SourceError::Security("x".into())), Some(Code::Security));
        assert_eq!(code_of(&SourceError::Fetch { url: "u".into(), message: "m".into() }), Some(Code::Source));
        assert_eq!(code_of(&WriteError::NotAnExport { path: "p".into() }), Some(Code::Security));
        assert_eq!(code_of(&WriteError::NotEmpty { path: "p".into() }), Some(Code::Usage));
        assert_eq!(code_of(&std::io::Error::other("x")), None);
        let values = RollbackError::ValuesDiffer { version: "26.03".into(), digest: "a".into(), expected: "b".into() };
        assert_eq!(code_of(&ClusterError::Rollback(values)), Some(Code::Usage));
        let none = RollbackError::NoPrevious { server: "s".into(), current: "26.03".into() };
        assert_eq!(code_of(&ClusterError::Rollback(none)), Some(Code::Cluster));
        let bundle = crate::cluster::bundle::BundleError { path: "/b.tar.gz".into(), message: "m".into() };
        assert_eq!(code_of(&ClusterError::Bundle(bundle)), Some(Code::Usage));
    }
}
