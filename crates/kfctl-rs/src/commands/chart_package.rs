//! `kfctl-rs chart package`: `chart export`'s charts as one Helm chart archive
//! (`<name>-<version>.tgz`, the subcharts inside, no `Chart.lock`), byte for byte reproducible,
//! ready for `helm install NAME ./kubeflow-….tgz` or `helm push … oci://…`; with `--sign`, its
//! provenance (`.prov`) as `helm package --sign` writes it.

use super::chart::{exported, render_args};
use crate::cli::ChartPackageArgs;
use crate::exit::Outcome;
use kfctl::chart::package::{package, write_file};
use kfctl::chart::provenance::{self, SignOptions};

pub(crate) fn run(args: ChartPackageArgs) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let export = exported(&args.render, &args.name, args.app_version.as_deref(), render_args(&args.render), None)?;
    let pkg = package(&export.files)?;
    let prov = match (&args.sign, &args.key) {
        (true, Some(key)) => {
            let options =
                SignOptions { key: key.clone(), passphrase_file: args.passphrase_file.clone(), gpg: "gpg".into() };
            Some(provenance::sign(&export.files["Chart.yaml"], &pkg, &options)?)
        }
        _ => None,
    };
    let path = write_file(&args.out, &pkg.file_name, &pkg.bytes)?;
    if let Some(text) = prov {
        let prov_path = provenance::prov_path(&path);
        let prov_name = prov_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        write_file(&args.out, &prov_name, text.as_bytes())?;
        eprintln!("wrote {}", prov_path.display());
    }
    eprintln!(
        "wrote {}: chart {} {} (appVersion {}), {} subcharts inside, {}",
        path.display(),
        pkg.name,
        pkg.version,
        export.app_version,
        export.subcharts,
        pkg.digest()
    );
    println!("{}", path.display());
    Ok(Outcome::Done)
}
