//! replacements: copy a field from a source object into target fields (delimiter, index, create).

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn apply(_resources: &mut ResMap, _entries: &[k::ReplacementEntry], _dir: &Path, _loader: &Loader) -> Result<()> { Ok(()) }
