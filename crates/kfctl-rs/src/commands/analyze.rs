//! `kfctl-rs analyze`: coded findings (`kfctl::analyze::RULES`) about a YAML stream (`-f`) or
//! the installed platform's objects and its cluster.
//!
//! Exit 0 without error findings, 1 with one, 2 for bad input, 5 when the cluster refused.

use crate::cli::AnalyzeArgs;
use crate::error::CliError;
use crate::exit::Outcome;
use kfctl::analyze::{ClusterFacts, analyze, has_errors, render_text};

pub(crate) fn run(args: AnalyzeArgs) -> anyhow::Result<Outcome> {
    let (objects, facts) = match &args.file {
        Some(path) => {
            let shown = path.display().to_string();
            let text = kfctl::input::read_stream(&shown, "objects")?;
            let objects = kfctl_yaml::parse_objects(&text, &shown).map_err(CliError::Input)?;
            (objects, ClusterFacts { architectures: args.arch.clone(), ..ClusterFacts::default() })
        }
        None => {
            let runtime = super::runtime()?;
            runtime.block_on(kfctl::cluster::live::live_objects(&args.cluster.target(), args.deadline.timeout))?
        }
    };
    let findings = analyze(&objects, &facts);
    super::output::print_report(args.output.format, &findings, || render_text(&findings))?;
    Ok(if has_errors(&findings) { Outcome::Differs } else { Outcome::Done })
}
