//! The YAML layer against real kustomize output.
//!
//! 1. Every golden build of the Kubeflow snapshot (`shared/kubeflow/golden/**/*.yaml`, found at
//!    run time) is parsed and written back; the result must equal the file byte for byte, and
//!    the written text must read back to the same data.
//! 2. Small fixtures (`tests/fixtures/yaml/<case>/input.yaml`) were built with real kustomize
//!    v5.6 (`shared/tools/kustomize-build`) into `expected.yaml`; reading the input and writing
//!    it must give kustomize's bytes. They pin quoting, folding, block scalars, number spelling
//!    and key order on purpose-made tricky values.

use std::path::{Path, PathBuf};

use kfctl_rs::yaml::{parse_stream, to_yaml_stream};

fn shared_dir() -> PathBuf {
    std::env::var_os("KFCTL_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

fn yaml_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, found);
        } else if path.extension().is_some_and(|x| x == "yaml") {
            found.push(path);
        }
    }
}

/// The first line where two texts differ, for a readable failure.
fn first_difference(expected: &str, actual: &str) -> String {
    let mut expected_lines = expected.split_inclusive('\n');
    let mut actual_lines = actual.split_inclusive('\n');
    for number in 1.. {
        match (expected_lines.next(), actual_lines.next()) {
            (None, None) => break,
            (e, a) if e == a => continue,
            (e, a) => return format!("line {number}:\n  expected {e:?}\n  actual   {a:?}"),
        }
    }
    "identical".to_string()
}

#[test]
fn every_golden_round_trips_byte_for_byte() {
    let golden = shared_dir().join("kubeflow/golden/v1.11.0");
    let mut files = Vec::new();
    yaml_files(&golden, &mut files);
    assert!(
        files.len() >= 200,
        "expected the 220 goldens under {}",
        golden.display()
    );
    let mut failures = Vec::new();
    let mut documents = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("golden is UTF-8");
        let name = file
            .strip_prefix(&golden)
            .unwrap_or(file)
            .display()
            .to_string();
        let docs = match parse_stream(&text, &name) {
            Ok(docs) => docs,
            Err(e) => {
                failures.push(format!("{name}: does not parse: {e}"));
                continue;
            }
        };
        documents += docs.len();
        let written = to_yaml_stream(&docs);
        if written != text {
            failures.push(format!("{name}: {}", first_difference(&text, &written)));
            continue;
        }
        let reread = parse_stream(&written, &name).expect("written YAML parses");
        if reread != docs {
            failures.push(format!("{name}: written text reads back to different data"));
        }
    }
    println!(
        "goldens byte-exact: {} of {} files ({documents} documents)",
        files.len() - failures.len(),
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} goldens differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn kustomize_fixtures_read_and_write_like_kustomize() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/yaml");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .expect("fixture folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("expected.yaml").is_file())
        .collect();
    cases.sort();
    assert!(
        !cases.is_empty(),
        "no fixtures under {}",
        fixtures.display()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let input = std::fs::read_to_string(case.join("input.yaml")).expect("input");
        let expected = std::fs::read_to_string(case.join("expected.yaml")).expect("expected");
        match parse_stream(&input, &name) {
            Ok(docs) => {
                let written = to_yaml_stream(&docs);
                if written != expected {
                    failures.push(format!("{name}: {}", first_difference(&expected, &written)));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    println!(
        "kustomize fixtures: {} of {} match",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "fixtures differ:\n{}",
        failures.join("\n")
    );
}
