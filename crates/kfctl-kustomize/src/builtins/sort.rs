//! Output order: kustomize's legacy kind order (with orderFirst/orderLast) or fifo.
//!
//! Without `sortOptions` (and with `order: legacy` but no `legacySortOptions`) kustomize sorts
//! by its legacy order: the kinds of [`DEFAULT_ORDER_FIRST`] first, in that order, then every
//! kind not listed, then those of [`DEFAULT_ORDER_LAST`]. `legacySortOptions` replaces both
//! lists. Within one rank, objects sort by gvk string (`group_version_kind`, with `~G`, `~V`,
//! `~K` for empty parts), and objects of the same gvk by `namespace|name`, where an unset
//! namespace is `~X` (so it sorts after any set one) and an unset name `~N`. Ids are unique, so
//! the key is total. `order: fifo` keeps the accumulation order.
//!
//! The same rank-then-gvk comparison orders kustomize's field-spec lists (see
//! [`gvk_order_key`]), which is why it lives here and `config.rs` uses it.

use crate::error::{KustomizeError, Result};
use crate::gvk::Gvk;
use crate::resource::Resource;
use crate::{kustomization as k, resmap::ResMap};
use std::collections::HashMap;

/// kustomize's default `orderFirst`: cluster-wide basics and things others depend on.
pub(crate) const DEFAULT_ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

/// kustomize's default `orderLast`: webhooks, which would intercept everything else.
pub(crate) const DEFAULT_ORDER_LAST: [&str; 2] = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];

/// Ranks of kinds: negative for orderFirst (in list order), 0 for unlisted, positive for
/// orderLast. A kind listed twice takes its last position, as in kustomize's map.
#[derive(Debug, Clone, PartialEq)]
pub struct KindRanks(HashMap<String, i64>);

impl KindRanks {
    pub(crate) fn new<S: AsRef<str>>(first: &[S], last: &[S]) -> Self {
        let mut ranks = HashMap::new();
        let len = first.len() as i64;
        for (i, kind) in first.iter().enumerate() {
            ranks.insert(kind.as_ref().to_string(), i as i64 - len);
        }
        for (i, kind) in last.iter().enumerate() {
            ranks.insert(kind.as_ref().to_string(), i as i64 + 1);
        }
        KindRanks(ranks)
    }

    /// The ranks of kustomize's default `orderFirst` (Namespace, ResourceQuota, StorageClass,
    /// CustomResourceDefinition, …) and `orderLast` (the webhook configurations) lists.
    pub fn defaults() -> Self {
        KindRanks::new(&DEFAULT_ORDER_FIRST, &DEFAULT_ORDER_LAST)
    }

    /// The rank of `kind`: negative if listed first, positive if listed last, 0 if unlisted.
    pub fn rank(&self, kind: &str) -> i64 {
        self.0.get(kind).copied().unwrap_or(0)
    }
}

/// The key kustomize's `Gvk.IsLessThan` compares: default rank of the kind, then gvk string.
pub(crate) fn gvk_order_key(gvk: &Gvk) -> (i64, String) {
    let rank = DEFAULT_ORDER_FIRST
        .iter()
        .rposition(|k| *k == gvk.kind)
        .map(|i| i as i64 - DEFAULT_ORDER_FIRST.len() as i64)
        .or_else(|| DEFAULT_ORDER_LAST.iter().rposition(|k| *k == gvk.kind).map(|i| i as i64 + 1))
        .unwrap_or(0);
    (rank, gvk.sort_string())
}

/// How to order the output.
#[derive(Debug, Clone, PartialEq)]
pub enum Order {
    /// kustomize's legacy order: by kind rank, then gvk string, then `namespace|name`.
    Legacy(KindRanks),
    /// `order: fifo`: the order in which the objects were accumulated.
    Fifo,
}

impl Order {
    /// Read `sortOptions` with kustomize's checks; none means legacy with the default lists.
    pub fn from_options(options: Option<&k::SortOptions>) -> Result<Self> {
        let Some(options) = options else {
            return Ok(Order::Legacy(KindRanks::defaults()));
        };
        match options.order.as_deref() {
            Some("legacy") => Ok(Order::Legacy(match &options.legacy_sort_options {
                Some(lists) => KindRanks::new(&lists.order_first, &lists.order_last),
                None => KindRanks::defaults(),
            })),
            Some("fifo") if options.legacy_sort_options.is_some() => Err(KustomizeError::transform(
                "sortOptions",
                "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'; remove legacySortOptions or use `order: legacy`",
            )),
            Some("fifo") => Ok(Order::Fifo),
            other => Err(KustomizeError::transform(
                "sortOptions",
                format!("the field 'sortOptions.order' must be one of [fifo, legacy], not {:?}", other.unwrap_or("")),
            )),
        }
    }
}

/// The legacy sort key of one object.
fn legacy_key(ranks: &KindRanks, r: &Resource) -> (i64, String, String) {
    let gvk = r.gvk();
    let namespace = if r.namespace().is_empty() { "~X" } else { r.namespace() };
    let name = if r.name().is_empty() { "~N" } else { r.name() };
    (ranks.rank(&gvk.kind), gvk.sort_string(), format!("{namespace}|{name}"))
}

/// Sort as `sortOptions` says; no options means kustomize's default legacy order.
pub(crate) fn apply(resources: &mut ResMap, options: Option<&k::SortOptions>) -> Result<()> {
    if let Order::Legacy(ranks) = Order::from_options(options)? {
        let mut all = std::mem::take(resources).into_vec();
        all.sort_by_cached_key(|r| legacy_key(&ranks, r));
        resources.replace_all(all);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> Resource {
        let mut obj = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
        if let Some(ns) = namespace {
            obj["metadata"]["namespace"] = json!(ns);
        }
        Resource::new(obj)
    }

    fn order_of(resources: Vec<Resource>, options: Option<&k::SortOptions>) -> Vec<String> {
        let mut map = ResMap::new();
        map.replace_all(resources);
        apply(&mut map, options).unwrap();
        map.iter().map(|r| format!("{}/{}", r.kind(), r.name())).collect()
    }

    fn sample() -> Vec<Resource> {
        vec![
            res("v1", "Service", "b", None),
            res("v1", "Namespace", "z", None),
            res("v1", "Service", "a", Some("x")),
            res("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "v", None),
            res("v1", "ConfigMap", "c", None),
            res("example.com/v1", "Widget", "w", None),
        ]
    }

    fn options(order: &str, lists: Option<(&[&str], &[&str])>) -> k::SortOptions {
        k::SortOptions {
            order: Some(order.to_string()),
            legacy_sort_options: lists.map(|(first, last)| k::LegacySortOptions {
                order_first: first.iter().map(|s| s.to_string()).collect(),
                order_last: last.iter().map(|s| s.to_string()).collect(),
            }),
        }
    }

    #[test]
    fn default_order_puts_first_kinds_first_and_webhooks_last() {
        // Checked against real kustomize v5.6 on the same objects.
        assert_eq!(
            order_of(sample(), None),
            ["Namespace/z", "ConfigMap/c", "Service/a", "Service/b", "Widget/w", "ValidatingWebhookConfiguration/v"]
        );
    }

    #[test]
    fn same_gvk_sorts_set_namespaces_before_unset_ones() {
        let got = order_of(vec![res("v1", "Service", "a", None), res("v1", "Service", "z", Some("ns"))], None);
        assert_eq!(got, ["Service/z", "Service/a"]);
    }

    #[test]
    fn unlisted_kinds_sort_by_group_version_kind_string() {
        let got = order_of(
            vec![
                res("v1", "Pod", "p", None),
                res("apps/v1", "DaemonSet", "d", None),
                res("batch/v1", "Job", "j", None),
            ],
            None,
        );
        assert_eq!(got, ["DaemonSet/d", "Job/j", "Pod/p"]);
    }

    #[test]
    fn legacy_without_lists_uses_the_defaults() {
        assert_eq!(order_of(sample(), Some(&options("legacy", None))), order_of(sample(), None));
    }

    #[test]
    fn custom_lists_replace_the_defaults() {
        // Real kustomize: Service first, the rest by gvk string only.
        let got = order_of(sample(), Some(&options("legacy", Some((&["Service"], &[])))));
        assert_eq!(
            got,
            ["Service/a", "Service/b", "ValidatingWebhookConfiguration/v", "Widget/w", "ConfigMap/c", "Namespace/z"]
        );
    }

    #[test]
    fn order_last_kinds_follow_in_list_order() {
        let got = order_of(sample(), Some(&options("legacy", Some((&[], &["Namespace", "ConfigMap"])))));
        assert_eq!(got.last().map(String::as_str), Some("ConfigMap/c"));
        assert_eq!(got[got.len() - 2], "Namespace/z");
    }

    #[test]
    fn fifo_keeps_accumulation_order() {
        let got = order_of(sample(), Some(&options("fifo", None)));
        assert_eq!(
            got,
            ["Service/b", "Namespace/z", "Service/a", "ValidatingWebhookConfiguration/v", "ConfigMap/c", "Widget/w"]
        );
    }

    #[test]
    fn fifo_with_legacy_lists_is_refused() {
        let mut map = ResMap::new();
        let err = apply(&mut map, Some(&options("fifo", Some((&["Service"], &[]))))).unwrap_err();
        assert!(err.to_string().contains("'fifo', not 'legacy'"), "{err}");
    }

    #[test]
    fn unknown_or_missing_order_is_refused() {
        let mut map = ResMap::new();
        assert!(apply(&mut map, Some(&options("bogus", None))).is_err());
        let missing = k::SortOptions { order: None, legacy_sort_options: None };
        assert!(apply(&mut map, Some(&missing)).unwrap_err().to_string().contains("must be one of [fifo, legacy]"));
    }

    #[test]
    fn gvk_order_key_ranks_defaults_then_gvk_string() {
        let deployment = gvk_order_key(&Gvk::new("apps", "v1", "Deployment"));
        let replica_set = gvk_order_key(&Gvk::new("", "", "ReplicaSet"));
        let webhook = gvk_order_key(&Gvk::new("", "", "MutatingWebhookConfiguration"));
        assert!(deployment < replica_set && replica_set < webhook);
        assert!(
            gvk_order_key(&Gvk::new("", "", "ReplicaSet")) < gvk_order_key(&Gvk::new("", "", "ReplicationController"))
        );
    }
}
