//! `kfctl-rs completion SHELL`: a completion script for the shell, generated from the command
//! line's own clap types (so it cannot fall behind them), as `kubectl completion` does.
//!
//! ```sh
//! source <(kfctl-rs completion bash)                      # bash, this shell
//! kfctl-rs completion zsh > "${fpath[1]}/_kfctl-rs"       # zsh
//! kfctl-rs completion fish > ~/.config/fish/completions/kfctl-rs.fish
//! ```

use crate::cli::CompletionArgs;
use crate::exit::Outcome;
use clap::CommandFactory;

pub(crate) fn run(args: CompletionArgs) -> anyhow::Result<Outcome> {
    let mut command = crate::cli::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "kfctl-rs", &mut out);
    use std::io::Write;
    std::io::stdout().write_all(&out)?;
    Ok(Outcome::Done)
}
