//! `kfctl-rs rollback`: return to the release the install record holds as `previous`.
//!
//! Same flags as `upgrade`; `--profile` and `--version` default to the previous release's
//! (a different `--version` is refused naming both: `upgrade --version` installs another
//! release). It reads the record first, refuses without one or without a previous release,
//! renders the previous release with the values given (they must be those it was installed
//! with: its values digest), then runs the upgrade flow to it: what the newer release added is
//! pruned (CRDs, PVCs and Namespaces kept), what it changed is applied back or replaced. A CRD
//! storing objects in a version the previous release lacks, or upstream's `noRollbackFrom`
//! note on the installed release, refuses before anything is written
//! ([`kfctl::cluster::rollback`]). `--plan` works as for `upgrade`.

use crate::cli::{InstallArgs, RollbackArgs};
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::cluster::ClusterError;
use kfctl::cluster::install::Operation;
use kfctl::cluster::record::InstallMeta;
use kfctl::cluster::rollback::{self, RollbackError};

/// `kfctl-rs rollback`: read the record's previous release, render it, converge to it.
pub(crate) fn run(mut args: RollbackArgs) -> anyhow::Result<Outcome> {
    let installed = read_installed(&args.install)?;
    fill_from_previous(&mut args.install, &installed.previous)?;
    let (objects, meta) = args.install.source.objects_and_meta()?;
    // the session checks again, against the record it reads under the lease; this refuses
    // before a --plan too, which opens no session
    let note = kfctl::source::releases::no_rollback_from;
    rollback::check(&installed.server, Some(&installed.record), &meta.meta, note).map_err(ClusterError::from)?;
    super::install::run_operation(args.install, objects, meta, Operation::Rollback)
}

/// The record and its previous release (connects once, within `--timeout`).
fn read_installed(args: &InstallArgs) -> anyhow::Result<rollback::Installed> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    Ok(runtime.block_on(rollback::installed(&args.cluster.target(), args.deadline.timeout))?)
}

/// `--version` and `--profile` default to the previous release's; another `--version` is refused.
fn fill_from_previous(args: &mut InstallArgs, previous: &InstallMeta) -> anyhow::Result<()> {
    let flags = &mut args.source.render;
    let asked = flags.source.version.clone();
    if !asked.is_empty() && asked != previous.upstream_version && args.source.objects.is_none() {
        let refusal = RollbackError::NotThePrevious { flag: "version", asked, previous: rollback::describe(previous) };
        return Err(ClusterError::from(refusal).into());
    }
    flags.source.version = previous.upstream_version.clone();
    if flags.profile.is_empty() {
        flags.profile = previous.profile.clone();
    }
    Ok(())
}
