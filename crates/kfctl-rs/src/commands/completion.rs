//! `kfctl-rs completion SHELL`: a completion script for the shell, generated from the command
//! line's own clap types (so it cannot fall behind them), as `kubectl completion` does.
//!
//! ```sh
//! source <(kfctl-rs completion bash)                      # bash, this shell
//! kfctl-rs completion zsh > "${fpath[1]}/_kfctl-rs"       # zsh
//! kfctl-rs completion fish > ~/.config/fish/completions/kfctl-rs.fish
//! ```
//!
//! clap_complete writes flags and verbs; two things are added here, in the generated text:
//! - bash: clap_complete names the per-verb cases `kfctl__subcmd__rs__subcmd__<verb>` but sets
//!   `cmd` to `kfctl__rs__subcmd__<verb>` for a binary with a dash in its name, so no case ever
//!   matched and only verbs completed; the labels are made to agree;
//! - the values of `--profile` (the built-in profiles, and files), `--components` (the catalog's
//!   components) and `--set` (`<component>.enabled=`, `<component>.provided=`), known when the
//!   script is generated, in bash, zsh and fish.

use crate::cli::CompletionArgs;
use crate::exit::Outcome;
use clap::CommandFactory;
use clap_complete::Shell;

pub(crate) fn run(args: CompletionArgs) -> anyhow::Result<Outcome> {
    let mut command = crate::cli::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "kfctl-rs", &mut out);
    let script = String::from_utf8_lossy(&out).into_owned();
    let words = Words::of_catalog();
    let script = match args.shell {
        Shell::Bash => bash(&script, &words),
        Shell::Zsh => zsh(&script, &words),
        Shell::Fish => fish(&script, &words),
        _ => script,
    };
    use std::io::Write;
    std::io::stdout().write_all(script.as_bytes())?;
    Ok(Outcome::Done)
}

/// The words a value completes to.
struct Words {
    profiles: Vec<String>,
    components: Vec<String>,
    keys: Vec<String>,
}

impl Words {
    fn of_catalog() -> Words {
        let profiles = kfctl::catalog::profile::builtin_names().into_iter().map(String::from).collect();
        let catalog = kfctl::catalog::Catalog::embedded().ok();
        let components: Vec<String> = catalog.iter().flat_map(|c| c.components.keys().cloned()).collect();
        let provided: Vec<String> = catalog.iter().flat_map(|c| c.provided.iter().map(|d| d.name.clone())).collect();
        let mut keys: Vec<String> = components.iter().map(|c| format!("{c}.enabled=")).collect();
        keys.extend(provided.iter().map(|d| format!("{d}.provided=")));
        keys.sort();
        Words { profiles, components, keys }
    }
}

const BASH_FILES: &str = "COMPREPLY=($(compgen -f \"${cur}\"))";

fn bash(script: &str, words: &Words) -> String {
    let fixed = script.replace("kfctl__subcmd__rs", "kfctl__rs");
    let case = |flag: &str, words: &[String], files: bool, after: &str| {
        let list = words.join(" ");
        let files = if files { " $(compgen -f -- \"${cur}\")" } else { "" };
        (
            format!("{flag})\n                    {BASH_FILES}"),
            format!("{flag})\n                    COMPREPLY=($(compgen -W \"{list}\" -- \"${{cur}}\"){files}){after}"),
        )
    };
    let mut out = fixed;
    for (from, to) in [
        case("--profile", &words.profiles, true, ""),
        case("--components", &words.components, false, ""),
        // `--set k=` goes on with the value: no space after it
        case("--set", &words.keys, false, "; compopt -o nospace 2>/dev/null"),
    ] {
        out = out.replace(&from, &to);
    }
    out
}

fn zsh(script: &str, words: &Words) -> String {
    script
        .replace(":PROFILE:_default'", &format!(":PROFILE:({})'", words.profiles.join(" ")))
        .replace(":COMPONENTS:_default'", &format!(":COMPONENTS:({})'", words.components.join(" ")))
}

fn fish(script: &str, words: &Words) -> String {
    let mut out = String::with_capacity(script.len());
    for line in script.lines() {
        out.push_str(line);
        if line.starts_with("complete -c kfctl-rs") {
            if line.contains(" -l profile ") {
                out.push_str(&format!(" -a '{}'", words.profiles.join(" ")));
            } else if line.contains(" -l components ") {
                out.push_str(&format!(" -f -a '{}'", words.components.join(" ")));
            } else if line.contains(" -l set ") {
                out.push_str(&format!(" -f -a '{}'", words.keys.join(" ")));
            }
        }
        out.push('\n');
    }
    out
}
