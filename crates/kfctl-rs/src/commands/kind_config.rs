//! `kfctl-rs kind-config`: the Kind cluster configuration the kind profile expects.
//!
//! `kind create cluster --name kubeflow --config <(kfctl-rs kind-config)`

use crate::cli::KindConfigArgs;
use crate::exit::Outcome;
use kfctl::cluster::kind::kind_config;

pub(crate) fn run(args: KindConfigArgs) -> anyhow::Result<Outcome> {
    print!("{}", kind_config(&args.node_image));
    Ok(Outcome::Done)
}
