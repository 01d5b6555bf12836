//! The `kfctl-rs` binary: parse the command line, run one command, print any error chain once.

mod cli;
mod commands;
mod exit;
mod progress;

use std::process::ExitCode;

/// mimalloc: the engine allocates many small maps and strings; measured faster than glibc's
/// allocator on the whole-platform build (see README, Benchmarks). Built with `no_thp`: asking
/// for transparent huge pages made each fault zero (and, after another process churned memory,
/// compact) 2 MiB for a few KiB used — 30 MB more peak and more, and more variable, kernel time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = <cli::Cli as clap::Parser>::parse();
    kfctl::source::install_crypto_provider();
    match commands::run(cli) {
        Ok(code) => code.into(),
        Err(err) if exit::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}", exit::render_error(&err));
            exit::code_for(&err).into()
        }
    }
}
