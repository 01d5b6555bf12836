//! Image references: splitting off the registry, moving to another registry, and the short
//! keys per-image overrides use (`<component>.images.<key>`).

use std::collections::BTreeMap;

/// `(registry, rest)`: the registry is the first path segment when it looks like a host
/// (has a `.` or `:`, or is `localhost`); otherwise the image is on Docker Hub and the
/// registry is empty.
pub fn split_registry(image: &str) -> (&str, &str) {
    match image.split_once('/') {
        Some((first, rest)) if first.contains('.') || first.contains(':') || first == "localhost" => (first, rest),
        _ => ("", image),
    }
}

/// Move an image to `registry`, keeping its path, tag and digest.
pub fn with_registry(image: &str, registry: &str) -> String {
    let registry = registry.trim_end_matches('/');
    if registry.is_empty() {
        return image.to_string();
    }
    format!("{registry}/{}", split_registry(image).1)
}

/// The repository path without registry, tag or digest: `kubeflow/trainer/x` for
/// `ghcr.io/kubeflow/trainer/x:v2@sha256:…`.
pub fn repository(image: &str) -> &str {
    let rest = split_registry(image).1;
    let rest = rest.split('@').next().unwrap_or(rest);
    match rest.rfind(':') {
        Some(i) if !rest[i..].contains('/') => &rest[..i],
        _ => rest,
    }
}

fn tag_of(image: &str) -> String {
    let rest = split_registry(image).1;
    if let Some((_, digest)) = rest.split_once('@') {
        return digest.chars().filter(|c| c.is_ascii_alphanumeric()).take(12).collect();
    }
    rest.rsplit_once(':').map(|(_, t)| t.replace('.', "-")).unwrap_or_else(|| "latest".into())
}

/// Short, stable keys for a set of images: the last path segment of the repository, made
/// longer (with the tag, then the parent segments) only where two images would collide.
pub fn keys_for(images: &[String]) -> BTreeMap<String, String> {
    let mut distinct: Vec<&String> = images.iter().collect();
    distinct.sort();
    distinct.dedup();
    let last = |img: &str| repository(img).rsplit('/').next().unwrap_or_default().to_string();
    let mut out = BTreeMap::new();
    for img in &distinct {
        let base = last(img);
        let same_name: Vec<&&String> = distinct.iter().filter(|o| last(o) == base).collect();
        let key = if same_name.len() == 1 {
            base
        } else if same_name.iter().filter(|o| tag_of(o) == tag_of(img)).count() == 1 {
            format!("{base}-{}", tag_of(img))
        } else {
            repository(img).replace('/', "-")
        };
        out.insert((*img).clone(), key);
    }
    out
}

/// Every image a render would pull: `image` fields anywhere (pods, custom resources such as
/// training and serving runtimes), container env vars named `*_IMAGE` (with a `*_TAG`
/// sibling appended), and `image` entries inside ConfigMap data that holds YAML or JSON
/// configuration (KServe's inferenceservice-config, Katib's katib-config and trial
/// templates, the notebook spawner's image options). Sorted and unique.
pub fn collect(objects: &[serde_json::Value]) -> Vec<String> {
    use serde_json::Value;
    let mut out = std::collections::BTreeSet::new();
    for obj in objects {
        super::params::visit_images(obj, &mut |img| {
            out.insert(img.to_string());
        });
        collect_env(obj, &mut out);
        if obj.get("kind").and_then(Value::as_str) == Some("ConfigMap") {
            for text in obj.get("data").and_then(Value::as_object).into_iter().flatten().filter_map(|(_, v)| v.as_str())
            {
                collect_config_text(text, &mut out);
            }
        }
    }
    out.into_iter().filter(|i| looks_like_image(i)).collect()
}

fn collect_env(value: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    use serde_json::Value;
    match value {
        Value::Object(m) => {
            if let Some(env) = m.get("env").and_then(Value::as_array) {
                let get = |name: &str| {
                    env.iter()
                        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
                        .and_then(|e| e.get("value"))
                        .and_then(Value::as_str)
                };
                for e in env {
                    let (Some(name), Some(val)) =
                        (e.get("name").and_then(Value::as_str), e.get("value").and_then(Value::as_str))
                    else {
                        continue;
                    };
                    if let Some(prefix) = name.strip_suffix("_IMAGE") {
                        match get(&format!("{prefix}_TAG")) {
                            Some(tag) if !val.contains(':') => out.insert(format!("{val}:{tag}")),
                            _ => out.insert(val.to_string()),
                        };
                    }
                }
            }
            m.values().for_each(|v| collect_env(v, out));
        }
        Value::Array(items) => items.iter().for_each(|i| collect_env(i, out)),
        _ => {}
    }
}

fn collect_config_text(text: &str, out: &mut std::collections::BTreeSet<String>) {
    let parsed = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .or_else(|| kfctl_yaml::parse_stream(text, "config").ok().and_then(|d| d.into_iter().next()));
    if let Some(doc) = parsed {
        collect_image_keys(&doc, out);
    }
}

fn collect_image_keys(value: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    use serde_json::Value;
    match value {
        Value::Object(m) => {
            match m.get("image") {
                Some(Value::String(img)) => {
                    let version = m.get("defaultImageVersion").and_then(Value::as_str);
                    match version {
                        Some(v) if !repository(img).contains(':') && !img.contains(':') => {
                            out.insert(format!("{img}:{v}"))
                        }
                        _ => out.insert(img.clone()),
                    };
                }
                Some(Value::Object(spec)) => {
                    spec.get("value").and_then(Value::as_str).map(|v| out.insert(v.to_string()));
                    for o in
                        spec.get("options").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
                    {
                        out.insert(o.to_string());
                    }
                }
                _ => {}
            }
            m.values().for_each(|v| collect_image_keys(v, out));
        }
        Value::Array(items) => items.iter().for_each(|i| collect_image_keys(i, out)),
        _ => {}
    }
}

fn looks_like_image(s: &str) -> bool {
    !s.is_empty()
        && !s.contains(char::is_whitespace)
        && !s.contains("{{")
        && !s.contains('$')
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "./:-_@".contains(c))
        && s.chars().any(|c| c.is_ascii_alphabetic())
        && !matches!(s, "true" | "false" | "null" | "None")
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
        assert_eq!(keys[&imgs[0]], "kube-rbac-proxy-v0-13-1");
        assert_eq!(repository("gcr.io/x/y@sha256:ab"), "x/y");
    }
}
