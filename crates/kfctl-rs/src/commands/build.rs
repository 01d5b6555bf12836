//! `kfctl-rs build DIR`: the equivalent of `kustomize build DIR`.

use crate::cli::BuildArgs;
use crate::exit::Code;
use kfctl::source::{MirrorResolver, NoRemote, RemoteResolver};
use kfctl_kustomize::BuildOptions;
use std::io::Write;
use std::sync::Arc;

pub fn run(args: BuildArgs) -> anyhow::Result<Code> {
    crate::commands::print_notice();
    let remote: Arc<dyn RemoteResolver> = match &args.remote_mirror {
        Some(root) => Arc::new(MirrorResolver { root: root.clone() }),
        None if args.offline => Arc::new(NoRemote),
        None => kfctl::source::default_resolver(false)?,
    };
    let options = BuildOptions { remote, ..BuildOptions::default() };
    let resources = kfctl_kustomize::build(&args.dir, &options)?;
    let objects = kfctl_kustomize::into_objects(resources);
    let text = kfctl_yaml::to_yaml_stream(&objects);
    // The process ends next: leave the object graph to the OS instead of freeing it piece by piece.
    std::mem::forget(objects);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(Code::Success)
}
