//! kustomize's builtin generators and transformers, one file each.
//!
//! Each transformer is a function over the accumulated [`ResMap`](super::resmap::ResMap) with
//! its configuration (field specs from [`config::TransformConfig`]); the accumulator in
//! `accumulate.rs` calls them in kustomize's order. Each file has its own small in-memory
//! harness of tests.

pub mod annotations;
pub mod config;
pub mod crds;
pub mod fieldspec;
pub mod generators;
pub mod hash;
pub mod iam_policy;
pub mod images;
pub mod labels;
pub mod nameref;
pub mod namespace;
pub mod patches;
pub mod plugins;
pub mod prefix_suffix;
pub mod replacements;
pub mod replicas;
pub mod sort;
pub mod vars;
