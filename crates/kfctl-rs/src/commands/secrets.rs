//! `kfctl-rs secrets generate`: fresh credentials as a values file.
//!
//! Every secret is 32 random bytes from the operating system's RNG, written as 32
//! characters from [A-Za-z0-9] (rejection sampling, so no character is more likely than
//! another). The Dex password is stored only as its bcrypt hash; the clear password is shown
//! once, and only on the terminal that asked — never in a file, a pipe or a log.

use crate::cli::SecretsCommand;
use crate::exit::{Code, coded};
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::Path;

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `len` random characters from [A-Za-z0-9], from the OS RNG.
pub fn random_token(len: usize) -> anyhow::Result<String> {
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

pub fn run(cmd: SecretsCommand) -> anyhow::Result<Code> {
    let SecretsCommand::Generate { out, email } = cmd;
    let password = random_token(32)?;
    let hash = bcrypt::hash(&password, 12).map_err(|e| anyhow::anyhow!("bcrypt hashing failed: {e}"))?;
    let values = json!({
        "dex": {"staticUser": {"email": email, "passwordHash": hash}},
        "global": {"oidcClientSecret": random_token(32)?},
        "oauth2-proxy": {"cookieSecret": random_token(32)?},
        "pipelines": {"objectStore": {"accessKey": random_token(32)?, "secretKey": random_token(32)?}},
    });
    let text = format!(
        "# Fresh credentials from `kfctl-rs secrets generate`. Keep this file secret.\n{}",
        kfctl_yaml::to_yaml(&values)
    );
    write_private(&out, &text)?;
    eprintln!("wrote {} (mode 0600)", out.display());
    show_password_on_terminal(&email, &password);
    Ok(Code::Success)
}

fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
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
        coded(Code::Usage, anyhow::anyhow!("--out {}: cannot create: {e}{hint}", path.display()))
    })?;
    if let Err(e) = file.write_all(text.as_bytes()) {
        let _ = std::fs::remove_file(path);
        return Err(anyhow::anyhow!("--out {}: write failed: {e}", path.display()));
    }
    Ok(())
}

fn show_password_on_terminal(email: &str, password: &str) {
    let message =
        format!("Dex login for {email}: password {password}\n(shown once; only its bcrypt hash is in the file)\n");
    if std::io::stderr().is_terminal() {
        eprint!("{message}");
    } else if let Ok(mut tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        let _ = tty.write_all(message.as_bytes());
    } else {
        eprintln!(
            "the Dex password was not shown: no terminal is attached. Run the command in a terminal, or set dex.staticUser.passwordHash to a bcrypt hash of a password you choose."
        );
    }
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
