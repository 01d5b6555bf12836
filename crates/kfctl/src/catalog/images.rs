//! Images in the catalog: moving them to another registry, the short keys per-image overrides
//! use (`<component>.images.<key>`), and checking a registry value. References are taken apart
//! by [`crate::image`].

use super::image_refs;
use super::object_id::text;
use crate::image::ImageRef;
use serde_json::Value;
use std::collections::BTreeMap;

/// Move an image to `registry`, keeping its path, tag and digest ([`ImageRef::with_registry`]).
pub fn with_registry(image: &str, registry: &str) -> String {
    ImageRef::parse(image).with_registry(registry)
}

/// The repository path without registry, tag or digest: `kubeflow/trainer/x` for
/// `ghcr.io/kubeflow/trainer/x:v2@sha256:…`.
pub(crate) fn repository(image: &str) -> &str {
    ImageRef::parse(image).path
}

/// Whether a reference names a tag (beside any digest).
pub fn has_tag(image: &str) -> bool {
    ImageRef::parse(image).tag.is_some()
}

/// Short, stable keys for a set of images, named after the image, never its tag or digest
/// (so a values file survives an upstream bump): the last segment of the repository, with
/// parent segments added where two repositories would collide. Of the images of one
/// repository with different tags, the first (in sorted order) keeps the name and the
/// others add the first object that uses each, or their position when no object is known.
#[cfg(test)]
pub(crate) fn keys_for(images: &[String]) -> BTreeMap<String, String> {
    keys_with_users(images, &BTreeMap::new())
}

/// [`keys_for`] with the name of the first object using each image.
pub(crate) fn keys_with_users(images: &[String], users: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut distinct: Vec<&String> = images.iter().collect();
    distinct.sort();
    distinct.dedup();
    let mut repos: Vec<&str> = distinct.iter().map(|i| repository(i)).collect();
    repos.dedup();
    let segments = |repo: &str, n: usize| {
        let parts: Vec<&str> = repo.split('/').collect();
        parts[parts.len().saturating_sub(n)..].join("-")
    };
    // The shortest suffix of the repository's path that no other repository shares.
    let repo_key = |repo: &str| {
        (1..=repo.split('/').count())
            .find(|&n| repos.iter().filter(|r| **r != repo).all(|r| segments(r, n) != segments(repo, n)))
            .map_or_else(|| repo.replace('/', "-"), |n| segments(repo, n))
    };
    let mut out = BTreeMap::new();
    for repo in &repos {
        let base = repo_key(repo);
        let same: Vec<&&String> = distinct.iter().filter(|i| repository(i) == *repo).collect();
        if same.len() == 1 {
            out.insert((*same[0]).clone(), base);
            continue;
        }
        let mut taken: Vec<String> = Vec::new();
        for (n, img) in same.iter().enumerate() {
            let by_user = users.get(**img).map(|u| format!("{base}-{u}"));
            let key = match by_user {
                _ if n == 0 => base.clone(),
                Some(k) if !taken.contains(&k) => k,
                _ => format!("{base}-{}", n + 1),
            };
            taken.push(key.clone());
            out.insert((**img).clone(), key);
        }
    }
    out
}

/// One place an image is used: the pullable reference, the object (`Kind/namespace/name`)
/// and the field path (`spec.template.spec.containers[0].image`; for a reference inside a
/// configuration text, the text's field).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ImageUse {
    /// The pullable reference.
    pub reference: String,
    /// The object, as `Kind/namespace/name`.
    pub object: String,
    /// The field path.
    pub field: String,
}

/// A found token of a catalog location in one object: its field path, the location's
/// rewrite, and whether it counts as a pulled image.
#[derive(Debug, Clone)]
pub(crate) struct FieldTokens {
    pub field: String,
    pub tokens: Vec<image_refs::Token>,
    pub pulls: bool,
}

/// The catalog's locations (of any component) in `obj`, with the tokens found in each.
pub(crate) fn located_tokens(obj: &Value) -> Vec<FieldTokens> {
    let mut out = Vec::new();
    for loc in image_refs::locations_in(obj) {
        image_refs::select(obj, &loc.field, String::new(), &mut |text, at| {
            let tokens = image_refs::tokens(&loc.find, text);
            if !tokens.is_empty() {
                out.push(FieldTokens { field: at.to_string(), tokens, pulls: loc.pulls });
            }
        });
    }
    out
}

/// Every image string under an `image` key, with its path.
fn image_fields(value: &Value, at: &str, f: &mut dyn FnMut(&str, &str)) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                let here = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                match v {
                    Value::String(s) if k == "image" => f(s, &here),
                    other => image_fields(other, &here, f),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                image_fields(v, &format!("{at}[{i}]"), f);
            }
        }
        _ => {}
    }
}

/// Every use of an image in `objects`: `image` fields anywhere and the catalog's locations
/// (`charts/*/images.yaml`). Sorted, each use once.
pub fn uses(objects: &[Value]) -> Vec<ImageUse> {
    let mut out = std::collections::BTreeSet::new();
    for obj in objects {
        let s = |p: &str| text(obj, p);
        let object = format!("{}/{}/{}", s("/kind"), s("/metadata/namespace"), s("/metadata/name"));
        image_fields(obj, "", &mut |reference, field| {
            if !reference.is_empty() {
                out.insert(ImageUse { reference: reference.into(), object: object.clone(), field: field.into() });
            }
        });
        for found in located_tokens(obj).into_iter().filter(|f| f.pulls) {
            for reference in found.tokens.iter().flat_map(|t| &t.pulled) {
                out.insert(ImageUse {
                    reference: reference.clone(),
                    object: object.clone(),
                    field: found.field.clone(),
                });
            }
        }
    }
    out.into_iter().collect()
}

/// Every image a render would pull, each once, sorted.
pub fn collect(objects: &[Value]) -> Vec<String> {
    let mut refs: Vec<String> = uses(objects).into_iter().map(|u| u.reference).collect();
    refs.sort();
    refs.dedup();
    refs
}

/// The images of one component's objects that values can override, with the first object
/// using each: `image` fields and the image tokens of the catalog's locations (as they
/// appear in the text, where the override replaces them).
pub(crate) fn overridable(objects: &[&Value]) -> (Vec<String>, BTreeMap<String, String>) {
    use rayon::prelude::*;
    // each object's images found on all cores, then taken in the objects' order
    let found: Vec<(&str, Vec<String>)> = objects
        .par_iter()
        .map(|obj| (obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default(), images_of(obj)))
        .collect();
    let mut images = Vec::new();
    let mut users = BTreeMap::new();
    for (name, found) in found {
        for img in found {
            users.entry(img.clone()).or_insert_with(|| name.to_string());
            images.push(img);
        }
    }
    (images, users)
}

/// The images `obj` pulls, in the order [`overridable`] lists them: its pod specs' images,
/// then the image references its texts hold.
fn images_of(obj: &Value) -> Vec<String> {
    let mut images = Vec::new();
    super::params::visit_images(obj, &mut |img| images.push(img.to_string()));
    for found in located_tokens(obj).into_iter().filter(|f| f.pulls) {
        let tokens = found.tokens.iter().filter(|t| t.rewrite == image_refs::Rewrite::Image);
        images.extend(tokens.map(|t| t.text.clone()));
    }
    images
}

/// Why a registry value cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error(
    "values: `{path}` is {value:?}, which is not a registry: {why}; give a host and optional path, e.g. registry.example.com/kubeflow"
)]
pub struct RegistryError {
    pub(crate) path: String,
    pub(crate) value: String,
    pub(crate) why: &'static str,
}

/// Check a registry value (`global.imageRegistry`, `images --mirror`): a lower-case host
/// (with an optional port) and an optional path, no scheme, no spaces.
pub fn check_registry(path: &str, value: &str) -> Result<(), RegistryError> {
    let fail = |why| Err(RegistryError { path: path.into(), value: value.into(), why });
    let trimmed = value.trim_end_matches('/');
    if value.contains("://") {
        return fail("it has a scheme (images are pulled by name, without https://)");
    }
    if value.chars().any(char::is_whitespace) {
        return fail("it contains whitespace");
    }
    let host = trimmed.split('/').next().unwrap_or_default();
    if host.is_empty() {
        return fail("it has no host");
    }
    if host.chars().any(|c| c.is_ascii_uppercase()) {
        return fail("its host has upper-case letters (registry hosts are lower case)");
    }
    let host_name = host.split(':').next().unwrap_or_default();
    let port_ok = host.split_once(':').is_none_or(|(_, p)| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    if host_name.is_empty() || !port_ok || !host_name.chars().all(|c| c.is_ascii_alphanumeric() || ".-".contains(c)) {
        return fail("its host is not a host name with an optional :port");
    }
    let path_ok = trimmed.split('/').skip(1).all(|seg| {
        !seg.is_empty() && seg.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
    });
    if !path_ok {
        return fail("its path must be lower-case segments of letters, digits, `.`, `_` and `-`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_rewrite_keeps_path_tag_and_digest() {
        assert_eq!(
            with_registry("ghcr.io/kubeflow/trainer/x:v2.1.0", "registry.example.com"),
            "registry.example.com/kubeflow/trainer/x:v2.1.0"
        );
        assert_eq!(with_registry("mysql:8.0", "r.io/"), "r.io/mysql:8.0");
        assert_eq!(with_registry("localhost:5000/a/b@sha256:00", "r.io"), "r.io/a/b@sha256:00");
        assert_eq!(with_registry("kserve/x:v1", ""), "kserve/x:v1");
    }

    #[test]
    fn keys_are_short_unless_they_collide() {
        let imgs = vec![
            "quay.io/brancz/kube-rbac-proxy:v0.13.1".to_string(),
            "quay.io/brancz/kube-rbac-proxy:v0.18.0".to_string(),
            "ghcr.io/kubeflow/katib/katib-ui:v0.19.0".to_string(),
        ];
        let keys = keys_for(&imgs);
        assert_eq!(keys[&imgs[2]], "katib-ui");
        assert_eq!(keys[&imgs[0]], "kube-rbac-proxy");
        assert_eq!(keys[&imgs[1]], "kube-rbac-proxy-2");
        assert_eq!(repository("gcr.io/x/y@sha256:ab"), "x/y");
        let users = BTreeMap::from([(imgs[1].clone(), "katib-controller".to_string())]);
        assert_eq!(keys_with_users(&imgs, &users)[&imgs[1]], "kube-rbac-proxy-katib-controller");
    }

    #[test]
    fn keys_never_carry_a_digest_and_grow_by_path_segments() {
        let imgs = vec![
            "gcr.io/knative-releases/knative.dev/serving/cmd/controller@sha256:0e47".to_string(),
            "gcr.io/knative-releases/knative.dev/net-istio/cmd/controller@sha256:e70b".to_string(),
            "gcr.io/knative-releases/knative.dev/serving/cmd/queue@sha256:698e".to_string(),
        ];
        let keys = keys_for(&imgs);
        assert_eq!(keys[&imgs[0]], "serving-cmd-controller");
        assert_eq!(keys[&imgs[1]], "net-istio-cmd-controller");
        assert_eq!(keys[&imgs[2]], "queue");
    }

    #[test]
    fn registry_values_are_checked_and_the_error_names_the_value() {
        assert!(check_registry("global.imageRegistry", "registry.example.com/kubeflow-mirror/").is_ok());
        assert!(check_registry("global.imageRegistry", "localhost:5000").is_ok());
        for bad in ["https://registry.example.com", "my registry", "Registry.Example.com", "r.io:x", "r.io/Upper"] {
            let e = check_registry("global.imageRegistry", bad).unwrap_err().to_string();
            assert!(e.contains(&format!("{bad:?}")) && e.contains("global.imageRegistry"), "{e}");
        }
    }
}
