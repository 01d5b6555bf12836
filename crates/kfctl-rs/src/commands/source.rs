//! `kfctl-rs source ...`: pull upstream into the cache, write offline bundles, list releases
//! (and what was fetched by a tag or commit no release has).
//!
//! Also home of [`source_spec`], which turns a rendering command's source flags into a
//! [`SourceSpec`] for [`kfctl::source::open_source`], and of [`ConsoleReporter`], which draws download progress (an indicatif bar on a terminal, plain
//! lines otherwise). Errors leave through [`edge`] with exit code 4 for `security:` refusals
//! and 3 for everything else.

use crate::exit::{Code, coded};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use kfctl::source::bundle::{BundleInput, write_bundle};
use kfctl::source::by_name::{self, Named};
use kfctl::source::releases;
use kfctl::source::{
    Cache, FetchOptions, FetchReporter, Fetcher, PullRequest, SourceError, SourceSpec, open_source, pull,
};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Args)]
pub(crate) struct SourceArgs {
    #[command(subcommand)]
    pub command: SourceCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SourceCommand {
    /// Put an upstream release (or tag, or commit) and every remote base it references into the cache.
    Pull(PullArgs),
    /// Write an offline bundle (manifests, remote mirror and digests in one .tar.gz).
    Bundle(BundleArgs),
    /// List the known releases, newest first, their Kubernetes support and whether they are cached.
    List,
    /// Show how the catalog sees a manifests tree: each example/ entry's component (by path,
    /// content or pattern), what nothing claims, and where each component's folder is.
    Inspect(InspectArgs),
    /// Remove the render cache (kept renders of upstream; pulled releases stay).
    Clean,
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    #[command(flatten)]
    pub source: crate::cli::SourceFlags,
}

#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// Release: an exact version (26.03.1, v1.11.0), a prefix (1.11, newest match) or `latest`;
    /// or an upstream tag (26.10) or full commit SHA no release has, fetched by that name (not
    /// pinned: a warning). With --from, the release the import is checked against.
    #[arg(long)]
    pub version: Option<String>,
    /// Import from a local checkout, a .tar.gz (GitHub archive or bundle) or an https:// URL.
    #[arg(long, value_name = "DIR|ARCHIVE|URL")]
    pub from: Option<String>,
    #[command(flatten)]
    pub network: NetworkFlags,
}

#[derive(Debug, Args)]
pub(crate) struct BundleArgs {
    /// Release to bundle (pulled into the cache first if needed).
    #[arg(long)]
    pub version: Option<String>,
    /// Bundle this manifests folder or archive instead of a cached release.
    #[arg(long, value_name = "DIR|ARCHIVE")]
    pub from: Option<PathBuf>,
    /// Take remote references from this mirror instead of the cache.
    #[arg(long, value_name = "DIR")]
    pub remote_mirror: Option<PathBuf>,
    /// The bundle file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub network: NetworkFlags,
}

/// Network behaviour shared by every command that may fetch.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct NetworkFlags {
    /// Never touch the network: use only the cache, local files and mirrors.
    #[arg(long)]
    pub offline: bool,
    /// Also trust the CA certificates in this PEM file (a TLS-inspecting proxy, a test server).
    #[arg(long, env = "KFCTL_CA_FILE", value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
}

/// The [`SourceSpec`] of a rendering command's `--source/--version/--remote-mirror/--offline`
/// flags, with `KFCTL_GITHUB_BASE`, `KFCTL_CA_FILE` and console progress.
pub(crate) fn source_spec(
    source: Option<&Path>,
    version: &str,
    remote_mirror: Option<&Path>,
    offline: bool,
) -> anyhow::Result<SourceSpec> {
    let network = NetworkFlags { offline, ca_file: None };
    Ok(SourceSpec {
        source: source.map(Path::to_path_buf),
        version: Some(version.to_string()),
        remote_mirror: remote_mirror.map(Path::to_path_buf),
        offline,
        cache_dir: None,
        fetch: network.fetch_options()?,
        verify: false,
    })
}

impl NetworkFlags {
    /// Fetch options from the environment (`KFCTL_GITHUB_BASE`), `--ca-file` and a console reporter.
    pub(crate) fn fetch_options(&self) -> anyhow::Result<FetchOptions> {
        let mut options = FetchOptions::from_env().map_err(edge)?;
        if let Some(path) = &self.ca_file {
            let pem = kfctl::input::read_small_file(path, "--ca-file").map_err(|e| coded(Code::Usage, e))?;
            options.extra_root_ca_pem = Some(pem);
        }
        options.reporter = Arc::new(ConsoleReporter::default());
        Ok(options)
    }
}

/// Attach the exit code a source error deserves (and, for a failed download, what to do).
pub(crate) fn edge(err: SourceError) -> anyhow::Error {
    let code = if err.is_security() { Code::Security } else { Code::Source };
    if matches!(err, SourceError::Fetch { .. }) {
        let hint = "upstream could not be downloaded; check the network, or use a local copy: \
            --source DIR|ARCHIVE|BUNDLE --offline (a bundle is made with `kfctl-rs source bundle` on a connected machine)";
        return coded(code, anyhow::Error::new(err).context(hint));
    }
    coded(code, err)
}

pub(crate) fn run(args: SourceArgs) -> anyhow::Result<Code> {
    kfctl::source::install_crypto_provider();
    match args.command {
        SourceCommand::Pull(args) => run_pull(args),
        SourceCommand::Bundle(args) => run_bundle(args),
        SourceCommand::List => run_list(),
        SourceCommand::Inspect(args) => run_inspect(args),
        SourceCommand::Clean => run_clean(),
    }
}

fn open_cache() -> anyhow::Result<Arc<Cache>> {
    let root = Cache::default_root().map_err(edge)?;
    Ok(Arc::new(Cache::open(root).map_err(edge)?))
}

fn run_pull(args: PullArgs) -> anyhow::Result<Code> {
    let cache = open_cache()?;
    let fetcher = match args.network.offline {
        true => None,
        false => Some(Arc::new(Fetcher::new(args.network.fetch_options()?).map_err(edge)?)),
    };
    let request = PullRequest { version: args.version, from: args.from };
    let report = pull(&request, &cache, fetcher).map_err(edge)?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    println!("cache: {}", report.cache_root.display());
    let state = |added: bool, imported: bool| match (added, imported) {
        (false, _) => "cached, verified",
        (true, true) => "imported",
        (true, false) => "fetched",
    };
    let m = &report.manifests;
    let local = !m.origin.starts_with("https://");
    println!("manifests {}: {} sha256 {} ({})", m.label, m.path.display(), m.sha256, state(m.fetched, local));
    if let Some(release) = &report.release {
        println!(
            "  release {} {}, Kubernetes {}",
            release.version,
            release.commit_or_unconfirmed(),
            release.kubernetes_range()
        );
    }
    for remote in &report.remotes {
        let shown = state(remote.fetched, report.from_bundle);
        println!("{}: {} sha256 {} ({shown})", remote.key, remote.path.display(), remote.sha256);
    }
    Ok(Code::Success)
}

fn run_bundle(args: BundleArgs) -> anyhow::Result<Code> {
    let named = args.version.as_deref().map(|v| Named::parse(Some(v))).transpose().map_err(edge)?;
    let spec = SourceSpec {
        source: args.from.clone(),
        version: args.version.clone(),
        remote_mirror: args.remote_mirror.clone(),
        offline: args.network.offline,
        cache_dir: None,
        fetch: args.network.fetch_options()?,
        verify: false,
    };
    let opened = open_source(&spec).map_err(edge)?;
    let release = opened.release.or(named.and_then(|n| n.release().copied()));
    let input = BundleInput {
        manifests_dir: &opened.manifests_dir,
        resolver: opened.resolver.as_ref(),
        release: release.as_ref(),
    };
    let report = write_bundle(&input, &args.out).map_err(edge)?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    println!("bundle: {} ({} bytes, sha256 {})", report.out.display(), report.bytes, report.sha256);
    println!("manifests: {} sha256 {}", opened.origin, report.manifest.manifests_sha256);
    for remote in &report.manifest.remotes {
        println!("remote/{}: sha256 {}", remote.key, remote.sha256);
    }
    Ok(Code::Success)
}

fn run_clean() -> anyhow::Result<Code> {
    let root = Cache::default_root().map_err(edge)?;
    let folder = kfctl::render_cache::folder(&root);
    match kfctl::render_cache::clean(&root) {
        Ok(true) => println!("removed the render cache {}", folder.display()),
        Ok(false) => println!("no render cache at {}", folder.display()),
        Err(e) => anyhow::bail!("{}: cannot remove the render cache: {e}; remove it by hand", folder.display()),
    }
    let memos = root.join(kfctl::source::digest_memo::FOLDER);
    match kfctl::source::digest_memo::clean(&root) {
        Ok(true) => println!("removed the remembered tree digests {}", memos.display()),
        Ok(false) => {}
        Err(e) => {
            anyhow::bail!("{}: cannot remove the remembered tree digests: {e}; remove it by hand", memos.display())
        }
    }
    Ok(Code::Success)
}

fn run_inspect(args: InspectArgs) -> anyhow::Result<Code> {
    let upstream = super::open_upstream(&args.source)?;
    let catalog = upstream.layout.catalog(&upstream.manifests_dir).map_err(super::catalog_error)?;
    let report = kfctl::catalog::inspect::inspect(&catalog, &upstream.manifests_dir, upstream.resolver.clone());
    print!("{}", report.to_text());
    Ok(Code::Success)
}

fn run_list() -> anyhow::Result<Code> {
    let cache = open_cache()?;
    for release in releases::newest_first(releases::known()) {
        let named = Named::Release(release);
        let key = named.cache_key();
        let cached = cache.record(&key).map_err(edge)?.is_some();
        let state = match (cached, release.is_pinned()) {
            (true, true) => "cached",
            (false, true) => "not cached",
            (true, false) => "cached; not pinned by commit: fetched by its tag, verified against its recorded digest",
            (false, false) => "not cached; not pinned by commit: fetched by its tag, with a warning",
        };
        println!(
            "{}  {}  Kubernetes {}  ({state})",
            release.version,
            release.commit_or_unconfirmed(),
            release.kubernetes_range()
        );
    }
    let labels = cache.labels_under("manifests").map_err(edge)?;
    for (label, named) in by_name::fetched_by_name(&labels) {
        println!(
            "{label}  {}: not a known release, fetched by name (not pinned); used by --version {}",
            named.describe(),
            named.label()
        );
    }
    for label in &labels {
        if let Some(rest) = label.strip_prefix(kfctl::source::pull::UNVERIFIED_PREFIX) {
            println!(
                "{label}  unverified import (named {rest}; its digest is not the catalog's): never used by --version"
            );
        }
    }
    Ok(Code::Success)
}

/// Download progress on stderr: a bar per download on a terminal, one line per event otherwise.
#[derive(Default)]
pub(crate) struct ConsoleReporter {
    bar: Mutex<Option<ProgressBar>>,
}

impl ConsoleReporter {
    fn with_bar(&self, f: impl FnOnce(&mut Option<ProgressBar>)) {
        f(&mut self.bar.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

impl FetchReporter for ConsoleReporter {
    fn started(&self, url: &str, total: Option<u64>) {
        if !std::io::stderr().is_terminal() {
            eprintln!("fetching {url}");
            return;
        }
        let bar = match total {
            Some(len) => ProgressBar::new(len),
            None => ProgressBar::new_spinner(),
        };
        let template = "{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}";
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(url.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        self.with_bar(|slot| *slot = Some(bar));
    }

    fn progressed(&self, _url: &str, bytes_so_far: u64) {
        self.with_bar(|slot| {
            if let Some(bar) = slot {
                bar.set_position(bytes_so_far);
            }
        });
    }

    fn retrying(&self, url: &str, attempt: u32, delay: Duration, reason: &str) {
        let line = format!("retrying {url} in {} ms (attempt {attempt} failed: {reason})", delay.as_millis());
        self.with_bar(|slot| match slot.take() {
            Some(bar) => {
                bar.finish_and_clear();
                eprintln!("{line}");
            }
            None => eprintln!("{line}"),
        });
    }

    fn finished(&self, url: &str, bytes: u64, sha256: &str) {
        self.with_bar(|slot| {
            if let Some(bar) = slot.take() {
                bar.finish_and_clear();
            }
        });
        eprintln!("fetched {url} ({bytes} bytes, sha256 {sha256})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_spec_carries_the_flags() {
        let spec = source_spec(Some(Path::new("/m")), "1.11", Some(Path::new("/r")), true).unwrap();
        assert_eq!(spec.source.as_deref(), Some(Path::new("/m")));
        assert_eq!(spec.version.as_deref(), Some("1.11"));
        assert_eq!(spec.remote_mirror.as_deref(), Some(Path::new("/r")));
        assert!(spec.offline && spec.cache_dir.is_none());
    }

    #[test]
    fn security_errors_exit_4_and_others_3() {
        let code = |err: SourceError| crate::exit::code_for(&edge(err));
        assert_eq!(code(SourceError::Security("x".into())), Code::Security);
        assert_eq!(code(SourceError::Fetch { url: "u".into(), message: "m".into() }), Code::Source);
    }
}
