//! kfctl: the library behind the `kfctl-rs` binary.
//!
//! Everything between the engine and the terminal, split by layer, each with its own error
//! type whose variants decide the exit code ([`exit::ExitStatus`]). Nothing here prints:
//! commands in the binary turn reports and progress events into lines.
//!
//! | module       | role |
//! |--------------|------|
//! | [`source`]   | where upstream comes from: releases catalog, verified cache, remote mirror, bundles, safe extraction |
//! | [`analyze`]  | coded findings about a platform's objects (`kfctl-rs analyze`): one table of rules |
//! | [`catalog`]  | components, profiles and the values model shared by render and chart export |
//! | [`chart`]    | Helm chart export |
//! | [`cluster`]  | install plan (ordering and readiness tables), server-side apply, status, uninstall |
//! | [`input`]    | the user's input files, read with a size limit ([`input::MAX_INPUT_BYTES`]) |
//! | [`staging`]  | stage, then rename: how every file and folder is put in place, all or nothing |
//! | [`exit`]     | exit codes and the error types that decide them |
//! | [`image`]    | image references taken apart (registry, path, tag, digest), the one parser |
//! | `backoff`  | exponential backoff with jitter, shared by every retry loop |
//! | [`notice`]   | the best-effort notice's text |
//!
//! Below it: `kfctl-yaml` (YAML in and out, compare) and `kfctl-kustomize` (the engine). The
//! cluster code talks to the API only through `kube`; its tests use the `kfctl-testapi` test
//! double, a dev-dependency that never ships.

#![deny(missing_docs, unreachable_pub)]

pub mod analyze;
pub(crate) mod backoff;
pub mod catalog;
pub mod chart;
pub mod cluster;
pub(crate) mod embedded;
pub mod exit;
pub mod image;
pub mod input;
pub mod notice;
pub mod render_cache;
pub mod source;
pub mod staging;
