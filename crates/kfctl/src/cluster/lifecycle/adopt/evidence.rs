//! Which release a cluster holds: image tags and `app.kubernetes.io/version` labels of the
//! objects `adopt` found, compared with the render of the release it was asked to adopt.
//!
//! An image is compared only when the live and the rendered reference name the same repository
//! (a mirror or a user's own image is a customization, not a release); a version label only when
//! both sides carry one. An object whose compared tags or labels differ is a *mismatch*. The
//! cluster **plainly holds another release** when a fifth or more of the objects compared
//! mismatch; the tag the mismatched live objects use most says which release it likely is.

use crate::cluster::object::ObjectRef;
use crate::image::ImageRef;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

const VERSION_LABEL: &str = "app.kubernetes.io/version";

/// One object whose live release marks differ from the render's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    pub(crate) object: ObjectRef,
    /// `image ml-pipeline` or `label app.kubernetes.io/version`.
    pub(crate) what: String,
    pub(crate) live: String,
    pub(crate) rendered: String,
}

/// What the release marks say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReleaseEvidence {
    /// Objects with at least one comparable image or version label.
    pub compared: usize,
    /// One per mismatched object (its first mismatch).
    pub mismatches: Vec<Mismatch>,
    /// The tag the mismatched live objects use most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) likely: Option<String>,
}

impl ReleaseEvidence {
    /// A fifth or more of the objects compared mismatch. (Between two releases most images do
    /// not change: v1.10.2 → v1.11.0 changes 93 of the 226 objects compared, the foundations'
    /// images stay; the same release with a mirror or a pinned image mismatches none or few.)
    pub(crate) fn other_release(&self) -> bool {
        !self.mismatches.is_empty() && self.mismatches.len() * 5 >= self.compared
    }

    /// Weigh one present object.
    pub(crate) fn weigh(&mut self, object: &ObjectRef, rendered: &Value, live: &Value) {
        let mut compared = false;
        let mut first: Option<Mismatch> = None;
        let mut note = |what: String, live: String, rendered: String| {
            if first.is_none() {
                first = Some(Mismatch { object: object.clone(), what, live, rendered });
            }
        };
        if let (Some(l), Some(r)) = (version_label(live), version_label(rendered)) {
            compared = true;
            if l != r {
                note(format!("label {VERSION_LABEL}"), l.to_string(), r.to_string());
            }
        }
        let live_images = images(live);
        for (path, wanted) in images(rendered) {
            let Some(found) = live_images.get(&path) else { continue };
            let (repo, tag) = split_image(&wanted);
            let (live_repo, live_tag) = split_image(found);
            if repo != live_repo {
                continue;
            }
            compared = true;
            if tag != live_tag {
                note(format!("image {path}"), found.clone(), wanted.clone());
            }
        }
        self.compared += usize::from(compared);
        if let Some(m) = first {
            self.mismatches.push(m);
            self.likely = most_common_tag(&self.mismatches);
        }
    }
}

fn version_label(v: &Value) -> Option<&str> {
    v.pointer("/metadata/labels").and_then(|l| l.get(VERSION_LABEL)).and_then(Value::as_str)
}

fn most_common_tag(mismatches: &[Mismatch]) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for m in mismatches {
        let tag = if m.what.starts_with("image") { split_image(&m.live).1 } else { m.live.clone() };
        *counts.entry(tag).or_default() += 1;
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(tag, _)| tag)
}

/// `(repository, digest or tag)`: `ghcr.io/kubeflow/x:v1.11.0` → `(ghcr.io/kubeflow/x, v1.11.0)`
/// ([`ImageRef`]: a port is no tag; no tag is `latest`).
pub(crate) fn split_image(image: &str) -> (String, String) {
    let parsed = ImageRef::parse(image);
    (parsed.name().to_string(), parsed.version().to_string())
}

/// Every `image` string of an object, by the names of the list items leading to it
/// (`spec.template.spec.containers.manager`), CRDs aside (their schemas describe images).
fn images(doc: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if doc.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
        walk(doc, String::new(), &mut out);
    }
    out
}

fn walk(value: &Value, path: String, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(image) if k == "image" => {
                        out.insert(path.clone(), image.clone());
                    }
                    _ => walk(v, if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let name = item.get("name").and_then(Value::as_str).map_or(i.to_string(), str::to_string);
                walk(item, format!("{path}.{name}"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(image: &str) -> Value {
        json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
    }

    #[test]
    fn other_tags_of_the_same_repositories_are_another_release_a_mirror_is_not() {
        let r =
            ObjectRef { api_version: "apps/v1".into(), kind: "Deployment".into(), namespace: None, name: "d".into() };
        let mut evidence = ReleaseEvidence::default();
        evidence.weigh(&r, &deployment("ghcr.io/kubeflow/a:v1.11.0"), &deployment("ghcr.io/kubeflow/a:v1.10.2"));
        evidence.weigh(&r, &deployment("ghcr.io/kubeflow/b:v1.11.0"), &deployment("mirror.io/kubeflow/b:v1.11.0"));
        evidence.weigh(&r, &deployment("ghcr.io/kubeflow/c:v1.11.0"), &deployment("ghcr.io/kubeflow/c:v1.10.2"));
        assert_eq!(evidence.compared, 2);
        assert!(evidence.other_release());
        assert_eq!(evidence.likely.as_deref(), Some("v1.10.2"));
        assert_eq!(evidence.mismatches[0].what, "image spec.template.spec.containers.c");
        assert_eq!(split_image("localhost:5000/x"), ("localhost:5000/x".into(), "latest".into()));
        assert_eq!(split_image("x@sha256:ab"), ("x".into(), "sha256:ab".into()));
        assert_eq!(split_image("localhost:5000/x:v1@sha256:ab"), ("localhost:5000/x".into(), "sha256:ab".into()));
    }
}
