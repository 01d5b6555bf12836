//! The name index of a [`crate::ResMap`]: for every name an object has had (its previous ids'
//! and its current one), the positions of the objects that had it.
//!
//! Lookups by id or by a literal name go through it, so building N objects does not compare
//! every object with every other one (kustomize's own resmap scans them all). The index may
//! hold stale entries — a name an object no longer has, since callers check each candidate
//! against the full rule — but never misses one: names only accumulate (a rename remembers
//! the old id), objects changed through a position are re-indexed before the next lookup, and
//! anything wider (a change through every object, a removal) drops the index, rebuilt on the
//! next lookup.

use crate::resource::Resource;
use std::collections::HashMap;

/// Positions by name, for the objects before `indexed`, except those in `dirty`.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameIndex {
    by_name: HashMap<String, Vec<usize>>,
    /// How many objects, from the first, are indexed.
    indexed: usize,
    /// Positions changed since they were indexed.
    dirty: Vec<usize>,
}

impl NameIndex {
    /// Forget everything: the next [`NameIndex::refresh`] indexes every object again.
    pub(crate) fn clear(&mut self) {
        self.by_name.clear();
        self.indexed = 0;
        self.dirty.clear();
    }

    /// The object at `index` may have changed (a name, a namespace).
    pub(crate) fn touch(&mut self, index: usize) {
        if index < self.indexed && self.dirty.last() != Some(&index) {
            self.dirty.push(index);
        }
    }

    /// Index the objects not yet indexed and those changed since.
    pub(crate) fn refresh(&mut self, resources: &[Resource]) {
        for index in std::mem::take(&mut self.dirty) {
            self.add(index, &resources[index]);
        }
        while self.indexed < resources.len() {
            self.add(self.indexed, &resources[self.indexed]);
            self.indexed += 1;
        }
    }

    fn add(&mut self, index: usize, resource: &Resource) {
        let previous = resource.previous_ids.iter().map(|id| id.name.as_str());
        for name in previous.chain(std::iter::once(resource.name())) {
            match self.by_name.get_mut(name) {
                Some(positions) if positions.contains(&index) => {}
                Some(positions) => positions.push(index),
                None => {
                    self.by_name.insert(name.to_string(), vec![index]);
                }
            }
        }
    }

    /// Positions of the objects that have had `name`, ascending (after a refresh).
    pub(crate) fn candidates(&self, name: &str) -> Vec<usize> {
        let mut positions = self.by_name.get(name).cloned().unwrap_or_default();
        positions.sort_unstable();
        positions
    }
}

/// Whether a selector's name pattern matches only itself, as an anchored regex: letters,
/// digits, `-` and `_` only (a `.` matches any character, so it is not literal).
pub(crate) fn is_literal_name(pattern: &str) -> bool {
    !pattern.is_empty() && pattern.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(name: &str) -> Resource {
        Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
    }

    #[test]
    fn renamed_objects_are_found_by_every_name_once_touched() {
        let mut resources = vec![cm("a"), cm("b")];
        let mut index = NameIndex::default();
        index.refresh(&resources);
        resources[1].set_name("p-b");
        index.touch(1);
        resources.push(cm("b"));
        index.refresh(&resources);
        assert_eq!(index.candidates("b"), vec![1, 2]);
        assert_eq!(index.candidates("p-b"), vec![1]);
        assert!(index.candidates("c").is_empty());
    }

    #[test]
    fn literal_names() {
        assert!(is_literal_name("dep-0_a"));
        assert!(!is_literal_name("a.b") && !is_literal_name("dep-.*") && !is_literal_name(""));
    }
}
