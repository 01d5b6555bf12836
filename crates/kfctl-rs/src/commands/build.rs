//! `kfctl-rs build DIR`: the equivalent of `kustomize build DIR`, with its flags
//! `--load-restrictor` and `-o/--output` (a file, or an existing folder to get one file per
//! object, named as kustomize names them). Files are written atomically: to a temporary file
//! beside the target, then renamed into place.

use crate::cli::{BuildArgs, LoadRestrictor};
use crate::exit::Outcome;
use anyhow::Context;
use kfctl::source::{MirrorResolver, NoRemote, RemoteResolver};
use kfctl_kustomize::{BuildOptions, LoadRestriction, ResMap};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

pub(crate) fn run(args: BuildArgs) -> anyhow::Result<Outcome> {
    crate::commands::print_notice();
    let remote: Arc<dyn RemoteResolver> = match &args.remote_mirror {
        Some(root) => Arc::new(MirrorResolver { root: root.clone() }),
        None if args.offline => Arc::new(NoRemote),
        None => kfctl::source::default_resolver(false)?,
    };
    let restriction = match args.load_restrictor {
        LoadRestrictor::RootOnly => LoadRestriction::RootOnly,
        LoadRestrictor::None => LoadRestriction::None,
    };
    let options = BuildOptions { remote, restriction, strict_patches: false };
    let resources = kfctl_kustomize::build(&args.dir, &options)?;
    match &args.output {
        Some(folder) if folder.is_dir() => {
            // Scope decides the file names: with the build's own schema, as kustomize names them.
            kfctl_kustomize::with_schema_of(&args.dir, &options, || write_individual_files(folder, &resources))??
        }
        Some(file) => write_atomically(file, kfctl_yaml::to_yaml_stream(&kfctl_kustomize::objects(&resources)))?,
        None => print_stream(resources)?,
    }
    Ok(Outcome::Done)
}

fn print_stream(resources: ResMap) -> anyhow::Result<()> {
    let objects = kfctl_kustomize::into_objects(resources);
    let mut out = std::io::BufWriter::with_capacity(1 << 18, std::io::stdout().lock());
    kfctl_yaml::write_yaml_stream(&objects, &mut out)?;
    out.flush()?;
    // The process ends next: leave the object graph to the OS instead of freeing it piece by piece.
    std::mem::forget(objects);
    Ok(())
}

/// kustomize's `-o FOLDER`: `<group>_<version>_<kind>_<name>.yaml` (lowercase, empty parts
/// left out), namespaced objects prefixed with their namespace (`default` when unset) when
/// the build has more than one namespace.
fn write_individual_files(folder: &Path, resources: &ResMap) -> anyhow::Result<()> {
    let mut by_namespace: BTreeMap<String, Vec<(String, &serde_json::Value)>> = BTreeMap::new();
    let mut cluster = Vec::new();
    for resource in resources.iter() {
        let gvk = resource.gvk();
        let parts = [gvk.group.as_str(), gvk.version.as_str(), gvk.kind.as_str()];
        let gvk_text = parts.iter().filter(|p| !p.is_empty()).copied().collect::<Vec<_>>().join("_");
        let name = resource.obj.pointer("/metadata/name").and_then(|v| v.as_str()).unwrap_or_default();
        let file = format!("{gvk_text}_{name}.yaml").to_lowercase();
        if kfctl_kustomize::is_cluster_scoped(&gvk) {
            cluster.push((file, &resource.obj));
        } else {
            let ns = resource.obj.pointer("/metadata/namespace").and_then(|v| v.as_str()).filter(|n| !n.is_empty());
            by_namespace.entry(ns.unwrap_or("default").to_string()).or_default().push((file, &resource.obj));
        }
    }
    let prefix = by_namespace.len() > 1;
    for (namespace, files) in &by_namespace {
        for (file, obj) in files {
            let name = if prefix { format!("{}_{file}", namespace.to_lowercase()) } else { file.clone() };
            write_atomically(&folder.join(name), kfctl_yaml::to_yaml(obj))?;
        }
    }
    for (file, obj) in cluster {
        write_atomically(&folder.join(file), kfctl_yaml::to_yaml(obj))?;
    }
    Ok(())
}

/// Write `text` to `path` through a temporary file in the same folder, renamed into place.
fn write_atomically(path: &Path, text: String) -> anyhow::Result<()> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(folder)
        .with_context(|| format!("{}: cannot create a temporary file in its folder", path.display()))?;
    temp.write_all(text.as_bytes()).with_context(|| format!("{}: cannot write", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        temp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    temp.persist(path).with_context(|| format!("{}: cannot rename the written file into place", path.display()))?;
    Ok(())
}
