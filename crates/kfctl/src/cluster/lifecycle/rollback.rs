//! Rollback: return to the release the install record holds as `previous`, as Helm users expect.
//!
//! A rollback is an upgrade to the previous release (the same session, waves and prune: what
//! the newer release added is pruned, guarded kinds kept; what it changed is applied back or
//! replaced), after checks that say why it cannot go back when it cannot:
//!
//! * the record must hold a `previous` release (one whose install completed);
//! * the render must be that release, profile and values (its values digest equal to the one
//!   the previous release was installed with), or the rollback would install something else;
//! * upstream may state that a release cannot be left for an earlier one (`noRollbackFrom` in
//!   `charts/releases.yaml`); such a note refuses with its text;
//! * a CRD whose `status.storedVersions` lists a version the previous release's CRD does not
//!   have refuses (the check every upgrade makes, `upgrade::check_stored_versions`),
//!   saying how to migrate the stored objects first.
//!
//! `upgrade --version V` to a release older than the recorded one goes back too: the note and
//! the stored-version refusal apply to it the same way (`goes_back`).
//!
//! No database schema is checked: kfctl-rs cannot see one; only upstream's stated facts are.

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Target};
use crate::cluster::install::{Operation, read_record};
use crate::cluster::record::{InstallMeta, InstallRecord};
use crate::cluster::upgrade::LifecycleError;
use crate::source::version::ReleaseVersion;

/// Why a rollback cannot proceed.
#[derive(Debug, thiserror::Error)]
pub enum RollbackError {
    /// The cluster has no install record.
    #[error(
        "rollback: nothing installed by kfctl-rs on {server} (no install record); nothing to roll back to; \
         install a release with `kfctl-rs install --version V`"
    )]
    NothingInstalled {
        /// The API server's address.
        server: String,
    },
    /// The record holds no previous release.
    #[error(
        "rollback: {server}: nothing to roll back to: the record holds no previous release (installed: {current}); \
         install a release with `kfctl-rs upgrade --version V`"
    )]
    NoPrevious {
        /// The API server's address.
        server: String,
        /// The release the record holds.
        current: String,
    },
    /// `--version` (or `--profile`) names another release than the previous one.
    #[error(
        "rollback: --{flag} {asked}: the previous release is {previous}; roll back to it without --{flag}, \
         or install {asked} with `kfctl-rs upgrade --{flag} {asked}`"
    )]
    NotThePrevious {
        /// `version` or `profile`.
        flag: &'static str,
        /// What the command line asked for.
        asked: String,
        /// What the record holds as previous.
        previous: String,
    },
    /// The values rendered are not those the previous release was installed with.
    #[error(
        "rollback to {version}: the values (digest {digest}) differ from those {version} was installed with \
         (digest {expected}); pass the same -f/--set flags as then, or install {version} with these values \
         with `kfctl-rs upgrade --version {version}`"
    )]
    ValuesDiffer {
        /// The previous release.
        version: String,
        /// The digest of the values rendered now.
        digest: String,
        /// The digest the previous release was installed with.
        expected: String,
    },
    /// Upstream states that its release cannot be left for an earlier one.
    #[error(
        "rollback from {from} to {to}: upstream states that {from} cannot go back: {note}; nothing was applied; \
         restore a backup taken before the upgrade instead"
    )]
    NoRollbackFrom {
        /// The release installed.
        from: String,
        /// The release asked for.
        to: String,
        /// Upstream's reason (`noRollbackFrom` in the release catalog).
        note: String,
    },
    /// A CRD stores objects in a version the previous release's CRD does not have.
    #[error(
        "customresourcedefinition {crd}: cannot roll back to {to}: its status.storedVersions lists {}, which {to}'s \
         CRD does not have; objects stored in it would become unreadable; nothing was applied; migrate the stored \
         objects to a version {to} serves (read and write each back once that version is the storage version, or \
         use kube-storage-version-migrator), then drop the newer version(s) from status.storedVersions \
         (`kubectl patch customresourcedefinition {crd} --subresource=status --type=merge -p \
         '{{\"status\":{{\"storedVersions\":[...]}}}}'`; see Kubernetes' \"Versions in CustomResourceDefinitions\"), \
         then run `kfctl-rs rollback` again",
        versions.join(", ")
    )]
    StoredVersions {
        /// The CRD's name.
        crd: String,
        /// The versions stored that the previous release does not have.
        versions: Vec<String>,
        /// The previous release.
        to: String,
    },
}

/// Whether `to` is the record's previous release and the rollback may go there: the checks
/// made before anything is applied. `note_of` gives upstream's `noRollbackFrom` of a release.
pub fn check(
    server: &str,
    record: Option<&InstallRecord>,
    to: &InstallMeta,
    note_of: impl Fn(&str) -> Option<String>,
) -> Result<InstallMeta, RollbackError> {
    let previous = previous_of(server, record)?;
    let differs = |flag, asked: &str, had: &str| {
        (asked != had).then(|| RollbackError::NotThePrevious {
            flag,
            asked: asked.into(),
            previous: describe(&previous),
        })
    };
    if let Some(e) = differs("version", &to.upstream_version, &previous.upstream_version) {
        return Err(e);
    }
    if let Some(e) = differs("profile", &to.profile, &previous.profile) {
        return Err(e);
    }
    if to.values_digest != previous.values_digest {
        return Err(RollbackError::ValuesDiffer {
            version: previous.upstream_version.clone(),
            digest: to.values_digest.clone(),
            expected: previous.values_digest.clone(),
        });
    }
    let from = record.map(|r| r.meta.upstream_version.clone()).unwrap_or_default();
    if let Some(note) = note_of(&from) {
        return Err(RollbackError::NoRollbackFrom { from, to: previous.upstream_version.clone(), note });
    }
    Ok(previous)
}

/// The record's previous release, or why there is none.
fn previous_of(server: &str, record: Option<&InstallRecord>) -> Result<InstallMeta, RollbackError> {
    let record = record.ok_or_else(|| RollbackError::NothingInstalled { server: server.into() })?;
    record
        .previous
        .clone()
        .ok_or_else(|| RollbackError::NoPrevious { server: server.into(), current: describe(&record.meta) })
}

/// `26.03 (profile kind)`.
pub fn describe(meta: &InstallMeta) -> String {
    format!("{} (profile {})", meta.upstream_version, meta.profile)
}

/// What the cluster's record says a rollback returns to.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The API server's address.
    pub server: String,
    /// The install record.
    pub record: InstallRecord,
    /// The record's previous release.
    pub previous: InstallMeta,
}

/// The record and its previous release, read from the cluster (one connection, `timeout` for
/// it): what `kfctl-rs rollback` renders when no `--version` or `--profile` is given.
pub async fn installed(target: &Target, timeout: std::time::Duration) -> Result<Installed, ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout);
    let server = api.server.clone();
    let record = read_record(&api).await?.ok_or_else(|| RollbackError::NothingInstalled { server: server.clone() })?;
    let previous = previous_of(&server, Some(&record))?;
    Ok(Installed { server, record, previous })
}

/// Whether a run goes back: a rollback, or an upgrade to a release older than the recorded one
/// (`upgrade --version <previous>`).
pub(crate) fn goes_back(operation: Operation, record: Option<&InstallRecord>, to: &InstallMeta) -> bool {
    let older = || {
        let from = record.and_then(|r| ReleaseVersion::parse(&r.meta.upstream_version));
        from.zip(ReleaseVersion::parse(&to.upstream_version)).is_some_and(|(from, to)| to < from)
    };
    operation == Operation::Rollback || (operation == Operation::Upgrade && older())
}

/// Upstream's `noRollbackFrom` note on the recorded release refuses an upgrade to an older
/// release, as it refuses a rollback ([`check`]).
pub(crate) fn check_downgrade(
    record: Option<&InstallRecord>,
    to: &InstallMeta,
    note_of: impl Fn(&str) -> Option<String>,
) -> Result<(), RollbackError> {
    let Some(record) = record.filter(|r| goes_back(Operation::Upgrade, Some(r), to)) else { return Ok(()) };
    let from = record.meta.upstream_version.clone();
    match note_of(&from) {
        Some(note) => Err(RollbackError::NoRollbackFrom { from, to: to.upstream_version.clone(), note }),
        None => Ok(()),
    }
}

/// A stored-version refusal of a run that goes back ([`goes_back`]), said as one: why it
/// cannot go back and what to do.
pub(crate) fn explain_stored_versions(error: ClusterError, back: bool, to: &InstallMeta) -> ClusterError {
    match error {
        ClusterError::Lifecycle(LifecycleError::StoredVersionDropped { crd, versions }) if back => {
            RollbackError::StoredVersions { crd, versions, to: to.upstream_version.clone() }.into()
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(version: &str, values: &str) -> InstallMeta {
        InstallMeta {
            profile: "kind".into(),
            upstream_version: version.into(),
            values_digest: values.into(),
            ..Default::default()
        }
    }

    fn record_with(previous: Option<InstallMeta>) -> InstallRecord {
        let mut record = InstallRecord::resume(None, meta("26.03.1", "v"), "p", 1);
        record.previous = previous;
        record
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn rollback_needs_a_record_with_a_previous_release() {
        let err = check("s", None, &meta("26.03", "v"), none).unwrap_err();
        assert!(err.to_string().contains("no install record"), "{err}");
        let err = check("s", Some(&record_with(None)), &meta("26.03", "v"), none).unwrap_err().to_string();
        assert!(err.contains("nothing to roll back to: the record holds no previous release"), "{err}");
        assert!(err.contains("`kfctl-rs upgrade --version V`"), "{err}");
        let ok = check("s", Some(&record_with(Some(meta("26.03", "v")))), &meta("26.03", "v"), none);
        assert_eq!(ok.unwrap(), meta("26.03", "v"));
    }

    #[test]
    fn another_version_profile_or_values_is_refused_naming_both() {
        let record = record_with(Some(meta("26.03", "v")));
        let err = check("s", Some(&record), &meta("v1.11.0", "v"), none).unwrap_err().to_string();
        assert!(err.contains("--version v1.11.0") && err.contains("previous release is 26.03 (profile kind)"), "{err}");
        let other_profile = InstallMeta { profile: "minimal".into(), ..meta("26.03", "v") };
        let err = check("s", Some(&record), &other_profile, none).unwrap_err().to_string();
        assert!(err.contains("--profile minimal"), "{err}");
        let err = check("s", Some(&record), &meta("26.03", "w"), none).unwrap_err().to_string();
        assert!(err.contains("differ from those 26.03 was installed with") && err.contains("-f/--set"), "{err}");
    }

    #[test]
    fn an_upstream_note_refuses_with_its_text() {
        let record = record_with(Some(meta("26.03", "v")));
        let note = |v: &str| (v == "26.03.1").then(|| "its database schema moved on".to_string());
        let err = check("s", Some(&record), &meta("26.03", "v"), note).unwrap_err().to_string();
        assert!(
            err.contains("rollback from 26.03.1 to 26.03") && err.contains("its database schema moved on"),
            "{err}"
        );
    }

    #[test]
    fn an_upgrade_to_an_older_release_goes_back_and_meets_the_note_too() {
        let record = record_with(None);
        let note = |v: &str| (v == "26.03.1").then(|| "no way back".to_string());
        assert!(goes_back(Operation::Upgrade, Some(&record), &meta("26.03", "v")));
        assert!(!goes_back(Operation::Upgrade, Some(&record), &meta("26.10", "v")));
        assert!(!goes_back(Operation::Install, Some(&record), &meta("26.03", "v")));
        assert!(goes_back(Operation::Rollback, None, &meta("26.03", "v")));
        let err = check_downgrade(Some(&record), &meta("26.03", "v"), note).unwrap_err().to_string();
        assert!(err.contains("upstream states that 26.03.1 cannot go back: no way back"), "{err}");
        assert!(check_downgrade(Some(&record), &meta("26.10", "v"), note).is_ok());
        assert!(check_downgrade(None, &meta("26.03", "v"), note).is_ok());
    }

    #[test]
    fn a_stored_version_refusal_of_a_rollback_says_why_and_what_to_do() {
        let dropped = || LifecycleError::StoredVersionDropped { crd: "w.io".into(), versions: vec!["v2".into()] };
        let to = meta("26.03", "v");
        let text = explain_stored_versions(dropped().into(), true, &to).to_string();
        assert!(text.contains("customresourcedefinition w.io: cannot roll back to 26.03"), "{text}");
        assert!(text.contains("storedVersions") && text.contains("kubectl patch"), "{text}");
        let upgrade = explain_stored_versions(dropped().into(), false, &to).to_string();
        assert!(upgrade.contains("the new render drops"), "{upgrade}");
    }
}
