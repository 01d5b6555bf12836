//! `kfctl-rs analyze`: coded findings (`kfctl::analyze::RULES`) about a YAML stream (`-f`) or
//! the installed platform's objects and its cluster.
//!
//! Exit 0 without error findings, 1 with one, 2 for bad input, 5 when the cluster refused.

use crate::cli::{AnalyzeArgs, Output};
use crate::error::CliError;
use crate::exit::Outcome;
use anyhow::Context as _;
use kfctl::analyze::{ClusterFacts, analyze, has_errors, render_text};

pub(crate) fn run(args: AnalyzeArgs) -> anyhow::Result<Outcome> {
    let (objects, facts) = match &args.file {
        Some(path) => {
            let shown = path.display().to_string();
            let text = kfctl::input::read_stream(&shown, "objects")?;
            let objects = kfctl_yaml::parse_objects(&text, &shown).map_err(CliError::Input)?;
            (objects, ClusterFacts::default())
        }
        None => {
            let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
            runtime.block_on(kfctl::cluster::live::live_objects(&args.cluster.target(), args.deadline.timeout))?
        }
    };
    let findings = analyze(&objects, &facts);
    match args.output.format {
        Output::Json | Output::Yaml => super::output::print_data(args.output.format, &findings)?,
        Output::Text => print!("{}", render_text(&findings)),
    }
    Ok(if has_errors(&findings) { Outcome::Differs } else { Outcome::Done })
}
