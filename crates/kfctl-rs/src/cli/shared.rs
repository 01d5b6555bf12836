//! The argument groups several verbs share, each flattened in (`#[command(flatten)]`) so a flag
//! is spelled, documented and parsed once: where upstream comes from ([`SourceFlags`]), the
//! values (`-f`, `--set`…: [`ValuesFlags`]), what to render ([`RenderFlags`]), the cluster
//! ([`ClusterArgs`]), `-o` ([`OutputFlag`]), `--timeout` ([`TimeoutFlag`]), `--yes`
//! ([`YesFlag`]) and `--wait` ([`WaitArgs`]).
//!
//! `--timeout` is every cluster verb's one deadline; its default differs per verb (20m for
//! `install`, 5m for `status`), so each verb sets it with `mut_arg("timeout", …)` — a verb that
//! forgot would make the flag required, which `the_command_line_is_consistent` catches.

use clap::{Args, ValueEnum};
use kfctl::catalog::strvals::{SetFlag, SetKind};
use std::path::PathBuf;
use std::time::Duration;

/// Where upstream kubeflow/manifests comes from.
#[derive(Debug, Clone, Args)]
pub(crate) struct SourceFlags {
    /// Upstream kubeflow/manifests: a folder, a .tar.gz archive or a kfctl-rs bundle
    /// (default: the release --version from the cache, fetched if missing).
    #[arg(long)]
    pub source: Option<PathBuf>,
    /// Upstream release: exact (26.03.1, v1.11.0), a prefix (1.11) or `latest` (the newest
    /// known); or an upstream tag (26.10) or full commit SHA no release has, fetched by that name
    /// and rendered by content (not pinned: a warning).
    #[arg(long, default_value = "latest")]
    pub version: String,
    /// Resolve remote bases through this offline mirror.
    #[arg(long, env = "KFCTL_REMOTE_MIRROR")]
    pub remote_mirror: Option<PathBuf>,
    /// Never touch the network.
    #[arg(long)]
    pub offline: bool,
    /// Refuse a --source tree whose digest is not the --version named (or no pinned release's),
    /// and a --version not pinned by commit (a release fetched by its tag, an unknown tag or commit).
    #[arg(long)]
    pub verify: bool,
}

/// The values: files, then the `--set` family, applied in Helm's order.
#[derive(Debug, Clone, Args)]
pub(crate) struct ValuesFlags {
    /// A values file (repeatable; later files win).
    #[arg(id = "values", short = 'f', long = "values", value_name = "VALUES")]
    pub files: Vec<PathBuf>,
    /// A value, Helm style: key.path=value (repeatable; applied after files; `true`, `false`,
    /// `null` and whole numbers are typed, as Helm types them).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// A value kept as a string (repeatable).
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// A value as JSON (repeatable), e.g. --set-json 'global.tolerations=[{"key":"gpu"}]'.
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    /// A value read from a file (repeatable): the file's text, as one string, as Helm's
    /// --set-file reads it, e.g. --set-file global.commonAnnotations.note=NOTE.txt; a list
    /// value such as dex.connectors takes the YAML list the file holds.
    #[arg(long = "set-file", value_name = "KEY=PATH")]
    pub set_file: Vec<String>,
    /// A value taken literally: everything after the first `=`, commas and backslashes included.
    #[arg(long = "set-literal", value_name = "KEY=VALUE")]
    pub set_literal: Vec<String>,
}

impl ValuesFlags {
    /// Every `--set`-family flag, tagged with its kind (the render applies them in Helm's order).
    pub(crate) fn set_flags(&self) -> Vec<SetFlag> {
        let kinds = [
            (SetKind::Set, &self.sets),
            (SetKind::String, &self.set_string),
            (SetKind::Json, &self.set_json),
            (SetKind::File, &self.set_file),
            (SetKind::Literal, &self.set_literal),
        ];
        kinds.into_iter().flat_map(|(kind, list)| list.iter().map(move |e| SetFlag::new(kind, e.clone()))).collect()
    }
}

/// What to render: profile, components, values and upstream.
#[derive(Debug, Clone, Args)]
pub(crate) struct RenderFlags {
    /// A built-in profile (kind, minimal, multi-tenant) or a profile file.
    #[arg(long)]
    pub profile: String,
    /// Only these components of the profile (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub components: Vec<String>,
    #[command(flatten)]
    pub values: ValuesFlags,
    #[command(flatten)]
    pub source: SourceFlags,
}

/// Which cluster: every cluster verb.
#[derive(Debug, Clone, Args)]
pub(crate) struct ClusterArgs {
    /// The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

/// The format of a verb's output (`-o`), as in kubectl: `text` for people; `json` and `yaml`
/// the same data for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    Text,
    Json,
    Yaml,
}

/// `-o/--output`: one meaning in every verb that prints a report.
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct OutputFlag {
    /// What to print: text for people, or the same report as json or yaml for programs.
    #[arg(id = "output", long = "output", short = 'o', value_name = "OUTPUT", value_enum, default_value = "text")]
    pub format: Output,
}

/// `--timeout`: the run's one deadline (each verb sets its default with `mut_arg`).
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct TimeoutFlag {
    /// Give up after this long: the run's one deadline, every request and wait included (e.g.
    /// 90s, 20m, 1h; more than 0).
    #[arg(long, value_parser = parse_timeout)]
    pub timeout: Duration,
}

/// `-y/--yes`: the verbs that ask before they write.
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct YesFlag {
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `--wait[=BOOL]`, as kubectl's: install, upgrade and uninstall.
#[derive(Debug, Clone, Args)]
pub(crate) struct WaitArgs {
    /// Wait until the run's work is done (the default): install and upgrade wait for every
    /// object to be ready, uninstall for deleted namespaces to go. With --wait=false, install
    /// still waits for what the next wave needs (namespaces, CRDs, webhooks serving) and
    /// `kfctl-rs status` follows the rest; uninstall returns once the deletes are accepted.
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub wait: bool,
}

/// `90s`, `20m`, `1h`, `500ms` or plain seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("{text:?}: expected a duration like 90s, 20m or 1h"))?;
    let seconds = match unit {
        // as kubectl and Go's time.ParseDuration: a bare number is an error, but for 0
        "" if value == 0.0 => 0.0,
        "" => return Err(format!("{text:?}: a duration needs a unit, like {text}s, 90s, 5m or 1h")),
        "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!("{text:?}: unknown unit {unit:?}; use ms, s, m or h"));
        }
    };
    Ok(Duration::from_secs_f64(seconds))
}

/// A `--timeout`: a duration as [`parse_duration`] reads it, more than zero (a zero
/// deadline would give up before the first request: a usage error, not an unreachable server).
pub(crate) fn parse_timeout(text: &str) -> Result<Duration, String> {
    let timeout = parse_duration(text)?;
    if timeout.is_zero() {
        return Err(format!("{:?}: expected a timeout above zero, like 90s, 5m or 1h", text.trim()));
    }
    Ok(timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("20m"), Ok(Duration::from_secs(1200)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        // as kubectl: a bare number needs a unit (`--timeout 1` is not one second), but for 0
        assert!(parse_duration("3").unwrap_err().contains("needs a unit, like 3s"));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("3 weeks").is_err());
        assert_eq!(parse_timeout("3s"), Ok(Duration::from_secs(3)));
        assert!(parse_timeout("0s").unwrap_err().contains("above zero"));
        assert!(parse_timeout("0").is_err() && parse_timeout("0ms").is_err());
    }
}
