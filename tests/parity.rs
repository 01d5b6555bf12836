//! Differential test of the native engine against real kustomize: for every folder of every
//! release snapshot (`common::releases`: every release of `charts/releases.yaml` the snapshot
//! holds), `kustomize::build` with the remote mirror must equal the golden that real
//! kustomize produced — the same documents in the same order, equal as data — and, as the
//! stronger target, byte for byte. Folders real kustomize refuses must fail here too.

use crate::common;

use kfctl::source::MirrorResolver;
use kfctl_kustomize::BuildOptions;
use rayon::prelude::*;
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug)]
enum Outcome {
    Bytes,
    DataOnly(String),
    Mismatch(String),
    ExpectedFailureOk,
    Unexpected(String),
}

fn check(version: &str, entry: &Value, options: &BuildOptions) -> (String, Outcome) {
    let path = entry["path"].as_str().expect("index entries have a path").to_string();
    let dir = common::manifests_dir_of(version).join(&path);
    let built = kfctl_kustomize::build(&dir, options);
    let outcome = match (entry["result"].as_str(), built) {
        (Some("ok"), Ok(resources)) => {
            let golden_path = common::golden_dir_of(version).join(format!("{path}.yaml"));
            let golden_text = std::fs::read_to_string(&golden_path).expect("golden readable");
            let golden =
                kfctl_yaml::parse_stream(&golden_text, &golden_path.display().to_string()).expect("golden parses");
            let actual = kfctl_kustomize::objects(&resources);
            match kfctl_yaml::compare::ordered_report(&golden, &actual, 8) {
                Some(report) => Outcome::Mismatch(report),
                None => {
                    let text = kfctl_yaml::to_yaml_stream(&actual);
                    if text == golden_text {
                        Outcome::Bytes
                    } else {
                        Outcome::DataOnly(first_line_diff(&golden_text, &text))
                    }
                }
            }
        }
        (Some("ok"), Err(e)) => Outcome::Unexpected(format!("build failed: {e}")),
        (_, Err(_)) => Outcome::ExpectedFailureOk,
        (_, Ok(_)) => Outcome::Unexpected("real kustomize refuses this folder, but the build succeeded".into()),
    };
    (path, outcome)
}

fn first_line_diff(expected: &str, actual: &str) -> String {
    for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            return format!("line {}: expected {e:?}, got {a:?}", i + 1);
        }
    }
    format!("lengths differ: {} vs {} lines", expected.lines().count(), actual.lines().count())
}

/// Every release the suites cover (`common::releases`, from `charts/releases.yaml`), one
/// after the other; each release's folders are built in parallel.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn every_folder_of_every_release_matches_real_kustomize() {
    assert!(common::releases().len() >= 4, "the snapshot covers {:?}", common::releases());
    for release in common::releases() {
        parity(release);
    }
}

/// Build every folder of one release's index and compare with its golden.
fn parity(version: &str) {
    let index_path = common::golden_dir_of(version).join("index.json");
    let index: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&index_path).expect("index.json readable")).expect("index.json");
    let options =
        BuildOptions { remote: Arc::new(MirrorResolver { root: common::mirror_dir() }), ..BuildOptions::default() };
    let results: Vec<(String, Outcome)> = index.par_iter().map(|e| check(version, e, &options)).collect();

    let (mut bytes, mut data, mut refused) = (0, 0, 0);
    let mut failures = Vec::new();
    for (path, outcome) in &results {
        match outcome {
            Outcome::Bytes => bytes += 1,
            Outcome::DataOnly(why) => {
                data += 1;
                eprintln!("data-equal, bytes differ: {path}: {why}");
            }
            Outcome::ExpectedFailureOk => refused += 1,
            Outcome::Mismatch(report) => failures.push(format!("{path}:\n{report}")),
            Outcome::Unexpected(why) => failures.push(format!("{path}: {why}")),
        }
    }
    let ok_total = index.iter().filter(|e| e["result"] == "ok").count();
    println!(
        "parity {version}: {} of {ok_total} folders equal as data ({bytes} byte for byte); {refused} of {} refused folders fail as real kustomize does",
        bytes + data,
        index.len() - ok_total
    );
    for f in failures.iter().take(15) {
        eprintln!("MISMATCH {f}\n");
    }
    assert!(
        failures.is_empty(),
        "{version}: {} of {} folders differ from real kustomize (first ones above)",
        failures.len(),
        index.len()
    );
    assert_eq!(data, 0, "{version}: all folders equal as data, but {data} differ byte for byte");
    assert!(ok_total >= 200, "{version}: only {ok_total} folders in {}", index_path.display());
}

/// Small fixtures written for the engine, each with the output real kustomize v5.6 gave for
/// it (`expected.yaml`, recorded with `../shared/tools/kustomize-build`): byte for byte.
#[test]
fn engine_fixtures_match_real_kustomize_byte_for_byte() {
    let root = common::repo_root().join("tests/fixtures/engine");
    let mut dirs: Vec<_> =
        std::fs::read_dir(&root).expect("fixtures").map(|e| e.expect("entry").path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    assert!(dirs.len() >= 2);
    for dir in dirs {
        let expected = std::fs::read_to_string(dir.join("expected.yaml")).expect("expected.yaml");
        let built =
            kfctl_kustomize::build(&dir, &BuildOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let actual = kfctl_yaml::to_yaml_stream(&kfctl_kustomize::objects(&built));
        assert_eq!(actual, expected, "{}: {}", dir.display(), first_line_diff(&expected, &actual));
    }
}

/// Small fixtures real kustomize v5.6 refuses to build (its error is recorded beside each, in
/// `expected-error.txt`): the engine must refuse them too.
#[test]
fn engine_refused_fixtures_are_refused_as_real_kustomize_refuses_them() {
    let root = common::repo_root().join("tests/fixtures/engine-refused");
    let mut dirs: Vec<_> =
        std::fs::read_dir(&root).expect("fixtures").map(|e| e.expect("entry").path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    assert!(dirs.len() >= 7);
    for dir in dirs {
        let recorded = std::fs::read_to_string(dir.join("expected-error.txt")).expect("expected-error.txt");
        assert!(recorded.starts_with("error: "), "{}: kustomize's refusal is recorded", dir.display());
        if let Ok(built) = kfctl_kustomize::build(&dir, &BuildOptions::default()) {
            panic!(
                "{}: real kustomize refuses ({}), but {} objects were built",
                dir.display(),
                recorded.trim(),
                built.len()
            );
        }
    }
}

/// `--load-restrictor`: a kustomization that names a file outside its folder builds with
/// `LoadRestrictionsNone` exactly as real kustomize does, and is a security refusal by default.
#[test]
fn load_restrictor_none_reads_outside_the_root_as_real_kustomize_does() {
    let root = common::repo_root().join("tests/fixtures/load-restrictor");
    let expected = std::fs::read_to_string(root.join("expected.yaml")).expect("expected.yaml");
    let none = BuildOptions { restriction: kfctl_kustomize::LoadRestriction::None, ..BuildOptions::default() };
    let built = kfctl_kustomize::build(&root.join("app"), &none).expect("builds without the restriction");
    assert_eq!(kfctl_yaml::to_yaml_stream(&kfctl_kustomize::objects(&built)), expected);
    match kfctl_kustomize::build(&root.join("app"), &BuildOptions::default()) {
        Err(kfctl_kustomize::KustomizeError::OutsideRoot { .. }) => {}
        other => panic!("root-only must refuse with OutsideRoot, got {:?}", other.map(|r| r.len())),
    }
}
