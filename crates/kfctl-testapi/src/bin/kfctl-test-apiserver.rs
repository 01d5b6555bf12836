//! `kfctl-test-apiserver`: run the test API server (a test double of the Kubernetes API, see
//! `kfctl_testapi`) on a loopback port and write a kubeconfig for it, so a real kubectl or
//! a dev build of kfctl-rs can be pointed at it by hand.
//!
//! Usage: `kfctl-test-apiserver [KUBECONFIG_PATH] [--version vX.Y.Z] [--crd-established-ms N]
//! [--crd-delay SECONDS] [--ready-delay SECONDS] [--discovery-lag-ms N] [--latency-ms N] [--log]`;
//! `--crd-delay` is `--crd-established-ms` in seconds, `--ready-delay` makes workloads
//! (Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs) ready that long after each change;
//! `--log` prints every request (method, path, status) to standard error. It prints the URL and the kubeconfig path, then
//! serves until interrupted (SIGINT or SIGTERM).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use kfctl_testapi::{TestApiConfig, TestApiServer};

struct Options {
    kubeconfig: PathBuf,
    log: bool,
    config: TestApiConfig,
}

fn millis(value: Option<String>, flag: &str) -> Result<Duration> {
    let text = value.with_context(|| format!("{flag}: expected a number of milliseconds"))?;
    let ms: u64 = text.parse().with_context(|| format!("{flag}: expected a number of milliseconds, got {text:?}"))?;
    Ok(Duration::from_millis(ms))
}

fn seconds(value: Option<String>, flag: &str) -> Result<Duration> {
    let text = value.with_context(|| format!("{flag}: expected a number of seconds"))?;
    let s: f64 = text.parse().with_context(|| format!("{flag}: expected a number of seconds, got {text:?}"))?;
    Duration::try_from_secs_f64(s).with_context(|| format!("{flag}: expected a number of seconds >= 0, got {text:?}"))
}

fn parse_args() -> Result<Options> {
    let mut kubeconfig = std::env::temp_dir().join("kfctl-test-apiserver.kubeconfig");
    let mut config = TestApiConfig::default();
    let mut log = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--version" => config.git_version = args.next().context("--version: expected a version such as v1.33.1")?,
            "--crd-established-ms" => config.crd_established_after = millis(args.next(), &arg)?,
            "--crd-delay" => config.crd_established_after = seconds(args.next(), &arg)?,
            "--ready-delay" => config = config.workloads_ready_after(seconds(args.next(), &arg)?),
            "--discovery-lag-ms" => config.discovery_lag = millis(args.next(), &arg)?,
            "--latency-ms" => config.latency = millis(args.next(), &arg)?,
            "--log" => log = true,
            "-h" | "--help" => {
                println!(
                    "usage: kfctl-test-apiserver [KUBECONFIG_PATH] [--version vX.Y.Z] [--crd-established-ms N] [--crd-delay SECONDS] [--ready-delay SECONDS] [--discovery-lag-ms N] [--latency-ms N] [--log]"
                );
                std::process::exit(0);
            }
            flag if flag.starts_with('-') => bail!("{flag}: unknown flag; see --help"),
            path => kubeconfig = PathBuf::from(path),
        }
    }
    Ok(Options { kubeconfig, log, config })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let options = parse_args()?;
    let server = TestApiServer::try_start(options.config)?;
    server.write_kubeconfig(&options.kubeconfig)?;
    println!("test API server listening on {}", server.url());
    println!("kubeconfig written to {}", options.kubeconfig.display());
    let server = std::sync::Arc::new(server);
    if options.log {
        let watched = server.clone();
        tokio::spawn(async move {
            let mut seen = 0;
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let requests = watched.requests();
                let answered = requests.iter().skip(seen).take_while(|r| r.status != 0).count();
                for r in requests.iter().skip(seen).take(answered) {
                    eprintln!("{} {} -> {} in {:?}", r.method, r.path, r.status, r.elapsed);
                }
                seen += answered;
            }
        });
    }
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    drop(server);
    Ok(())
}
