//! What kfctl-rs keeps in the cluster about an install: the record (`record`), the lease that
//! lets one run work at a time (`lease`, `unlock`), the ownership mark on what it creates
//! (`mark`), and the checks and tables that decide what may be deleted (`ownership`, `prune`).

pub mod lease;
pub mod mark;
pub(crate) mod ownership;
pub mod prune;
pub mod record;
pub(crate) mod unlock;
