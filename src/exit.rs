//! Exit codes, documented in the README, and the single place an error chain is rendered.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | success (for `compare`: the streams are equal) |
//! | 1 | the operation failed (build, render or apply error; for `compare`: the streams differ) |
//! | 2 | usage: a bad flag, value or input file |
//! | 3 | source: upstream could not be fetched, verified or found in the cache |
//! | 4 | security: a refusal (load restriction, hostile archive, digest mismatch) |
//! | 5 | cluster: the API server refused or could not be reached |
//! | 6 | timeout: objects did not become ready before the deadline |
//! | 130 | interrupted (Ctrl-C) |

use std::fmt::Write as _;

/// The process exit code of a finished command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Success = 0,
    Failure = 1,
    Usage = 2,
    Source = 3,
    Security = 4,
    Cluster = 5,
    Timeout = 6,
    Interrupted = 130,
}

impl From<Code> for std::process::ExitCode {
    fn from(code: Code) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

/// An error that already knows its exit code. Layers wrap their own errors in it at the edge.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct Coded {
    pub code: Code,
    #[source]
    pub source: anyhow::Error,
}

/// Attach an exit code to any error.
pub fn coded(code: Code, err: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(Coded { code, source: err.into() })
}

/// The exit code for an error chain: an explicit [`Coded`] wins, then `security:` refusals.
pub fn code_for(err: &anyhow::Error) -> Code {
    if let Some(coded) = err.chain().find_map(|e| e.downcast_ref::<Coded>()) {
        return coded.code;
    }
    if err.chain().any(|e| e.to_string().starts_with("security:")) {
        return Code::Security;
    }
    Code::Failure
}

/// Render an error chain once, ripgrep style: `kfctl-rs: outer: inner: root`.
pub fn render_error(err: &anyhow::Error) -> String {
    let mut out = String::from("kfctl-rs: error: ");
    let mut first = true;
    let mut last = String::new();
    for cause in err.chain() {
        if cause.downcast_ref::<Coded>().is_some() {
            continue;
        }
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
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_codes_win_then_security_prefix() {
        assert_eq!(code_for(&coded(Code::Usage, anyhow::anyhow!("x"))), Code::Usage);
        assert_eq!(code_for(&anyhow::anyhow!("security: refused")), Code::Security);
        assert_eq!(code_for(&anyhow::anyhow!("other")), Code::Failure);
    }

    #[test]
    fn chain_is_rendered_once_without_repeats() {
        let err = anyhow::anyhow!("root cause").context("outer step");
        assert_eq!(render_error(&err), "kfctl-rs: error: outer step\n  caused by: root cause");
    }
}
