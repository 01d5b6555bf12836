//! Rule-by-rule tests of the merge (one named test per rule).
use super::*;

fn one(yaml: &str) -> Value {
    crate::yaml::parse_stream(yaml, "test").expect("test YAML parses").remove(0)
}

fn merge(base: &str, patch: &str) -> Value {
    let base = one(base);
    let gvk = Gvk::from_api_version(base["apiVersion"].as_str().unwrap_or(""), base["kind"].as_str().unwrap_or(""));
    strategic_merge(&base, &one(patch), &gvk).expect("patch applies")
}

#[test]
fn smoke() {
    let out = merge(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: a, image: a}]}}}",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: b, image: b}]}}}",
    );
    assert_eq!(out["spec"]["template"]["spec"]["containers"][0]["name"], "b");
}
