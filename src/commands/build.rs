//! `kfctl-rs build DIR`: the equivalent of `kustomize build DIR`.

use crate::cli::BuildArgs;
use crate::exit::{Code, coded};
use crate::kustomize::{self, BuildOptions, KustomizeError};
use crate::source::{MirrorResolver, NoRemote, RemoteResolver};
use std::io::Write;
use std::sync::Arc;

pub fn run(args: BuildArgs) -> anyhow::Result<Code> {
    crate::notice::print();
    let remote: Arc<dyn RemoteResolver> = match &args.remote_mirror {
        Some(root) => Arc::new(MirrorResolver { root: root.clone() }),
        None if args.offline => Arc::new(NoRemote),
        None => crate::source::default_resolver(false)?,
    };
    let options = BuildOptions { remote, ..BuildOptions::default() };
    let resources = kustomize::build(&args.dir, &options).map_err(classify)?;
    let objects = kustomize::into_objects(resources);
    let text = crate::yaml::to_yaml_stream(&objects);
    // The process ends next: leave the object graph to the OS instead of freeing it piece by piece.
    std::mem::forget(objects);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(Code::Success)
}

/// Security refusals and source problems get their own exit codes.
fn classify(err: KustomizeError) -> anyhow::Error {
    let code = match &err {
        KustomizeError::OutsideRoot { .. } => Code::Security,
        KustomizeError::Remote(crate::source::RemoteError::Refused { .. }) => Code::Security,
        KustomizeError::Remote(_) => Code::Source,
        _ => Code::Failure,
    };
    coded(code, err)
}
