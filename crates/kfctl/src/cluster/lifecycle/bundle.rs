//! `kfctl-rs support-bundle`: what a person helping needs, in one `.tar.gz`, no Secret in it.
//!
//! The archive holds `status.txt` and `status.json` (as `status` prints them), `check.txt` and
//! `check.json` (the post-install check, [`super::postcheck`]), `record.json` (the install
//! record: object references only, never a body), `events/<namespace>.json` (the last
//! [`MAX_EVENTS`] events of each namespace the record lists) and
//! `logs/<namespace>/<pod>/<container>.log` (the last [`LOG_TAIL_LINES`] lines, at most
//! [`LOG_LIMIT_BYTES`], of each container of the platform's failing pods: not Ready, or
//! restarted; at most [`MAX_LOGGED_PODS`] pods), and `problems.txt` when something could not be
//! collected (the bundle is still written).
//!
//! **No Secret data, ever**: no Secret object is read, listed or written; every text (status,
//! check, record, events, logs, problems) goes through the caller's [`Redactor`] (learned from
//! the rendered objects, as `install` learns it) before it is archived, so a value a log or an
//! event echoes is `<redacted>`. The archive is written whole or not at all (staged next to
//! `out`, then renamed), mode 0600; its entries carry no time or owner (mtime 0, uid 0).

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, Target};
use crate::cluster::install::read_record;
use crate::cluster::record::InstallRecord;
use crate::cluster::redact::Redactor;
use crate::staging::{StageError, Staging};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod collect;

/// Events kept per namespace (the latest).
pub const MAX_EVENTS: usize = 500;
/// Lines asked of each container's log (the last).
pub const LOG_TAIL_LINES: usize = 200;
/// Bytes kept of each container's log.
pub const LOG_LIMIT_BYTES: usize = 256 * 1024;
/// Failing pods whose logs are collected.
pub const MAX_LOGGED_PODS: usize = 50;

/// The archive could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot write the support bundle: {message}; choose a writable path")]
pub struct BundleError {
    /// The archive's path.
    pub path: String,
    /// Why.
    pub message: String,
}

/// One file in the archive.
#[derive(Debug, Clone, Serialize)]
pub struct BundleFile {
    /// Its path inside the archive.
    pub name: String,
    /// Its size in bytes.
    pub bytes: usize,
}

/// What was written.
#[derive(Debug, Clone, Serialize)]
pub struct BundleReport {
    /// The archive.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
    /// The files inside, in archive order.
    pub files: Vec<BundleFile>,
    /// What could not be collected (also in `problems.txt`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// The files of a bundle, scrubbed as they are added.
pub(crate) struct Contents<'a> {
    redactor: &'a Redactor,
    files: Vec<(String, String)>,
    pub(crate) problems: Vec<String>,
    /// Failing pods whose logs were read.
    logged_pods: usize,
    /// Failing pods past [`MAX_LOGGED_PODS`], whose logs were not read.
    pods_left_out: usize,
}

impl Contents<'_> {
    pub(crate) fn add(&mut self, name: impl Into<String>, text: &str) {
        self.files.push((name.into(), self.redactor.scrub(text)));
    }

    pub(crate) fn add_json(&mut self, name: impl Into<String>, value: &impl Serialize) {
        let text = serde_json::to_string_pretty(value).unwrap_or_default() + "\n";
        self.add(name, &text);
    }

    pub(crate) fn problem(&mut self, text: String) {
        self.problems.push(self.redactor.scrub(&text));
    }
}

/// Collect the bundle of the install on `target` and write it to `out`; every call within
/// `timeout` (one deadline). `Err` when the kubeconfig cannot be used, the cluster has no
/// install record ([`ClusterError::NoRecord`]), the deadline ended a read, or `out` cannot be
/// written; what else cannot be read is listed in `problems.txt`.
pub async fn support_bundle(
    target: &Target,
    out: &Path,
    timeout: Duration,
    redactor: &Redactor,
) -> Result<BundleReport, ClusterError> {
    let api = ApiClient::connect(target).await?.within(timeout).with_redactor(redactor.clone());
    let record = read_record(&api).await?.ok_or(ClusterError::NoRecord)?;
    let mut contents = Contents { redactor, files: Vec::new(), problems: Vec::new(), logged_pods: 0, pods_left_out: 0 };
    let status = super::status::status_with(&api, crate::cluster::DEFAULT_CONCURRENCY, None).await?;
    contents.add("status.txt", &super::status::render_text(&status));
    contents.add_json("status.json", &status);
    let not_rendered = Err("the support bundle renders nothing (`kfctl-rs check` compares them)".to_string());
    let check = super::postcheck::check_with(&api, &not_rendered).await?;
    contents.add("check.txt", &super::postcheck::render_text(&check));
    contents.add_json("check.json", &check);
    contents.add_json("record.json", &record);
    for namespace in namespaces(&record) {
        collect::events(&api, &namespace, &mut contents).await?;
        collect::logs(&api, &namespace, &mut contents).await?;
    }
    if contents.pods_left_out > 0 {
        let n = contents.pods_left_out;
        contents.problem(format!("{n} more failing pod(s) past the first {MAX_LOGGED_PODS}: their logs left out"));
    }
    if !contents.problems.is_empty() {
        let text = contents.problems.join("\n") + "\n";
        contents.files.push(("problems.txt".into(), text));
    }
    write(out, contents)
}

/// Every namespace the record lists: its objects' namespaces and the Namespaces it made.
fn namespaces(record: &InstallRecord) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in &record.inventory {
        let r = &entry.reference;
        if let Some(ns) = &r.namespace {
            out.insert(ns.clone());
        } else if r.is_kind("", "Namespace") {
            out.insert(r.name.clone());
        }
    }
    out
}

/// The archive, staged next to `out` with mode 0600 before any byte is written, then renamed.
fn write(out: &Path, contents: Contents<'_>) -> Result<BundleReport, ClusterError> {
    let fail = |message: String| BundleError { path: out.display().to_string(), message };
    let mut tar = tar::Builder::new(Vec::new());
    let mut files = Vec::new();
    for (name, text) in &contents.files {
        crate::chart::package::append(&mut tar, name, text.as_bytes()).map_err(|e| fail(e.to_string()))?;
        files.push(BundleFile { name: name.clone(), bytes: text.len() });
    }
    let tarball = tar.into_inner().map_err(|e| fail(e.to_string()))?;
    let bytes = crate::chart::package::gzip(&tarball).map_err(|e| fail(e.to_string()))?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let staged = Staging::file(parent, "support-bundle").map_err(|e: StageError| fail(e.message))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let private = std::fs::Permissions::from_mode(0o600);
        std::fs::set_permissions(staged.path(), private).map_err(|e| fail(e.to_string()))?;
    }
    std::fs::write(staged.path(), &bytes).map_err(|e| fail(e.to_string()))?;
    staged.place(out).map_err(|e| fail(e.message))?;
    Ok(BundleReport { path: out.to_path_buf(), bytes: bytes.len(), files, problems: contents.problems })
}
