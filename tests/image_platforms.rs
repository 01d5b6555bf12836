//! Issue 40: `charts/image-platforms.yaml` against the releases' own images. Every repository
//! (and tag) the data names is an image some release's whole platform (real kustomize's
//! `example` golden) runs, so no entry is a typo that can never match; and on arm64 nodes the
//! data finds, in the releases that run it, the metadata server published for amd64 only.

use crate::common;

use kfctl::catalog::images;
use kfctl::catalog::platforms::{self, Entry};
use std::collections::BTreeMap;

/// Every image each release's golden pulls.
fn images_by_release() -> BTreeMap<&'static str, Vec<String>> {
    common::releases()
        .iter()
        .map(|r| {
            let objects: Vec<_> = common::cluster::golden(r).into_iter().map(|o| o.obj).collect();
            (*r, images::collect(&objects))
        })
        .collect()
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn every_repository_of_the_data_is_run_by_some_release_and_arm64_misses_the_metadata_server() {
    let by_release = images_by_release();
    let all: Vec<&String> = by_release.values().flatten().collect();
    let entries = platforms::entries().expect("the data parses");
    let mut unused = Vec::new();
    for entry in entries {
        for repository in &entry.repositories {
            let one = Entry { repositories: vec![repository.clone()], ..entry.clone() };
            if !all.iter().any(|image| platforms::lookup(std::slice::from_ref(&one), image).is_some()) {
                unused.push(format!("{repository} (tags {:?})", entry.tags));
            }
        }
    }
    assert!(unused.is_empty(), "named by the data, run by no release: {unused:#?}");
    let arm = ["amd64".to_string(), "arm64".to_string()];
    for (release, images) in &by_release {
        let coverage = platforms::coverage(entries, images, &arm);
        assert!(coverage.known > 0 && coverage.known + coverage.unknown.len() == images.len(), "{release}");
        let missing: Vec<&str> = coverage.missing.iter().map(|m| m.image.as_str()).collect();
        assert!(missing.contains(&"gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0"), "{release}: {missing:?}");
    }
}
