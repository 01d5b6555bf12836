//! commonLabels and labels: add labels at the label (and selector) field specs.

use crate::kustomize::error::Result;
#[allow(unused_imports)]
use crate::kustomize::{kustomization as k, loader::Loader, resmap::ResMap};
#[allow(unused_imports)]
use super::config::TransformConfig;
#[allow(unused_imports)]
use std::path::Path;

/// `include_selectors` uses the commonLabels field specs; otherwise only metadata/labels (plus
/// templates with `include_templates`), as kustomize does.
pub fn apply_common(_resources: &mut ResMap, _labels: &std::collections::BTreeMap<String, String>, _config: &TransformConfig) -> Result<()> { Ok(()) }
pub fn apply_label_set(_resources: &mut ResMap, _set: &k::LabelSet, _config: &TransformConfig) -> Result<()> { Ok(()) }
