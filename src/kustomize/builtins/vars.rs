//! vars: resolve $(VAR) references in the varReference field specs.

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn resolve(_resources: &mut ResMap, _vars: &[k::Var], _config: &TransformConfig) -> Result<()> { Ok(()) }
