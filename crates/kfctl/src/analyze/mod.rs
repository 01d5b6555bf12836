//! `kfctl-rs analyze`: coded findings about a platform, from its objects, as `istioctl analyze`
//! gives them.
//!
//! Each finding has a code from [`RULES`] (the one table of what is checked, its severity and
//! the fix), the object it is about, and a message. The checks read objects only: a render
//! (`kfctl-rs template … | kfctl-rs analyze -f -`) or what a live cluster holds. Facts about
//! the cluster itself (its version against the release's range) come in as [`ClusterFacts`].
//!
//! | code | severity | finds |
//! |------|----------|-------|
//! | KF001 | error | upstream's well-known credentials ([`crate::catalog::credentials`]) |
//! | KF002 | warning | an Istio Gateway serving plain HTTP with no TLS server |
//! | KF003 | warning | a PodDisruptionBudget that allows no disruption (node drains block) |
//! | KF004 | warning | a namespaced object without a namespace (it lands in `default`) |
//! | KF005 | error | a Kubernetes version outside the release's range |
//! | KF006 | warning | images with no build for the nodes' architecture ([`crate::catalog::platforms`]) |
//!
//! Findings are sorted by code, then object, so the output is stable.

mod rules;

use serde::Serialize;
use serde_json::Value;

/// How bad a finding is: errors make `analyze` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something to fix before production.
    Error,
    /// Something to look at.
    Warning,
}

/// One kind of finding: its code, severity, what it means and how to fix it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Rule {
    /// `KF001`...
    pub code: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What it finds, in a few words.
    pub title: &'static str,
    /// What to do about it.
    pub fix: &'static str,
}

/// Every rule, in code order: the documented table (GUIDE, "Analyze").
pub const RULES: &[Rule] = &[
    Rule {
        code: "KF001",
        severity: Severity::Error,
        title: "upstream's well-known default credentials",
        fix: "set your own: `kfctl-rs secrets generate > secrets.yaml`, then render or install with `-f secrets.yaml`",
    },
    Rule {
        code: "KF002",
        severity: Severity::Warning,
        title: "a gateway serving plain HTTP without TLS",
        fix: "give the gateway a certificate (`gateway.tls` in the values) or terminate TLS in front of it",
    },
    Rule {
        code: "KF003",
        severity: Severity::Warning,
        title: "a PodDisruptionBudget that allows no disruption, so node drains block",
        fix: "raise the workload's replicas above minAvailable, or allow maxUnavailable of at least 1",
    },
    Rule {
        code: "KF004",
        severity: Severity::Warning,
        title: "a namespaced object without a namespace (it lands in `default`)",
        fix: "give it a namespace (a kustomization `namespace:`, or the component's catalog `defaultNamespace`)",
    },
    Rule {
        code: "KF005",
        severity: Severity::Error,
        title: "Kubernetes outside the release's supported range",
        fix: "use a cluster in the release's range (`kfctl-rs check --pre` says which), or another release",
    },
    Rule {
        code: "KF006",
        severity: Severity::Warning,
        title: "images with no build for the nodes' architecture",
        fix: "keep the pods on nodes of an architecture their images are built for (`global.nodeSelector`), or leave the component out; for images the catalog does not know, check with `docker manifest inspect IMAGE`",
    },
];

/// A finding: the rule, the object, what was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule's code.
    pub code: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// `Kind namespace/name` (or the cluster).
    pub object: String,
    /// What was found.
    pub message: String,
    /// The rule's fix.
    pub fix: &'static str,
}

/// A Kubernetes `major.minor`.
pub type Minor = (u64, u64);

/// A release's supported Kubernetes minors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Supported {
    /// The oldest supported minor.
    pub oldest: Minor,
    /// The newest (`None`: and newer).
    pub newest: Option<Minor>,
}

/// What `analyze` knows of the cluster besides its objects.
#[derive(Debug, Clone, Default)]
pub struct ClusterFacts {
    /// The server's `major.minor`, when analyzing a live cluster.
    pub kubernetes: Option<Minor>,
    /// The release's supported range.
    pub supported: Option<Supported>,
    /// The release, for messages.
    pub release: String,
    /// The nodes' architectures (`amd64`, `arm64`): a live cluster's, or `--arch`'s for a stream.
    pub architectures: Vec<String>,
}

/// The rule of `code`.
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}

/// Every finding about `objects` (and the cluster's `facts`), sorted by code, then object.
pub fn analyze(objects: &[Value], facts: &ClusterFacts) -> Vec<Finding> {
    let mut found = Vec::new();
    rules::default_credentials(objects, &mut found);
    rules::plain_http_gateways(objects, &mut found);
    rules::blocking_disruption_budgets(objects, &mut found);
    rules::missing_namespaces(objects, &mut found);
    rules::kubernetes_range(facts, &mut found);
    rules::node_architectures(objects, facts, &mut found);
    found.sort_by(|a, b| (a.code, &a.object).cmp(&(b.code, &b.object)));
    found.dedup();
    found
}

/// Whether any finding is an error (`analyze` exits 1).
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

/// `Kind namespace/name`.
fn label(obj: &Value) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or_default();
    match s("/metadata/namespace") {
        "" => format!("{} {}", s("/kind"), s("/metadata/name")),
        ns => format!("{} {ns}/{}", s("/kind"), s("/metadata/name")),
    }
}

/// A finding of rule `code` about `object`.
fn finding(code: &'static str, object: String, message: String) -> Finding {
    let rule = rule(code).expect("every code used is in RULES");
    Finding { code, severity: rule.severity, object, message, fix: rule.fix }
}

/// The findings as text, one block each, and a count line.
pub fn render_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let severity = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!("{} [{severity}] {}: {}\n  fix: {}\n", f.code, f.object, f.message, f.fix));
    }
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    out.push_str(&format!("{} findings ({errors} errors, {} warnings)\n", findings.len(), findings.len() - errors));
    out
}

#[cfg(test)]
mod tests;
