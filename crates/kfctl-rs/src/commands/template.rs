//! `kfctl-rs template`: render a profile with values.

use super::{catalog_error, render_request};
use crate::cli::TemplateArgs;
use crate::exit::{Code, coded};
use kfctl::catalog::render::{Rendered, RenderedObject};
use std::io::Write;
use std::path::Path;

pub fn run(args: TemplateArgs) -> anyhow::Result<Code> {
    crate::commands::print_notice();
    let request = render_request(&args.render)?;
    let rendered = kfctl::catalog::render(&request).map_err(catalog_error)?;
    for warning in &rendered.profile.warnings {
        eprintln!("warning: {warning}");
    }
    warn_default_credentials(&rendered);
    match &args.output_dir {
        None => {
            let objects: Vec<_> = rendered.objects.into_iter().map(|o| o.obj).collect();
            let mut out = std::io::BufWriter::with_capacity(1 << 18, std::io::stdout().lock());
            kfctl_yaml::write_yaml_stream(&objects, &mut out)?;
            out.flush()?;
            // The process ends next: leave the object graph to the OS instead of freeing it.
            std::mem::forget(objects);
        }
        Some(dir) => write_per_component(dir, &rendered.objects)?,
    }
    Ok(Code::Success)
}

/// Say which upstream default credentials the output still carries (never their values).
pub fn warn_default_credentials(rendered: &Rendered) {
    for cred in &rendered.default_credentials {
        eprintln!(
            "warning: `{}` is unset, so the output keeps upstream's well-known default ({}); run `kfctl-rs secrets generate -o secrets.yaml` and pass -f secrets.yaml",
            cred.value, cred.what
        );
    }
}

/// One `<component>.yaml` per component, written into a fresh staging folder
/// ([`kfctl::staging`]) and put in place only when complete; on failure it is removed, so
/// nothing half-written (a file truncated by a full disk) is left. A new `dir` is the staging
/// folder renamed; an existing empty one (a mount point, or a symlink to an empty folder) is
/// filled from a staging folder inside it.
fn write_per_component(dir: &Path, objects: &[RenderedObject]) -> anyhow::Result<()> {
    let fill = kfctl::staging::is_empty_dir(dir);
    if !fill && std::fs::symlink_metadata(dir).is_ok() {
        return Err(coded(
            Code::Usage,
            anyhow::anyhow!(
                "--output-dir {}: exists and is not an empty folder; choose a new folder or remove it",
                dir.display()
            ),
        ));
    }
    let parent = if fill { dir } else { kfctl::staging::parent_of(dir).unwrap_or(Path::new(".")) };
    let staging = kfctl::staging::Staging::dir(parent, "output")
        .map_err(|e| anyhow::anyhow!("{}: cannot create a staging folder: {}", e.path.display(), e.message))?;
    let mut components: Vec<&str> = objects.iter().map(|o| o.component.as_str()).collect();
    components.sort();
    components.dedup();
    for component in components {
        let docs: Vec<_> = objects.iter().filter(|o| o.component == component).map(|o| o.obj.clone()).collect();
        let file = staging.path().join(format!("{component}.yaml"));
        std::fs::write(&file, kfctl_yaml::to_yaml_stream(&docs))
            .map_err(|e| anyhow::anyhow!("--output-dir {}: cannot write {}: {e}", dir.display(), file.display()))?;
    }
    let placed = if fill { staging.spill_into(dir) } else { staging.place(dir) };
    placed.map_err(|e| {
        anyhow::anyhow!("--output-dir {}: cannot move the rendered files into place: {e}", dir.display())
    })?;
    Ok(())
}
