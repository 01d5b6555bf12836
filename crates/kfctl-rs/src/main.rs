//! The `kfctl-rs` binary: parse the command line, run one command, print any error chain once.

#![deny(unreachable_pub)]

mod cli;
mod commands;
mod exit;
mod plugin;
mod progress;

use std::process::ExitCode;

/// mimalloc: the engine allocates many small maps and strings; measured faster than glibc's
/// allocator on the whole-platform build (see tests/bench/README.md). Built with `no_thp`: asking
/// for transparent huge pages made each fault zero (and, after another process churned memory,
/// compact) 2 MiB for a few KiB used — 30 MB more peak and more, and more variable, kernel time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    quiet_on_closed_stdout();
    let cli = plugin::parse();
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

/// `println!` panics when stdout is a pipe whose reader has gone (`kfctl-rs source list | head
/// -1`): the reader took what it wanted, which is not a failure of the command, so exit 0
/// quietly, as errors carrying `BrokenPipe` do. Every other panic goes to the default hook.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
