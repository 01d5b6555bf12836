//! `kfctl-rs upgrade`: `install` onto a cluster that has a record, saying `from → to`.
//!
//! Same flags and same code as `install` (which converges too); `upgrade` refuses when
//! nothing is installed. `--plan` (`-o json`) judges every object against the cluster
//! (`commands::change_plan`).

use crate::cli::UpgradeArgs;
use crate::exit::Outcome;
use kfctl::cluster::install::Operation;

/// `kfctl-rs upgrade`: render (or read `--objects`), then converge.
pub(crate) fn run(args: UpgradeArgs) -> anyhow::Result<Outcome> {
    let (objects, meta) = args.install.source.objects_and_meta()?;
    super::install::run_operation(args.install, objects, meta, Operation::Upgrade)
}
