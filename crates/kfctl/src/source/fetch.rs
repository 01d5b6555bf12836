//! HTTPS downloads you can leave running unattended.
//!
//! - HTTPS only: a plain `http://` URL is refused before any connection, and a redirect to
//!   plain http is refused by the redirect policy (a `security:` error naming both URLs).
//! - Connect and read timeouts (the read timeout applies to each read, so a large archive on a
//!   slow link is fine while a stalled one is not).
//! - Retries with exponential backoff and full jitter ([`crate::backoff`]) on transient
//!   failures: connection errors, resets and truncated bodies, timeouts, HTTP 5xx and 429
//!   (honouring a short `Retry-After`). Other statuses (404, 403) and TLS certificate errors
//!   fail at once.
//! - A size cap, checked against `Content-Length` and while streaming.
//! - Bodies stream to a file while their sha256 is computed, so nothing large sits in memory.
//!
//! Progress goes to a [`FetchReporter`]; the commands layer draws it (a progress bar on a
//! terminal, plain lines otherwise). Tests point `github_base` at a loopback server and trust
//! its CA with `extra_root_ca_pem`.
//!
//! The client is `reqwest::blocking`: call it from plain threads, not from inside an async
//! runtime (use `spawn_blocking` there).

use super::SourceError;
use crate::backoff::{Backoff, jitter_unit};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Receives download progress. Every method has a silent default.
pub trait FetchReporter: Send + Sync {
    /// A download of `url` started; `total` is its size when the server says it.
    fn started(&self, _url: &str, _total: Option<u64>) {}
    /// `bytes_so_far` of `url` arrived.
    fn progressed(&self, _url: &str, _bytes_so_far: u64) {}
    /// A download of `url` failed with `reason` and is retried after `delay` (`attempt`: the
    /// attempts so far).
    fn retrying(&self, _url: &str, _attempt: u32, _delay: Duration, _reason: &str) {}
    /// A download of `url` finished: `bytes` long, with this sha256 digest.
    fn finished(&self, _url: &str, _bytes: u64, _sha256: &str) {}
}

/// Reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SilentReporter;

impl FetchReporter for SilentReporter {}

/// How downloads behave.
#[derive(Clone)]
pub struct FetchOptions {
    /// Where `https://github.com` URLs are fetched from (`KFCTL_GITHUB_BASE`); must be https.
    pub github_base: String,
    /// PEM certificates trusted in addition to the platform's roots (`--ca-file`; tests).
    pub extra_root_ca_pem: Option<Vec<u8>>,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long a read may wait for data.
    pub read_timeout: Duration,
    /// Total attempts per download, the first included.
    pub attempts: u32,
    /// The first retry waits up to this long; each later one up to twice the previous.
    pub backoff: Duration,
    /// The longest wait between attempts.
    pub max_backoff: Duration,
    /// The largest download accepted, in bytes.
    pub max_download_bytes: u64,
    /// Receives download progress.
    pub reporter: Arc<dyn FetchReporter>,
}

/// How a [`SourceError::Fetch`] message of an HTTP 404 answer starts.
pub(crate) const NOT_FOUND: &str = "HTTP 404";

/// The public GitHub address, the default of [`FetchOptions::github_base`].
pub(crate) const GITHUB: &str = "https://github.com";

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            github_base: GITHUB.to_string(),
            extra_root_ca_pem: None,
            connect_timeout: Duration::from_secs(15),
            read_timeout: Duration::from_secs(60),
            attempts: 4,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(10),
            max_download_bytes: crate::input::MAX_DOWNLOAD_BYTES,
            reporter: Arc::new(SilentReporter),
        }
    }
}

impl std::fmt::Debug for FetchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchOptions")
            .field("github_base", &self.github_base)
            .field("extra_root_ca_pem", &self.extra_root_ca_pem.as_ref().map(|p| p.len()))
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("attempts", &self.attempts)
            .field("max_download_bytes", &self.max_download_bytes)
            .finish_non_exhaustive()
    }
}

impl FetchOptions {
    /// Defaults, with `github_base` from `KFCTL_GITHUB_BASE` and extra CA certificates from
    /// the PEM file `KFCTL_CA_FILE`, when set.
    pub fn from_env() -> Result<FetchOptions, SourceError> {
        let mut options = FetchOptions::default();
        if let Ok(base) = std::env::var("KFCTL_GITHUB_BASE")
            && !base.is_empty()
        {
            options.github_base = base.trim_end_matches('/').to_string();
        }
        if let Some(path) = std::env::var_os("KFCTL_CA_FILE").filter(|v| !v.is_empty()) {
            let pem = crate::input::read_small_file(Path::new(&path), "CA file")
                .map_err(|e| SourceError::invalid("KFCTL_CA_FILE", e.to_string()))?;
            options.extra_root_ca_pem = Some(pem);
        }
        Ok(options)
    }
}

/// A finished download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    pub bytes: u64,
    pub(crate) sha256: String,
}

/// Downloads over HTTPS with the policy above. Cheap to create: the client is built on first use.
pub struct Fetcher {
    options: FetchOptions,
    client: OnceLock<reqwest::blocking::Client>,
    requests: AtomicU64,
}

enum Failure {
    Fatal(SourceError),
    Transient { reason: String, retry_after: Option<Duration> },
}

impl Fetcher {
    /// A fetcher with `options`; [`SourceError::Security`] when the GitHub base is not https.
    pub fn new(options: FetchOptions) -> Result<Fetcher, SourceError> {
        if !options.github_base.starts_with("https://") {
            return Err(SourceError::Security(format!(
                "github base {}: only https is allowed (check KFCTL_GITHUB_BASE)",
                options.github_base
            )));
        }
        Ok(Fetcher { options, client: OnceLock::new(), requests: AtomicU64::new(0) })
    }

    /// How many HTTP requests this fetcher has sent (retries and redirects excluded).
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// `https://github.com/<rest>` rewritten onto the configured base; other URLs unchanged.
    pub(crate) fn effective_url(&self, url: &str) -> String {
        match url.strip_prefix(GITHUB) {
            Some(rest) if rest.starts_with('/') => format!("{}{rest}", self.options.github_base.trim_end_matches('/')),
            _ => url.to_string(),
        }
    }

    /// Download `url` (after `Self::effective_url`) into `dest`, replacing its contents.
    pub fn download(&self, url: &str, dest: &Path) -> Result<Downloaded, SourceError> {
        let url = self.effective_url(url);
        if !url.starts_with("https://") {
            return Err(SourceError::Security(format!("{url}: only https URLs are fetched")));
        }
        let attempts = self.options.attempts.max(1);
        for attempt in 1..=attempts {
            match self.attempt(&url, dest) {
                Ok(done) => return Ok(done),
                Err(Failure::Fatal(err)) => return Err(err),
                Err(Failure::Transient { reason, retry_after }) => {
                    if attempt == attempts {
                        let message = format!("{reason} (gave up after {attempts} attempts)");
                        return Err(SourceError::Fetch { url, message });
                    }
                    let delay = retry_after.unwrap_or_else(|| self.backoff(attempt)).min(self.options.max_backoff);
                    self.options.reporter.retrying(&url, attempt, delay, &reason);
                    std::thread::sleep(delay);
                }
            }
        }
        unreachable!("the last attempt always returns")
    }

    /// Full jitter after attempt number `attempt` (1-based): a random wait in
    /// [0, backoff * 2^(attempt-1)], capped at `max_backoff`.
    fn backoff(&self, attempt: u32) -> Duration {
        let backoff = Backoff { initial: self.options.backoff, max: self.options.max_backoff };
        backoff.full_jitter(attempt.saturating_sub(1), jitter_unit())
    }

    fn client(&self) -> Result<&reqwest::blocking::Client, SourceError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let client = build_client(&self.options)?;
        Ok(self.client.get_or_init(|| client))
    }

    fn attempt(&self, url: &str, dest: &Path) -> Result<Downloaded, Failure> {
        let client = self.client().map_err(Failure::Fatal)?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        let response = client.get(url).send().map_err(|e| classify_send_error(url, &e))?;
        let status = response.status();
        if status.as_u16() == 429 || status.is_server_error() {
            let retry_after = retry_after(&response);
            return Err(Failure::Transient { reason: format!("HTTP {status}"), retry_after });
        }
        if !status.is_success() {
            let message = match status.as_u16() {
                404 => format!("{NOT_FOUND} Not Found"),
                _ => format!("HTTP {status}"),
            };
            return Err(Failure::Fatal(SourceError::Fetch { url: url.to_string(), message }));
        }
        let cap = self.options.max_download_bytes;
        let total = response.content_length();
        if total.is_some_and(|len| len > cap) {
            return Err(Failure::Fatal(too_large(url, cap)));
        }
        self.options.reporter.started(url, total);
        let done = self.stream_to_file(url, response, dest)?;
        if total.is_some_and(|len| len != done.bytes) {
            return Err(Failure::Transient { reason: "the body ended early".into(), retry_after: None });
        }
        self.options.reporter.finished(url, done.bytes, &done.sha256);
        Ok(done)
    }

    fn stream_to_file(&self, url: &str, mut body: impl Read, dest: &Path) -> Result<Downloaded, Failure> {
        let fatal_io = |e: std::io::Error| Failure::Fatal(SourceError::io(dest, e));
        let mut file = std::fs::File::create(dest).map_err(fatal_io)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut bytes = 0u64;
        loop {
            let n = body.read(&mut buf).map_err(|e| Failure::Transient {
                reason: format!("reading the body failed: {}", error_chain(&e)),
                retry_after: None,
            })?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
            if bytes > self.options.max_download_bytes {
                return Err(Failure::Fatal(too_large(url, self.options.max_download_bytes)));
            }
            hasher.update(&buf[..n]);
            file.write_all(&buf[..n]).map_err(fatal_io)?;
            self.options.reporter.progressed(url, bytes);
        }
        file.flush().map_err(fatal_io)?;
        Ok(Downloaded { bytes, sha256: hex::encode(hasher.finalize()) })
    }
}

fn build_client(options: &FetchOptions) -> Result<reqwest::blocking::Client, SourceError> {
    super::install_crypto_provider();
    let mut builder = reqwest::blocking::Client::builder()
        .user_agent(concat!("kfctl-rs/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(options.connect_timeout)
        .timeout(options.read_timeout)
        .redirect(redirect_policy());
    if let Some(pem) = &options.extra_root_ca_pem {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| SourceError::invalid("extra CA certificates", format!("not valid PEM: {e}")))?;
        builder = builder.tls_certs_merge(certs);
    }
    let what = if options.extra_root_ca_pem.is_some() {
        "HTTPS client with the extra CA certificates"
    } else {
        "HTTPS client"
    };
    builder.build().map_err(|e| SourceError::invalid(what, error_chain(&e)))
}

const PLAIN_HTTP_REDIRECT: &str = "redirect to plain http refused";

/// Follow up to 10 redirects, all of them to https.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        if attempt.url().scheme() != "https" {
            let message = format!("{PLAIN_HTTP_REDIRECT}: {}", attempt.url());
            attempt.error(message)
        } else if attempt.previous().len() >= 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

fn classify_send_error(url: &str, err: &reqwest::Error) -> Failure {
    let chain = error_chain(err);
    if err.is_redirect() {
        if chain.contains(PLAIN_HTTP_REDIRECT) {
            let after = chain.split(&format!("{PLAIN_HTTP_REDIRECT}: ")).nth(1).unwrap_or("");
            let target = after.split(|c: char| c.is_whitespace() || c == ')').next().unwrap_or("");
            let reason = format!("{url}: {PLAIN_HTTP_REDIRECT} (to {target}); only https is allowed");
            return Failure::Fatal(SourceError::Security(reason));
        }
        return Failure::Fatal(SourceError::Fetch { url: url.to_string(), message: chain });
    }
    let certificate_problem = ["certificate", "UnknownIssuer", "NotValidForName"].iter().any(|k| chain.contains(k));
    if certificate_problem {
        let message = format!("TLS certificate rejected: {chain}");
        return Failure::Fatal(SourceError::Fetch { url: url.to_string(), message });
    }
    if err.is_connect()
        && let Some(what) = unreachable_host(err, &chain)
    {
        let message = format!("{what}: {chain}; {UNREACHABLE_HINT}");
        return Failure::Fatal(SourceError::Fetch { url: url.to_string(), message });
    }
    if err.is_connect() || err.is_timeout() || err.is_request() || err.is_body() {
        return Failure::Transient { reason: chain, retry_after: None };
    }
    Failure::Fatal(SourceError::Fetch { url: url.to_string(), message: chain })
}

/// What to do when the host cannot be reached at all.
const UNREACHABLE_HINT: &str = "hint: without network access use a local copy (--source DIR or ARCHIVE) \
     or a filled cache with --offline";

/// Whether a connect error says the host cannot be reached at all — its name does not resolve
/// or nothing listens — which retrying a few seconds later does not change, so it is said
/// once. A refused connection is the `io::Error` kind in the chain; a failed name lookup has
/// no type of its own in hyper's connector, only its text "dns error".
fn unreachable_host(err: &reqwest::Error, chain: &str) -> Option<&'static str> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(link) = current {
        if let Some(io) = link.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return Some("connection refused");
            }
            if let Some(inner) = io.get_ref() {
                current = Some(inner);
                continue;
            }
        }
        current = link.source();
    }
    (chain.contains("dns error") || chain.contains("failed to lookup address")).then_some("host name does not resolve")
}

fn retry_after(response: &reqwest::blocking::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

fn too_large(url: &str, cap: u64) -> SourceError {
    SourceError::Security(format!("{url}: the download exceeds the size cap of {cap} bytes"))
}

/// An error and its sources on one line, including the inner error of `io::Error`s (whose
/// `source()` skips it).
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut current = err.source();
    if let Some(io) = err.downcast_ref::<std::io::Error>()
        && let Some(inner) = io.get_ref()
    {
        parts.push(inner.to_string());
        current = inner.source();
    }
    while let Some(cause) = current {
        let text = cause.to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        current = cause.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetcher(base: &str) -> Fetcher {
        Fetcher::new(FetchOptions { github_base: base.to_string(), ..FetchOptions::default() }).unwrap()
    }

    #[test]
    fn refused_connections_and_unknown_hosts_are_said_once_with_the_hint() {
        for base in ["https://127.0.0.1:1/", "https://kfctl-no-such-host.invalid/"] {
            let f = fetcher(base);
            let dir = tempfile::tempdir().unwrap();
            let err = f.download("https://github.com/x/y/archive/v1.tar.gz", &dir.path().join("a")).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("--offline") && text.contains("--source"), "{text}");
            assert!(!text.contains("gave up after"), "not retried: {text}");
            assert_eq!(f.request_count(), 1, "{text}");
        }
    }

    #[test]
    fn github_urls_are_rewritten_onto_the_base() {
        let f = fetcher("https://127.0.0.1:8443/");
        assert_eq!(
            f.effective_url("https://github.com/o/r/archive/v1.tar.gz"),
            "https://127.0.0.1:8443/o/r/archive/v1.tar.gz"
        );
        assert_eq!(f.effective_url("https://example.com/x.yaml"), "https://example.com/x.yaml");
        assert_eq!(f.effective_url("https://github.company.com/x"), "https://github.company.com/x");
    }

    #[test]
    fn plain_http_base_is_refused() {
        let err = Fetcher::new(FetchOptions { github_base: "http://127.0.0.1".into(), ..FetchOptions::default() })
            .err()
            .unwrap();
        assert!(err.to_string().starts_with("security:"));
    }

    #[test]
    fn plain_http_url_is_refused_before_connecting() {
        let f = fetcher(GITHUB);
        let dest = tempfile::NamedTempFile::new().unwrap();
        let err = f.download("http://example.com/x.yaml", dest.path()).unwrap_err();
        assert!(err.is_security() && f.request_count() == 0, "{err}");
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let f = Fetcher::new(FetchOptions {
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(250),
            ..FetchOptions::default()
        })
        .unwrap();
        for _ in 0..50 {
            assert!(f.backoff(1) <= Duration::from_millis(100));
            assert!(f.backoff(2) <= Duration::from_millis(200));
            assert!(f.backoff(5) <= Duration::from_millis(250));
        }
    }

    #[test]
    fn invalid_extra_ca_is_an_error_naming_it() {
        let options = FetchOptions {
            extra_root_ca_pem: Some(b"-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n".to_vec()),
            ..FetchOptions::default()
        };
        let err = build_client(&options).err().unwrap().to_string();
        assert!(err.contains("extra CA certificates"), "{err}");
    }
}
