//! Issue 40: `analyze` of a render. The default render keeps upstream's well-known credentials
//! (KF001); rendered with the values `kfctl-rs secrets generate` writes, it keeps none.

use crate::common;

use kfctl::analyze::{ClusterFacts, analyze};
use kfctl::catalog::render;

fn findings_of(sets: &[&str], files: Vec<std::path::PathBuf>) -> Vec<kfctl::analyze::Finding> {
    let mut request = common::render_request_set("kind", sets);
    request.value_files = files;
    let rendered = render(&request).expect("kind renders");
    let objects: Vec<serde_json::Value> = rendered.objects.into_iter().map(|o| o.obj).collect();
    analyze(&objects, &ClusterFacts::default())
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn the_default_render_keeps_default_credentials_and_generated_secrets_clear_them() {
    let found = findings_of(&[], Vec::new());
    let credentials: Vec<&str> = found.iter().filter(|f| f.code == "KF001").map(|f| f.message.as_str()).collect();
    for value in ["dex.staticUser.passwordHash", "pipelines.objectStore.secretKey", "oauth2-proxy.cookieSecret"] {
        assert!(credentials.iter().any(|m| m.contains(value)), "{value} not found: {credentials:#?}");
    }
    let hash = bcrypt::hash("a-fresh-password", 4).unwrap();
    let mut n = 0;
    let fresh = kfctl::catalog::credentials::fresh_values("me@example.org", &hash, || {
        n += 1;
        format!("fresh-token-{n}")
    });
    let file = common::scratch("analyze", "values").join("secrets.yaml");
    std::fs::write(&file, kfctl_yaml::to_yaml(&fresh)).unwrap();
    let after = findings_of(&[], vec![file]);
    let left: Vec<_> = after.iter().filter(|f| f.code == "KF001").collect();
    assert!(left.is_empty(), "credentials left after secrets generate's values: {left:#?}");
}
