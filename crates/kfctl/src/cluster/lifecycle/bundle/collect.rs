//! What a support bundle reads per namespace: its latest events, and the bounded logs of its
//! failing pods. Never a Secret.

use super::{Contents, LOG_LIMIT_BYTES, LOG_TAIL_LINES, MAX_EVENTS, MAX_LOGGED_PODS};
use crate::cluster::ClusterError;
use crate::cluster::api::ApiClient;
use crate::cluster::preflight;
use crate::cluster::retry::ApiFailure;
use serde_json::Value;

fn items(list: &Value) -> Vec<Value> {
    list.get("items").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// A failed read: the run's error when the deadline ended it, else a problem noted.
fn noted(api: &ApiClient, what: String, f: ApiFailure, contents: &mut Contents<'_>) -> Result<(), ClusterError> {
    if ClusterError::ended_by_timeout(api, &f) {
        return Err(ClusterError::no_answer(api, what, f));
    }
    contents.problem(format!("{what}: {f}"));
    Ok(())
}

/// When an event last happened, for ordering (RFC 3339 strings sort by time).
fn when(event: &Value) -> String {
    ["/lastTimestamp", "/eventTime", "/metadata/creationTimestamp"]
        .iter()
        .find_map(|p| event.pointer(p).and_then(Value::as_str))
        .unwrap_or("")
        .to_string()
}

/// `events/<namespace>.json`: the namespace's latest [`MAX_EVENTS`] events, oldest first.
pub(super) async fn events(api: &ApiClient, namespace: &str, contents: &mut Contents<'_>) -> Result<(), ClusterError> {
    let path = preflight::path("", "v1", "events", true);
    let list = match api.list(&path, Some(namespace), None).await {
        Ok(list) => list,
        Err(f) => return noted(api, format!("listing the events of namespace {namespace}"), f, contents),
    };
    let mut events = items(&list);
    events.sort_by_key(when);
    let events: Vec<Value> = events
        .split_off(events.len().saturating_sub(MAX_EVENTS))
        .into_iter()
        .map(|mut e| {
            if let Some(meta) = e.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
            e
        })
        .collect();
    contents.add_json(format!("events/{namespace}.json"), &events);
    Ok(())
}

/// Whether a pod is failing: not Ready (and not finished), or a container restarted.
pub(crate) fn failing(pod: &Value) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("");
    let ready = pod.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|c| {
        c.iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some("Ready")
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    });
    let restarted = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|s| s.get("restartCount").and_then(Value::as_i64).unwrap_or(0) > 0));
    restarted || (!ready && phase != "Succeeded")
}

/// `logs/<namespace>/<pod>/<container>.log` for each failing pod's containers, bounded.
pub(super) async fn logs(api: &ApiClient, namespace: &str, contents: &mut Contents<'_>) -> Result<(), ClusterError> {
    let path = preflight::path("", "v1", "pods", true);
    let list = match api.list(&path, Some(namespace), None).await {
        Ok(list) => list,
        Err(f) => return noted(api, format!("listing the pods of namespace {namespace}"), f, contents),
    };
    for pod in items(&list).iter().filter(|p| failing(p)) {
        if contents.logged_pods >= MAX_LOGGED_PODS {
            contents.pods_left_out += 1;
            continue;
        }
        let name = pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        contents.logged_pods += 1;
        let containers = pod.pointer("/spec/containers").and_then(Value::as_array).cloned().unwrap_or_default();
        for container in containers.iter().filter_map(|c| c.get("name").and_then(Value::as_str)) {
            let url = format!(
                "/api/v1/namespaces/{namespace}/pods/{name}/log?container={container}&tailLines={LOG_TAIL_LINES}&limitBytes={LOG_LIMIT_BYTES}"
            );
            match api.get_text(&url, LOG_LIMIT_BYTES).await {
                Ok(text) => contents.add(format!("logs/{namespace}/{name}/{container}.log"), &last_lines(&text)),
                Err(f) => {
                    noted(api, format!("reading the log of pod {namespace}/{name} container {container}"), f, contents)?
                }
            }
        }
    }
    Ok(())
}

/// The last [`LOG_TAIL_LINES`] lines of `text`, whatever the server sent.
fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn failing_pods_are_not_ready_or_restarted() {
        let pod = |ready: &str, restarts: i64, phase: &str| {
            json!({"status": {"phase": phase, "conditions": [{"type": "Ready", "status": ready}],
                "containerStatuses": [{"name": "c", "restartCount": restarts}]}})
        };
        assert!(!failing(&pod("True", 0, "Running")));
        assert!(failing(&pod("False", 0, "Running")));
        assert!(failing(&pod("True", 3, "Running")));
        assert!(!failing(&pod("False", 0, "Succeeded")));
    }

    #[test]
    fn logs_keep_the_last_lines_whatever_the_server_sent() {
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let kept = last_lines(&text);
        assert_eq!(kept.lines().count(), LOG_TAIL_LINES);
        assert!(kept.starts_with("line 801\n") && kept.ends_with("line 1000\n"));
    }
}
