//! kfctl-rs: install Kubeflow the Helm way.
//!
//! The crate is split by layer, each with its own error type:
//!
//! | module       | role |
//! |--------------|------|
//! | [`yaml`]     | reading YAML streams into `serde_json::Value` and writing them back byte-for-byte as kustomize does |
//! | [`kustomize`]| the native kustomize engine: one entry point, [`kustomize::build`] |
//! | [`source`]   | where upstream comes from: releases catalog, verified cache, remote mirror, bundles, safe extraction |
//! | [`catalog`]  | components, profiles and the values model shared by render and chart export |
//! | [`chart`]    | Helm chart export |
//! | [`compare`]  | semantic diff of two YAML streams |
//! | [`cluster`]  | install plan (ordering and readiness tables), server-side apply, status, uninstall |
//! | [`commands`] | one module per CLI verb; the only place that prints |
//! | [`testapi`]  | a test double of the Kubernetes API server (in-process, loopback) for install tests and the `kfctl-test-apiserver` dev binary |
//!
//! Pure types and transformations live apart from I/O: the engine reads files only through
//! [`kustomize::loader::Loader`], and the cluster code talks to the API only through `kube`.

pub mod catalog;
pub mod chart;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod compare;
pub mod exit;
pub mod kustomize;
pub mod notice;
pub mod source;
pub mod testapi;
pub mod yaml;
