//! Image references, parsed once: `[registry[:port]/]path[:tag][@digest]`.
//!
//! Every place that looks inside an image reference (the catalog's registry moves and
//! override keys, the chart export's image values, `adopt`'s release evidence, `kfctl-rs
//! images -o script`) goes through [`ImageRef::parse`], which reads a reference the way
//! Docker's reference grammar (`distribution/reference`) splits one:
//!
//! * the digest is what follows the first `@`;
//! * the first `/`-separated segment is the registry when it looks like a host: it holds a `.`
//!   or a `:` (a port), is `localhost`, or has an upper-case letter; otherwise the image is on
//!   Docker Hub and the registry is empty (`mysql:8.0`, `kserve/x:v1`);
//! * a `:` after the registry is a tag (a path never holds one), so `localhost:5000/x` has a
//!   port and no tag, and `localhost:5000/x:v1` both.
//!
//! Parsing never fails: a reference kfctl-rs only moves or compares is taken apart as written,
//! and checking one is [`crate::catalog::images::check_registry`]'s (registries) or the API
//! server's (pods) job.

/// An image reference taken apart; every part borrows from the text parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageRef<'a> {
    text: &'a str,
    /// The registry host with its port (`registry.example.com:5000`); empty for Docker Hub.
    pub registry: &'a str,
    /// The repository path below the registry (`kubeflow/trainer/x`), without tag or digest.
    pub path: &'a str,
    /// The tag (`v2.1.0`), when one is given.
    pub tag: Option<&'a str>,
    /// The digest (`sha256:…`), when one is given.
    pub digest: Option<&'a str>,
}

impl<'a> ImageRef<'a> {
    /// Take `text` apart (see the module's docs for the grammar).
    pub fn parse(text: &'a str) -> ImageRef<'a> {
        let (named, digest) = match text.split_once('@') {
            Some((named, digest)) => (named, Some(digest)),
            None => (text, None),
        };
        let (registry, rest) = match named.split_once('/') {
            Some((first, rest)) if is_registry(first) => (first, rest),
            _ => ("", named),
        };
        let (path, tag) = match rest.rsplit_once(':') {
            Some((path, tag)) => (path, Some(tag)),
            None => (rest, None),
        };
        ImageRef { text, registry, path, tag, digest }
    }

    /// The reference as parsed.
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The repository's full name: registry and path, without tag or digest
    /// (`ghcr.io/kubeflow/x` of `ghcr.io/kubeflow/x:v1@sha256:…`).
    pub fn name(&self) -> &'a str {
        let start = self.start_of_path();
        &self.text[..start + self.path.len()]
    }

    /// Everything after the registry: path, tag and digest (`kubeflow/x:v1` of `ghcr.io/kubeflow/x:v1`).
    pub fn after_registry(&self) -> &'a str {
        &self.text[self.start_of_path()..]
    }

    /// The same image in `registry` (a host and optional path), keeping path, tag and digest;
    /// unchanged when `registry` is empty.
    pub fn with_registry(&self, registry: &str) -> String {
        let registry = registry.trim_end_matches('/');
        if registry.is_empty() {
            return self.text.to_string();
        }
        format!("{registry}/{}", self.after_registry())
    }

    /// What the reference pins: its digest, else its tag, else Docker's default tag `latest`.
    pub fn version(&self) -> &'a str {
        self.digest.or(self.tag).unwrap_or("latest")
    }

    fn start_of_path(&self) -> usize {
        if self.registry.is_empty() { 0 } else { self.registry.len() + 1 }
    }
}

/// Whether the first path segment names a registry host (Docker's rule).
fn is_registry(first: &str) -> bool {
    first.contains(['.', ':']) || first == "localhost" || first.chars().any(|c| c.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> (&str, &str, Option<&str>, Option<&str>) {
        let r = ImageRef::parse(text);
        (r.registry, r.path, r.tag, r.digest)
    }

    #[test]
    fn a_colon_in_the_host_is_a_port_and_after_the_last_slash_a_tag() {
        assert_eq!(parts("localhost:5000/x"), ("localhost:5000", "x", None, None));
        assert_eq!(parts("localhost:5000/a/b:v1"), ("localhost:5000", "a/b", Some("v1"), None));
        assert_eq!(
            parts("registry.example.com:443/kubeflow/x:v2.1.0"),
            ("registry.example.com:443", "kubeflow/x", Some("v2.1.0"), None)
        );
        assert_eq!(ImageRef::parse("localhost:5000/x").name(), "localhost:5000/x");
        assert_eq!(ImageRef::parse("localhost:5000/x").version(), "latest");
    }

    #[test]
    fn digests_alone_and_with_a_tag() {
        assert_eq!(parts("x@sha256:ab"), ("", "x", None, Some("sha256:ab")));
        assert_eq!(parts("ghcr.io/k/x:v1@sha256:ab"), ("ghcr.io", "k/x", Some("v1"), Some("sha256:ab")));
        let both = ImageRef::parse("ghcr.io/k/x:v1@sha256:ab");
        assert_eq!(
            (both.name(), both.version(), both.after_registry()),
            ("ghcr.io/k/x", "sha256:ab", "k/x:v1@sha256:ab")
        );
        assert_eq!(parts("gcr.io/a/b@sha256:00"), ("gcr.io", "a/b", None, Some("sha256:00")));
    }

    #[test]
    fn without_a_host_the_image_is_on_docker_hub() {
        assert_eq!(parts("mysql:8.0"), ("", "mysql", Some("8.0"), None));
        assert_eq!(parts("kserve/x"), ("", "kserve/x", None, None));
        assert_eq!(parts("localhost/x"), ("localhost", "x", None, None));
        assert_eq!(parts("Upper/x"), ("Upper", "x", None, None));
        assert_eq!(parts("busybox"), ("", "busybox", None, None));
        assert_eq!(ImageRef::parse("kserve/x:v1").name(), "kserve/x");
    }

    #[test]
    fn moving_to_another_registry_keeps_path_tag_and_digest() {
        let moved = |image: &str, registry: &str| ImageRef::parse(image).with_registry(registry);
        assert_eq!(moved("ghcr.io/kubeflow/x:v2.1.0", "r.example.com"), "r.example.com/kubeflow/x:v2.1.0");
        assert_eq!(moved("mysql:8.0", "r.io/"), "r.io/mysql:8.0");
        assert_eq!(moved("localhost:5000/a/b@sha256:00", "r.io/m"), "r.io/m/a/b@sha256:00");
        assert_eq!(moved("kserve/x:v1", ""), "kserve/x:v1");
    }
}
