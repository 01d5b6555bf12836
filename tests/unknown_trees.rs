//! Issue 23 item 3: trees the catalog has never seen. Small trees built here, each a
//! kubeflow/manifests-shaped folder whose layout no release has: a component moved to a new
//! path is found by what its folder builds (its `marks`), and a component whose folder is gone
//! is an error naming it with flags that, pasted, make the render succeed.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn deployment(name: &str, namespace: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n      containers:\n      - name: main\n        image: example.org/{name}:v1\n"
    )
}

fn crd(plural: &str, group: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\nspec:\n  group: {group}\n  names:\n    kind: Thing\n    plural: {plural}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
    )
}

/// A tree whose cert-manager and Katib live in folders no release has, plus a Namespace
/// component in its usual place and an entry nothing claims.
fn moved_tree(root: &Path) -> PathBuf {
    let tree = root.join("manifests");
    write(&tree, "platform/tls/kustomization.yaml", "resources:\n- deploy.yaml\n- crd.yaml\n");
    write(&tree, "platform/tls/deploy.yaml", &deployment("cert-manager-webhook", "cert-manager"));
    write(&tree, "platform/tls/crd.yaml", &crd("certificates", "cert-manager.io"));
    write(&tree, "apps/tuning/kustomization.yaml", "resources:\n- controller.yaml\n- ui.yaml\n");
    write(&tree, "apps/tuning/controller.yaml", &deployment("katib-controller", "kubeflow"));
    write(&tree, "apps/tuning/ui.yaml", &deployment("katib-ui", "kubeflow"));
    write(&tree, "common/kubeflow-namespace/base/kustomization.yaml", "resources:\n- ns.yaml\n");
    write(
        &tree,
        "common/kubeflow-namespace/base/ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubeflow\n",
    );
    write(&tree, "team/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(&tree, "team/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team\n  namespace: kubeflow\n");
    write(
        &tree,
        "example/kustomization.yaml",
        "resources:\n- ../platform/tls\n- ../common/kubeflow-namespace/base\n- ../apps/tuning\n- ../team\n",
    );
    tree
}

fn profile(root: &Path) -> PathBuf {
    let path = root.join("tuning.yaml");
    std::fs::write(&path, "name: tuning\ncomponents:\n  cert-manager: {}\n  kubeflow-namespace: {}\n  istio: {}\n  katib: {}\nvalues:\n  istio:\n    provided: true\n")
        .unwrap();
    path
}

fn kfctl(root: &Path, args: &[&str]) -> Output {
    Command::new(common::binary())
        .args(args)
        .arg("--offline")
        .env("KFCTL_CACHE_DIR", root.join("cache"))
        .env_remove("KFCTL_REMOTE_MIRROR")
        .output()
        .expect("kfctl-rs runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_moved_component_is_found_by_what_its_folder_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = moved_tree(tmp.path());
    let out_dir = tmp.path().join("out");
    let profile = profile(tmp.path());
    let args = ["template", "--source", tree.to_str().unwrap(), "--profile", profile.to_str().unwrap()];
    let out = kfctl(tmp.path(), &[&args[..], &["--output-dir", out_dir.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let katib = std::fs::read_to_string(out_dir.join("katib.yaml")).unwrap();
    assert!(katib.contains("name: katib-controller") && katib.contains("name: katib-ui"), "{katib}");
    let certs = std::fs::read_to_string(out_dir.join("cert-manager.yaml")).unwrap();
    assert!(certs.contains("name: certificates.cert-manager.io"), "{certs}");

    let inspected = kfctl(tmp.path(), &["source", "inspect", "--source", tree.to_str().unwrap()]);
    let report = text(&inspected.stdout);
    assert!(inspected.status.success(), "{}", text(&inspected.stderr));
    assert!(report.contains("../apps/tuning  ->  katib (default, by content)"), "{report}");
    assert!(report.contains("../platform/tls  ->  cert-manager (default, by content)"), "{report}");
    assert!(report.contains("../team  ->  unclaimed"), "{report}");
    assert!(report.contains("  katib: ../apps/tuning (example/ entry)"), "{report}");
}

#[test]
fn a_removed_component_names_itself_and_the_flags_that_leave_it_out_work_when_pasted() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = moved_tree(tmp.path());
    std::fs::remove_dir_all(tree.join("platform/tls")).unwrap();
    let example = tree.join("example/kustomization.yaml");
    let kept = std::fs::read_to_string(&example).unwrap().replace("- ../platform/tls\n", "");
    std::fs::write(&example, kept).unwrap();
    let profile = profile(tmp.path());
    let args = ["template", "--source", tree.to_str().unwrap(), "--profile", profile.to_str().unwrap()];
    let refused = kfctl(tmp.path(), &args);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("component `cert-manager`: this tree has none of its folders"), "{stderr}");
    assert!(refused.stdout.is_empty());
    // The hint names cert-manager and katib, which needs it: pasted, the render succeeds.
    let flags = stderr.split("leave it out (").nth(1).and_then(|s| s.split(')').next()).expect("the hint's flags");
    assert_eq!(flags, "--set cert-manager.enabled=false --set katib.enabled=false");
    let pasted: Vec<&str> = flags.split(' ').collect();
    let out = kfctl(tmp.path(), &[&args[..], &pasted].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("name: kubeflow"));
    // The other way out, a cert-manager the cluster runs, renders katib without the folder.
    let own = stderr.split("use the cluster's own (").nth(1).and_then(|s| s.split(')').next()).expect("the hint");
    assert_eq!(own, "--set cert-manager.provided=true");
    let out = kfctl(tmp.path(), &[&args[..], &own.split(' ').collect::<Vec<_>>()].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("name: katib-controller"));
}

/// The catalog's `marks` hold on every release: each `example/` entry the catalog names by
/// path is identified by content as the same component (never as another one).
#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn example_entries_of_every_release_are_identified_by_content() {
    use kfctl::catalog::attribute::{How, attribute_example};
    use kfctl::catalog::identify::identify_folder;
    let remote: std::sync::Arc<dyn kfctl::source::RemoteResolver> =
        std::sync::Arc::new(kfctl::source::MirrorResolver { root: common::mirror_dir() });
    let mut wrong = Vec::new();
    for release in common::releases() {
        let catalog = kfctl::catalog::Catalog::for_release(release).unwrap();
        let tree = common::manifests_dir_of(release);
        let example = attribute_example(&catalog, &tree, remote.clone()).unwrap();
        for entry in example.resources.iter().filter(|a| a.how == Some(How::Path)) {
            let by_path = entry.component.as_ref().map(|(c, _)| c.clone());
            let by_content = identify_folder(&catalog, &tree.join("example").join(&entry.entry), remote.clone());
            if by_content.map(|(c, _)| c) != by_path {
                wrong.push(format!("{release}: {} is {by_path:?} by path", entry.entry));
            }
        }
    }
    assert!(wrong.is_empty(), "entries content does not identify as their path says:\n{}", wrong.join("\n"));
}

/// v1.10.2's snapshot laid out as the v1.10.0 and v1.10.1 tags are (`apps/` for
/// `applications/`, `common/istio-1-24/` for `common/istio/`), `example/` pointing at the new
/// places: what a `source pull` of those pinned commits gives.
fn v1_10_0_layout(root: &Path) -> PathBuf {
    let tree = root.join("manifests-v1.10.0");
    let status = Command::new("cp").arg("-r").arg(common::manifests_dir_of("v1.10.2")).arg(&tree).status().unwrap();
    assert!(status.success());
    std::fs::rename(tree.join("applications"), tree.join("apps")).unwrap();
    std::fs::rename(tree.join("common/istio"), tree.join("common/istio-1-24")).unwrap();
    for entry in walk(&tree) {
        if entry.file_name().is_some_and(|n| n == "kustomization.yaml") {
            let text = std::fs::read_to_string(&entry).unwrap();
            let moved = text.replace("/applications/", "/apps/").replace("common/istio/", "common/istio-1-24/");
            if moved != text {
                std::fs::write(&entry, moved).unwrap();
            }
        }
    }
    tree
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

#[test]
#[cfg_attr(
    any(kfctl_no_upstream, kfctl_no_oracles),
    ignore = "needs the upstream snapshot and the oracles (real kustomize, Helm) in ../shared: set KFCTL_TEST_UPSTREAM and KFCTL_TEST_TOOLS"
)]
fn a_pinned_release_whose_folders_moved_renders_through_its_example_and_content() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = v1_10_0_layout(tmp.path());
    let mirror = common::mirror_dir();
    let base = ["template", "--source", tree.to_str().unwrap(), "--remote-mirror", mirror.to_str().unwrap()];
    let out = kfctl(tmp.path(), &[&base[..], &["--version", "v1.10.0", "--profile", "multi-tenant"]].concat());
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let real = Command::new(common::tool("kustomize-build")).arg(tree.join("example")).output().unwrap();
    assert!(real.status.success(), "real kustomize: {}", text(&real.stderr));
    assert!(out.stdout == real.stdout, "multi-tenant differs from real kustomize of the tree's example/");

    // kind is multi-tenant with another oauth2-proxy overlay: every moved folder is found.
    let kind = kfctl(tmp.path(), &[&base[..], &["--version", "v1.10.0", "--profile", "kind"]].concat());
    assert!(kind.status.success(), "{}", text(&kind.stderr));
    let rendered = text(&kind.stdout);
    for name in ["name: katib-controller", "name: ml-pipeline", "name: istiod", "name: training-operator"] {
        assert!(rendered.contains(name), "kind on the v1.10.0 layout lacks `{name}`");
    }
}
