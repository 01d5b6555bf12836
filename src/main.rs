//! The `kfctl-rs` binary: parse the command line, run one command, print any error chain once.

use std::process::ExitCode;

/// mimalloc: the engine allocates many small maps and strings; measured faster than glibc's
/// allocator on the whole-platform build (see README, Benchmarks).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = <kfctl_rs::cli::Cli as clap::Parser>::parse();
    kfctl_rs::source::install_crypto_provider();
    match kfctl_rs::commands::run(cli) {
        Ok(code) => code.into(),
        Err(err) if kfctl_rs::exit::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}", kfctl_rs::exit::render_error(&err));
            kfctl_rs::exit::code_for(&err).into()
        }
    }
}
