//! Exit codes (documented in the README; the table is `kfctl::exit::Code`'s) and the single
//! place an error chain is rendered.
//!
//! Types alone decide a code: the first error of the chain whose type has one — the binary's
//! [`CliError`], else a library type ([`kfctl::exit::code_of`]) — gives it; an error of no such
//! type is a failure (1). A command that finishes returns an [`Outcome`], mapped here too. No
//! other module names a code.

use crate::error::CliError;
use kfctl::exit::{Code, ExitStatus};
use std::fmt::Write as _;
use std::process::ExitCode;

/// How a command that did its work ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Done (`compare`: equal; `diff`: no change; `status`: healthy).
    Done,
    /// Done, and the answer is no (`compare`: the streams differ; `diff`: something would
    /// change; `status`: not healthy).
    Differs,
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Done => Code::Success.into(),
            Outcome::Differs => Code::Failure.into(),
        }
    }
}

impl ExitStatus for CliError {
    fn exit_code(&self) -> Code {
        match self {
            CliError::Usage(_) | CliError::Input(_) | CliError::NoTerminal { .. } => Code::Usage,
            CliError::Cancelled { .. } => Code::Failure,
            CliError::Blocked { .. } => Code::Cluster,
        }
    }
}

/// Print an error chain once, on stderr, and give its exit code: the first error whose type
/// decides one; never the text of a message. A reader that stopped reading (`kfctl-rs template
/// | head`) is no failure: exit 0, quietly.
pub(crate) fn report(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return Code::Success.into();
    }
    eprintln!("{}", render_error(err));
    code_of_chain(err).into()
}

fn code_of_chain(err: &anyhow::Error) -> Code {
    let of = |e: &(dyn std::error::Error + 'static)| {
        e.downcast_ref::<CliError>().map(ExitStatus::exit_code).or_else(|| kfctl::exit::code_of(e))
    };
    err.chain().find_map(of).unwrap_or(Code::Failure)
}

/// A second Ctrl-C: end the process at once, as interrupted.
pub(crate) fn exit_interrupted() -> ! {
    std::process::exit(Code::Interrupted as i32)
}

/// The exit code table, as `--help` prints it.
pub(crate) fn help_text() -> String {
    Code::help_text()
}

/// Render an error chain once, ripgrep style: `kfctl-rs: outer: inner: root`.
pub(crate) fn render_error(err: &anyhow::Error) -> String {
    let mut out = String::from("kfctl-rs: error: ");
    let mut first = true;
    let mut last = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text == last || last.ends_with(&text) {
            continue;
        }
        if !first {
            out.push_str("\n  caused by: ");
        }
        let _ = write!(out, "{text}");
        first = false;
        last = text;
    }
    out
}

/// A reader that stopped reading (`kfctl-rs template | head`) is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// `println!` panics when stdout is a pipe whose reader has gone (`kfctl-rs source list | head
/// -1`): the reader took what it wanted, which is not a failure of the command, so exit 0
/// quietly, as errors carrying `BrokenPipe` do. Every other panic goes to the default hook.
pub(crate) fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(Code::Success as i32);
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_decide_the_code_never_the_text() {
        assert_eq!(code_of_chain(&crate::error::usage("x")), Code::Usage);
        assert_eq!(code_of_chain(&anyhow::anyhow!("security: looks refused")), Code::Failure, "text decides nothing");
        let refused = kfctl::source::SourceError::Security("x".into());
        assert_eq!(code_of_chain(&anyhow::Error::new(refused).context("pull")), Code::Security);
        let fetch = kfctl::source::SourceError::Fetch { url: "u".into(), message: "m".into() };
        assert_eq!(code_of_chain(&anyhow::Error::new(fetch)), Code::Source);
        assert_eq!(code_of_chain(&anyhow::anyhow!("other")), Code::Failure);
        let cancelled = CliError::Cancelled { verb: "install".into(), untouched: "written" };
        assert_eq!(code_of_chain(&anyhow::Error::new(cancelled).context("asking")), Code::Failure);
        let blocked = CliError::Blocked { object: "o".into(), reason: "r".into(), verb: "upgrade".into() };
        assert_eq!(code_of_chain(&blocked.into()), Code::Cluster);
        let yaml = kfctl_yaml::parse_stream("a: [", "in.yaml").unwrap_err();
        assert_eq!(code_of_chain(&CliError::Input(yaml).into()), Code::Usage, "the user's stream: usage");
        assert_eq!(ExitCode::from(Outcome::Differs), ExitCode::from(1));
    }

    #[test]
    fn chain_is_rendered_once_without_repeats() {
        let err = anyhow::anyhow!("root cause").context("outer step");
        assert_eq!(render_error(&err), "kfctl-rs: error: outer step\n  caused by: root cause");
    }
}
