//! `kfctl-rs kind-config`: the Kind cluster configuration the kind profile expects.
//!
//! `kind create cluster --name kubeflow --config <(kfctl-rs kind-config)`

use crate::exit::Code;
use clap::Args;
use kfctl::cluster::kind::{KIND_NODE_IMAGE, kind_config};

#[derive(Debug, Clone, Args)]
pub(crate) struct KindConfigArgs {
    /// The node image (pinned by digest).
    #[arg(long, default_value = KIND_NODE_IMAGE)]
    pub node_image: String,
}

pub(crate) fn run(args: KindConfigArgs) -> anyhow::Result<Code> {
    print!("{}", kind_config(&args.node_image));
    Ok(Code::Success)
}
