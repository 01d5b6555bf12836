//! Issue 14's identity values: Dex connectors (`dex.connectors`) and oauth2-proxy straight to
//! an external OIDC issuer (`oauth2-proxy.oidc.*`). For each: the render changes exactly the
//! objects it should (compared object by object with the render it starts from), real Helm of
//! the exported chart equals the render, and real kustomize of `template --as-kustomization`
//! prints the render byte for byte. Bad input is refused naming the value, in kfctl-rs (exit 2,
//! or 4 for a `security:` refusal) and by Helm (the exported values.schema.json, or a `fail`).

use crate::common;

use kfctl_yaml::compare;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const PROFILE: &str = "multi-tenant";
const ISSUER: &str = "https://login.example.com/realms/kubeflow";
const CLIENT_SECRET: &str = "s3cr3t-of-the-external-client";

/// A values file holding `doc`.
fn values_file(name: &str, doc: &Value) -> PathBuf {
    common::values_file("identity", name, doc)
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn cli(args: &[&str]) -> Output {
    common::kfctl_offline(&[args, &["--profile", PROFILE]].concat())
}

/// The native render with values files (layered in order).
fn render(files: &[&Path]) -> Vec<Value> {
    let mut request = common::render_request(PROFILE, Vec::new());
    request.value_files = files.iter().map(|f| f.to_path_buf()).collect();
    let rendered = kfctl::catalog::render(&request).unwrap_or_else(|e| panic!("render: {e}"));
    rendered.objects.into_iter().map(|o| o.obj).collect()
}

/// multi-tenant exported with default values, once.
fn exported() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = common::scratch("identity", "export").join("kubeflow");
        let result = cli(&["chart", "export", "--out", arg(&out)]);
        assert!(result.status.success(), "export: {}", String::from_utf8_lossy(&result.stderr));
        out
    })
}

fn helm(files: &[&Path]) -> Output {
    let mut cmd = Command::new(common::tool("helm-template"));
    cmd.arg(exported());
    for file in files {
        cmd.arg("-f").arg(file);
    }
    cmd.output().expect("helm runs")
}

fn assert_helm_equals(native: &[Value], files: &[&Path]) {
    common::assert_helm_equals_native(native, &helm(files), "helm template");
}

/// Real kustomize of `template --as-kustomization DIR -f file…` prints what `template -f file…` does.
/// The components the identity values change (Dex, oauth2-proxy, Istio's JWT rule), with what they need.
const IDENTITY: [&str; 6] = ["dex", "oauth2-proxy", "istio", "istio-crds", "istio-namespace", "kubeflow-namespace"];

fn assert_kustomize_equals_render(case: &str, files: &[&Path]) {
    let flags: Vec<&str> = files.iter().flat_map(|f| ["-f", arg(f)]).collect();
    common::assert_as_kustomization_equals_render(case, PROFILE, &IDENTITY, &flags);
}

fn s<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// The labels of the objects that differ between two renders of the same objects in the same
/// order (hash suffixes masked, so a renamed generated object is the same object).
fn changed(before: &[Value], after: &[Value]) -> Vec<String> {
    assert_eq!(before.len(), after.len(), "the same number of objects");
    let masked = |o: &Value| match kfctl::catalog::rehash::HashedName::of(o) {
        Some(hashed) => format!("{} {}/{}", s(o, "/kind"), s(o, "/metadata/namespace"), hashed.base),
        None => compare::object_label(o),
    };
    before
        .iter()
        .zip(after)
        .inspect(|(a, b)| assert_eq!(masked(a), masked(b), "the same objects in the same order"))
        .filter(|(a, b)| a != b)
        .map(|(a, _)| masked(a))
        .collect()
}

fn find<'a>(objs: &'a [Value], kind: &str, namespace: &str, name_prefix: &str) -> &'a Value {
    objs.iter()
        .find(|o| {
            s(o, "/kind") == kind
                && s(o, "/metadata/namespace") == namespace
                && s(o, "/metadata/name").starts_with(name_prefix)
        })
        .unwrap_or_else(|| panic!("{kind} {namespace}/{name_prefix}"))
}

fn connectors() -> Value {
    json!({"dex": {"connectors": [
        {"type": "github", "id": "github", "name": "GitHub", "config": {
            "clientID": "$GITHUB_CLIENT_ID", "clientSecret": "$GITHUB_CLIENT_SECRET",
            "redirectURI": "https://kubeflow.example.com/dex/callback",
            "orgs": [{"name": "my-org", "teams": ["ml & data", "<admins>"]}]}},
        {"type": "ldap", "id": "corp-ldap", "name": "Corporate LDAP", "config": {
            "host": "ldap.example.com:636", "bindDN": "cn=admin,dc=example,dc=com", "bindPW": "$LDAP_BIND_PW",
            "insecureNoSSL": false, "userSearch": {"baseDN": "ou=People,dc=example,dc=com", "username": "uid"}}},
    ]}})
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn dex_connectors_append_to_dexs_configuration_and_nothing_else() {
    let file = values_file("connectors", &connectors());
    let (before, after) = (render(&[]), render(&[&file]));
    assert_eq!(changed(&before, &after), ["ConfigMap auth/dex"], "only Dex's configuration changes");
    let old = s(find(&before, "ConfigMap", "auth", "dex"), "/data/config.yaml");
    let new = s(find(&after, "ConfigMap", "auth", "dex"), "/data/config.yaml");
    let github = r#"{"config":{"clientID":"$GITHUB_CLIENT_ID","clientSecret":"$GITHUB_CLIENT_SECRET","orgs":[{"name":"my-org","teams":["ml \u0026 data","\u003cadmins\u003e"]}],"redirectURI":"https://kubeflow.example.com/dex/callback"},"id":"github","name":"GitHub","type":"github"}"#;
    let ldap = r#"{"config":{"bindDN":"cn=admin,dc=example,dc=com","bindPW":"$LDAP_BIND_PW","host":"ldap.example.com:636","insecureNoSSL":false,"userSearch":{"baseDN":"ou=People,dc=example,dc=com","username":"uid"}},"id":"corp-ldap","name":"Corporate LDAP","type":"ldap"}"#;
    assert_eq!(new, format!("{old}connectors:\n- {github}\n- {ldap}\n"), "upstream's text, then the connectors");
    let parsed = kfctl_yaml::parse_stream(new, "config.yaml").unwrap().remove(0);
    assert_eq!(parsed["connectors"], connectors()["dex"]["connectors"], "Dex reads back the list as given");
    assert_helm_equals(&after, &[&file]);
    assert_kustomize_equals_render("connectors", &[&file]);
}

/// The values of the external issuer, and the render it is compared with: the same without
/// the issuer (Dex disabled and the client secret set in both).
fn external(issuer: bool) -> Value {
    let mut doc = json!({"dex": {"enabled": false}, "global": {"oidcClientSecret": CLIENT_SECRET}});
    if issuer {
        doc["oauth2-proxy"] = json!({"oidc": {"issuerURL": ISSUER, "clientID": "kubeflow", "scope": "openid email profile offline_access"}});
    }
    doc
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn an_external_issuer_reaches_oauth2_proxy_and_istio_and_nothing_else() {
    let file = values_file("external", &external(true));
    let (before, after) = (render(&[&values_file("no-dex", &external(false))]), render(&[&file]));
    assert_eq!(
        changed(&before, &after),
        [
            "ConfigMap oauth2-proxy/oauth2-proxy",
            "Secret oauth2-proxy/oauth2-proxy",
            "Deployment oauth2-proxy/oauth2-proxy",
            "RequestAuthentication istio-system/dex-jwt",
        ],
        "oauth2-proxy's configuration and Secret (renamed by their new hash), the Deployment naming them, and Istio's rule"
    );
    let config = s(find(&after, "ConfigMap", "oauth2-proxy", "oauth2-proxy-"), "/data/oauth2_proxy.cfg");
    assert!(config.contains(&format!("\noidc_issuer_url = \"{ISSUER}\"\n")), "{config}");
    assert!(config.contains("\nscope = \"openid email profile offline_access\"\n"));
    assert!(config.contains("\nskip_oidc_discovery = false\n"));
    for gone in ["login_url", "redeem_url", "oidc_jwks_url", "prompt =", "provider_display_name"] {
        assert!(!config.contains(gone), "{gone} is Dex's: {config}");
    }
    let mut settings = config.lines().filter(|l| !l.trim_start().starts_with('#'));
    assert!(settings.all(|l| !l.contains("dex.auth.svc")), "only comments still name Dex");
    let old = s(find(&before, "ConfigMap", "oauth2-proxy", "oauth2-proxy-"), "/data/oauth2_proxy.cfg");
    assert_eq!(old.lines().count() - 5, config.lines().count(), "five Dex-only lines dropped, the rest kept");
    let secret = find(&after, "Secret", "oauth2-proxy", "oauth2-proxy-");
    assert_eq!(s(secret, "/data/client-id"), "a3ViZWZsb3c=", "base64 of `kubeflow`");
    let rule = find(&after, "RequestAuthentication", "istio-system", "dex-jwt");
    assert_eq!(s(rule, "/spec/jwtRules/0/issuer"), ISSUER);
    let deployment = find(&after, "Deployment", "oauth2-proxy", "oauth2-proxy");
    assert!(serde_json::to_string(deployment).unwrap().contains(s(secret, "/metadata/name")), "the pods roll");
    assert_helm_equals(&after, &[&file]);
    assert_kustomize_equals_render("external", &[&file]);
}

/// A bad value: refused by kfctl-rs with `exit` naming `names`, and by Helm with `helm_names`.
struct Bad {
    case: &'static str,
    values: Value,
    exit: i32,
    names: &'static str,
    helm_names: &'static [&'static str],
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn bad_identity_values_are_refused_by_kfctl_rs_and_by_helm() {
    let one = |c: Value| json!({"dex": {"connectors": [{"type": "oidc", "id": "a"}, c]}});
    let oidc = |o: Value| json!({"dex": {"enabled": false}, "oauth2-proxy": {"oidc": o}});
    let cases = [
        Bad {
            case: "no-type",
            values: one(json!({"id": "b"})),
            exit: 2,
            names: "dex.connectors[1].type",
            helm_names: &["schema", "type"],
        },
        Bad {
            case: "no-id",
            values: one(json!({"type": "ldap"})),
            exit: 2,
            names: "dex.connectors[1].id",
            helm_names: &["schema", "id"],
        },
        Bad {
            case: "bad-key",
            values: one(json!({"type": "ldap", "id": "b", "configs": {}})),
            exit: 2,
            names: "dex.connectors[1].configs",
            helm_names: &["schema", "configs"],
        },
        Bad {
            case: "dup-id",
            values: one(json!({"type": "ldap", "id": "a"})),
            exit: 2,
            names: "dex.connectors[1].id: `a` is also connectors[0]'s",
            helm_names: &["dex.connectors[1].id: `a` is also connectors[0]'s"],
        },
        Bad {
            case: "inline",
            values: one(json!({"type": "oidc", "id": "b", "config": {"clientSecret": "hunter2"}})),
            exit: 4,
            names: "security: dex.connectors[1].config.clientSecret",
            helm_names: &["security: dex.connectors[1].config", "clientSecret"],
        },
        Bad {
            case: "http",
            values: oidc(json!({"issuerURL": "http://login.example.com", "clientID": "kf"})),
            exit: 2,
            names: "oauth2-proxy.oidc.issuerURL",
            helm_names: &["schema", "issuerURL"],
        },
        Bad {
            case: "no-client",
            values: oidc(json!({"issuerURL": ISSUER})),
            exit: 2,
            names: "oauth2-proxy.oidc.clientID is missing",
            helm_names: &["oauth2-proxy.oidc.clientID is missing"],
        },
        Bad {
            case: "no-issuer",
            values: oidc(json!({"clientID": "kf"})),
            exit: 2,
            names: "oauth2-proxy.oidc.clientID is set without",
            helm_names: &["oauth2-proxy.oidc.clientID is set without"],
        },
    ];
    for bad in cases {
        let file = values_file(bad.case, &bad.values);
        let out = cli(&["template", "-f", arg(&file)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(bad.exit), "{}: {stderr}", bad.case);
        assert!(stderr.contains(bad.names), "{}: {stderr}", bad.case);
        assert!(out.stdout.is_empty(), "{}: no output", bad.case);
        let out = helm(&[&file]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "helm accepted {}", bad.case);
        for name in bad.helm_names {
            assert!(stderr.contains(name), "{}: {name}: {stderr}", bad.case);
        }
    }
    // The umbrella chart's check (a subchart cannot see whether the other is enabled).
    let with_dex = values_file("with-dex", &json!({"oauth2-proxy": {"oidc": {"issuerURL": ISSUER, "clientID": "kf"}}}));
    let out = helm(&[&with_dex]);
    assert!(!out.status.success(), "helm accepted an external issuer beside Dex");
    assert!(String::from_utf8_lossy(&out.stderr).contains("oauth2-proxy.oidc.issuerURL is set while dex is enabled"));
    let out = cli(&["template", "-f", arg(&with_dex)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("oauth2-proxy.oidc.issuerURL is set while dex is enabled")
            && stderr.contains("dex.enabled=false")
    );
}

/// The shipped examples: `values/dex-connectors.yaml` (connectors with their secrets from
/// Dex's environment: Dex's configuration and Deployment change) and `values/external-oidc.yaml`
/// (with the client secret from a second file) render as Helm and real kustomize do.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn the_shipped_identity_values_files_render_as_helm_and_kustomize_do() {
    let connectors = common::repo_root().join("values/dex-connectors.yaml");
    let (before, after) = (render(&[]), render(&[&connectors]));
    assert_eq!(changed(&before, &after), ["ConfigMap auth/dex", "Deployment auth/dex"]);
    let dex = find(&after, "Deployment", "auth", "dex");
    let env = dex.pointer("/spec/template/spec/containers/0/env").unwrap().as_array().unwrap();
    assert!(
        env.iter()
            .any(|e| e["name"] == "GITHUB_CLIENT_SECRET" && e["valueFrom"]["secretKeyRef"]["name"] == "dex-connectors")
    );
    assert_helm_equals(&after, &[&connectors]);
    assert_kustomize_equals_render("shipped-connectors", &[&connectors]);
    let external = common::repo_root().join("values/external-oidc.yaml");
    let secret = values_file("secret", &json!({"global": {"oidcClientSecret": CLIENT_SECRET}}));
    let after = render(&[&external, &secret]);
    let rule = find(&after, "RequestAuthentication", "istio-system", "dex-jwt");
    assert_eq!(s(rule, "/spec/jwtRules/0/issuer"), ISSUER);
    assert!(!after.iter().any(|o| s(o, "/metadata/namespace") == "auth"), "no Dex");
    assert_helm_equals(&after, &[&external, &secret]);
}

/// Issue 27: `--set-file dex.connectors=FILE` (a file's text, as Helm's `--set-file` gives it)
/// takes the YAML list the file holds, in kfctl-rs and in the chart alike, and renders as the
/// same list given in a values file; a file that holds no list is refused by both.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn set_file_gives_dex_its_connectors_from_a_file_as_helm_does() {
    use kfctl::catalog::strvals::{SetFlag, SetKind};
    let shipped = common::repo_root().join("values/dex-connectors.yaml");
    let doc = kfctl_yaml::parse_stream(&std::fs::read_to_string(&shipped).unwrap(), "shipped").unwrap().remove(0);
    let dir = common::scratch("identity", "set-file");
    let list = dir.join("connectors.yaml");
    std::fs::write(&list, kfctl_yaml::to_yaml(&doc["dex"]["connectors"])).unwrap();
    let only_connectors = values_file("only-connectors", &json!({"dex": {"connectors": doc["dex"]["connectors"]}}));
    let assignment = format!("dex.connectors={}", arg(&list));
    let mut request = common::render_request(PROFILE, vec![SetFlag::new(SetKind::File, &assignment)]);
    request.value_files = Vec::new();
    let from_file: Vec<Value> =
        kfctl::catalog::render(&request).unwrap_or_else(|e| panic!("{e}")).objects.into_iter().map(|o| o.obj).collect();
    assert_eq!(from_file, render(&[&only_connectors]), "--set-file renders as the list in a values file");
    let helm = Command::new(common::tool("helm-template")).arg(exported()).args(["--set-file", &assignment]).output();
    common::assert_helm_equals_native(&from_file, &helm.unwrap(), "helm template --set-file dex.connectors=FILE");
    let not_a_list = dir.join("not-a-list.yaml");
    std::fs::write(&not_a_list, "type: github\n").unwrap();
    let bad = format!("dex.connectors={}", arg(&not_a_list));
    let ours = cli(&["template", "--set-file", &bad]);
    assert_eq!(ours.status.code(), Some(2), "{}", String::from_utf8_lossy(&ours.stderr));
    assert!(String::from_utf8_lossy(&ours.stderr).contains("dex.connectors"), "names the value");
    let theirs =
        Command::new(common::tool("helm-template")).arg(exported()).args(["--set-file", &bad]).output().unwrap();
    assert!(!theirs.status.success(), "Helm rendered connectors from a file holding no list");
}
