//! images: rewrite image names, tags and digests at the image field specs.

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn apply(_resources: &mut ResMap, _image: &k::Image, _config: &TransformConfig) -> Result<()> { Ok(()) }
