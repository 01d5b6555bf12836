//! `kfctl-rs values`: the default values with their comments, as `helm show values` prints
//! them: exactly the `values.yaml` `chart export` writes (the umbrella's, or with
//! `--component` that subchart's).

use super::{catalog_error, render_request};
use crate::cli::ValuesArgs;
use crate::exit::Outcome;
use kfctl::catalog::render::prepare;
use std::io::Write;

pub(crate) fn run(args: ValuesArgs) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let request = render_request(&args.render)?;
    let prepared = prepare(&request).map_err(catalog_error)?;
    for warning in &prepared.profile.warnings {
        eprintln!("warning: {warning}");
    }
    // The error decides its exit code (an unknown --component is a usage error).
    let text = kfctl::chart::values_file(&prepared, &args.name, args.component.as_deref())?;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(Outcome::Done)
}
