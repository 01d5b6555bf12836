//! `kfctl-rs unlock`: delete the cluster's kfctl-rs lease at once (a crashed or killed run's).
//!
//! Prints whose lease it was: holder, host, how long held, when last renewed, and whether it
//! had expired. A lease still being renewed belongs to a run that may be alive: without
//! `--force` it is refused, naming its holder and `--force` (exit 5). Exit 0 also when no lease
//! was held.

use crate::cli::{Output, UnlockArgs};
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::cluster::lease::unlock;

pub(crate) fn run(args: UnlockArgs) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let unlocked = runtime.block_on(unlock(&args.cluster.target(), args.deadline.timeout, args.force))?;
    match (args.output.format, unlocked) {
        (Output::Json | Output::Yaml, unlocked) => super::output::print_data(args.output.format, &unlocked)?,
        (Output::Text, Some(unlocked)) => println!("{}", unlocked.describe()),
        (Output::Text, None) => println!("no lease kfctl-system/kfctl-rs-lock is held: nothing to unlock"),
    }
    Ok(Outcome::Done)
}
