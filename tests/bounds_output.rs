//! Outputs bounded relative to their input (issue 38 item 2): a long value copied onto every
//! object stops a render (`--set-file` into `global.commonLabels`) and a `build` (a
//! kustomization's `commonLabels`) at their bounds, naming the likely cause, in bounded memory.
//! Every input's bound is in `tests/bounds.rs`.

use crate::bounds::{measured, offline};

/// A 7 MB label value copied onto every object of the render would make gigabytes: the render
/// stops at its bound ([`kfctl::input::max_render_bytes`]), a usage error naming the likely cause.
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn a_long_value_copied_onto_every_object_stops_the_render_at_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let value = dir.path().join("label.txt");
    std::fs::write(&value, "a".repeat(7_000_000)).unwrap();
    let set = format!("global.commonLabels.big={}", value.display());
    let mut args: Vec<String> = ["template", "--profile", "minimal", "--set-file", &set].map(String::from).to_vec();
    args.extend(offline());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = measured(&args, &[], None);
    assert_eq!(run.out.status.code(), Some(2), "{}", run.text);
    assert!(
        run.text.contains("the render is larger than its limit")
            && run.text.contains("global.commonLabels, global.commonAnnotations) is the likely cause"),
        "{}",
        run.text
    );
    assert!(run.out.stdout.is_empty(), "nothing rendered");
    assert!(run.peak_kb < 600 * 1024, "peak {} KB", run.peak_kb);
}

/// `build` of a kustomization whose 7 MB label goes onto every one of 66 objects stops at the
/// engine's bound (64 MiB + 8 x the objects before), naming the likely cause, in bounded memory.
#[test]
fn a_long_label_in_a_kustomization_stops_the_build_at_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut kustomization = format!("commonLabels:\n  big: {}\nresources:\n", "a".repeat(7_000_000));
    for i in 0..66 {
        let name = format!("cm{i}.yaml");
        std::fs::write(dir.path().join(&name), format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n"))
            .unwrap();
        kustomization.push_str(&format!("- {name}\n"));
    }
    std::fs::write(dir.path().join("kustomization.yaml"), kustomization).unwrap();
    let run = measured(&["build", &dir.path().display().to_string()], &[], None);
    assert_eq!(run.out.status.code(), Some(1), "{}", run.text);
    assert!(
        run.text.contains("labels or annotations transformer: its labels or annotations (6835 KB) copied onto every object make the build larger than 64 MiB")
            && run.text.contains("a long value is the likely cause"),
        "{}",
        run.text
    );
    assert!(run.out.stdout.is_empty(), "nothing built");
    assert!(run.peak_kb < 400 * 1024, "peak {} KB", run.peak_kb);
}
