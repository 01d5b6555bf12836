//! namespace: set metadata.namespace on namespaced objects and the namespace field specs.

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn apply(_resources: &mut ResMap, _namespace: &str, _config: &TransformConfig) -> Result<()> { Ok(()) }
