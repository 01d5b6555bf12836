//! The one confirmation question, asked by every verb that writes to a cluster without `--yes`
//! (`install`, `upgrade`, `rollback`, `adopt`, `uninstall`): on the terminal, default no.
//!
//! A verb makes its [`Prompt`] as soon as it knows it will ask, so a run without a terminal
//! (CI, a script) stops before it has done anything, saying to pass `--yes`
//! ([`CliError::NoTerminal`], exit 2); the question itself comes once the verb can name what it
//! would do. Answered no, the verb stops with [`CliError::Cancelled`] (exit 1).

use crate::error::CliError;
use anyhow::Context as _;
use std::io::IsTerminal;

/// A question a verb will ask on the terminal.
pub(crate) struct Prompt {
    verb: String,
}

impl Prompt {
    /// The prompt of `verb`; without a terminal on stdin, the refusal naming `--yes` (and
    /// `alternative`, another way out, or empty).
    pub(crate) fn on_terminal(verb: &str, alternative: &'static str) -> Result<Prompt, CliError> {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::NoTerminal { verb: verb.to_string(), alternative });
        }
        Ok(Prompt { verb: verb.to_string() })
    }

    /// Ask `question`; answered no, the refusal saying what was left `untouched` (`written`).
    pub(crate) fn ask(&self, question: &str, untouched: &'static str) -> anyhow::Result<()> {
        let yes = dialoguer::Confirm::new().with_prompt(question).default(false).interact().context("confirmation")?;
        match yes {
            true => Ok(()),
            false => Err(CliError::Cancelled { verb: self.verb.clone(), untouched }.into()),
        }
    }
}
