//! Issue 13's values surface against real Helm (`../shared/tools/helm-template`): the
//! per-workload values (replicas for every workload, pod annotations, pod labels, extra env)
//! change exactly their fields, and a matrix of named value sets — Helm's value edge cases,
//! the `values/` files combined with `--set`, the new values — renders equal under real Helm
//! of the export and `kfctl-rs`'s render, or is refused by both. Each profile is exported once.

use crate::common;

use kfctl::catalog::strvals::{SetFlag, SetKind};
use kfctl::catalog::{RenderRequest, Rendered};
use kfctl::source::MirrorResolver;
use kfctl_yaml::compare;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

fn scratch(name: &str) -> PathBuf {
    common::scratch("matrix", name)
}

/// One way of giving values, the same to Helm and to kfctl-rs: `-f` files, then flags.
#[derive(Clone)]
struct Input {
    files: Vec<PathBuf>,
    flags: Vec<SetFlag>,
}

impl Input {
    fn helm_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for f in &self.files {
            args.extend(["-f".to_string(), f.display().to_string()]);
        }
        for flag in &self.flags {
            args.extend([flag.kind.flag().to_string(), flag.expression.clone()]);
        }
        args
    }
}

fn render(profile: &str, input: &Input) -> Result<Rendered, String> {
    let request = RenderRequest {
        profile: profile.into(),
        components: Vec::new(),
        value_files: input.files.clone(),
        sets: input.flags.clone(),
        manifests_dir: common::manifests_dir(),
        remote: Arc::new(MirrorResolver { root: common::mirror_dir() }),
        layout: common::layout(),
    };
    kfctl::catalog::render(&request).map_err(|e| e.to_string())
}

fn objects(rendered: &Rendered) -> Vec<Value> {
    rendered.objects.iter().map(|o| o.obj.clone()).collect()
}

/// The default render of `profile`, once per profile.
fn default_render(profile: &str) -> Vec<Value> {
    static RENDERS: OnceLock<Mutex<BTreeMap<String, Vec<Value>>>> = OnceLock::new();
    let mut renders = RENDERS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    renders
        .entry(profile.to_string())
        .or_insert_with(|| objects(&render(profile, &Input { files: Vec::new(), flags: Vec::new() }).unwrap()))
        .clone()
}

/// `kfctl-rs chart export` of `profile` with default values, once per profile.
fn exported(profile: &str) -> PathBuf {
    static DIRS: OnceLock<Mutex<BTreeMap<String, PathBuf>>> = OnceLock::new();
    let mut dirs = DIRS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    dirs.entry(profile.to_string())
        .or_insert_with(|| {
            common::export_chart(profile, common::release(), scratch(&format!("export-{profile}")).join("kubeflow"))
        })
        .clone()
}

fn helm(profile: &str, input: &Input) -> Output {
    Command::new(common::tool("helm-template"))
        .arg(exported(profile))
        .args(input.helm_args())
        .output()
        .expect("helm-template runs")
}

fn parse_helm(out: &Output) -> Vec<Value> {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let mut docs = Vec::new();
    for doc in text.split("\n---\n") {
        docs.extend(kfctl_yaml::parse_stream(doc, "helm template output").unwrap());
    }
    docs
}

fn s<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

fn values_file(name: &str, text: &str) -> PathBuf {
    let path = scratch(&format!("values-{name}")).join("values.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn find<'a>(objs: &'a mut [Value], kind: &str, name: &str) -> &'a mut Value {
    objs.iter_mut()
        .find(|o| s(o, "/kind") == kind && s(o, "/metadata/name") == name)
        .unwrap_or_else(|| panic!("{kind} {name}"))
}

/// Every Deployment and StatefulSet has a `replicas` key (its `spec.replicas`, else `null`),
/// and `podAnnotations`, `podLabels`, `env` keys; setting them changes exactly those fields of
/// the named workload — env entries appended after upstream's — and real Helm of the export
/// equals the render.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn workload_values_change_exactly_their_fields() {
    let defaults = render("multi-tenant", &Input { files: Vec::new(), flags: Vec::new() }).unwrap();
    let workloads: Vec<&kfctl::catalog::RenderedObject> =
        defaults.objects.iter().filter(|o| kfctl::catalog::params::is_workload(&o.obj)).collect();
    let unset = workloads.iter().filter(|o| o.obj.pointer("/spec/replicas").is_none()).count();
    for o in &workloads {
        let name = s(&o.obj, "/metadata/name");
        let section = &defaults.defaults[&o.component];
        assert!(section["replicas"].get(name).is_some(), "{}: no replicas key", name);
        for key in ["podAnnotations", "podLabels", "env"] {
            assert!(section[key].get(name).is_some(), "{name}: no {key} key");
        }
    }
    assert!(unset >= 20, "workloads without spec.replicas upstream, now with a key: {unset}");
    println!("{} workloads, {unset} of them without upstream spec.replicas: every one has a key", workloads.len());

    let file = values_file(
        "workloads",
        "pipelines:\n  replicas:\n    ml-pipeline: 2\n  podAnnotations:\n    ml-pipeline:\n      prometheus.io/scrape: \"true\"\n  env:\n    ml-pipeline:\n      ml-pipeline-api-server:\n      - name: EXTRA_FLAG\n        value: \"1\"\n      - name: POD_NAME_COPY\n        valueFrom:\n          fieldRef:\n            fieldPath: metadata.name\n",
    );
    let input =
        Input { files: vec![file], flags: vec![SetFlag::new(SetKind::Set, "katib.podLabels.katib-ui.team=ml")] };
    let after = objects(&render("multi-tenant", &input).unwrap());
    let mut expected = default_render("multi-tenant");
    let pipeline = find(&mut expected, "Deployment", "ml-pipeline");
    pipeline["spec"]["replicas"] = json!(2);
    pipeline["spec"]["template"]["metadata"]["annotations"]["prometheus.io/scrape"] = json!("true");
    let env = pipeline.pointer_mut("/spec/template/spec/containers/0/env").unwrap().as_array_mut().unwrap();
    env.push(json!({"name": "EXTRA_FLAG", "value": "1"}));
    env.push(json!({"name": "POD_NAME_COPY", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}));
    find(&mut expected, "Deployment", "katib-ui")["spec"]["template"]["metadata"]["labels"]["team"] = json!("ml");
    if let Some(report) = compare::unordered_report(&expected, &after, 10) {
        panic!("the render changes more or less than the workload values:\n{report}");
    }
    let out = helm("multi-tenant", &input);
    assert!(out.status.success(), "helm: {}", String::from_utf8_lossy(&out.stderr));
    if let Some(report) = compare::unordered_report(&after, &parse_helm(&out), 10) {
        panic!("helm template differs from kfctl-rs:\n{report}");
    }
}

/// `replicas=-1` (and a replicas key on any workload, present upstream or not) is refused by
/// kfctl-rs and by the export's schema alike.
#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn negative_replicas_are_refused_by_both_for_every_kind_of_workload() {
    for set in ["katib.replicas.katib-ui=-1", "pipelines.replicas.ml-pipeline=-1", "pipelines.replicas.ml-pipeline=x"] {
        let input = Input { files: Vec::new(), flags: vec![SetFlag::new(SetKind::Set, set)] };
        let ours = render("multi-tenant", &input).err().unwrap_or_else(|| panic!("kfctl-rs accepted {set}"));
        assert!(ours.contains("0 or more"), "{set}: {ours}");
        let out = helm("multi-tenant", &input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains("schema"), "helm accepted {set}: {stderr}");
    }
}

/// What a case expects: both render the same objects, or both refuse.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Expect {
    Equal,
    Refused,
}

/// One named value set of the matrix: `-f` files (inline text, or `@values/<file>` for a
/// file of the repository's `values/`) then flags (`@FILE` stands for a scratch text file).
struct Case {
    name: &'static str,
    profile: &'static str,
    files: Vec<&'static str>,
    flags: Vec<(SetKind, &'static str)>,
    expect: Expect,
}

fn case(name: &'static str, profile: &'static str, files: &[&'static str], flags: &[(SetKind, &'static str)]) -> Case {
    Case { name, profile, files: files.to_vec(), flags: flags.to_vec(), expect: Expect::Equal }
}

fn refused(
    name: &'static str,
    profile: &'static str,
    files: &[&'static str],
    flags: &[(SetKind, &'static str)],
) -> Case {
    Case { expect: Expect::Refused, ..case(name, profile, files, flags) }
}

const MT: &str = "multi-tenant";
const MIN: &str = "minimal";

/// The matrix: issue 13's edge cases, the `values/` files with `--set`, the new values.
fn matrix() -> Vec<Case> {
    use SetKind::*;
    vec![
        // --set grammar (Helm's strvals).
        case("empty list `{}` over the default list", MIN, &[], &[(Set, "global.imagePullSecrets={}")]),
        case("list `{a,b}`", MIN, &[], &[(Set, "global.imagePullSecrets={regcred,mirror}")]),
        case(
            "indexes accumulate across --set flags",
            MIN,
            &[],
            &[(Set, "global.tolerations[0].key=dedicated"), (Set, "global.tolerations[0].operator=Exists")],
        ),
        case("escaped dots in a key", MIN, &[], &[(Set, r"global.nodeSelector.kubernetes\.io/os=linux")]),
        case("escaped comma in a value", MIN, &[], &[(Set, r"global.commonAnnotations.note=a\,b")]),
        case("`False` is a boolean", MT, &[], &[(Set, "katib.enabled=False")]),
        case("`NULL` deletes the default", MT, &[], &[(Set, "katib.enabled=NULL")]),
        case(
            "global nulls reach every subchart",
            MT,
            &[],
            &[(Set, "global.nodeSelector=null,global.imagePullSecrets=null,global.commonLabels=null")],
        ),
        // -f read as Helm reads it.
        case("YAML 1.1 booleans in -f", MT, &["katib:\n  enabled: no\npipelines:\n  enabled: On\n"], &[]),
        case("`replicas: 2.0` in -f", MT, &["katib:\n  replicas:\n    katib-ui: 2.0\n"], &[]),
        case(
            "two -f files, the later wins, then --set over both",
            MIN,
            &["global:\n  commonLabels:\n    a: one\n    b: one\n", "global:\n  commonLabels:\n    b: two\n"],
            &[(Set, "global.commonLabels.a=three")],
        ),
        // The other --set kinds.
        case("--set-string on a label", MIN, &[], &[(String, "global.commonLabels.version=1.0")]),
        refused("--set-string on a count", MT, &[], &[(String, "katib.replicas.katib-ui=2")]),
        refused("--set-string on a boolean", MIN, &[], &[(String, "trainer.enabled=false")]),
        case("--set-json", MIN, &[], &[(Json, r#"global.nodeSelector={"pool":"general","zone":"a"}"#)]),
        case("--set-file", MIN, &[], &[(File, "global.commonAnnotations.note=@FILE")]),
        case("--set-literal keeps commas and equals", MIN, &[], &[(Literal, "global.commonAnnotations.note=a,b=c")]),
        // Disabling components on every export.
        case("`katib.enabled: false` on the minimal export", MIN, &["katib:\n  enabled: false\n"], &[]),
        refused("enabling a component the export lacks", MIN, &[], &[(Set, "katib.enabled=true")]),
        // values/ files combined with --set.
        case(
            "values/private-registry.yaml + --set",
            MT,
            &["@values/private-registry.yaml"],
            &[(Set, "global.imageRegistry=other.example.com")],
        ),
        case(
            "values/pss-restricted.yaml + --set",
            MT,
            &["@values/pss-restricted.yaml"],
            &[(Set, "global.podSecurity.namespaces=baseline")],
        ),
        case(
            "values/trainer-gpu-nodes.yaml + --set",
            MIN,
            &["@values/trainer-gpu-nodes.yaml"],
            &[(Set, r"trainer.runtimes.resources.limits.nvidia\.com/gpu=2")],
        ),
        case(
            "values/production-secrets.yaml + --set-string",
            MT,
            &["@values/production-secrets.yaml"],
            &[(String, "oauth2-proxy.cookieSecret=0123456789abcdef0123456789abcdef")],
        ),
        // The values surface.
        case(
            "global scheduling and the runtimes' own",
            MIN,
            &[],
            &[
                (Set, "global.nodeSelector.pool=platform,trainer.runtimes.nodeSelector.pool=gpu"),
                (
                    Set,
                    "trainer.runtimes.tolerations[0].key=nvidia.com/gpu,trainer.runtimes.tolerations[0].operator=Exists",
                ),
            ],
        ),
        case(
            "KServe's serving runtimes",
            MT,
            &[],
            &[(Set, "kserve.runtimes.nodeSelector.pool=serving,global.nodeSelector.pool=platform")],
        ),
        case(
            "replicas on a workload upstream leaves unset",
            MT,
            &[],
            &[(Set, "pipelines.replicas.ml-pipeline=3,pipelines.replicas.ml-pipeline-ui=0")],
        ),
        case(
            "replicas null keeps upstream's",
            MT,
            &[],
            &[(Set, "katib.replicas.katib-ui=null,pipelines.replicas.ml-pipeline=null")],
        ),
        refused("replicas -1", MT, &[], &[(Set, "katib.replicas.katib-ui=-1")]),
        case(
            "pod labels and annotations",
            MIN,
            &[],
            &[
                (Set, "trainer.podLabels.kubeflow-trainer-controller-manager.team=ml"),
                (Set, "trainer.podAnnotations.kubeflow-trainer-controller-manager.a=b"),
            ],
        ),
        case(
            "extra env with --set-json",
            MT,
            &[],
            &[(
                Json,
                r#"pipelines.env.ml-pipeline.ml-pipeline-api-server=[{"name":"NEW","value":"1"},{"name":"TWO","value":"2"}]"#,
            )],
        ),
        case(
            "extra env on a container upstream gives none",
            MIN,
            &[],
            &[(Json, r#"trainer.env.jobset-controller-manager.manager=[{"name":"NEW","value":"1"}]"#)],
        ),
        refused(
            "extra env repeating upstream's name",
            MT,
            &[],
            &[(Json, r#"pipelines.env.ml-pipeline.ml-pipeline-api-server=[{"name":"PUBLISH_LOGS","value":"false"}]"#)],
        ),
        refused("`replicas: 2.5` in -f is no count", MT, &["katib:\n  replicas:\n    katib-ui: 2.5\n"], &[]),
        case(
            "storage class and users",
            MT,
            &[],
            &[(Set, "global.storageClass=fast,global.users[0].email=alice@example.com")],
        ),
        case(
            "existing Secrets instead of rendered credentials",
            MT,
            &[],
            &[(Set, "global.existingSecrets={oauth2-proxy,mlpipeline-minio-artifact,dex-passwords}")],
        ),
        case(
            "an existing Secret beside a credential another Secret still uses",
            MT,
            &[],
            &[(Set, "global.existingSecrets={oauth2-proxy}"), (Set, "global.oidcClientSecret=s3cret")],
        ),
        case(
            "an external database whose login is an existing Secret",
            MT,
            &[],
            &[(Set, "global.existingSecrets={mysql-secret},pipelines.database.host=mysql.example.com")],
        ),
        case(
            "an external issuer whose client id is in an existing Secret",
            MT,
            &[],
            &[(
                Set,
                "dex.enabled=false,global.existingSecrets={oauth2-proxy},oauth2-proxy.oidc.issuerURL=https://login.example.com",
            )],
        ),
        // Refused by both.
        refused(
            "a client id beside an existing oauth2-proxy Secret",
            MT,
            &[],
            &[(
                Set,
                "dex.enabled=false,global.existingSecrets={oauth2-proxy},oauth2-proxy.oidc.issuerURL=https://login.example.com,oauth2-proxy.oidc.clientID=kf",
            )],
        ),
        refused(
            "a database user beside an existing login Secret",
            MT,
            &[],
            &[(Set, "global.existingSecrets={mysql-secret},pipelines.database.host=db,pipelines.database.user=kfp")],
        ),
        refused(
            "a credential whose every Secret is an existing one",
            MT,
            &[],
            &[(
                Set,
                "global.existingSecrets={oauth2-proxy},oauth2-proxy.cookieSecret=0123456789abcdef0123456789abcdef",
            )],
        ),
        refused("an existing Secret upstream does not have", MT, &[], &[(Set, "global.existingSecrets={my-secret}")]),
        refused("a key typo", MIN, &[], &[(Set, "trainer.enabeld=false")]),
        refused("a --set without a value", MIN, &[], &[(Set, "global.imageRegistry")]),
        refused("a runtimes value where no runtimes are", MT, &[], &[(Set, "katib.runtimes.nodeSelector.a=b")]),
        // Issue 27: the charts make every check kfctl-rs makes on `global.users`.
        refused(
            "global.users beside dex.staticUser",
            MT,
            &[],
            &[(Set, "global.users[0].email=alice@example.com,dex.staticUser.email=bob@example.com")],
        ),
        refused(
            "a user whose derived namespace is longer than a label",
            MT,
            &[],
            &[(
                Set,
                "global.users[0].email=a-very-long-name-for-a-user-of-this-platform@a-long-department.example.com",
            )],
        ),
        refused(
            "two users with one namespace",
            MT,
            &[],
            &[(
                Set,
                "global.users[0].email=alice@example.com,global.users[1].email=bob@example.com,global.users[1].namespace=kubeflow-alice-example-com",
            )],
        ),
        // Issue 27: a disabled component's settings are its keys still (Helm's umbrella schema
        // keeps them), so one values file serves with the component on or off ...
        case(
            "settings of a component disabled by --set",
            MT,
            &[
                "katib:\n  replicas:\n    katib-ui: 2\n  resources:\n    katib-controller:\n      katib-controller:\n        limits:\n          cpu: '2'\n",
            ],
            &[(Set, "katib.enabled=false")],
        ),
        // ... and a misspelt one is refused by both, on or off.
        refused(
            "a misspelt workload of a disabled component",
            MT,
            &["katib:\n  replicas:\n    katib-uii: 2\n"],
            &[(Set, "katib.enabled=false")],
        ),
    ]
}

impl Case {
    fn input(&self, dir: &std::path::Path) -> Input {
        let files = self
            .files
            .iter()
            .enumerate()
            .map(|(i, text)| match text.strip_prefix('@') {
                Some(repo) => common::repo_root().join(repo),
                None => {
                    let path = dir.join(format!("{i}.yaml"));
                    std::fs::write(&path, text).unwrap();
                    path
                }
            })
            .collect();
        let file = dir.join("file.txt");
        std::fs::write(&file, "from a file, with \"quotes\"\n").unwrap();
        let flags = self
            .flags
            .iter()
            .map(|(kind, e)| SetFlag::new(*kind, e.replace("@FILE", file.to_str().unwrap())))
            .collect();
        Input { files, flags }
    }

    /// `None` when Helm and kfctl-rs agree as the case expects, else what differs.
    fn check(&self, index: usize) -> Option<String> {
        let input = self.input(&scratch(&format!("case-{index}")));
        let ours = render(self.profile, &input).map(|r| objects(&r));
        let out = helm(self.profile, &input);
        let theirs = if out.status.success() {
            Ok(parse_helm(&out))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        };
        match (self.expect, ours, theirs) {
            (Expect::Equal, Ok(ours), Ok(theirs)) => {
                compare::unordered_report(&ours, &theirs, 5).map(|r| format!("helm differs from kfctl-rs:\n{r}"))
            }
            (Expect::Refused, Err(_), Err(_)) => None,
            (_, ours, theirs) => Some(common::outcomes(&self.expect, ours, theirs)),
        }
    }
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn every_value_set_of_the_matrix_renders_equal_in_helm_and_kfctl_rs_or_both_refuse() {
    let cases = matrix();
    assert!(cases.len() >= 25, "the matrix has {} cases", cases.len());
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        match case.check(i) {
            None => println!("case {:2} ({}, {:?}): {}: ok", i + 1, case.profile, case.expect, case.name),
            Some(problem) => failures.push(format!("{} ({}): {problem}", case.name, case.profile)),
        }
    }
    let refused = cases.iter().filter(|c| c.expect == Expect::Refused).count();
    println!(
        "value-set matrix: {} cases ({} equal, {refused} refused by both), {} failed",
        cases.len(),
        cases.len() - refused,
        failures.len()
    );
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}
