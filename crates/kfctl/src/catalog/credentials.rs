//! Upstream's well-known demo login: Dex's static user in `common/dex` (email
//! `user@example.com`, password `12341234`). This is the one place kfctl-rs knows it; the
//! parameter table ([`super::params::CREDENTIALS`]), the install's refusal, the detection in
//! pre-rendered streams and `secrets generate` read it from here. Whether a profile may keep
//! it is the profile's `allowDefaultCredentials` (see [`super::profile`]).

/// The demo user's email, as a literal (for `concat!`).
macro_rules! default_email {
    () => {
        "user@example.com"
    };
}

/// The demo user's password, as a literal (for `concat!`).
macro_rules! default_password {
    () => {
        "12341234"
    };
}

pub(crate) use {default_email, default_password};

/// The demo user's email.
pub const DEFAULT_EMAIL: &str = default_email!();
/// The demo user's password.
pub const DEFAULT_PASSWORD: &str = default_password!();
/// How messages name the login: `user@example.com / 12341234`.
pub const DEFAULT_LOGIN: &str = concat!(default_email!(), " / ", default_password!());
