//! One module per verb. Commands are the only place that prints to stdout or stderr.

use crate::cli::{Cli, Command};
use crate::exit::Code;

pub mod build;
pub mod diff;
pub mod install;
pub mod kind_config;
pub mod status;
pub mod uninstall;

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Code> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Install(args) => install::run(args),
        Command::Status(args) => status::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Uninstall(args) => uninstall::run(args),
        Command::KindConfig(args) => kind_config::run(args),
    }
}
