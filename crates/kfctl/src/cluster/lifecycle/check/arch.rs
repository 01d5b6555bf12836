//! The `architectures` item: the nodes' architectures against the platforms the plan's images
//! are published for, where the catalog knows them (`charts/image-platforms.yaml`, read by
//! [`crate::catalog::platforms`]).
//!
//! An image the data says has no build for an architecture some node runs fails the item: its
//! pods would not start there (`exec format error`) unless kept off those nodes. Images the data
//! does not know are counted and make the item a warning, since nothing is assumed of them; when
//! every image is known and built for every node architecture, the item passes.

use super::{Checked, Mark, item};
use crate::catalog::platforms::{self, Coverage};
use serde_json::Value;
use std::collections::BTreeSet;

/// At most this many images are named in a line; the rest are counted.
const SHOWN: usize = 5;

/// The nodes' architectures (`status.nodeInfo.architecture`), each once, sorted.
pub(super) fn node_architectures(nodes: &[Value]) -> Vec<String> {
    let archs: BTreeSet<&str> =
        nodes.iter().filter_map(|n| n.pointer("/status/nodeInfo/architecture").and_then(Value::as_str)).collect();
    archs.into_iter().map(String::from).collect()
}

/// Judge `images` (each once) against the nodes' architectures.
pub(super) fn architectures(nodes: &[Value], images: &[String]) -> Checked {
    let archs = node_architectures(nodes);
    if archs.is_empty() {
        return item("architectures", Mark::Warn, "the nodes report no architecture", None);
    }
    let shown = archs.join(", ");
    match platforms::entries() {
        Ok(entries) => judge(&shown, &platforms::coverage(entries, images, &archs), images.len()),
        Err(e) => item("architectures", Mark::Warn, format!("nodes: {shown}; {e}"), None),
    }
}

fn judge(shown: &str, c: &Coverage, total: usize) -> Checked {
    let unknown = match c.unknown.len() {
        0 => String::new(),
        n => format!("; {n} of {total} image(s) unknown to the catalog's platform data"),
    };
    if !c.missing.is_empty() {
        let lacking: BTreeSet<&str> = c.missing.iter().flat_map(|m| &m.architectures).map(String::as_str).collect();
        let named: Vec<String> =
            c.missing.iter().map(|m| format!("{} ({})", m.image, m.platforms.join(", "))).collect();
        let sources: BTreeSet<&str> = c.missing.iter().map(|m| m.source.as_str()).collect();
        return item(
            "architectures",
            Mark::Fail,
            format!(
                "nodes: {shown}; {} image(s) have no build for {}: {}{unknown}",
                c.missing.len(),
                lacking.into_iter().collect::<Vec<_>>().join("/"),
                list(&named)
            ),
            Some(format!(
                "keep their pods on nodes of an architecture they are built for (`global.nodeSelector`), or leave their component out; sources: {}",
                sources.into_iter().collect::<Vec<_>>().join(", ")
            )),
        );
    }
    match (total, c.unknown.is_empty()) {
        (0, _) => item("architectures", Mark::Pass, format!("nodes: {shown}; the plan runs no image"), None),
        (_, true) => {
            item("architectures", Mark::Pass, format!("nodes: {shown}; all {total} image(s) are built for them"), None)
        }
        (_, false) => item(
            "architectures",
            Mark::Warn,
            format!("nodes: {shown}; the {} known image(s) are built for them{unknown}", c.known),
            Some(format!(
                "check the others have a {shown} build (`docker manifest inspect IMAGE`; `kfctl-rs images --profile P` lists them): {}",
                list(&c.unknown)
            )),
        ),
    }
}

/// The first [`SHOWN`] of `names`, and how many more.
fn list(names: &[String]) -> String {
    let mut out = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        out.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(arch: &str) -> Value {
        json!({"status": {"nodeInfo": {"architecture": arch}}})
    }

    fn images(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    const AMD64_ONLY: &str = "gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0";
    const MULTI: &str = "ghcr.io/kubeflow/katib/katib-controller:v0.19.0";

    #[test]
    fn an_image_with_no_build_for_a_node_architecture_fails_naming_it_and_its_source() {
        let found = architectures(&[node("amd64"), node("arm64")], &images(&[AMD64_ONLY, MULTI, "web:1"]));
        assert_eq!(found.mark, Mark::Fail, "{}", found.detail);
        assert!(found.detail.contains("nodes: amd64, arm64; 1 image(s) have no build for arm64"), "{}", found.detail);
        assert!(found.detail.contains(&format!("{AMD64_ONLY} (linux/amd64)")), "{}", found.detail);
        assert!(found.detail.ends_with("; 1 of 3 image(s) unknown to the catalog's platform data"), "{}", found.detail);
        assert!(found.hint.unwrap().contains("https://github.com/kubeflow/pipelines/issues/13957"));
    }

    #[test]
    fn known_and_built_passes_unknown_warns_with_the_count_and_no_architecture_warns() {
        let amd = [node("amd64")];
        assert_eq!(architectures(&amd, &images(&[AMD64_ONLY, MULTI])).mark, Mark::Pass);
        assert_eq!(architectures(&[node("arm64")], &images(&[MULTI])).mark, Mark::Pass);
        assert_eq!(architectures(&amd, &[]).detail, "nodes: amd64; the plan runs no image");
        let warn = architectures(&amd, &images(&[AMD64_ONLY, "web:1", "db:2"]));
        assert_eq!(warn.mark, Mark::Warn, "{}", warn.detail);
        assert!(
            warn.detail.contains("the 1 known image(s) are built for them; 2 of 3 image(s) unknown"),
            "{}",
            warn.detail
        );
        assert!(warn.hint.unwrap().ends_with(": web:1, db:2"));
        assert_eq!(architectures(&[json!({})], &images(&[MULTI])).mark, Mark::Warn);
    }

    #[test]
    fn long_lists_are_cut_with_a_count() {
        let names = images(&["a", "b", "c", "d", "e", "f", "g"]);
        assert_eq!(list(&names), "a, b, c, d, e and 2 more");
    }
}
