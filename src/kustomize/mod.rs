//! The native kustomize engine.

pub mod kustomization;
pub mod merge;
pub mod resource;
