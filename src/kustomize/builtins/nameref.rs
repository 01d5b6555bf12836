//! Name-reference fix-up: after prefixes, suffixes, namespaces and hashes changed names, update every reference to the old names.

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

pub fn fix_back_references(_resources: &mut ResMap, _config: &TransformConfig) -> Result<()> { Ok(()) }
