//! The verbs' flows: one run opened once (`session`), its checks before any write
//! (`preflight`, `provided`), `install` and `upgrade`, `uninstall`, `rollback`, `adopt`, and the
//! read-only `status` and `diff`, the checklists before (`check`) and after (`postcheck`) an
//! install, the support bundle (`bundle`), `verify`; `kind` is the Kind cluster configuration
//! the `kind` profile expects.

pub mod adopt;
pub mod bundle;
pub mod check;
pub mod diff;
pub mod install;
pub mod kind;
pub mod live;
pub mod postcheck;
pub mod preflight;
pub(crate) mod provided;
pub mod rollback;
pub mod session;
pub mod status;
pub mod uninstall;
pub mod upgrade;
pub mod verify;
