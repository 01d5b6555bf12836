//! One module per verb. Commands are the only place that prints to stdout or stderr.

use crate::cli::{Cli, Command};
use crate::exit::Code;

pub mod build;
pub mod source;

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Code> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Source(args) => source::run(args),
    }
}
