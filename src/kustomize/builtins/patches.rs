//! patchesStrategicMerge, patches (strategic merge and JSON 6902, with targets) and patchesJson6902.

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn strategic_merge_files(_resources: &mut ResMap, _paths: &[String], _dir: &Path, _loader: &Loader) -> Result<()> { Ok(()) }
pub fn patches(_resources: &mut ResMap, _patches: &[k::Patch], _dir: &Path, _loader: &Loader) -> Result<()> { Ok(()) }
pub fn json6902(_resources: &mut ResMap, _patches: &[k::Patch], _dir: &Path, _loader: &Loader) -> Result<()> { Ok(()) }
