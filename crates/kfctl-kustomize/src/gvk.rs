//! Group, version and kind: the type of an object, as kustomize matches and prints it. A leaf:
//! the merge tables and the resources both build on it.

use std::fmt;

/// Group, version and kind. An empty group is the core group.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gvk {
    /// The API group (`apps`, `networking.istio.io`); empty for the core group.
    pub group: String,
    /// The API version (`v1`, `v1beta1`).
    pub version: String,
    /// The kind (`Deployment`).
    pub kind: String,
}

impl Gvk {
    pub(crate) fn new(group: &str, version: &str, kind: &str) -> Self {
        Gvk { group: group.to_string(), version: version.to_string(), kind: kind.to_string() }
    }

    /// Split `apiVersion` (`group/version` or `version`) and pair it with `kind`.
    pub fn from_api_version(api_version: &str, kind: &str) -> Self {
        match api_version.rsplit_once('/') {
            Some((group, version)) => Gvk::new(group, version, kind),
            None => Gvk::new("", api_version, kind),
        }
    }

    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// Does this gvk satisfy a selector gvk, whose empty fields match anything?
    pub(crate) fn is_selected_by(&self, selector: &Gvk) -> bool {
        self.is_selected_by_parts(&selector.group, &selector.version, &selector.kind)
    }

    /// [`Gvk::is_selected_by`] a selector given as its three parts.
    pub(crate) fn is_selected_by_parts(&self, group: &str, version: &str, kind: &str) -> bool {
        let part = |selector: &str, value: &str| selector.is_empty() || selector == value;
        part(group, &self.group) && part(version, &self.version) && part(kind, &self.kind)
    }

    /// kustomize's string form, used in its sort keys: `group_version_kind` with `~G`, `~V`, `~K`
    /// for empty parts.
    pub fn sort_string(&self) -> String {
        let or = |s: &str, d: &str| if s.is_empty() { d.to_string() } else { s.to_string() };
        format!("{}_{}_{}", or(&self.group, "~G"), or(&self.version, "~V"), or(&self.kind, "~K"))
    }
}

impl fmt::Display for Gvk {
    /// `Kind.version.group`, the form kustomize prints in errors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![self.kind.as_str()];
        if !self.version.is_empty() {
            parts.push(&self.version);
        }
        if !self.group.is_empty() {
            parts.push(&self.group);
        }
        write!(f, "{}", parts.join("."))
    }
}
