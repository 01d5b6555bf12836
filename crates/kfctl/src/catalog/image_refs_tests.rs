use super::*;
use serde_json::json;

fn keys(list: &[&str], version: Option<&str>) -> Find {
    Find::Keys(KeysFind { keys: list.iter().map(|s| s.to_string()).collect(), version_key: version.map(Into::into) })
}

fn texts(find: &Find, text: &str) -> Vec<String> {
    tokens(find, text).into_iter().map(|t| t.text).collect()
}

#[test]
fn every_component_file_loads_and_names_objects_as_kind_slash_name() {
    let all = all().expect("charts/*/images.yaml parse");
    assert!(all.len() >= 9, "{}", all.len());
    for (component, file) in all {
        for loc in &file.references {
            assert!(loc.object.split_once('/').is_some(), "{component}: {}", loc.object);
            assert!(!loc.field.is_empty(), "{component}: {}", loc.object);
        }
        assert!(
            file.exceptions.iter().all(|e| !e.reason.trim().is_empty()),
            "{component}: an exception needs a reason"
        );
    }
}

#[test]
fn finds_whole_prefix_lines_and_quoted_tokens() {
    assert_eq!(texts(&Find::Whole, "quay.io/a/b:v1"), ["quay.io/a/b:v1"]);
    assert_eq!(texts(&Find::Prefix("--img=".into()), "--img=quay.io/a/b:v1"), ["quay.io/a/b:v1"]);
    assert!(texts(&Find::Prefix("--img=".into()), "--other=x").is_empty());
    let template = "  image: \"{{ .ProxyImage }}\"\n    image: busybox:1.28\n";
    assert_eq!(texts(&Find::Lines("image: ".into()), template), ["busybox:1.28"]);
    assert_eq!(texts(&Find::Quoted("get(\"X\", \"".into()), "a = get(\"X\", \"ghcr.io/k/f\")"), ["ghcr.io/k/f"]);
}

#[test]
fn keys_find_strings_at_any_depth_with_a_sibling_version() {
    let yaml = "spawner:\n  image:\n    value: a/b:v1\n    options:\n    - a/b:v1\n    - a/c:v1\n  other: x/y:v9\n";
    assert_eq!(texts(&keys(&["image"], None), yaml), ["a/b:v1", "a/c:v1"]);
    let json = r#"{"art": {"image": "kserve/art-explainer", "defaultImageVersion": "latest"}}"#;
    let found = tokens(&keys(&["image"], Some("defaultImageVersion")), json);
    assert_eq!(found[0].text, "kserve/art-explainer");
    assert_eq!(found[0].pulled, ["kserve/art-explainer:latest"]);
}

#[test]
fn a_hub_stands_for_the_images_composed_from_it() {
    let h = Find::Hub(HubFind {
        hub: vec!["global".into(), "hub".into()],
        tag: vec!["global".into(), "tag".into()],
        names: vec![vec!["global".into(), "proxy".into(), "image".into()]],
    });
    let found =
        tokens(&h, r#"{"global": {"hub": "gcr.io/istio-release", "tag": "1.28.0", "proxy": {"image": "proxyv2"}}}"#);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].rewrite, Rewrite::Hub);
    assert_eq!(found[0].pulled, ["gcr.io/istio-release/proxyv2:1.28.0"]);
    assert_eq!(hub_with_registry("gcr.io/istio-release", "r.example.com/m"), "r.example.com/m/istio-release");
}

#[test]
fn replacement_takes_whole_tokens_only() {
    let text = "image: a/b:v1\nimage: a/b:v1.2\nx: \"a/b:v1\" ca/b:v1";
    assert_eq!(replace_token(text, "a/b:v1", "r/a/b:v1"), "image: r/a/b:v1\nimage: a/b:v1.2\nx: \"r/a/b:v1\" ca/b:v1");
    // As Go's ReplaceAllString with the Helm helper's expression: the boundary after a match
    // is consumed, so a token right after it (one character apart) stays; both sides agree.
    assert_eq!(replace_token("a/b a/b", "a/b", "X"), "X a/b");
    assert_eq!(replace_token("a/b, a/b", "a/b", "X"), "X, X");
    assert_eq!(replace_token("a/b", "a/b", "a/b"), "a/b");
}

#[test]
fn selection_walks_keys_wildcards_names_and_following_items() {
    let mut obj = json!({"spec": {"containers": [{"args": ["--executor-image", "q/argoexec:v3"], "env": [{"name": "A_IMAGE", "value": "x/a:1"}]}]}});
    let mut seen = Vec::new();
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    select_mut(
        &mut obj,
        &path(&["spec", "containers", "*", "args", "after=--executor-image"]),
        String::new(),
        &mut |s, at| seen.push((s.clone(), at.to_string())),
    );
    select_mut(
        &mut obj,
        &path(&["spec", "containers", "*", "env", "name=A_IMAGE", "value"]),
        String::new(),
        &mut |s, at| seen.push((s.clone(), at.to_string())),
    );
    assert_eq!(
        seen,
        [
            ("q/argoexec:v3".to_string(), "spec.containers[0].args[1]".to_string()),
            ("x/a:1".to_string(), "spec.containers[0].env[0].value".to_string())
        ]
    );
    assert!(is_object(
        &json!({"kind": "ConfigMap", "metadata": {"name": "katib-config-5g2h7kt9mb"}}),
        "ConfigMap/katib-config"
    ));
    assert!(!is_object(
        &json!({"kind": "ConfigMap", "metadata": {"name": "katib-config-x"}}),
        "ConfigMap/katib-config"
    ));
}
