//! `kfctl-rs chart export`: a profile with values, as an umbrella Helm chart with one subchart
//! per component (and, with `--argocd`, Argo CD Applications over them).

use super::catalog_error;
use crate::cli::{ChartCommand, ChartExportArgs, RenderFlags};
use crate::error::usage;
use crate::exit::Outcome;
use kfctl::catalog::RenderRequest;
use kfctl::catalog::render::Prepared;
use kfctl::chart::{
    self, ArgoCdOptions, ExportOptions,
    write::{Written, write_folder},
};
use std::path::Path;

pub(crate) fn run(cmd: ChartCommand) -> anyhow::Result<Outcome> {
    let args = match cmd {
        ChartCommand::Export(args) => args,
        ChartCommand::Package(args) => return super::chart_package::run(args),
    };
    crate::commands::print_notice();
    let argocd = args.argocd.then(|| argocd_options(&args));
    let export = exported(&args.render, &args.name, args.app_version.as_deref(), export_args(&args), argocd)?;
    let files = &export.files;
    let written = write_folder(&args.out, files.iter().map(|(p, t)| (p.as_str(), t.as_str())), args.force)?;
    let templates =
        files.keys().filter(|p| p.starts_with("charts/") && p.ends_with(".yaml") && p.contains("/templates/")).count();
    let said = match written {
        Written::Written => format!("wrote {}", args.out.display()),
        Written::Unchanged => {
            format!("{} is up to date (the earlier export holds these files; nothing written)", args.out.display())
        }
    };
    eprintln!(
        "{said}: chart {} {} (appVersion {}), {} subcharts, {templates} object templates{}",
        args.name,
        kfctl::chart::scaffold::chart_version(&export.app_version),
        export.app_version,
        export.subcharts,
        if args.argocd { ", Argo CD Applications in argocd/" } else { "" }
    );
    Ok(Outcome::Done)
}

/// An export made in memory: its files, the appVersion they carry, and how many subcharts.
pub(crate) struct Exported {
    pub files: std::collections::BTreeMap<String, String>,
    pub app_version: String,
    pub subcharts: usize,
}

/// Open the source, prepare the render and export it as chart files (`chart export` and
/// `chart package` share this; only what they do with the files differs).
pub(crate) fn exported(
    render: &RenderFlags,
    name: &str,
    app_version_flag: Option<&str>,
    export_args: Vec<String>,
    argocd: Option<ArgoCdOptions>,
) -> anyhow::Result<Exported> {
    let flags = &render.source;
    let spec = super::source::source_spec(
        flags.source.as_deref(),
        &flags.version,
        flags.remote_mirror.as_deref(),
        flags.offline,
    )?;
    let opened = kfctl::source::open_source(&spec).map_err(super::source::with_hint)?;
    // The release the tree is, else the release whose catalog data `--version` chose for it
    // (a tree of that release whose digest is not pinned, as 26.03.1's).
    let chosen = match &opened.layout {
        kfctl::catalog::render::Layout::Release(version) => Some(version.as_str()),
        _ => None,
    };
    let release = opened.release.as_ref().map(|r| r.version).or(chosen);
    let app_version = resolve_app_version(app_version_flag, release, &opened.manifests_dir)?;
    let request = RenderRequest {
        profile: render.profile.clone(),
        components: render.components.clone(),
        value_files: render.values.files.clone(),
        sets: render.values.set_flags(),
        manifests_dir: opened.manifests_dir.clone(),
        remote: opened.resolver.clone(),
        layout: opened.layout.clone(),
    };
    let prepared = kfctl::catalog::peers::prepare_with_variants(&request).map_err(catalog_error)?;
    warn_about_credentials(&prepared);
    let options = ExportOptions { chart_name: name.to_string(), app_version: app_version.clone(), export_args, argocd };
    // Both error types decide their exit codes (usage, or security for a folder that is no export).
    let files = chart::export(&prepared, &options)?;
    let subcharts = prepared.profile.components.len();
    // The process ends soon: leave the render's object graph to the OS instead of freeing it.
    std::mem::forget(prepared);
    Ok(Exported { files, app_version, subcharts })
}

/// The charts' appVersion: `--app-version`, else the release the source resolved to (or that
/// `--version` named for it), else a `--source` folder named like a release (`.../v1.11.0`).
fn resolve_app_version(explicit: Option<&str>, release: Option<&str>, manifests_dir: &Path) -> anyhow::Result<String> {
    if let Some(v) = explicit {
        return Ok(v.to_string());
    }
    if let Some(v) = release {
        return Ok(v.to_string());
    }
    let folder = manifests_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let looks_like_release = folder.strip_prefix('v').is_some_and(|rest| semver::Version::parse(rest).is_ok());
    if looks_like_release {
        return Ok(folder);
    }
    Err(usage(format!(
        "--app-version: cannot tell which kubeflow/manifests release {} is; pass --app-version (e.g. --app-version v1.11.0)",
        manifests_dir.display()
    )))
}

fn argocd_options(args: &ChartExportArgs) -> ArgoCdOptions {
    let default_path =
        args.out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "kubeflow".into());
    ArgoCdOptions {
        repo_url: args.argocd_repo_url.clone(),
        path: args.argocd_path.clone().unwrap_or(default_path),
        revision: args.argocd_revision.clone(),
        namespace: args.argocd_namespace.clone(),
        project: args.argocd_project.clone(),
    }
}

/// The flags that shaped the render, for the README's "how this was made" line (value file
/// names only, never their contents; a `--set` of a credential without its value).
fn export_args(args: &ChartExportArgs) -> Vec<String> {
    let mut out = render_args(&args.render);
    if args.argocd {
        out.push(format!(
            "--argocd --argocd-repo-url {} --argocd-revision {}",
            args.argocd_repo_url, args.argocd_revision
        ));
    }
    out
}

/// The render flags as the README's "how this was made" line shows them.
pub(crate) fn render_args(render: &RenderFlags) -> Vec<String> {
    let mut out = Vec::new();
    if !render.components.is_empty() {
        out.push(format!("--components {}", render.components.join(",")));
    }
    out.extend(
        render
            .values
            .files
            .iter()
            .map(|f| format!("-f {}", f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())),
    );
    out.extend(render.values.set_flags().iter().map(chart::credentials::shown_set_flag));
    out
}

/// Credentials end up in the charts' values.yaml when given; unset ones keep upstream's
/// well-known defaults. Say which (never the values).
fn warn_about_credentials(prepared: &Prepared) {
    let mut seen = Vec::new();
    for cred in kfctl::catalog::params::CREDENTIALS {
        if seen.contains(&cred.value) || !prepared.objects.iter().any(|o| cred.matches(&o.obj)) {
            continue;
        }
        seen.push(cred.value);
        let set = kfctl::catalog::values::get(&prepared.effective, &cred.value_path())
            .and_then(|v| v.as_str())
            .is_some_and(|s| !s.is_empty());
        if set {
            eprintln!(
                "warning: `{}` is set, so the exported values.yaml files hold it: keep the chart folder private",
                cred.value
            );
        } else {
            eprintln!(
                "warning: `{}` is unset, so the charts keep upstream's well-known default ({}); set it at install time or export with -f secrets.yaml from `kfctl-rs secrets generate`",
                cred.value, cred.what
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_version_is_explicit_then_the_release_then_a_release_named_folder() {
        let folder = Path::new("/snapshots/v1.11.0");
        assert_eq!(resolve_app_version(Some("v9.9.9"), Some("v1.10.0"), folder).unwrap(), "v9.9.9");
        assert_eq!(resolve_app_version(None, Some("v1.10.0"), folder).unwrap(), "v1.10.0");
        assert_eq!(resolve_app_version(None, None, folder).unwrap(), "v1.11.0");
        let err = resolve_app_version(None, None, Path::new("/src/manifests")).unwrap_err();
        assert!(err.downcast_ref::<crate::error::CliError>().is_some(), "a usage error: {err}");
        assert!(err.to_string().contains("--app-version"), "{err}");
    }
}
