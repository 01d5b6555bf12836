//! images: rewrite image names, tags and digests at the image field specs.
//!
//! kustomize v5.6's image tag transformer, entry by entry:
//!
//! - **Matching.** An image value matches the entry `name` when it is the name followed by an
//!   optional `:tag` and an optional `@sha256:digest`. The name is used as a regular
//!   expression as written (kustomize does not escape it, so the dots of `quay.io/x` match any
//!   character), anchored at both ends: `nginx` matches `nginx:1.0` but not
//!   `docker.io/nginx`.
//! - **Splitting.** The value splits into name, tag and digest at the first `:` and `@` after
//!   the first `/` (so a registry port is part of the name): `localhost:5000/redis:7` is
//!   `localhost:5000/redis` + `7`.
//! - **Rewriting.** `newName` replaces the name. `newTag` and `digest` together give
//!   `name:tag@digest`; `newTag` alone drops the old digest; `digest` alone drops the old tag;
//!   `tagSuffix` (only when neither is set) appends to the old tag and drops the digest.
//! - **Where.** Two passes, as kustomize runs two filters: first every `image` of every
//!   element of any `containers` or `initContainers` list anywhere in the object, then the
//!   config's `images` field specs (which never create). A field both passes reach is
//!   rewritten twice, which only shows with `tagSuffix` (`postgres:15-alpine-alpine`, as
//!   real kustomize does). CustomResourceDefinitions are never touched.

use super::config::TransformConfig;
use super::fieldspec::{self, CreateKind, describe};
use crate::error::{FieldError, KustomizeError, Result};
use crate::kustomization as k;
use crate::resmap::ResMap;
use crate::resource::Resource;
use regex::Regex;
use serde_json::Value;

/// Apply one `images:` entry to every object.
pub(crate) fn apply(resources: &mut ResMap, image: &k::Image, config: &TransformConfig) -> Result<()> {
    apply_all(resources, std::slice::from_ref(image), config)
}

/// Apply a folder's `images:` entries in order, each to every object but CRDs: first at each
/// `image` of any `containers`/`initContainers` list, then at the config's image field specs.
/// Each object's images in those lists are found once for all the entries (a rewrite changes
/// an image's text, never where images are), not by a walk of the whole object per entry.
pub(crate) fn apply_all(resources: &mut ResMap, images: &[k::Image], config: &TransformConfig) -> Result<()> {
    if images.is_empty() {
        return Ok(());
    }
    let sites: Vec<Vec<Site>> =
        resources.iter().map(|r| if is_crd(r) { Vec::new() } else { legacy_sites(&r.obj) }).collect();
    for image in images {
        let rule = ImageRule::new(image)?;
        for (resource, sites) in resources.iter_mut().zip(&sites).filter(|(r, _)| !is_crd(r)) {
            legacy_at(resource, sites, &rule)?;
            fieldspec::apply(resource, &config.images, CreateKind::Nothing, &mut |node| rule.update_node(node))?;
        }
    }
    Ok(())
}

fn is_crd(resource: &Resource) -> bool {
    resource.kind() == "CustomResourceDefinition"
}

/// One compiled `images:` entry.
pub(crate) struct ImageRule {
    matcher: Regex,
    new_name: String,
    new_tag: String,
    digest: String,
    tag_suffix: String,
}

impl ImageRule {
    pub(crate) fn new(image: &k::Image) -> Result<Self> {
        let pattern = format!("^{}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$", image.name);
        let matcher = Regex::new(&pattern).map_err(|e| {
            KustomizeError::transform(
                format!("images entry `{}`", image.name),
                format!(
                    "the name is used as a regular expression and is not a valid one: {e}; write the plain image name"
                ),
            )
        })?;
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        Ok(ImageRule {
            matcher,
            new_name: text(&image.new_name),
            new_tag: text(&image.new_tag),
            digest: text(&image.digest),
            tag_suffix: text(&image.tag_suffix),
        })
    }

    /// The rewritten image, or `None` when the entry does not match it.
    pub(crate) fn rewrite(&self, value: &str) -> Option<String> {
        if !self.matcher.is_match(value) {
            return None;
        }
        let (name, mut tag, mut digest) = split(value);
        let mut out = if self.new_name.is_empty() { name.to_string() } else { self.new_name.clone() };
        match (self.new_tag.is_empty(), self.digest.is_empty()) {
            (false, false) => (tag, digest) = (self.new_tag.clone(), self.digest.clone()),
            (false, true) => (tag, digest) = (self.new_tag.clone(), String::new()),
            (true, false) => (tag, digest) = (String::new(), self.digest.clone()),
            (true, true) if !self.tag_suffix.is_empty() => (tag, digest) = (tag + &self.tag_suffix, String::new()),
            (true, true) => {}
        }
        if !tag.is_empty() {
            out = format!("{out}:{tag}");
        }
        if !digest.is_empty() {
            out = format!("{out}@{digest}");
        }
        Some(out)
    }

    /// Rewrite an `image` field in place; null is left alone, a map or list is an error.
    pub(crate) fn update_node(&self, node: &mut Value) -> std::result::Result<(), FieldError> {
        let text = match node {
            Value::Null => return Ok(()),
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => return Err(FieldError::NotAnImage(describe(other))),
        };
        if let Some(new) = self.rewrite(&text) {
            *node = Value::String(new);
        }
        Ok(())
    }
}

/// Split an image into name, tag and digest as kustomize does.
pub(crate) fn split(image: &str) -> (&str, String, String) {
    let offset = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &image[offset..];
    let (at, colon) = (search.find('@').map(|i| i + offset), search.find(':').map(|i| i + offset));
    match (colon, at) {
        (None, None) => (image, String::new(), String::new()),
        (Some(colon), Some(at)) if colon < at => {
            (&image[..colon], image[colon + 1..at].to_string(), image[at + 1..].to_string())
        }
        (_, Some(at)) => (&image[..at], String::new(), image[at + 1..].to_string()),
        (Some(colon), None) => (&image[..colon], image[colon + 1..].to_string(), String::new()),
    }
}

/// An `image` the first pass rewrites: the list it is in (`containers`, `initContainers`) and
/// the path to it from the object's root.
struct Site {
    list: String,
    path: Vec<Step>,
}

enum Step {
    Key(String),
    Index(usize),
}

/// The first pass at sites found before ([`legacy_sites`]), in their order.
fn legacy_at(resource: &mut Resource, sites: &[Site], rule: &ImageRule) -> Result<()> {
    for site in sites {
        let node = site.path.iter().try_fold(&mut resource.obj, |node, step| match step {
            Step::Key(key) => node.get_mut(key.as_str()),
            Step::Index(i) => node.get_mut(*i),
        });
        let Some(node) = node else { continue };
        rule.update_node(node).map_err(|why| KustomizeError::Field {
            context: resource.current_id().to_string(),
            source: FieldError::InList(site.list.clone(), Box::new(why)),
        })?;
    }
    Ok(())
}

/// Where the first pass rewrites: each `image` of any `containers`/`initContainers` list, a
/// list's nested lists before its own images, in the object's order.
fn legacy_sites(obj: &Value) -> Vec<Site> {
    let mut sites = Vec::new();
    collect_sites(obj, &mut Vec::new(), &mut sites);
    sites
}

/// A path being walked: borrowed keys.
enum StepRef<'a> {
    Key(&'a str),
    Index(usize),
}

fn collect_sites<'a>(node: &'a Value, path: &mut Vec<StepRef<'a>>, sites: &mut Vec<Site>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                path.push(StepRef::Key(key));
                collect_sites(value, path, sites);
                if let (true, Value::Array(items)) = (key == "containers" || key == "initContainers", value) {
                    let with_image = items.iter().enumerate().filter(|(_, c)| c.get("image").is_some());
                    for (i, _) in with_image {
                        let mut owned: Vec<Step> = path.iter().map(StepRef::to_owned).collect();
                        owned.extend([Step::Index(i), Step::Key("image".into())]);
                        sites.push(Site { list: key.clone(), path: owned });
                    }
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(StepRef::Index(i));
                collect_sites(item, path, sites);
                path.pop();
            }
        }
        _ => {}
    }
}

impl StepRef<'_> {
    fn to_owned(&self) -> Step {
        match self {
            StepRef::Key(key) => Step::Key((*key).to_string()),
            StepRef::Index(i) => Step::Index(*i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(
        name: &str,
        new_name: Option<&str>,
        new_tag: Option<&str>,
        digest: Option<&str>,
        suffix: Option<&str>,
    ) -> k::Image {
        let s = |v: Option<&str>| v.map(str::to_string);
        k::Image {
            name: name.into(),
            new_name: s(new_name),
            new_tag: s(new_tag),
            digest: s(digest),
            tag_suffix: s(suffix),
        }
    }

    fn rewrite(e: &k::Image, value: &str) -> Option<String> {
        ImageRule::new(e).unwrap().rewrite(value)
    }

    fn pod(images: &[&str]) -> Value {
        let containers: Vec<Value> = images.iter().map(|i| json!({"name": "c", "image": i})).collect();
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": containers}})
    }

    fn run(obj: Value, e: &k::Image) -> Value {
        let mut m = ResMap::new();
        m.replace_all(vec![Resource::new(obj)]);
        apply(&mut m, e, &TransformConfig::defaults()).unwrap();
        m.get(0).obj.clone()
    }

    #[test]
    fn split_forms() {
        assert_eq!(split("nginx"), ("nginx", String::new(), String::new()));
        assert_eq!(split("nginx:1.0"), ("nginx", "1.0".into(), String::new()));
        assert_eq!(split("nginx@sha256:abc"), ("nginx", String::new(), "sha256:abc".into()));
        assert_eq!(split("nginx:1.0@sha256:abc"), ("nginx", "1.0".into(), "sha256:abc".into()));
        assert_eq!(split("localhost:5000/redis:7"), ("localhost:5000/redis", "7".into(), String::new()));
        assert_eq!(split("localhost:5000/redis"), ("localhost:5000/redis", String::new(), String::new()));
    }

    #[test]
    fn name_matches_with_tag_and_digest_but_not_other_registries() {
        let e = entry("nginx", None, Some("1.2"), None, None);
        assert_eq!(rewrite(&e, "nginx").as_deref(), Some("nginx:1.2"));
        assert_eq!(rewrite(&e, "nginx:1.0@sha256:abc").as_deref(), Some("nginx:1.2"));
        assert_eq!(rewrite(&e, "docker.io/nginx:1.0"), None);
        assert_eq!(rewrite(&e, "nginx-extra:1.0"), None);
    }

    #[test]
    fn name_is_an_unescaped_pattern() {
        assert_eq!(
            rewrite(&entry("quay.io/x", None, Some("2"), None, None), "quayXio/x:1").as_deref(),
            Some("quayXio/x:2")
        );
    }

    #[test]
    fn registry_port_is_part_of_the_name() {
        let e = entry("localhost:5000/redis", Some("myreg/redis"), None, None, None);
        assert_eq!(rewrite(&e, "localhost:5000/redis:7").as_deref(), Some("myreg/redis:7"));
    }

    #[test]
    fn digest_alone_drops_the_tag() {
        assert_eq!(
            rewrite(&entry("busybox", None, None, Some("sha256:999"), None), "busybox:1.0").as_deref(),
            Some("busybox@sha256:999")
        );
    }

    #[test]
    fn new_tag_and_digest_are_both_kept() {
        let e = entry("alpine", None, Some("3"), Some("sha256:777"), None);
        assert_eq!(rewrite(&e, "alpine@sha256:def").as_deref(), Some("alpine:3@sha256:777"));
    }

    #[test]
    fn tag_suffix_appends_to_the_old_tag_and_drops_the_digest() {
        let e = entry("foo/bar", None, None, None, Some("-s"));
        assert_eq!(rewrite(&e, "foo/bar:2@sha256:111").as_deref(), Some("foo/bar:2-s"));
    }

    #[test]
    fn tag_suffix_is_ignored_with_a_new_tag() {
        assert_eq!(
            rewrite(&entry("memcached", None, Some("1.7"), None, Some("-x")), "memcached:1.6").as_deref(),
            Some("memcached:1.7")
        );
    }

    #[test]
    fn new_name_alone_keeps_tag_and_digest() {
        let e = entry("nginx", Some("reg/nginx"), None, None, None);
        assert_eq!(rewrite(&e, "nginx:1@sha256:a").as_deref(), Some("reg/nginx:1@sha256:a"));
    }

    #[test]
    fn pod_containers_and_init_containers_are_rewritten() {
        let mut obj = pod(&["nginx", "busybox"]);
        obj["spec"]["initContainers"] = json!([{"name": "i", "image": "nginx:0.1"}]);
        let got = run(obj, &entry("nginx", None, Some("1.2"), None, None));
        assert_eq!(got["spec"]["containers"][0]["image"], "nginx:1.2");
        assert_eq!(got["spec"]["containers"][1]["image"], "busybox");
        assert_eq!(got["spec"]["initContainers"][0]["image"], "nginx:1.2");
    }

    #[test]
    fn containers_anywhere_are_found_but_other_image_fields_are_not() {
        let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
            "spec": {"image": "nginx", "deep": {"containers": [{"image": "nginx"}], "other": [{"image": "nginx"}]}}});
        let got = run(thing, &entry("nginx", None, Some("1.2"), None, None));
        assert_eq!(got["spec"]["deep"]["containers"][0]["image"], "nginx:1.2");
        assert_eq!(got["spec"]["deep"]["other"][0]["image"], "nginx");
        assert_eq!(got["spec"]["image"], "nginx");
    }

    #[test]
    fn custom_resource_definitions_are_skipped() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"},
            "spec": {"containers": [{"image": "nginx"}]}});
        assert_eq!(run(crd.clone(), &entry("nginx", None, Some("1.2"), None, None)), crd);
    }

    #[test]
    fn tag_suffix_applies_twice_where_both_passes_reach() {
        // Real kustomize v5.6 gives `postgres:15-alpine-alpine` for a Pod container.
        let got = run(pod(&["postgres:15"]), &entry("postgres", None, None, None, Some("-alpine")));
        assert_eq!(got["spec"]["containers"][0]["image"], "postgres:15-alpine-alpine");
        let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"image": "postgres:15"}]}}}}}});
        let got = run(cron, &entry("postgres", None, None, None, Some("-alpine")));
        assert_eq!(
            got["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"],
            "postgres:15-alpine"
        );
    }

    #[test]
    fn configured_image_specs_are_used_without_creating() {
        let mut config = TransformConfig::defaults();
        config.images.push(crate::kustomization::FieldSpec {
            kind: "Thing".into(),
            path: "spec/image".into(),
            create: true,
            ..Default::default()
        });
        let mut m = ResMap::new();
        let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"image": "nginx"}});
        let bare = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "u"}, "spec": {}});
        m.replace_all(vec![Resource::new(thing), Resource::new(bare.clone())]);
        apply(&mut m, &entry("nginx", None, Some("1.2"), None, None), &config).unwrap();
        assert_eq!(m.get(0).obj["spec"]["image"], "nginx:1.2");
        assert_eq!(m.get(1).obj, bare);
    }

    #[test]
    fn a_map_image_is_an_error() {
        let mut m = ResMap::new();
        let mut obj = pod(&["x"]);
        obj["spec"]["containers"][0]["image"] = json!({"a": 1});
        m.replace_all(vec![Resource::new(obj)]);
        assert!(apply(&mut m, &entry("nginx", None, Some("1"), None, None), &TransformConfig::defaults()).is_err());
    }

    #[test]
    fn entries_applied_together_equal_entries_applied_one_by_one() {
        let objects = || {
            let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                "spec": {"jobTemplate": {"spec": {"template": {"spec": {
                    "initContainers": [{"image": "busybox"}, {"name": "no-image"}],
                    "containers": [{"image": "postgres:15"}, {"image": "nginx@sha256:abc"}]}}}}}});
            let odd = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
                "spec": {"containers": [{"image": "nginx", "sidecar": {"containers": [{"image": "postgres"}]}}],
                    "image": "nginx", "list": [{"containers": [{"image": "redis:7"}]}]}});
            let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "x"}, "spec": {"containers": [{"image": "nginx"}]}});
            vec![
                Resource::new(pod(&["nginx", "postgres:15", "redis"])),
                Resource::new(cron),
                Resource::new(odd),
                Resource::new(crd),
            ]
        };
        // each entry sees what the ones before it wrote: nginx → nginx:1.2 → mirror/nginx:1.2
        let entries = [
            entry("nginx", None, Some("1.2"), None, None),
            entry("postgres", None, None, None, Some("-alpine")),
            entry("nginx", Some("mirror/nginx"), None, None, None),
            entry("redis", None, None, Some("sha256:def"), None),
            entry("busybox", Some("quay.io/busybox"), Some("1"), None, None),
        ];
        let config = TransformConfig::defaults();
        let (mut one_by_one, mut together) = (ResMap::new(), ResMap::new());
        one_by_one.replace_all(objects());
        together.replace_all(objects());
        entries.iter().for_each(|e| apply(&mut one_by_one, e, &config).unwrap());
        apply_all(&mut together, &entries, &config).unwrap();
        let values = |m: &ResMap| m.iter().map(|r| r.obj.clone()).collect::<Vec<_>>();
        assert_eq!(values(&together), values(&one_by_one));
        assert_eq!(together.get(0).obj["spec"]["containers"][0]["image"], "mirror/nginx:1.2");
    }

    #[test]
    fn entries_applied_together_fail_as_one_by_one_on_a_map_image() {
        let mut obj = pod(&["nginx", "x"]);
        obj["spec"]["containers"][1]["image"] = json!({"a": 1});
        let entries = [entry("nginx", None, Some("1"), None, None), entry("redis", None, Some("2"), None, None)];
        let errors: Vec<String> = [false, true]
            .map(|together| {
                let mut m = ResMap::new();
                m.replace_all(vec![Resource::new(obj.clone())]);
                let config = TransformConfig::defaults();
                let result = if together {
                    apply_all(&mut m, &entries, &config)
                } else {
                    entries.iter().try_for_each(|e| apply(&mut m, e, &config))
                };
                result.unwrap_err().to_string()
            })
            .into();
        assert_eq!(errors[0], errors[1]);
    }

    #[test]
    fn an_invalid_name_pattern_is_an_error() {
        assert!(ImageRule::new(&entry("bad(", None, None, None, None)).is_err());
    }
}
