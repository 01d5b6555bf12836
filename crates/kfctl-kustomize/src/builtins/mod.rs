//! kustomize's builtin generators and transformers, one file each.
//!
//! Each transformer is a function over the accumulated [`ResMap`](super::resmap::ResMap) with
//! its configuration (field specs from [`config::TransformConfig`]); the accumulator in
//! `accumulate.rs` calls them in kustomize's order. Each file has its own small in-memory
//! harness of tests.

pub(crate) mod annotations;
pub(crate) mod config;
pub(crate) mod crds;
pub(crate) mod fieldspec;
pub(crate) mod generators;
pub(crate) mod hash;
pub(crate) mod iam_policy;
pub(crate) mod images;
pub(crate) mod labels;
pub(crate) mod nameref;
pub(crate) mod namespace;
pub(crate) mod patches;
pub(crate) mod plugins;
pub(crate) mod prefix_suffix;
pub(crate) mod replacements;
pub(crate) mod replicas;
pub(crate) mod sort;
pub(crate) mod vars;
