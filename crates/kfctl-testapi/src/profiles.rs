//! The stand-in for Kubeflow's Profiles controller: each `kubeflow.org` Profile gets a
//! Namespace of the same name, owned by the Profile (as the real controller makes it, so that
//! deleting the Profile takes its namespace with it). Only the namespace: the real controller
//! also writes RoleBindings, ServiceAccounts and Istio policies inside it, which no test here
//! reads. 26.03.1's Hub puts the Model Registry in such a namespace, so an install of the
//! whole platform needs this step to finish, as it needs the real controller on a cluster.

use super::state::{State, timestamp_now};
use super::store::ObjectKey;
use serde_json::json;
use std::time::Instant;

/// Make the namespace of every Profile that has none yet (one write per missing namespace).
pub(crate) fn make_profile_namespaces(state: &mut State, now: Instant) {
    let missing: Vec<(String, String)> = state
        .store
        .list("kubeflow.org", "profiles", None)
        .into_iter()
        .filter(|(_, e)| e.object["metadata"].get("deletionTimestamp").is_none())
        .filter_map(|(k, e)| Some((k.name.clone(), e.object["metadata"]["uid"].as_str()?.to_string())))
        .filter(|(name, _)| state.store.get(&ObjectKey::new("", "namespaces", None, name)).is_none())
        .collect();
    let ts = timestamp_now();
    for (name, uid) in missing {
        let namespace = json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": name,
                "labels": {"app.kubernetes.io/part-of": "kubeflow-profile"},
                "ownerReferences": [{
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "Profile",
                    "name": name,
                    "uid": uid,
                    "controller": true,
                    "blockOwnerDeletion": true,
                }],
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        state.store.write(&ObjectKey::new("", "namespaces", None, &name), namespace, now, &ts, false);
    }
}
