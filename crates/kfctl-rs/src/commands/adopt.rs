//! `kfctl-rs adopt`: take over a platform upstream's loop (or `kubectl apply`) installed.
//!
//! Renders `--version` of the profile (or reads `--objects`), reads what the cluster holds of it
//! and prints it — present, differing (with the fields), missing — before writing anything;
//! refuses (nothing written) on a cluster with a kfctl-rs record, with nothing of the release,
//! or plainly with another release. `--plan` (`--dry-run`) stops there. Otherwise it asks for
//! confirmation on a terminal (`--yes` skips it), becomes the field manager of every present
//! object and writes the install record: see `kfctl::cluster::adopt`.

use super::cluster_args::{ClusterArgs, Output, SourceArgs, cluster_error, parse_duration, progress_sink};
use crate::exit::{Code, coded};
use anyhow::Context as _;
use clap::Args;
use kfctl::cluster::ClusterError;
use kfctl::cluster::adopt::{self, AdoptOptions, Adoption, Presence, Survey};
use std::io::IsTerminal;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub(crate) struct AdoptArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Print what was found (present, differing, missing) and stop; writes nothing.
    #[arg(long, alias = "dry-run")]
    pub plan: bool,
    /// Give up after this long (e.g. 90s, 10m).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Objects taken over at once within a wave.
    #[arg(long, default_value_t = kfctl::cluster::DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
    /// How long to wait for another kfctl-rs run's lease on the cluster.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub lock_wait: Duration,
}

/// `kfctl-rs adopt`.
pub(crate) fn run(args: AdoptArgs) -> anyhow::Result<Code> {
    crate::commands::print_notice();
    let (objects, meta) = args.source.objects_and_meta()?;
    let target = args.cluster.target();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let version = meta.meta.upstream_version.clone();
    let mut options = AdoptOptions::new(target, meta.meta.clone());
    options.timeout = args.timeout;
    options.concurrency = args.concurrency.max(1);
    options.lock_wait = args.lock_wait;
    runtime.block_on(async move {
        // one connection, one survey: what is printed is what is taken over
        let mut adoption = Adoption::open(&objects, options).await.map_err(cluster_error)?;
        let survey = adoption.survey();
        match args.output {
            Output::Json | Output::Yaml => super::output::print_data(args.output, survey)?,
            Output::Text => print_survey(survey, &meta.meta.profile),
        }
        adopt::judge(survey).map_err(|e| cluster_error(ClusterError::from(e)))?;
        if args.plan {
            if args.output == Output::Text {
                println!("plan only: nothing was written");
            }
            return Ok(Code::Success);
        }
        if !args.yes {
            confirm(survey, &meta.meta.profile)?;
            adoption.restart_clock();
        }
        let mut progress = progress_sink();
        let report = adoption.take_over(progress.as_mut()).await.map_err(cluster_error)?;
        match args.output {
            Output::Json | Output::Yaml => super::output::print_data(args.output, &report)?,
            Output::Text => {
                println!(
                    "adopted {} objects of {version} (profile {}) on {}: kfctl-rs is their field manager ({} taken over \
                     from kubectl); install record written",
                    report.adopted, meta.meta.profile, report.server, report.migrated
                );
                if report.missing > 0 {
                    println!("{} missing objects are created by `kfctl-rs upgrade --version {version}`", report.missing);
                }
            }
        }
        Ok(Code::Success)
    })
}

/// What was found, before anything is written: counts, then each differing and missing object.
fn print_survey(survey: &Survey, profile: &str) {
    let managed = survey.objects.iter().filter(|f| !f.managers.is_empty()).count();
    println!(
        "adopt {} (profile {profile}) on {}: {} present, {} differing, {} missing, of {} objects; {managed} managed by kubectl",
        survey.version,
        survey.server,
        survey.count(Presence::Present),
        survey.count(Presence::Differing),
        survey.count(Presence::Missing),
        survey.objects.len()
    );
    for f in survey.objects.iter().filter(|f| f.presence != Presence::Present) {
        let what = match (&f.presence, &f.forced) {
            (_, Some(forced)) => format!(": {}; left as is, the next upgrade replaces it", forced.describe()),
            (Presence::Differing, None) => {
                let mut fields = f.differing.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
                if f.differing.len() > 4 {
                    fields.push_str(&format!(" (+{} more)", f.differing.len() - 4));
                }
                format!(": {fields}; set to {}'s values", survey.version)
            }
            _ => "; not created (the next upgrade creates it)".into(),
        };
        let mark = if f.presence == Presence::Missing { "missing" } else { "differing" };
        println!("  {mark:<9} wave {:>2}  {}{what}", f.wave, f.object);
    }
    let e = &survey.evidence;
    if !e.mismatches.is_empty() {
        println!(
            "release marks: {} of {} objects compared run other image tags or version labels",
            e.mismatches.len(),
            e.compared
        );
    }
}

fn confirm(survey: &Survey, profile: &str) -> anyhow::Result<()> {
    if !std::io::stdin().is_terminal() {
        return Err(coded(
            Code::Usage,
            anyhow::anyhow!(
                "adopt: no terminal to confirm on; pass --yes to adopt without asking (--plan only prints)"
            ),
        ));
    }
    let present = survey.objects.len() - survey.count(Presence::Missing);
    let question = format!(
        "Adopt {present} objects of {} (profile {profile}) on {}: become their field manager and write the install record?",
        survey.version, survey.server
    );
    let yes = dialoguer::Confirm::new().with_prompt(question).default(false).interact().context("confirmation")?;
    if yes { Ok(()) } else { Err(coded(Code::Failure, anyhow::anyhow!("adopt: cancelled; nothing was written"))) }
}
