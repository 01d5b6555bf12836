//! `kfctl-rs adopt`: take over a platform upstream's loop (or `kubectl apply`) installed.
//!
//! Renders `--version` of the profile (or reads `--objects`), reads what the cluster holds of it
//! and prints it — present, differing (with the fields), missing — before writing anything;
//! refuses (nothing written) on a cluster with a kfctl-rs record, with nothing of the release,
//! or plainly with another release. `--plan` (`--dry-run`) stops there. Otherwise it asks for
//! confirmation on a terminal (`--yes` skips it), becomes the field manager of every present
//! object and writes the install record: see `kfctl::cluster::adopt`.

use super::cluster_args::progress_sink;
use super::confirm::Prompt;
use crate::cli::{AdoptArgs, Output};
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::cluster::ClusterError;
use kfctl::cluster::adopt::{self, AdoptOptions, Adoption, Presence, Survey};

/// `kfctl-rs adopt`.
pub(crate) fn run(args: AdoptArgs) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let (objects, meta) = args.source.objects_and_meta()?;
    let target = args.cluster.target();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let version = meta.meta.upstream_version.clone();
    let mut options = AdoptOptions::new(target, meta.meta.clone());
    options.timeout = args.deadline.timeout;
    options.concurrency = args.concurrency.max(1);
    options.lock_wait = args.lock_wait;
    runtime.block_on(async move {
        // one connection, one survey: what is printed is what is taken over
        let mut adoption = Adoption::open(&objects, options).await?;
        let survey = adoption.survey();
        match args.output.format {
            Output::Json | Output::Yaml => super::output::print_data(args.output.format, survey)?,
            Output::Text => print_survey(survey, &meta.meta.profile),
        }
        adopt::judge(survey).map_err(ClusterError::from)?;
        if args.plan {
            if args.output.format == Output::Text {
                println!("plan only: nothing was written");
            }
            return Ok(Outcome::Done);
        }
        if !args.confirm.yes {
            confirm(survey, &meta.meta.profile)?;
            adoption.restart_clock();
        }
        let mut progress = progress_sink();
        let report = adoption.take_over(progress.as_mut()).await?;
        match args.output.format {
            Output::Json | Output::Yaml => super::output::print_data(args.output.format, &report)?,
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
        Ok(Outcome::Done)
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

/// Ask, once the survey is printed (without a terminal: the refusal naming --yes and --plan).
fn confirm(survey: &Survey, profile: &str) -> anyhow::Result<()> {
    let prompt = Prompt::on_terminal("adopt", " (--plan only prints)")?;
    let present = survey.objects.len() - survey.count(Presence::Missing);
    let question = format!(
        "Adopt {present} objects of {} (profile {profile}) on {}: become their field manager and write the install record?",
        survey.version, survey.server
    );
    prompt.ask(&question, "written")
}
