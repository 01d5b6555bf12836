//! Applying a plan: the ordered waves and their tables (`plan`, `order`), the dependency graph
//! over them (`graph`, from the facts of `needs`) and its scheduler (`schedule`), the apply body
//! (`prepare`), the engine that applies a wave with retries (`engine`, the retry table
//! `retry`), replacing what cannot be patched (`immutable`, `replace`) and converging onto what
//! is there (`converge`).

pub(crate) mod converge;
pub(crate) mod engine;
pub(crate) mod graph;
pub mod immutable;
pub(crate) mod needs;
pub(crate) mod order;
pub mod plan;
pub(crate) mod prepare;
pub(crate) mod replace;
pub mod retry;
pub(crate) mod schedule;
