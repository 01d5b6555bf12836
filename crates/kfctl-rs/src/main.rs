//! The `kfctl-rs` binary: parse the command line, run one command, print any error chain once.

#![deny(unreachable_pub)]

mod cli;
mod commands;
mod error;
mod exit;
mod plugin;
mod progress;

use std::process::ExitCode;

/// mimalloc: the engine allocates many small maps and strings; measured faster than glibc's
/// allocator on the whole-platform build (see tests/bench/README.md). Built with `no_thp`: asking
/// for transparent huge pages made each fault zero (and, after another process churned memory,
/// compact) 2 MiB for a few KiB used — 30 MB more peak and more, and more variable, kernel time.
/// Its version 2 (the workspace's `v2` feature): version 3 keeps freed memory from the system
/// for a second (`purge_delay`), and a first `chart export`, which builds four platforms one
/// after another, peaked at 118-127 MB on it; 2 waits 10 ms, at the same speed.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    exit::quiet_on_closed_stdout();
    let cli = plugin::parse();
    progress::set_quiet(cli.quiet);
    kfctl::source::install_crypto_provider();
    match commands::run(cli) {
        Ok(outcome) => outcome.into(),
        Err(err) => exit::report(&err),
    }
}
