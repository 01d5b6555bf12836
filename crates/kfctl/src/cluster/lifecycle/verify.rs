//! `kfctl-rs verify`: an end-to-end smoke test of an installed platform.
//!
//! The steps are data (`charts/verify.yaml`): a test Profile and the namespace its controller
//! makes, a Notebook, a TrainJob on a runtime the release ships, an InferenceService. Each is
//! created, waited for with its own bound (and the run's `--timeout`), and the next starts only
//! when it works. A step whose kind the cluster does not serve is skipped, saying so. The first
//! step that does not work ends the run, naming the object and what it last showed.
//!
//! Everything verify created is deleted afterwards, latest first, whatever happened, unless
//! `keep` (`--keep`) leaves it for inspection. It never touches an object it did not create: a
//! Profile of the test's name that already exists stops the run before any write.

use crate::cluster::ClusterError;
use crate::cluster::api::{ApiClient, ResourcePath, Target};
use crate::cluster::discovery::Resolver;
use crate::cluster::engine::scoped;
use crate::cluster::object::ObjectRef;
use crate::embedded;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::{Duration, Instant};

/// `charts/verify.yaml`.
const STEPS_FILE: &str = "charts/verify.yaml";

/// How a step knows its object works.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Ready {
    namespace: Option<String>,
    condition: Option<String>,
    failed: Option<String>,
    field: Option<String>,
    at_least: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    name: String,
    why: String,
    object: Value,
    ready: Ready,
    timeout: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Steps {
    steps: Vec<Step>,
}

/// What `verify` needs.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// The cluster.
    pub target: Target,
    /// The test Profile and its namespace.
    pub namespace: String,
    /// The Profile's owner.
    pub owner: String,
    /// The whole run's deadline.
    pub timeout: Duration,
    /// How often each object is read while waiting.
    pub poll: Duration,
    /// Leave what verify created (`--keep`).
    pub keep: bool,
}

/// How a step came out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Created and working.
    Passed,
    /// Its kind is not served: its component is not installed.
    Skipped,
    /// It did not work; the run stopped here.
    Failed,
}

/// One step's result.
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    /// The step.
    pub name: String,
    /// What it proves.
    pub why: String,
    /// The object it created.
    pub object: String,
    /// How it came out.
    pub outcome: Outcome,
    /// What was seen.
    pub detail: String,
    /// Seconds it took.
    pub seconds: f64,
}

/// What `verify` did.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// Each step run, in order.
    pub steps: Vec<StepReport>,
    /// Objects deleted afterwards (latest first), or left (`--keep`).
    pub cleaned_up: Vec<String>,
    /// Whether they were left for inspection.
    pub kept: bool,
}

impl VerifyReport {
    /// Whether a step failed.
    pub fn failed(&self) -> bool {
        self.steps.iter().any(|s| s.outcome == Outcome::Failed)
    }
}

/// Why verify did not run.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The steps file is not valid.
    #[error("{STEPS_FILE}: {0}")]
    Steps(String),
    /// The test Profile exists already.
    #[error(
        "profile {0}: it exists already and verify creates its own; nothing was written; delete it, or pass another --namespace"
    )]
    Exists(String),
}

fn steps(namespace: &str, owner: &str) -> Result<Vec<(Step, ObjectRef)>, VerifyError> {
    let text = embedded::file(STEPS_FILE).ok_or_else(|| VerifyError::Steps("not compiled in".into()))?;
    let text = text.replace("{{namespace}}", namespace).replace("{{owner}}", owner);
    let doc = kfctl_yaml::parse_stream(&text, STEPS_FILE).map_err(|e| VerifyError::Steps(e.to_string()))?;
    let doc = doc.into_iter().next().unwrap_or_default();
    let steps: Steps = serde_json::from_value(doc).map_err(|e| VerifyError::Steps(e.to_string()))?;
    steps
        .steps
        .into_iter()
        .enumerate()
        .map(|(i, step)| {
            let r = ObjectRef::from_value(&step.object, i)
                .map_err(|e| VerifyError::Steps(format!("step {}: {e}", step.name)))?;
            Ok((step, r))
        })
        .collect()
}

/// Run every step, then clean up; `Err` when nothing could run.
pub async fn verify(options: &VerifyOptions) -> Result<VerifyReport, ClusterError> {
    let steps = steps(&options.namespace, &options.owner).map_err(ClusterError::Verify)?;
    let api = ApiClient::connect(&options.target).await?.within(options.timeout);
    let resolver = Resolver::new(api.clone());
    let profile = profiles();
    if api.get(&profile, None, &options.namespace).await.map_err(|f| api_error("read the test Profile", f))?.is_some() {
        return Err(ClusterError::Verify(VerifyError::Exists(options.namespace.clone())));
    }
    let mut report = VerifyReport { steps: Vec::new(), cleaned_up: Vec::new(), kept: options.keep };
    let mut created: Vec<(ResourcePath, ObjectRef)> = Vec::new();
    for (step, r) in &steps {
        let outcome = run_step(&api, &resolver, step, r, options, &mut created).await;
        let stop = outcome.outcome == Outcome::Failed;
        report.steps.push(outcome);
        if stop {
            break;
        }
    }
    report.cleaned_up = created.iter().rev().map(|(_, r)| r.to_string()).collect();
    if !options.keep {
        clean_up(&api, &created, options).await;
    }
    Ok(report)
}

fn profiles() -> ResourcePath {
    ResourcePath { group: "kubeflow.org".into(), version: "v1".into(), plural: "profiles".into(), namespaced: false }
}

fn api_error(what: &str, failure: crate::cluster::retry::ApiFailure) -> ClusterError {
    ClusterError::Api { what: what.into(), failure: Box::new(failure) }
}

async fn run_step(
    api: &ApiClient,
    resolver: &Resolver,
    step: &Step,
    r: &ObjectRef,
    options: &VerifyOptions,
    created: &mut Vec<(ResourcePath, ObjectRef)>,
) -> StepReport {
    let started = Instant::now();
    let report = |outcome, detail: String| StepReport {
        name: step.name.clone(),
        why: step.why.clone(),
        object: r.to_string(),
        outcome,
        detail,
        seconds: started.elapsed().as_secs_f64(),
    };
    let path = match resolver.resolve(&r.api_version, &r.kind).await {
        Ok(path) => path,
        Err(f) if f.is_no_kind_match() => return report(Outcome::Skipped, format!("{} is not served", r.kind)),
        Err(f) => return report(Outcome::Failed, format!("discovery: {f}")),
    };
    if let Err(f) = api.apply(&path, scoped(&path, r), &r.name, &step.object, false, false).await {
        return report(Outcome::Failed, format!("not created: {f}"));
    }
    created.push((path.clone(), r.clone()));
    let bound = started + Duration::from_secs(step.timeout);
    let mut last = String::from("not read yet");
    while Instant::now() < bound {
        match judge(api, &path, r, &step.ready).await {
            Judged::Ready(detail) => return report(Outcome::Passed, detail),
            Judged::Failed(detail) => return report(Outcome::Failed, detail),
            Judged::Pending(detail) => last = detail,
        }
        tokio::time::sleep(options.poll).await;
    }
    report(Outcome::Failed, format!("not working after {} s: {last}", step.timeout))
}

enum Judged {
    Ready(String),
    Pending(String),
    Failed(String),
}

async fn judge(api: &ApiClient, path: &ResourcePath, r: &ObjectRef, ready: &Ready) -> Judged {
    if let Some(namespace) = &ready.namespace {
        let namespaces = crate::cluster::preflight::path("", "v1", "namespaces", false);
        return match api.get(&namespaces, None, namespace).await {
            Ok(Some(_)) => Judged::Ready(format!("namespace {namespace} made")),
            Ok(None) => Judged::Pending(format!("namespace {namespace} not made yet")),
            Err(f) => Judged::Pending(f.to_string()),
        };
    }
    let live = match api.get(path, scoped(path, r), &r.name).await {
        Ok(Some(live)) => live,
        Ok(None) => return Judged::Failed("it is gone".into()),
        Err(f) => return Judged::Pending(f.to_string()),
    };
    if let Some(failed) = ready.failed.as_deref().and_then(|t| condition(&live, t)).filter(|c| c.0) {
        return Judged::Failed(format!("{}: {}", ready.failed.as_deref().unwrap_or(""), failed.1));
    }
    if let Some(kind) = &ready.condition {
        return match condition(&live, kind) {
            Some((true, message)) => Judged::Ready(format!("{kind}: {message}")),
            Some((false, message)) => Judged::Pending(format!("{kind} is not True: {message}")),
            None => Judged::Pending(format!("no {kind} condition yet")),
        };
    }
    let (Some(field), Some(at_least)) = (&ready.field, ready.at_least) else {
        return Judged::Ready("created".into());
    };
    let value = live.pointer(field).and_then(Value::as_u64).unwrap_or(0);
    match value >= at_least {
        true => Judged::Ready(format!("{field} is {value}")),
        false => Judged::Pending(format!("{field} is {value}, waiting for {at_least}")),
    }
}

/// The condition of `kind`: whether it is True, and its message.
fn condition(live: &Value, kind: &str) -> Option<(bool, String)> {
    let conditions = live.pointer("/status/conditions").and_then(Value::as_array)?;
    let c = conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(kind))?;
    let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    Some((text("status") == "True", text("message")))
}

/// Delete what verify created, latest first; best effort, bounded by the run's deadline.
async fn clean_up(api: &ApiClient, created: &[(ResourcePath, ObjectRef)], options: &VerifyOptions) {
    for (path, r) in created.iter().rev() {
        let _ = api.delete(path, scoped(path, r), &r.name).await;
    }
    // the Profile's namespace is the controller's to remove; verify made it, so it goes too
    let namespaces = crate::cluster::preflight::path("", "v1", "namespaces", false);
    if created.iter().any(|(p, _)| p.plural == "profiles") {
        let _ = api.delete(&namespaces, None, &options.namespace).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_file_reads_and_names_the_namespace_and_owner() {
        let steps = steps("kfctl-verify", "me@example.org").unwrap();
        let names: Vec<&str> = steps.iter().map(|(s, _)| s.name.as_str()).collect();
        assert_eq!(names, ["profile", "notebook", "trainjob", "inferenceservice"]);
        assert_eq!(steps[0].0.object["spec"]["owner"]["name"], "me@example.org");
        assert_eq!(steps[1].1.namespace.as_deref(), Some("kfctl-verify"));
        assert_eq!(steps[0].0.ready.namespace.as_deref(), Some("kfctl-verify"));
    }

    #[test]
    fn conditions_read_true_with_their_message() {
        let live =
            serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True", "message": "up"}]}});
        assert_eq!(condition(&live, "Ready"), Some((true, "up".into())));
        assert_eq!(condition(&live, "Complete"), None);
    }
}
