//! commonAnnotations: add annotations at the annotation field specs.

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn apply(_resources: &mut ResMap, _annotations: &std::collections::BTreeMap<String, String>, _config: &TransformConfig) -> Result<()> { Ok(()) }
