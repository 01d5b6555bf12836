//! Every input and every verb bounded (issue 26 items 4 and 5): user files past the size limit
//! are refused at once, naming the file and the limit; `diff` and `status` against a server
//! that accepts connections and never answers end within their `--timeout`, saying what they
//! waited for. The cluster here is no cluster: a bare TCP listener in this test, or the
//! in-repo test API server (`kfctl-testapi`, a test double).

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn text_of(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `template --profile minimal` with these extra arguments, offline on the snapshot, timed.
fn template_with(extra: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let out = common::kfctl_offline(&[&["template", "--profile", "minimal"], extra].concat());
    (out, started.elapsed())
}

/// A sparse file one byte past the 8 MiB limit (nothing written).
fn just_over_the_limit(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().set_len(kfctl::input::MAX_INPUT_BYTES + 1).unwrap();
    path.display().to_string()
}

#[test]
fn values_from_dev_zero_are_refused_at_once_naming_the_file_and_the_limit() {
    let (out, elapsed) = template_with(&["-f", "/dev/zero"]);
    let text = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("/dev/zero: values file is larger than the 8 MiB limit"), "{text}");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[test]
fn values_set_file_and_profile_files_past_the_limit_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let big = just_over_the_limit(dir.path(), "big-values.yaml");
    let (out, elapsed) = template_with(&["-f", &big]);
    let text = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains(&format!("{big}: values file is larger than the 8 MiB limit")), "{text}");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");

    let (out, _) = template_with(&["--set-file", &format!("dex.connectors={big}")]);
    let text = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains(&format!("{big}: --set-file file is larger than the 8 MiB limit")), "{text}");

    let profile = just_over_the_limit(dir.path(), "big-profile.yaml");
    let started = Instant::now();
    let out = common::kfctl_offline(&["template", "--profile", &profile]);
    let text = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains(&format!("{profile}: profile file is larger than the 8 MiB limit")), "{text}");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}
