//! The `$patch` directive of strategic merge patches, as kyaml reads it.
//!
//! On a map, `$patch: delete|replace|merge` applies to that map. On a list, an element that is
//! exactly `{$patch: <directive>}` applies to the whole list (an element with more fields is an
//! element-level directive, read when the element itself is merged). The directive is removed
//! from the patch once read. Any other value is an error. kyaml supports nothing else: the other
//! directives of Kubernetes' strategic merge (`$retainKeys`, `$setElementOrder/<field>`,
//! `$deleteFromPrimitiveList/<field>`) are ordinary fields to it and are merged as such.

use super::MergeError;
use super::tree::{Kind, NodeId, Tree};

const DIRECTIVE_KEY: &str = "$patch";

/// A strategic merge directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Directive {
    Merge,
    Replace,
    Delete,
}

impl Directive {
    fn parse(text: &str) -> Option<Directive> {
        match text {
            "merge" => Some(Directive::Merge),
            "replace" => Some(Directive::Replace),
            "delete" => Some(Directive::Delete),
            _ => None,
        }
    }
}

/// Read (and remove) the directive of a patch node; no node means merge.
pub(super) fn take_directive(tree: &mut Tree, patch: Option<NodeId>) -> Result<Directive, MergeError> {
    let Some(patch) = patch else { return Ok(Directive::Merge) };
    if tree.missing_or_null(Some(patch)) {
        return Err(MergeError::NoStrategy { value: "null".to_string() });
    }
    match tree.kind(patch) {
        Kind::Map => take_map_directive(tree, patch),
        Kind::Seq => take_list_directive(tree, patch),
        Kind::Scalar => Err(MergeError::NoStrategy { value: tree.text(patch) }),
    }
}

fn take_map_directive(tree: &mut Tree, patch: NodeId) -> Result<Directive, MergeError> {
    let Some(value) = tree.field(patch, DIRECTIVE_KEY) else { return Ok(Directive::Merge) };
    let text = tree.text(value);
    let directive = Directive::parse(&text).ok_or(MergeError::UnknownStrategy(text))?;
    tree.clear_field(patch, DIRECTIVE_KEY)?;
    Ok(directive)
}

fn take_list_directive(tree: &mut Tree, patch: NodeId) -> Result<Directive, MergeError> {
    let holder =
        tree.items(patch).into_iter().find(|&e| tree.kind(e) == Kind::Map && tree.field(e, DIRECTIVE_KEY).is_some());
    let Some(holder) = holder else { return Ok(Directive::Merge) };
    if tree.field_names(holder).len() > 1 {
        return Ok(Directive::Merge);
    }
    let value = tree.field(holder, DIRECTIVE_KEY).expect("the holder has the directive");
    let text = tree.text(value);
    let directive = Directive::parse(&text).ok_or_else(|| MergeError::UnknownStrategy(text.clone()))?;
    tree.element_setter(patch, None, &[DIRECTIVE_KEY.to_string()], &[text])?;
    Ok(directive)
}
