//! `kfctl-rs chart package` (issue 42), checked with real Helm (the oracle's SDK, which loads a
//! `.tgz` as `helm install` does): two runs give the same bytes; Helm renders the archive equal
//! to `kfctl-rs template` of the profile, with default values, with a values file given to Helm,
//! and with values given at package time; the archive holds what `helm package` of the export
//! holds (the subcharts inside); `--sign` writes the provenance Helm writes (the same signed
//! text as Helm's own `sign`) and Helm's verifier accepts it; a protected key signs with
//! `--passphrase-file` and, without it, fails with no prompt and no archive.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    common::scratch("package", name)
}

/// `chart package --profile kind` (plus `extra`) into `out`; the archive's path.
fn package(out: &Path, extra: &[&str]) -> PathBuf {
    let mut args = vec!["chart", "package", "--profile", "kind", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let result = common::kfctl_offline(&args);
    assert!(result.status.success(), "chart package: {}", String::from_utf8_lossy(&result.stderr));
    let printed = String::from_utf8(result.stdout).unwrap();
    let path = PathBuf::from(printed.trim());
    assert!(path.is_file(), "chart package printed {printed:?}");
    path
}

/// `kfctl-rs template --profile kind` (plus `extra`), as objects.
fn template(extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["template", "--profile", "kind"];
    args.extend_from_slice(extra);
    let out = common::kfctl_offline(&args);
    assert!(out.status.success(), "template: {}", String::from_utf8_lossy(&out.stderr));
    kfctl_yaml::parse_stream(&String::from_utf8(out.stdout).unwrap(), "template").unwrap()
}

fn helm_template(chart: &Path, extra: &[&str]) -> Output {
    Command::new(common::tool("helm-template"))
        .arg(chart)
        .args(["--name", "kubeflow"])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("helm-template runs")
}

/// Run Python with the oracle's Helm SDK (`helm_python`): `script` with `args`.
fn helm_python(script: &str, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let oracle_env = common::oracle_env();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("source '{}'; exec \"$ORACLE_PY\" -c \"$0\" \"$@\"", oracle_env.display()))
        .arg(script)
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn entries(archive: &Path) -> Vec<String> {
    let file = std::fs::File::open(archive).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    tar.entries().unwrap().map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned()).collect()
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn two_packages_are_identical_and_real_helm_renders_the_archive_as_template() {
    let first = package(&scratch("first"), &[]);
    let second = package(&scratch("second"), &[]);
    assert_eq!(first.file_name(), second.file_name());
    assert!(std::fs::read(&first).unwrap() == std::fs::read(&second).unwrap(), "two runs gave different bytes");
    let name = first.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("kubeflow-") && name.ends_with(".tgz"), "{name}");

    let listed = entries(&first);
    assert_eq!(&listed[..3], ["kubeflow/Chart.yaml", "kubeflow/values.yaml", "kubeflow/values.schema.json"]);
    assert!(listed.iter().all(|p| p.starts_with("kubeflow/")), "an entry outside kubeflow/");
    assert!(listed.contains(&"kubeflow/charts/cert-manager/Chart.yaml".to_string()), "no subchart inside");
    assert!(!listed.iter().any(|p| p.ends_with("Chart.lock")), "a Chart.lock in the umbrella");

    // `helm package` of the same export holds the same files with the same contents (Helm
    // writes Chart.yaml from its parsed metadata, so those differ in form; its subcharts come
    // in Go map order, so the comparison is by name)
    let export = scratch("export").join("kubeflow");
    let exported = common::kfctl_offline(&["chart", "export", "--profile", "kind", "--out", export.to_str().unwrap()]);
    assert!(exported.status.success(), "export: {}", String::from_utf8_lossy(&exported.stderr));
    let helm_dir = scratch("helm-package");
    let script = r#"
import sys, tarfile, json, helm_python as helm
made = helm.package(sys.argv[1], destination=sys.argv[2])
def files(path):
    with tarfile.open(path) as t:
        return {m.name: t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
ours, helms = files(sys.argv[3]), files(made)
print(json.dumps({"only_ours": sorted(set(ours) - set(helms)), "only_helms": sorted(set(helms) - set(ours)),
                  "differ": sorted(n for n in ours if n in helms and ours[n] != helms[n] and not n.endswith("/Chart.yaml"))}))
"#;
    let out =
        helm_python(script, &[export.to_str().unwrap(), helm_dir.to_str().unwrap(), first.to_str().unwrap()], &[]);
    assert!(out.status.success(), "helm package: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report,
        serde_json::json!({"only_ours": [], "only_helms": [], "differ": []}),
        "not helm package's files"
    );

    // real Helm loads the archive itself (helm_python's Chart.load, helm's loader.Load)
    common::assert_helm_equals_native(&template(&[]), &helm_template(&first, &[]), "helm template of the archive");

    // values given to Helm, and the same values given to kfctl-rs template
    let values = scratch("values").join("values.yaml");
    std::fs::write(&values, "global:\n  imageRegistry: registry.example.com\nkatib:\n  enabled: false\n").unwrap();
    let values = values.to_str().unwrap();
    common::assert_helm_equals_native(
        &template(&["-f", values]),
        &helm_template(&first, &["-f", values]),
        "helm template -f values of the archive",
    );

    // values given at package time become the archive's defaults
    let with_values = package(&scratch("with-values"), &["-f", values]);
    assert_ne!(std::fs::read(&with_values).unwrap(), std::fs::read(&first).unwrap());
    common::assert_helm_equals_native(
        &template(&["-f", values]),
        &helm_template(&with_values, &[]),
        "helm template of the archive packaged with values",
    );
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
#[cfg_attr(kfctl_no_gpg, ignore = "needs GnuPG (gpg on PATH) to sign")]
fn signed_package_has_helms_provenance_and_helm_verifies_it() {
    let home = scratch("gnupg");
    #[cfg(unix)]
    std::fs::set_permissions(&home, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let gpg = |args: &[&str]| {
        let out = Command::new("gpg").args(["--batch", "--homedir"]).arg(&home).args(args).output().unwrap();
        assert!(out.status.success(), "gpg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    gpg(&["--passphrase", "", "--quick-gen-key", "Chart Signer <signer@example.com>", "rsa2048", "sign", "never"]);
    let public = home.join("pubring.export");
    let secret = home.join("secring.export");
    std::fs::write(&public, gpg(&["--export"])).unwrap();
    std::fs::write(&secret, gpg(&["--export-secret-keys"])).unwrap();

    let out = scratch("signed");
    let mut args = vec!["chart", "package", "--profile", "kind", "--out", out.to_str().unwrap()];
    args.extend(["--sign", "--key", "signer@example.com"]);
    let result = Command::new(common::binary())
        .args(&args)
        .args(["--version", common::release(), "--source"])
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir())
        .arg("--offline")
        .env("GNUPGHOME", &home)
        .output()
        .unwrap();
    assert!(result.status.success(), "chart package --sign: {}", String::from_utf8_lossy(&result.stderr));
    let archive = PathBuf::from(String::from_utf8(result.stdout).unwrap().trim());
    let prov = PathBuf::from(format!("{}.prov", archive.display()));
    let ours = std::fs::read_to_string(&prov).unwrap();

    // Helm's verifier accepts it, and Helm's own signature of the same archive signs the same text
    let script = r#"
import sys, json, shutil, os, helm_python as helm
archive, public, secret, scratch = sys.argv[1:5]
verified = helm.verify(archive, public)
copy = os.path.join(scratch, os.path.basename(archive))
shutil.copy(archive, copy)
prov = helm.sign(copy, key="signer@example.com", keyring=secret)
print(json.dumps({"verified": verified, "helms": open(prov).read()}))
"#;
    let helm_dir = scratch("helm-signed");
    let out = helm_python(
        script,
        &[archive.to_str().unwrap(), public.to_str().unwrap(), secret.to_str().unwrap(), helm_dir.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success(), "helm verify: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let name = archive.file_name().unwrap().to_str().unwrap();
    assert_eq!(report["verified"]["file_name"], name);
    assert_eq!(report["verified"]["signed_by"][0], "Chart Signer <signer@example.com>");
    let signed_text = |prov: &str| prov.split("-----BEGIN PGP SIGNATURE-----").next().unwrap().to_string();
    assert_eq!(signed_text(&ours), signed_text(report["helms"].as_str().unwrap()), "the signed text is not Helm's");

    // a changed archive no longer verifies against that provenance
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes.push(0);
    std::fs::write(&archive, bytes).unwrap();
    let out = helm_python(
        "import sys, helm_python as helm\nhelm.verify(sys.argv[1], sys.argv[2])",
        &[archive.to_str().unwrap(), public.to_str().unwrap()],
        &[],
    );
    assert!(!out.status.success(), "helm verified a changed archive");
    // the agent gpg started for this keyring ends with the test
    let _ = Command::new("gpgconf").arg("--homedir").arg(&home).args(["--kill", "gpg-agent"]).output();
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn sign_needs_a_key_and_a_missing_key_is_an_error_with_no_archive() {
    let out = scratch("no-key");
    let result =
        common::kfctl_offline(&["chart", "package", "--profile", "kind", "--out", out.to_str().unwrap(), "--sign"]);
    assert_eq!(result.status.code(), Some(2), "{}", String::from_utf8_lossy(&result.stderr));
    assert!(String::from_utf8_lossy(&result.stderr).contains("--key"));

    let home = scratch("empty-gnupg");
    let result = Command::new(common::binary())
        .args(["chart", "package", "--profile", "kind", "--out", out.to_str().unwrap()])
        .args(["--sign", "--key", "nobody@example.com", "--version", common::release(), "--source"])
        .arg(common::manifests_dir())
        .arg("--remote-mirror")
        .arg(common::mirror_dir())
        .arg("--offline")
        .env("GNUPGHOME", &home)
        .output()
        .unwrap();
    assert!(!result.status.success(), "signed with a key nobody has");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("--sign"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(&out).map(|d| d.filter_map(Result::ok).collect()).unwrap_or_default();
    assert!(left.is_empty(), "files left behind: {left:?}");
    let _ = Command::new("gpgconf").arg("--homedir").arg(&home).args(["--kill", "gpg-agent"]).output();
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_gpg, ignore = "needs GnuPG (gpg on PATH) to sign")]
fn a_protected_key_signs_with_its_passphrase_file_and_never_prompts() {
    let home = scratch("protected-gnupg");
    #[cfg(unix)]
    std::fs::set_permissions(&home, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let made = Command::new("gpg")
        .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", "s3cret", "--homedir"])
        .arg(&home)
        .args(["--quick-gen-key", "Protected <protected@example.com>", "rsa2048", "sign", "never"])
        .output()
        .unwrap();
    assert!(made.status.success(), "gpg: {}", String::from_utf8_lossy(&made.stderr));
    let passphrase = home.join("passphrase");
    std::fs::write(&passphrase, "s3cret\n").unwrap();
    let run = |out: &Path, extra: &[&str]| {
        Command::new(common::binary())
            .args(["chart", "package", "--profile", "minimal", "--out", out.to_str().unwrap()])
            .args(["--sign", "--key", "protected@example.com"])
            .args(extra)
            .args(["--version", common::release(), "--source"])
            .arg(common::manifests_dir())
            .arg("--remote-mirror")
            .arg(common::mirror_dir())
            .arg("--offline")
            .env("GNUPGHOME", &home)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let without = scratch("protected-without");
    let refused = run(&without, &[]);
    assert!(!refused.status.success(), "signed with a protected key and no passphrase");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--passphrase-file"));
    assert_eq!(std::fs::read_dir(&without).unwrap().count(), 0, "an archive was left without its provenance");
    let with = scratch("protected-with");
    let signed = run(&with, &["--passphrase-file", passphrase.to_str().unwrap()]);
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
    let archive = String::from_utf8(signed.stdout).unwrap();
    let prov = std::fs::read_to_string(format!("{}.prov", archive.trim())).unwrap();
    assert!(prov.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"), "{prov}");
    let _ = Command::new("gpgconf").arg("--homedir").arg(&home).args(["--kill", "gpg-agent"]).output();
}
