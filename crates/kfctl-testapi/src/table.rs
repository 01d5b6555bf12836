//! Server-side printing: the `meta.k8s.io/v1` `Table` kubectl asks for when it prints.
//!
//! Upstream has per-kind printers (Deployment shows READY, UP-TO-DATE, ...). The test API
//! server prints every kind with the generic columns upstream uses for custom resources
//! without printer columns, `Name` and `Age`, which is enough for `kubectl get` to work.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Whether an `Accept` header asks for a Table first.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept.split(',').next().is_some_and(|first| first.contains("as=Table"))
}

/// Age as kubectl prints it (`5s`, `3m12s`, `2h`, `4d`).
pub(crate) fn human_age(age: Duration) -> String {
    let s = age.as_secs();
    match s {
        0..120 => format!("{s}s"),
        120..600 => format!("{}m{}s", s / 60, s % 60),
        600..10_800 => format!("{}m", s / 60),
        10_800..172_800 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// A Table of the given objects (with their creation instants).
pub(crate) fn table(objects: &[(&Value, Instant)], now: Instant, revision: u64) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|(object, created)| {
            let meta = object["metadata"].clone();
            json!({
                "cells": [meta["name"], human_age(now.duration_since(*created))],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta},
            })
        })
        .collect();
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": revision.to_string()},
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0},
            {"name": "Age", "type": "string", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}],
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_age_formats_like_kubectl() {
        assert_eq!(human_age(Duration::from_secs(5)), "5s");
        assert_eq!(human_age(Duration::from_secs(192)), "3m12s");
        assert_eq!(human_age(Duration::from_secs(7200)), "120m");
        assert_eq!(human_age(Duration::from_secs(4 * 86_400)), "4d");
    }

    #[test]
    fn table_has_name_cells_and_partial_metadata() {
        let cm = json!({"metadata": {"name": "c", "namespace": "kf"}});
        let now = Instant::now();
        let t = table(&[(&cm, now)], now, 7);
        assert_eq!(t["rows"][0]["cells"][0], "c");
        assert_eq!(t["rows"][0]["object"]["metadata"]["namespace"], "kf");
        assert!(wants_table("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
        assert!(!wants_table("application/json"));
    }
}
