//! `kfctl-rs profile list|show|kustomization`; `show` and `kustomization` take `--version`
//! (the release whose catalog data, and so whose upstream folders, they use).

use super::catalog_error;
use crate::cli::ProfileCommand;
use crate::exit::Outcome;
use kfctl::catalog::{Catalog, profile};

pub(crate) fn run(cmd: ProfileCommand) -> anyhow::Result<Outcome> {
    let version = match &cmd {
        ProfileCommand::List => "latest",
        ProfileCommand::Show { version, .. } | ProfileCommand::Kustomization { version, .. } => version,
    };
    let release = kfctl::source::releases::select(Some(version)).map_err(super::source::with_hint)?;
    let catalog = Catalog::for_release(release.version).map_err(catalog_error)?;
    match cmd {
        ProfileCommand::List => {
            for name in profile::builtin_names() {
                let p = profile::resolve(name, &catalog).map_err(catalog_error)?;
                println!("{name:<14} {}", p.description);
            }
        }
        ProfileCommand::Show { name, .. } => {
            let p = profile::resolve(&name, &catalog).map_err(catalog_error)?;
            println!("profile: {}\ndescription: {}\nkubernetes: {}\ncomponents:", p.name, p.description, p.kubernetes);
            for (component, variant) in &p.components {
                let def = catalog.get(component).map_err(catalog_error)?;
                println!("  {component:<26} variant {variant:<24} {}", def.description);
            }
            let off: Vec<&str> = catalog
                .components
                .keys()
                .filter(|c| !p.components.iter().any(|(n, _)| n == *c))
                .map(String::as_str)
                .collect();
            println!("not enabled (--set <name>.enabled=true): {}", off.join(", "));
        }
        ProfileCommand::Kustomization { name, .. } => {
            let p = profile::resolve(&name, &catalog).map_err(catalog_error)?;
            p.check_dependencies(&catalog, &[], false).map_err(catalog_error)?;
            let k = p.kustomization(&catalog).map_err(catalog_error)?;
            print!("{}", profile::kustomization_yaml(&k));
        }
    }
    Ok(Outcome::Done)
}
