//! The bound on what a labels or annotations transformer may add to a build.
//!
//! Such a transformer copies its pairs onto every object it selects (often several fields of
//! each), so one long value multiplies: a 7 MB label on 66 objects is hundreds of megabytes.
//! Pairs under [`WATCHED_PAIR_BYTES`] are never measured (no cost for real builds). Past it, the
//! objects are measured as they are changed (their compact JSON size, near enough), and the
//! transformer stops with an error once they pass [`limit`]: 64 MiB plus 8 times their size
//! before it, so memory stays bounded and the error names the likely cause.

use crate::error::{KustomizeError, Result};
use crate::resmap::ResMap;
use serde_json::Value;

/// Pairs (keys and values together) shorter than this are not measured: 64 KiB.
pub(crate) const WATCHED_PAIR_BYTES: u64 = 64 * 1024;

/// The most the objects may hold once the transformer ran: 64 MiB + 8 × their size before.
pub(crate) fn limit(before: u64) -> u64 {
    (64 * 1024 * 1024u64).saturating_add(before.saturating_mul(8))
}

/// The objects' size as the transformer changes them, against [`limit`].
pub(crate) struct Growth {
    pairs: u64,
    limit: u64,
    size: u64,
}

impl Growth {
    /// Watch `resources` while pairs of `pairs` bytes are added, or `None` for short pairs.
    pub(crate) fn watch(resources: &ResMap, pairs: u64) -> Option<Growth> {
        if pairs < WATCHED_PAIR_BYTES {
            return None;
        }
        let before: u64 = resources.iter().map(|r| json_size(&r.obj)).sum();
        Some(Growth { pairs, limit: limit(before), size: 0 })
    }

    /// Count one changed object; an error once the objects pass the limit.
    pub(crate) fn add(&mut self, obj: &Value) -> Result<()> {
        self.size = self.size.saturating_add(json_size(obj));
        if self.size <= self.limit {
            return Ok(());
        }
        let message = format!(
            "its labels or annotations ({} KB) copied onto every object make the build larger than {} MiB (64 MiB + 8 x the objects before it); a long value is the likely cause: shorten it",
            self.pairs / 1024,
            self.limit / (1024 * 1024)
        );
        Err(KustomizeError::transform("labels or annotations transformer", message))
    }
}

/// The size of `value` as compact JSON, near enough (escapes not counted; never under it),
/// without writing it.
pub fn json_size(value: &Value) -> u64 {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() as u64 + 2,
        Value::Array(items) => 2 + items.iter().map(|v| json_size(v) + 1).sum::<u64>(),
        Value::Object(map) => 2 + map.iter().map(|(k, v)| k.len() as u64 + 4 + json_size(v)).sum::<u64>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kustomization::FieldSpec;
    use std::collections::BTreeMap;

    fn config_maps(count: usize) -> ResMap {
        let mut resources = ResMap::default();
        for i in 0..count {
            let obj =
                serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}")}});
            resources.append(crate::resource::Resource::new(obj), "test").unwrap();
        }
        resources
    }

    fn labels(value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([("big".to_string(), value.to_string())])
    }

    #[test]
    fn a_long_label_on_every_object_stops_at_the_bound() {
        let spec = FieldSpec { path: "metadata/labels".into(), create: true, ..Default::default() };
        let mut resources = config_maps(20);
        let err = crate::builtins::fieldspec::add_pairs(
            &mut resources,
            &labels(&"a".repeat(5_000_000)),
            std::slice::from_ref(&spec),
        )
        .unwrap_err();
        assert!(err.to_string().contains("make the build larger than 64 MiB"), "{err}");
        // a long label on few objects, and short labels on many, are no concern
        let mut few = config_maps(5);
        crate::builtins::fieldspec::add_pairs(&mut few, &labels(&"a".repeat(5_000_000)), std::slice::from_ref(&spec))
            .unwrap();
        let mut many = config_maps(5_000);
        crate::builtins::fieldspec::add_pairs(&mut many, &labels("v1"), &[spec]).unwrap();
    }

    #[test]
    fn the_size_is_near_the_compact_json_size_and_never_under_it() {
        let small = serde_json::json!({"a": [1, "xy", null, true]});
        let long = serde_json::json!({"metadata": {"labels": {"big": "a".repeat(10_000)}}});
        for value in [small, long] {
            let actual = serde_json::to_string(&value).unwrap().len() as u64;
            assert!(json_size(&value) >= actual && json_size(&value) <= actual * 2 + 16, "{value}");
        }
    }
}
