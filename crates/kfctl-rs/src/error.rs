//! The binary's own errors: what the command line itself refuses (a flag combination, an
//! unreadable file named by a flag, no terminal to ask on) and a question answered no. Like
//! every library error type, each variant decides its exit code, in `crate::exit`.

/// An error of the command line itself.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A flag, a combination of flags or a file a flag names that cannot be used as given; the
    /// message names the flag and what to pass instead.
    #[error("{0}")]
    Usage(String),
    /// A YAML stream the user gave (`compare`'s, `--objects`) that does not parse.
    #[error(transparent)]
    Input(kfctl_yaml::YamlError),
    /// A verb that asks before it writes has no terminal to ask on.
    #[error("{verb}: no terminal to confirm on; pass --yes to {verb} without asking{alternative}")]
    NoTerminal {
        /// The verb (`install`, `uninstall`).
        verb: String,
        /// Another way out (` (--plan only prints)`), or empty.
        alternative: &'static str,
    },
    /// The question was answered no.
    #[error("{verb}: cancelled; nothing was {untouched}")]
    Cancelled {
        /// The verb asked about.
        verb: String,
        /// What was left alone (`written`, `deleted`).
        untouched: &'static str,
    },
    /// A plan holds a change the cluster cannot take (an immutable field of a PVC or CRD).
    #[error("{object}: {reason}; {verb} would stop before writing anything")]
    Blocked {
        /// The object whose change is blocked.
        object: String,
        /// Why, and what to do.
        reason: String,
        /// The verb planned.
        verb: String,
    },
}

/// A usage error with this message.
pub(crate) fn usage(message: impl Into<String>) -> anyhow::Error {
    CliError::Usage(message.into()).into()
}
