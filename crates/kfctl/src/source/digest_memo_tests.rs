//! The memo is served only for the very tree it was taken of, and never for a racy one.

use super::*;
use crate::source::digest::{collect_tree, digest_entries};
use kfctl_kustomize::build_cache::RACY_SECONDS;
use std::fs;

/// A moment far enough after every file here was written that none is racy.
fn later() -> i64 {
    unix_now() + 10 * RACY_SECONDS
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("a")).unwrap();
    fs::write(dir.path().join("a/kustomization.yaml"), "resources: [x.yaml]\n").unwrap();
    fs::write(dir.path().join("a/x.yaml"), "kind: ConfigMap\n").unwrap();
    dir
}

/// The digest through the memo at `now`, and whether `compute` ran.
fn through_memo(memos: &Path, root: &Path, now: i64) -> (String, bool) {
    let entries = collect_tree(root).unwrap();
    let mut computed = false;
    let digest = digest_at(memos, root, "skips", &entries, now, |e| {
        computed = true;
        digest_entries(e)
    })
    .unwrap();
    (digest, computed)
}

#[test]
fn an_unchanged_tree_is_served_from_the_memo_with_the_same_digest() {
    let (root, memos) = (tree(), tempfile::tempdir().unwrap());
    let (first, computed) = through_memo(memos.path(), root.path(), later());
    assert!(computed);
    let (second, computed) = through_memo(memos.path(), root.path(), later());
    assert!(!computed, "the second run hashes nothing");
    assert_eq!(first, second);
    assert_eq!(first, digest_entries(&collect_tree(root.path()).unwrap()).unwrap());
}

#[test]
fn a_file_rewritten_with_the_same_size_is_hashed_again() {
    let (root, memos) = (tree(), tempfile::tempdir().unwrap());
    let (before, _) = through_memo(memos.path(), root.path(), later());
    fs::write(root.path().join("a/x.yaml"), "kind: Secret000\n").unwrap();
    let (after, computed) = through_memo(memos.path(), root.path(), later());
    assert!(computed, "a new signature recomputes");
    assert_ne!(before, after);
    assert_eq!(after, digest_entries(&collect_tree(root.path()).unwrap()).unwrap());
}

#[test]
fn an_added_or_removed_file_is_hashed_again() {
    let (root, memos) = (tree(), tempfile::tempdir().unwrap());
    through_memo(memos.path(), root.path(), later());
    fs::write(root.path().join("a/y.yaml"), "kind: Service\n").unwrap();
    let (added, computed) = through_memo(memos.path(), root.path(), later());
    assert!(computed);
    fs::remove_file(root.path().join("a/y.yaml")).unwrap();
    let (removed, computed) = through_memo(memos.path(), root.path(), later());
    assert!(computed);
    assert_ne!(added, removed);
}

#[test]
fn a_tree_with_a_racy_file_is_not_memoized() {
    let (root, memos) = (tree(), tempfile::tempdir().unwrap());
    through_memo(memos.path(), root.path(), unix_now());
    let (_, computed) = through_memo(memos.path(), root.path(), unix_now());
    assert!(computed, "files written just now cannot be vouched for by their stat");
    assert!(fs::read_dir(memos.path()).map(|d| d.count()).unwrap_or(0) == 0);
}

#[test]
fn other_skips_or_a_corrupt_memo_recompute() {
    let (root, memos) = (tree(), tempfile::tempdir().unwrap());
    through_memo(memos.path(), root.path(), later());
    let entries = collect_tree(root.path()).unwrap();
    let mut computed = false;
    digest_at(memos.path(), root.path(), "other skips", &entries, later(), |e| {
        computed = true;
        digest_entries(e)
    })
    .unwrap();
    assert!(computed, "another filter is another memo");
    for memo in fs::read_dir(memos.path()).unwrap() {
        fs::write(memo.unwrap().path(), "{not json").unwrap();
    }
    let (digest, computed) = through_memo(memos.path(), root.path(), later());
    assert!(computed);
    assert_eq!(digest, digest_entries(&entries).unwrap());
}

#[test]
fn the_folder_keeps_the_most_recent_memos() {
    let memos = tempfile::tempdir().unwrap();
    let roots: Vec<_> = (0..4).map(|_| tree()).collect();
    for root in &roots {
        through_memo(memos.path(), root.path(), later());
    }
    prune(memos.path(), 2).unwrap();
    assert_eq!(fs::read_dir(memos.path()).unwrap().count(), 2);
}

#[test]
fn without_a_memo_folder_the_digest_is_computed() {
    let root = tree();
    let entries = collect_tree(root.path()).unwrap();
    let got = digest(None, root.path(), "skips", &entries, digest_entries).unwrap();
    assert_eq!(got, digest_entries(&entries).unwrap());
}
