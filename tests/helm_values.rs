//! Helm's value semantics, checked against real Helm (`../shared/tools/helm-template`): a tiny
//! chart prints `.Values` as JSON, and for each case of a matrix of `-f` files and `--set`,
//! `--set-string`, `--set-json`, `--set-file`, `--set-literal` flags, the values kfctl-rs
//! computes (its YAML reader in Helm's dialect, `strvals`, layering, coalescing onto the
//! defaults) must equal Helm's — or both must refuse.

use crate::common;

use kfctl::catalog::strvals::{self, SetFlag, SetKind};
use kfctl::catalog::values;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULTS: &str = "a: 1\nb:\n  c: x\n  d: [1, 2]\nlist: [1]\nkeep: k\nnested:\n  deep:\n    x: 1\n    y: 2\n";
const TEMPLATE: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v\ndata:\n  v: {{ toJson .Values | quote }}\n";

struct Case {
    name: &'static str,
    files: Vec<&'static str>,
    flags: Vec<(SetKind, &'static str)>,
}

fn case(name: &'static str, files: &[&'static str], flags: &[(SetKind, &'static str)]) -> Case {
    Case { name, files: files.to_vec(), flags: flags.to_vec() }
}

fn matrix() -> Vec<Case> {
    use SetKind::*;
    vec![
        case("typing", &[], &[(Set, "x=True,y=NULL,z=0,w=012,f=1.5,n=-3,e=,t=FALSE")]),
        case("lists and the empty list", &[], &[(Set, "l={a,1,true},m={}")]),
        case("indexes accumulate across flags", &[], &[(Set, "list[2]=z"), (Set, "list[0]=q")]),
        case("nested lists and maps in lists", &[], &[(Set, "q[0].b=1,q[0].c=2,q[1][1]=x")]),
        case("escapes", &[], &[(Set, r"k.b\.c=v\,w,e=x\=y")]),
        case("set-string", &[], &[(String, "s=true,t={1,2},u=007")]),
        case("set-json", &[], &[(Json, r#"j={"k":[1,2.5],"s":"x"}"#), (Json, "arr=[1,2]")]),
        case("set-json null deletes a default", &[], &[(Json, "b=null")]),
        case("set-literal", &[], &[(Literal, r"lit=a,b=c\d")]),
        case("set-literal nested key", &[], &[(Literal, "b.c=1,2")]),
        case("set-file", &[], &[(File, "f=@FILE")]),
        case("yaml 1.1 booleans in -f", &["y1: yes\ny2: on\ny3: Off\ny4: n\nq: \"yes\"\nplain: maybe\n"], &[]),
        case("nulls in -f delete defaults", &["keep: null\nb:\n  c: null\nnested:\n  deep:\n"], &[]),
        case("-f then --set on the same key", &["a: 5\n"], &[(Set, "a=6")]),
        case("two files, the later wins, maps merge", &["b:\n  c: one\n  e: 1\n", "b:\n  c: two\n"], &[]),
        case("--set indexes into a file's list", &["list: [a, b, c]\n"], &[(Set, "list[1]=x")]),
        case("--set null deletes a default", &[], &[(Set, "keep=null")]),
        case("--set nested null", &[], &[(Set, "b.c=null")]),
        case("--set an empty list over a default list", &[], &[(Set, "b.d={}")]),
        case("--set an index replaces a default list", &[], &[(Set, "b.d[1]=9")]),
        case("set-string wins over set", &[], &[(String, "a=7"), (Set, "a=8")]),
        case("set wins over set-json", &[], &[(Set, "a=8"), (Json, "a=9")]),
        case("numbers in -f", &["r: 2.0\nbig: 12345678901234567890\nneg: -4\nsci: 1e3\n"], &[]),
        case("empty -f file", &["", "# only a comment\n"], &[]),
        case("trailing comma and empty value", &[], &[(Set, "x=,y=1,")]),
        case("several assignments mixing lists and maps", &[], &[(Set, "p={x},b.c=1,nested.deep.z=3")]),
        case("a file's null, then --set on it", &["b: null\n"], &[(Set, "b.c=2")]),
        case("booleans in any case", &[], &[(Set, "t1=tRuE,t2=False,n1=Null")]),
        case("a whole map replaced by a scalar", &["nested: flat\n"], &[]),
        case("--set replaces a file's map by a list", &["m:\n  k: v\ns: str\n"], &[(Set, "m[0]=1,s.x=1")]),
        case("each kind its own tree, later kinds replace", &[], &[(Json, "q=[1,2]"), (Set, "q[2]=3")]),
        case("set-string after set replaces a map", &[], &[(String, "r=a"), (Set, "r.x=1")]),
        case("set-literal after set", &[], &[(Literal, "z=1"), (Set, "z.x=2")]),
    ]
}

/// Cases Helm refuses; kfctl-rs must refuse them too.
fn refused() -> Vec<Case> {
    use SetKind::*;
    vec![
        case("a key without a value", &[], &[(Set, "novalue")]),
        case("a key ending in a comma", &[], &[(Set, "a,b=1")]),
        case("a map key into a number", &[], &[(Set, "z=1"), (Set, "z.b=2")]),
        case("a null, then a key into it", &[], &[(Set, "n=null"), (Set, "n.x=1")]),
        case("a list item into a string", &[], &[(Set, "l[0]=s"), (Set, "l[0][1]=x")]),
        case("a negative index", &[], &[(Set, "l[-1]=1")]),
        case("an unterminated list", &[], &[(Set, "l={a,b")]),
        case("bad JSON", &[], &[(Json, "j={bad")]),
        case("an empty key after a dot", &[], &[(Set, "a.=1")]),
    ]
}

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("chart/templates")).unwrap();
        std::fs::write(dir.path().join("chart/Chart.yaml"), "apiVersion: v2\nname: values-probe\nversion: 0.1.0\n")
            .unwrap();
        std::fs::write(dir.path().join("chart/values.yaml"), DEFAULTS).unwrap();
        std::fs::write(dir.path().join("chart/templates/values.yaml"), TEMPLATE).unwrap();
        std::fs::write(dir.path().join("file.txt"), "line one\nline \"two\"\n").unwrap();
        Scratch { dir }
    }

    fn chart(&self) -> PathBuf {
        self.dir.path().join("chart")
    }

    fn write_files(&self, case: &Case) -> Vec<PathBuf> {
        let files: Vec<PathBuf> =
            (0..case.files.len()).map(|i| self.dir.path().join(format!("values-{i}.yaml"))).collect();
        for (path, text) in files.iter().zip(&case.files) {
            std::fs::write(path, text).unwrap();
        }
        files
    }

    fn flags(&self, case: &Case) -> Vec<SetFlag> {
        let file = self.dir.path().join("file.txt");
        case.flags.iter().map(|(kind, e)| SetFlag::new(*kind, e.replace("@FILE", file.to_str().unwrap()))).collect()
    }
}

/// Real Helm's `.Values`, or its error.
fn helm_values(chart: &Path, files: &[PathBuf], flags: &[SetFlag]) -> Result<Value, String> {
    let mut command = Command::new(common::tool("helm-template"));
    command.arg(chart);
    for file in files {
        command.arg("-f").arg(file);
    }
    for flag in flags {
        command.arg(flag.kind.flag()).arg(&flag.expression);
    }
    let out = command.output().expect("helm-template runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let docs = kfctl_yaml::parse_stream(&String::from_utf8(out.stdout).unwrap(), "helm output").unwrap();
    let text = docs[0]["data"]["v"].as_str().expect("the probe's ConfigMap").to_string();
    Ok(serde_json::from_str(&text).unwrap())
}

/// The values kfctl-rs computes from the same input.
fn kfctl_values(files: &[PathBuf], flags: &[SetFlag]) -> Result<Value, String> {
    let mut user = serde_json::json!({});
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let doc = kfctl_yaml::parse_helm_values(&text, &file.display().to_string()).map_err(|e| e.to_string())?;
        values::merge_layer(&mut user, &doc);
    }
    values::merge_layer(&mut user, &strvals::parse_all(flags).map_err(|e| e.to_string())?);
    let mut effective = kfctl_yaml::parse_helm_values(DEFAULTS, "defaults").unwrap();
    values::merge(&mut effective, &user);
    Ok(effective)
}

/// Numbers as Go's float64, which is what Helm's values hold after a JSON round trip.
fn as_floats(value: &Value) -> Value {
    match value {
        Value::Number(n) => serde_json::Number::from_f64(n.as_f64().unwrap()).map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(as_floats).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), as_floats(v))).collect()),
        other => other.clone(),
    }
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn values_equal_real_helms_for_every_case() {
    let scratch = Scratch::new();
    let cases = matrix();
    assert!(cases.len() >= 25, "the matrix has {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let (files, flags) = (scratch.write_files(case), scratch.flags(case));
        let helm = helm_values(&scratch.chart(), &files, &flags)
            .unwrap_or_else(|e| panic!("{}: real Helm refused: {e}", case.name));
        match kfctl_values(&files, &flags) {
            Ok(ours) if as_floats(&ours) == as_floats(&helm) => {}
            Ok(ours) => failures.push(format!("{}:\n  helm:    {helm}\n  kfctl-rs: {ours}", case.name)),
            Err(e) => failures.push(format!("{}: kfctl-rs refused what Helm accepts: {e}", case.name)),
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn what_helm_refuses_kfctl_rs_refuses() {
    let scratch = Scratch::new();
    for case in refused() {
        let (files, flags) = (scratch.write_files(&case), scratch.flags(&case));
        let helm = helm_values(&scratch.chart(), &files, &flags);
        assert!(helm.is_err(), "{}: real Helm accepted it: {helm:?}", case.name);
        let ours = kfctl_values(&files, &flags);
        assert!(ours.is_err(), "{}: kfctl-rs accepted it: {ours:?}", case.name);
        let message = ours.unwrap_err();
        assert!(message.contains(flags[flags.len() - 1].kind.flag()), "{}: {message}", case.name);
    }
}
