//! The ways kfctl-rs reaches a user besides a release archive (issue 42): as a kubectl plugin
//! (the binary installed as `kubectl-kubeflow_install`, as krew and the Homebrew formula link
//! it, names itself `kubectl kubeflow-install`, and real kubectl runs it), and as a crate
//! (`cargo package` ships the data the library compiles in).

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The built binary linked into a fresh folder as `name`; the link's path.
fn linked_as(name: &str) -> PathBuf {
    let dir = common::scratch("plugin", name);
    let link = dir.join(name);
    #[cfg(unix)]
    std::os::unix::fs::symlink(common::binary(), &link).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(common::binary(), &link).unwrap();
    link
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn invoked_as_the_kubectl_plugin_usage_and_help_name_kubectl_kubeflow_install() {
    let plugin = linked_as("kubectl-kubeflow_install");
    let help = stdout(&Command::new(&plugin).arg("--help").output().unwrap());
    assert!(help.contains("Usage: kubectl kubeflow-install [OPTIONS] <COMMAND>"), "{help}");
    let sub = stdout(&Command::new(&plugin).args(["template", "--help"]).output().unwrap());
    assert!(sub.contains("Usage: kubectl kubeflow-install template "), "{sub}");
    let bad = Command::new(&plugin).arg("templat").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Usage: kubectl kubeflow-install [OPTIONS] <COMMAND>"));
    // and it works as itself: the same commands
    let listed = stdout(&Command::new(&plugin).args(["profile", "list"]).output().unwrap());
    assert!(listed.contains("multi-tenant"), "{listed}");

    // under its own name (or any other) nothing changes
    let own = stdout(&Command::new(common::binary()).arg("--help").output().unwrap());
    assert!(own.contains("Usage: kfctl-rs [OPTIONS] <COMMAND>"), "{own}");
    let other = stdout(&Command::new(linked_as("kubectl-something_else")).arg("--help").output().unwrap());
    assert!(!other.contains("kubectl kubeflow-install"), "{other}");
}

#[test]
#[cfg_attr(kfctl_no_kubectl, ignore = "needs real kubectl 1.33 (kubectl.1.33 on PATH or beside gcloud)")]
fn real_kubectl_runs_it_as_kubectl_kubeflow_install() {
    let plugin = linked_as("kubectl-kubeflow_install");
    let dir = plugin.parent().unwrap();
    let path = std::env::join_paths(
        std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let kubectl = common::kubectl();
    let listed = Command::new(&kubectl).args(["plugin", "list", "--name-only"]).env("PATH", &path).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("kubectl-kubeflow_install"), "{listed:?}");
    let out = Command::new(&kubectl).args(["kubeflow-install", "profile", "list"]).env("PATH", &path).output().unwrap();
    assert!(stdout(&out).contains("multi-tenant"));
    let help = Command::new(&kubectl).args(["kubeflow-install", "--help"]).env("PATH", &path).output().unwrap();
    assert!(stdout(&help).contains("Usage: kubectl kubeflow-install [OPTIONS] <COMMAND>"));
}

/// The data folders the library compiles in, each file as `cargo package` must ship it.
fn data_files() -> Vec<String> {
    let root = common::repo_root();
    let mut files = Vec::new();
    for folder in ["charts", "profiles", "values", "templates"] {
        let mut stack = vec![root.join(folder)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    files.push(format!("data/{}", path.strip_prefix(&root).unwrap().to_string_lossy()));
                }
            }
        }
    }
    files.sort();
    files
}

#[test]
fn cargo_package_ships_the_compiled_in_data() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let scratch = common::scratch("plugin", "cargo-package-target");
    let out = Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline", "-p", "kfctl", "-p", "kfctl-rs"])
        .current_dir(common::repo_root())
        .env("CARGO_TARGET_DIR", &scratch)
        .output()
        .unwrap();
    let listed = stdout(&out);
    let expected = data_files();
    assert!(expected.len() > 50 && expected.contains(&"data/charts/releases.yaml".to_string()), "{expected:?}");
    for file in &expected {
        assert!(listed.lines().any(|l| l == file), "cargo package leaves out {file}");
    }
    assert!(listed.lines().any(|l| l == "build.rs"));
}
