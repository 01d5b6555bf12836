//! kfctl-rs as a kubectl plugin: installed (by krew, Homebrew or by hand) as
//! `kubectl-kubeflow_install` on `PATH`, kubectl runs it for `kubectl kubeflow-install …`
//! (krew's naming: the plugin `kubeflow-install`, a dash in its name an underscore in the
//! file's). Invoked under that name, usage and help name the command the user typed,
//! `kubectl kubeflow-install`, instead of the file.

use std::ffi::OsStr;
use std::path::Path;

/// The plugin's name, as `kubectl` and krew know it.
pub(crate) const PLUGIN: &str = "kubeflow-install";

/// The executable kubectl looks for on `PATH` to run [`PLUGIN`].
pub(crate) const PLUGIN_BINARY: &str = "kubectl-kubeflow_install";

/// The command line, parsed with the name the program was invoked as.
pub(crate) fn parse() -> crate::cli::Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = crate::cli::Cli::command();
    if let Some(name) = invoked_as(std::env::args_os().next().as_deref()) {
        command = command.bin_name(name);
    }
    let matches = command.get_matches();
    crate::cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut crate::cli::Cli::command()).exit())
}

/// `kubectl kubeflow-install` when `argv0`'s file name is the plugin's executable (with
/// `.exe` on Windows), else `None` (clap names the file, as before).
fn invoked_as(argv0: Option<&OsStr>) -> Option<String> {
    let file = Path::new(argv0?).file_name()?.to_str()?;
    let stem = file.strip_suffix(".exe").unwrap_or(file);
    (stem == PLUGIN_BINARY).then(|| format!("kubectl {PLUGIN}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_binary_is_named_as_kubectl_shows_it() {
        let shown = |s: &str| invoked_as(Some(OsStr::new(s)));
        assert_eq!(shown("/home/u/.krew/bin/kubectl-kubeflow_install").as_deref(), Some("kubectl kubeflow-install"));
        assert_eq!(shown("kubectl-kubeflow_install.exe").as_deref(), Some("kubectl kubeflow-install"));
        assert_eq!(shown("/usr/local/bin/kfctl-rs"), None);
        assert_eq!(shown("kubectl-kubeflow_installer"), None);
        assert_eq!(invoked_as(None), None);
    }
}
