//! `kfctl-rs secrets generate`: fresh credentials as a values file.
//!
//! Every secret is 32 random bytes from the operating system's RNG, written as 32
//! characters from [A-Za-z0-9] (rejection sampling, so no character is more likely than
//! another). The Dex password is stored only as its bcrypt hash; the clear password is shown
//! once, on the terminal that asked — or, when asked explicitly, on stderr
//! (`--print-password`) or in a file of its own (`--password-file`, mode 0600). Without a
//! terminal and without either flag the command refuses before writing anything: a password
//! nobody has seen would lock the user out.

use crate::cli::SecretsCommand;
use crate::error::usage;
use crate::exit::Outcome;
use std::io::{IsTerminal, Write};
use std::path::Path;

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `len` random characters from [A-Za-z0-9], from the OS RNG.
pub(crate) fn random_token(len: usize) -> anyhow::Result<String> {
    let limit = 256 - (256 % ALPHABET.len());
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        getrandom::fill(&mut buf)
            .map_err(|e| anyhow::anyhow!("the operating system's random number generator failed: {e}"))?;
        out.extend(
            buf.iter()
                .filter(|b| usize::from(**b) < limit)
                .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
                .take(len - out.len()),
        );
    }
    Ok(out)
}

/// Where the clear Dex password goes.
enum PasswordSink {
    Terminal(Box<dyn Write>),
    Stderr,
    File(std::path::PathBuf),
}

pub(crate) fn run(cmd: SecretsCommand) -> anyhow::Result<Outcome> {
    let SecretsCommand::Generate { out, email, print_password, password_file } = cmd;
    let sink = password_sink(print_password, password_file)?;
    let password = random_token(32)?;
    let hash = bcrypt::hash(&password, 12).map_err(|e| anyhow::anyhow!("bcrypt hashing failed: {e}"))?;
    let mut failed = None;
    let values = kfctl::catalog::credentials::fresh_values(&email, &hash, || {
        random_token(32).unwrap_or_else(|e| {
            failed = Some(e);
            String::new()
        })
    });
    if let Some(err) = failed {
        return Err(err);
    }
    let text = format!(
        "# Fresh credentials from `kfctl-rs secrets generate`. Keep this file secret.\n{}",
        kfctl_yaml::to_yaml(&values)
    );
    if let PasswordSink::File(path) = &sink {
        write_private(path, &format!("{password}\n"), "--password-file")?;
    }
    if out.as_os_str() == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())?;
    } else if let Err(err) = write_private(&out, &text, "--out") {
        if let PasswordSink::File(path) = &sink {
            let _ = std::fs::remove_file(path);
        }
        return Err(err);
    } else {
        eprintln!("wrote {} (mode 0600)", out.display());
    }
    show_password(sink, &email, &password)?;
    Ok(Outcome::Done)
}

/// Decide, before anything is generated or written, where the password will be shown.
fn password_sink(print: bool, file: Option<std::path::PathBuf>) -> anyhow::Result<PasswordSink> {
    if let Some(path) = file {
        return Ok(PasswordSink::File(path));
    }
    if print {
        return Ok(PasswordSink::Stderr);
    }
    if std::io::stderr().is_terminal() {
        return Ok(PasswordSink::Terminal(Box::new(std::io::stderr())));
    }
    match std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        Ok(tty) => Ok(PasswordSink::Terminal(Box::new(tty))),
        Err(_) => Err(usage(
            "secrets generate: no terminal to show the new Dex password on, and only its hash goes into the values \
             file; pass --print-password (stderr) or --password-file FILE (mode 0600)",
        )),
    }
}

fn show_password(sink: PasswordSink, email: &str, password: &str) -> anyhow::Result<()> {
    let message = format!(
        "Dex login for {email}: password {password}\n(shown once; only its bcrypt hash is in the values file)\n"
    );
    match sink {
        PasswordSink::Terminal(mut tty) => tty.write_all(message.as_bytes())?,
        PasswordSink::Stderr => eprint!("{message}"),
        PasswordSink::File(path) => eprintln!("wrote the Dex password for {email} to {} (mode 0600)", path.display()),
    }
    Ok(())
}

/// Create `path` with mode 0600 (never overwriting) and write `text`; `flag` names it in errors.
fn write_private(path: &Path, text: &str, flag: &str) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AlreadyExists {
            "; it exists already and is never overwritten, choose another path"
        } else {
            ""
        };
        usage(format!("{flag} {}: cannot create: {e}{hint}", path.display()))
    })?;
    if let Err(e) = file.write_all(text.as_bytes()) {
        let _ = std::fs::remove_file(path);
        return Err(anyhow::anyhow!("{flag} {}: write failed: {e}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_alphanumeric_of_the_asked_length_and_differ() {
        let a = random_token(32).unwrap();
        let b = random_token(32).unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| ALPHABET.contains(&c)));
        assert_ne!(a, b);
    }
}
