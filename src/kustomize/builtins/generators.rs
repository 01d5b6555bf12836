//! configMapGenerator and secretGenerator, and absorbing their output (behavior create, merge, replace).

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn run(_resources: &mut ResMap, _kustomization: &k::Kustomization, _dir: &Path, _loader: &Loader) -> Result<()> { Ok(()) }
