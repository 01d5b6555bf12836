//! Output order: kustomize's legacy kind order (with orderFirst/orderLast) or fifo.

use crate::kustomize::error::Result;
use crate::kustomize::{kustomization as k, resmap::ResMap};

/// Sort as `sortOptions` says; no options means kustomize's default legacy order.
pub fn apply(_resources: &mut ResMap, _options: Option<&k::SortOptions>) -> Result<()> {
    Ok(())
}
