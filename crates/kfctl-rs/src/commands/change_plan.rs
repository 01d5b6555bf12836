//! What `install`, `upgrade` and `rollback` say about a cluster before they change it: the plan
//! judged against the cluster (`--plan` of `upgrade`, or of `install` naming a cluster):
//! create / update / replace (an immutable field changes: delete, wait until gone, create; the
//! line names the field) / blocked (a PVC or CRD change that cannot be applied: the plan exits
//! non-zero, naming the object, the field and what to do) / unchanged / prune, plus what would
//! be kept and why; and `upgrade: from → to` with upstream's notes.

use crate::cli::{InstallArgs, Output};
use crate::error::CliError;
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::catalog::RenderedObject;
use kfctl::cluster::ClusterError;
use kfctl::cluster::install::Operation;
use kfctl::cluster::record::InstallMeta;
use kfctl::cluster::upgrade::{Change, LifecycleError, change_plan_within, from_to};

/// Print `upgrade: from → to` (or `rollback: …`) and upstream's notes for every release
/// crossed (the session refused already when nothing is installed).
pub(crate) fn announce(operation: Operation, from: &InstallMeta, to: &InstallMeta) {
    eprintln!("{}: {}", operation.name(), from_to(from, to));
    for (release, note) in kfctl::source::releases::upgrade_notes_between(&from.upstream_version, &to.upstream_version)
    {
        eprintln!("note from upstream {release}: {note}");
    }
}

/// The plan judged against the cluster (`--plan` of `upgrade`, or of `install` naming a cluster).
pub(crate) fn print_change_plan(
    args: &InstallArgs,
    objects: &[RenderedObject],
    to: &InstallMeta,
    operation: Operation,
) -> anyhow::Result<Outcome> {
    let to_version = to.upstream_version.as_str();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let target = args.cluster.target();
    let plan = runtime.block_on(change_plan_within(
        objects,
        &target,
        args.purge,
        args.concurrency,
        args.deadline.timeout,
        &to.provided,
    ))?;
    if operation != Operation::Install && plan.from.is_none() {
        let refusal = LifecycleError::NothingInstalled { server: plan.server.clone() };
        return Err(ClusterError::from(refusal).into());
    }
    match args.output.format {
        Output::Json | Output::Yaml => super::output::print_data(args.output.format, &plan)?,
        Output::Text => {
            let count = |c: Change| plan.objects.iter().filter(|o| o.change == c).count();
            println!(
                "plan against {}: {} create, {} update, {} replace, {} unchanged, {} prune{}",
                plan.server,
                count(Change::Create),
                count(Change::Update),
                count(Change::Replace),
                count(Change::Unchanged),
                count(Change::Prune),
                match count(Change::Blocked) {
                    0 => String::new(),
                    n => format!(", {n} blocked"),
                }
            );
            for o in &plan.objects {
                let mark = serde_json::to_value(o.change)?.as_str().unwrap_or("").to_string();
                match &o.reason {
                    Some(reason) => println!("  {mark:<9} wave {:>2}  {}: {reason}", o.wave, o.object),
                    None => println!("  {mark:<9} wave {:>2}  {}", o.wave, o.object),
                }
            }
            if plan.preexisting() > 0 {
                println!(
                    "{} planned objects exist without kfctl-rs's mark: not kfctl-rs's (existed before the install); \
                     applied, never deleted; `kfctl-rs adopt` takes a platform over explicitly",
                    plan.preexisting()
                );
            }
            for line in &plan.kept_summary {
                println!("{line}");
            }
            let from_version = plan.from.as_ref().map(|m| m.upstream_version.as_str()).unwrap_or_default();
            for (release, note) in kfctl::source::releases::upgrade_notes_between(from_version, to_version) {
                println!("note from upstream {release}: {note}");
            }
        }
    }
    if let Some(blocked) = plan.objects.iter().find(|o| o.change == Change::Blocked) {
        let reason = blocked.reason.clone().unwrap_or_default();
        let verb = operation.name().to_string();
        return Err(CliError::Blocked { object: blocked.object.to_string(), reason, verb }.into());
    }
    Ok(Outcome::Done)
}
