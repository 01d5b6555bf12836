//! `kfctl-rs source ...`: pull upstream into the cache, write offline bundles, list releases
//! (and what was fetched by a tag or commit no release has).
//!
//! Also home of [`source_spec`], which turns a rendering command's source flags into a
//! [`SourceSpec`] for [`kfctl::source::open_source`], and of [`ConsoleReporter`], which draws download progress (an indicatif bar on a terminal, plain
//! lines otherwise). A failed download leaves through [`with_hint`], which says what to do; the
//! exit code is `SourceError`'s own (4 for a security refusal, 3 for everything else).

use crate::cli::{BundleArgs, InspectArgs, NetworkFlags, PullArgs, SourceCommand};
use crate::exit::Outcome;
use indicatif::{ProgressBar, ProgressStyle};
use kfctl::source::bundle::{BundleInput, write_bundle};
use kfctl::source::by_name::{self, Named};
use kfctl::source::releases;
use kfctl::source::{
    Cache, FetchOptions, FetchReporter, Fetcher, PullRequest, SourceError, SourceSpec, open_source, pull,
};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
        let mut options = FetchOptions::from_env().map_err(with_hint)?;
        if let Some(path) = &self.ca_file {
            let pem = kfctl::input::read_small_file(path, "--ca-file")?;
            options.extra_root_ca_pem = Some(pem);
        }
        options.reporter = Arc::new(ConsoleReporter::default());
        Ok(options)
    }
}

/// A source error for the chain, with what to do after a failed download (its exit code is
/// its type's).
pub(crate) fn with_hint(err: SourceError) -> anyhow::Error {
    if matches!(err, SourceError::Fetch { .. }) {
        let hint = "upstream could not be downloaded; check the network, or use a local copy: \
            --source DIR|ARCHIVE|BUNDLE --offline (a bundle is made with `kfctl-rs source bundle` on a connected machine)";
        return anyhow::Error::new(err).context(hint);
    }
    err.into()
}

pub(crate) fn run(command: SourceCommand) -> anyhow::Result<Outcome> {
    kfctl::source::install_crypto_provider();
    match command {
        SourceCommand::Pull(args) => run_pull(args),
        SourceCommand::Bundle(args) => run_bundle(args),
        SourceCommand::List => run_list(),
        SourceCommand::Inspect(args) => run_inspect(args),
        SourceCommand::Clean => run_clean(),
    }
}

fn open_cache() -> anyhow::Result<Arc<Cache>> {
    let root = Cache::default_root().map_err(with_hint)?;
    Ok(Arc::new(Cache::open(root).map_err(with_hint)?))
}

fn run_pull(args: PullArgs) -> anyhow::Result<Outcome> {
    let cache = open_cache()?;
    let fetcher = match args.network.offline {
        true => None,
        false => Some(Arc::new(Fetcher::new(args.network.fetch_options()?).map_err(with_hint)?)),
    };
    let request = PullRequest { version: args.version, from: args.from };
    let report = pull(&request, &cache, fetcher).map_err(with_hint)?;
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
    Ok(Outcome::Done)
}

fn run_bundle(args: BundleArgs) -> anyhow::Result<Outcome> {
    let named = args.version.as_deref().map(|v| Named::parse(Some(v))).transpose().map_err(with_hint)?;
    let spec = SourceSpec {
        source: args.from.clone(),
        version: args.version.clone(),
        remote_mirror: args.remote_mirror.clone(),
        offline: args.network.offline,
        cache_dir: None,
        fetch: args.network.fetch_options()?,
        verify: false,
    };
    let opened = open_source(&spec).map_err(with_hint)?;
    let release = opened.release.or(named.and_then(|n| n.release().copied()));
    let input = BundleInput {
        manifests_dir: &opened.manifests_dir,
        resolver: opened.resolver.as_ref(),
        release: release.as_ref(),
    };
    let report = write_bundle(&input, &args.out).map_err(with_hint)?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    println!("bundle: {} ({} bytes, sha256 {})", report.out.display(), report.bytes, report.sha256);
    println!("manifests: {} sha256 {}", opened.origin, report.manifest.manifests_sha256);
    for remote in &report.manifest.remotes {
        println!("remote/{}: sha256 {}", remote.key, remote.sha256);
    }
    Ok(Outcome::Done)
}

fn run_clean() -> anyhow::Result<Outcome> {
    let root = Cache::default_root().map_err(with_hint)?;
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
    Ok(Outcome::Done)
}

fn run_inspect(args: InspectArgs) -> anyhow::Result<Outcome> {
    let upstream = super::open_upstream(&args.source)?;
    let catalog = upstream.layout.catalog(&upstream.manifests_dir).map_err(super::catalog_error)?;
    let report = kfctl::catalog::inspect::inspect(&catalog, &upstream.manifests_dir, upstream.resolver.clone());
    print!("{}", report.to_text());
    Ok(Outcome::Done)
}

fn run_list() -> anyhow::Result<Outcome> {
    let cache = open_cache()?;
    for release in releases::newest_first(releases::known()) {
        let named = Named::Release(release);
        let key = named.cache_key();
        let cached = cache.record(&key).map_err(with_hint)?.is_some();
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
    let labels = cache.labels_under("manifests").map_err(with_hint)?;
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
    Ok(Outcome::Done)
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
    fn a_failed_download_says_what_to_do_and_keeps_its_type() {
        let err = with_hint(SourceError::Fetch { url: "u".into(), message: "m".into() });
        assert!(err.to_string().contains("--source DIR|ARCHIVE|BUNDLE --offline"), "{err}");
        assert!(err.chain().any(|e| e.downcast_ref::<SourceError>().is_some()));
    }
}
