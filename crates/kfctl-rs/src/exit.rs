//! Exit codes (documented in the README; decided by error types, see [`kfctl::exit`]) and the
//! single place an error chain is rendered.

use std::fmt::Write as _;

pub(crate) use kfctl::exit::Code;

/// An error that already knows its exit code. Layers wrap their own errors in it at the edge.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub(crate) struct Coded {
    pub code: Code,
    #[source]
    pub source: anyhow::Error,
}

/// Attach an exit code to any error.
pub(crate) fn coded(code: Code, err: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(Coded { code, source: err.into() })
}

/// The exit code for an error chain: an explicit [`Coded`] wins, then the first error whose
/// type decides one ([`kfctl::exit::code_of`]); never the text of a message.
pub(crate) fn code_for(err: &anyhow::Error) -> Code {
    if let Some(coded) = err.chain().find_map(|e| e.downcast_ref::<Coded>()) {
        return coded.code;
    }
    err.chain().find_map(kfctl::exit::code_of).unwrap_or(Code::Failure)
}

/// Render an error chain once, ripgrep style: `kfctl-rs: outer: inner: root`.
pub(crate) fn render_error(err: &anyhow::Error) -> String {
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
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_codes_win_then_security_prefix() {
        assert_eq!(code_for(&coded(Code::Usage, anyhow::anyhow!("x"))), Code::Usage);
        assert_eq!(code_for(&anyhow::anyhow!("security: looks refused")), Code::Failure, "text decides nothing");
        let refused = kfctl::source::SourceError::Security("x".into());
        assert_eq!(code_for(&anyhow::Error::new(refused).context("pull")), Code::Security);
        assert_eq!(code_for(&anyhow::anyhow!("other")), Code::Failure);
    }

    #[test]
    fn chain_is_rendered_once_without_repeats() {
        let err = anyhow::anyhow!("root cause").context("outer step");
        assert_eq!(render_error(&err), "kfctl-rs: error: outer step\n  caused by: root cause");
    }
}
