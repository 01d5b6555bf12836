//! `kfctl-rs template`: render a profile with values.

use super::{catalog_error, render_request};
use crate::cli::TemplateArgs;
use crate::error::usage;
use crate::exit::Outcome;
use kfctl::catalog::credentials::Credential;
use kfctl::catalog::render::RenderedObject;
use std::io::Write;
use std::path::Path;

pub(crate) fn run(args: TemplateArgs) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let request = render_request(&args.render)?;
    if let Some(dir) = &args.as_kustomization {
        write_as_kustomization(dir, &request)?;
        eprintln!("wrote {}: kustomization.yaml (the values as patches); build it from there", dir.display());
        return Ok(Outcome::Done);
    }
    match &args.output_dir {
        None => {
            let stream = kfctl::catalog::deferred::render_stream(&request).map_err(catalog_error)?;
            warn(&stream.profile.warnings, &stream.default_credentials);
            let mut out = std::io::BufWriter::with_capacity(1 << 18, std::io::stdout().lock());
            stream.write_yaml(&mut out)?;
            out.flush()?;
            // The process ends next: leave the object graph to the OS instead of freeing it.
            std::mem::forget(stream);
        }
        Some(dir) => {
            let rendered = kfctl::catalog::render(&request).map_err(catalog_error)?;
            warn(&rendered.profile.warnings, &rendered.default_credentials);
            write_per_component(dir, &rendered.objects)?;
        }
    }
    Ok(Outcome::Done)
}

/// The profile's warnings, then [`warn_default_credentials`].
fn warn(warnings: &[String], default_credentials: &[&Credential]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    warn_default_credentials(default_credentials);
}

/// Say which upstream default credentials the output still carries (never their values).
fn warn_default_credentials(default_credentials: &[&Credential]) {
    for cred in default_credentials {
        eprintln!(
            "warning: `{}` is unset, so the output keeps upstream's well-known default ({}); run `kfctl-rs secrets generate --out secrets.yaml` and pass -f secrets.yaml",
            cred.value, cred.what
        );
    }
}

/// One `<component>.yaml` per component (see [`write_folder`]).
fn write_per_component(dir: &Path, objects: &[RenderedObject]) -> anyhow::Result<()> {
    let mut components: Vec<&str> = objects.iter().map(|o| o.component.as_str()).collect();
    components.sort();
    components.dedup();
    let files = components.into_iter().map(|component| {
        let docs: Vec<_> = objects.iter().filter(|o| o.component == component).map(|o| o.obj.clone()).collect();
        (format!("{component}.yaml"), kfctl_yaml::to_yaml_stream(&docs))
    });
    write_folder("--output-dir", dir, files.collect())
}

/// `--as-kustomization DIR`: the profile's kustomization with this render's values as patches
/// ([`kfctl::catalog::as_kustomize`]).
fn write_as_kustomization(dir: &Path, request: &kfctl::catalog::RenderRequest) -> anyhow::Result<()> {
    let prepared = kfctl::catalog::render::prepare(request).map_err(catalog_error)?;
    let base = prepared.profile.kustomization(&prepared.catalog).map_err(catalog_error)?;
    let defaults: Vec<_> = prepared.objects.iter().map(|o| o.obj.clone()).collect();
    let rendered = kfctl::catalog::render(request).map_err(catalog_error)?;
    let valued: Vec<_> = rendered.objects.into_iter().map(|o| o.obj).collect();
    let files = kfctl::catalog::as_kustomize::folder(&base, &defaults, &valued).map_err(catalog_error)?;
    write_folder("--as-kustomization", dir, files)
}

/// `files` written into a fresh staging folder ([`kfctl::staging`]) and put in place only when
/// complete; on failure it is removed, so nothing half-written (a file truncated by a full
/// disk) is left. A new `dir` is the staging folder renamed; an existing empty one (a mount
/// point, or a symlink to an empty folder) is filled from a staging folder inside it.
fn write_folder(flag: &str, dir: &Path, files: Vec<(String, String)>) -> anyhow::Result<()> {
    let fill = kfctl::staging::is_empty_dir(dir);
    if !fill && std::fs::symlink_metadata(dir).is_ok() {
        return Err(usage(format!(
            "{flag} {}: exists and is not an empty folder; choose a new folder or remove it",
            dir.display()
        )));
    }
    let parent = if fill { dir } else { kfctl::staging::parent_of(dir).unwrap_or(Path::new(".")) };
    let staging = kfctl::staging::Staging::dir(parent, "output")
        .map_err(|e| anyhow::anyhow!("{}: cannot create a staging folder: {}", e.path.display(), e.message))?;
    for (name, text) in files {
        let file = staging.path().join(name);
        std::fs::write(&file, text)
            .map_err(|e| anyhow::anyhow!("{flag} {}: cannot write {}: {e}", dir.display(), file.display()))?;
    }
    let placed = if fill { staging.spill_into(dir) } else { staging.place(dir) };
    placed.map_err(|e| anyhow::anyhow!("{flag} {}: cannot move the files into place: {e}", dir.display()))?;
    Ok(())
}
