//! `kfctl-rs build DIR`: the equivalent of `kustomize build DIR`.

use crate::cli::BuildArgs;
use crate::exit::Code;

pub fn run(_args: BuildArgs) -> anyhow::Result<Code> {
    anyhow::bail!("build: not implemented yet")
}
