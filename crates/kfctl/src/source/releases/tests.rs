use super::*;

#[test]
fn the_default_kubernetes_range_is_the_oldest_minor_of_the_releases_with_trainer() {
    let v1_11 = select(Some("v1.11.0")).unwrap();
    assert_eq!(DEFAULT_KUBERNETES, format!(">={}.{}.0", v1_11.min_kubernetes.0, v1_11.min_kubernetes.1));
}

fn release(version: &'static str) -> Release {
    Release {
        version,
        commit: Some("0000000000000000000000000000000000000000"),
        min_kubernetes: (1, 30),
        max_kubernetes: Some((1, 32)),
        remote_bases: &[],
        digest: None,
        upgrade_notes: &[],
        no_rollback_from: None,
    }
}

const CATALOG: [&str; 4] = ["v1.9.1", "v1.10.0", "v1.10.2", "v1.11.0"];

fn catalog() -> Vec<Release> {
    CATALOG.iter().map(|v| release(v)).collect()
}

#[test]
fn v1_11_0_is_pinned_to_its_commit_and_kubernetes_range() {
    let r = select(Some("v1.11.0")).unwrap();
    assert_eq!(r.commit, Some("854bd3a21044f767204def71b2dcda83e376891f"));
    assert_eq!(r.kubernetes_range(), "1.33 and newer");
    assert!(r.supports_kubernetes(1, 33) && r.supports_kubernetes(1, 40) && !r.supports_kubernetes(1, 32));
}

#[test]
fn archive_url_uses_the_commit_not_the_tag() {
    let r = select(Some("1.11.0")).unwrap();
    assert_eq!(
        r.archive_url("https://github.com/"),
        "https://github.com/kubeflow/community-distribution/archive/854bd3a21044f767204def71b2dcda83e376891f.tar.gz"
    );
}

#[test]
fn a_release_with_no_commit_is_fetched_by_its_tag() {
    let r = select(Some("26.03.1")).unwrap();
    assert!(!r.is_pinned() && select(Some("26.03")).unwrap().is_pinned());
    assert_eq!(
        r.archive_url("https://github.com"),
        "https://github.com/kubeflow/community-distribution/archive/refs/tags/26.03.1.tar.gz"
    );
}

#[test]
fn the_repository_is_data() {
    assert_eq!(repository(), "kubeflow/community-distribution");
    let file = |repository: &str| {
        format!("repository: {repository}\nreleases:\n- version: '26.03'\n  kubernetes: {{min: '1.34'}}\n")
    };
    let loaded = parse_file(&file("example/fork-1.x")).unwrap();
    assert_eq!(loaded.repository, "example/fork-1.x");
    for bad in ["kubeflow", "a/b/c", "../x", "a/..", "a b/c", "/x", "a/"] {
        let err = parse_file(&file(bad)).err().unwrap_or_else(|| panic!("{bad} accepted"));
        assert!(err.contains("expected a GitHub `owner/name`"), "{bad}: {err}");
    }
    let missing = parse_file("releases: []\n").err().unwrap();
    assert!(missing.contains("repository"), "{missing}");
}

#[test]
fn the_catalog_knows_six_releases_and_pins_the_commits_it_confirmed() {
    let versions: Vec<&str> = known().iter().map(|r| r.version).collect();
    assert_eq!(versions, ["v1.10.0", "v1.10.1", "v1.10.2", "v1.11.0", "26.03", "26.03.1"]);
    for r in known() {
        let sha_ok = r.commit.is_none_or(|c| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(sha_ok, "{}: {:?}", r.version, r.commit);
        assert!(!r.remote_bases.is_empty(), "{}", r.version);
    }
    let v1_10_2 = select(Some("v1.10.2")).unwrap();
    assert_eq!(v1_10_2.commit, Some("d8d643f1a736b28c525bd9b8ee5c9b2f4a661b39"));
    assert_eq!(v1_10_2.kubernetes_range(), "1.32 to 1.33");
    assert_eq!(select(Some("v1.10.0")).unwrap().commit, Some("c1ae849873a36199af43c4e14d113bd60fc695d7"));
    assert_eq!(select(Some("v1.10.1")).unwrap().commit, Some("e636e839fe41255d5e22a8675748f8a5cc125e94"));
    let previous = select(Some("26.03")).unwrap();
    assert_eq!(previous.commit, Some("d68ebc7fab366ab40ddd1541d2ec22febb31bc83"));
    assert_eq!(previous.kubernetes_range(), "1.34 and newer");
    let current = select(Some("26.03.1")).unwrap();
    assert_eq!((current.commit, current.digest), (None, None));
    assert_eq!(current.kubernetes_range(), "1.35 and newer");
}

#[test]
fn upgrade_notes_are_those_of_the_releases_crossed() {
    let notes = upgrade_notes_between("v1.11.0", "26.03");
    assert!(!notes.is_empty() && notes.iter().all(|(v, _)| *v == "26.03"), "{notes:?}");
    assert!(notes.iter().any(|(_, n)| n.contains("MinIO")), "{notes:?}");
    assert!(upgrade_notes_between("26.03", "26.03").is_empty());
    assert!(upgrade_notes_between("v1.10.2", "v1.11.0").iter().all(|(v, _)| *v == "v1.11.0"));
    assert!(upgrade_notes_between("pre-rendered", "26.03").is_empty());
}

#[test]
fn calendar_versions_select_26_03_in_every_spelling() {
    for spelling in ["26.03", "26.3", "v26.03", "26.03.0", "V26.3.00"] {
        assert_eq!(select(Some(spelling)).unwrap().version, "26.03", "{spelling}");
    }
    assert_eq!(select(Some("1.11")).unwrap().version, "v1.11.0");
    assert!(select(Some("26.04")).is_err() && select(Some("26.03.9")).is_err());
}

#[test]
fn calendar_versions_select_26_03_1_in_every_spelling_and_it_is_the_newest() {
    for spelling in ["26.03.1", "26.3.1", "v26.03.1", "26.03.01", "v26.3.01", " 26.03.1 ", "26", "latest"] {
        assert_eq!(select(Some(spelling)).unwrap().version, "26.03.1", "{spelling}");
    }
    assert_eq!(select(None).unwrap().version, "26.03.1");
    assert_eq!(newest().version, "26.03.1");
    for not_it in ["26.03.10", "26.03.1.0", "26.031", "26.03.1-rc.2"] {
        assert!(select(Some(not_it)).is_err(), "{not_it}");
    }
}

#[test]
fn version_1_10_means_v1_10_2() {
    assert_eq!(select(Some("1.10")).unwrap().version, "v1.10.2");
    assert_eq!(select(Some("latest")).unwrap().version, "26.03.1");
}

#[test]
fn unknown_version_in_the_real_catalog_lists_all_newest_first() {
    let err = select(Some("v1.9.0")).unwrap_err().to_string();
    assert_eq!(
        err,
        "release v1.9.0: unknown version; known versions: 26.03.1, 26.03, v1.11.0, v1.10.2, v1.10.1, v1.10.0"
    );
    assert_eq!(known_versions(), "26.03.1, 26.03, v1.11.0, v1.10.2, v1.10.1, v1.10.0");
}

#[test]
fn glob_matches_stars_anywhere() {
    assert!(glob_match("*.sh", "hack.sh") && !glob_match("*.sh", "hack.shx"));
    assert!(glob_match("a*b*c", "aXbYc") && glob_match("*", "") && !glob_match("a*", "ba"));
}

#[test]
fn release_digest_covers_what_a_render_reads_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("kustomization.yaml"), "resources: [k.yaml]\n").unwrap();
    std::fs::write(tmp.path().join("k.yaml"), "a: 1\n").unwrap();
    let before = release_digest(tmp.path()).unwrap();
    std::fs::write(tmp.path().join("hack.sh"), "echo\n").unwrap();
    std::fs::write(tmp.path().join("README.md"), "# x\r\n").unwrap();
    assert_eq!(release_digest(tmp.path()).unwrap(), before, "a script or a README changes no release digest");
    std::fs::write(tmp.path().join("k.yaml"), "a: 2\n").unwrap();
    assert_ne!(release_digest(tmp.path()).unwrap(), before, "a named file is part of the render");
    assert_eq!(by_digest(&before), None);
}

#[test]
fn exact_version_with_or_without_v() {
    let c = catalog();
    assert_eq!(select_from(&c, "v1.10.0").unwrap().version, "v1.10.0");
    assert_eq!(select_from(&c, "1.10.0").unwrap().version, "v1.10.0");
}

#[test]
fn prefix_selects_newest_match() {
    let c = catalog();
    assert_eq!(select_from(&c, "1.10").unwrap().version, "v1.10.2");
    assert_eq!(select_from(&c, "v1").unwrap().version, "v1.11.0");
}

#[test]
fn prefix_matches_whole_parts_only() {
    let c = catalog();
    assert!(select_from(&c, "1.1").is_err());
}

#[test]
fn latest_is_the_highest_semver_not_the_last_listed() {
    let mut c = catalog();
    c.reverse();
    assert_eq!(select_from(&c, "latest").unwrap().version, "v1.11.0");
    assert_eq!(select(None).unwrap().version, known().last().unwrap().version);
}

#[test]
fn unknown_version_lists_known_ones() {
    let err = select_from(&catalog(), "2.0").unwrap_err().to_string();
    assert_eq!(err, "release 2.0: unknown version; known versions: v1.11.0, v1.10.2, v1.10.0, v1.9.1");
}

#[test]
fn no_rollback_from_is_data_and_no_real_release_states_one() {
    let text = "repository: a/b\nreleases:\n- version: '26.03'\n  kubernetes: {min: '1.34'}\n\
                - version: '26.03.1'\n  kubernetes: {min: '1.35'}\n  noRollbackFrom: 'its database moved on'\n";
    let loaded = parse_file(text).unwrap();
    let notes: Vec<_> = loaded.releases.iter().map(|r| r.no_rollback_from).collect();
    assert_eq!(notes, [None, Some("its database moved on")]);
    assert!(parse_file(&text.replace("noRollbackFrom", "noRollback")).is_err(), "a misspelt key is refused");
    // no confirmed upstream fact says a release cannot go back: no real entry has a note
    assert!(known().iter().all(|r| r.no_rollback_from.is_none()));
    assert_eq!(no_rollback_from("26.03.1"), None);
}

#[test]
fn bounded_kubernetes_range() {
    let r = release("v1.9.1");
    assert_eq!(r.kubernetes_range(), "1.30 to 1.32");
    assert!(!r.supports_kubernetes(1, 33) && r.supports_kubernetes(1, 31));
}
