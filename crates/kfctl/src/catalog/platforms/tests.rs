use super::*;

fn entry(repositories: &[&str], tags: &[&str], platforms: &[&str]) -> Entry {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    Entry {
        repositories: strings(repositories),
        tags: strings(tags),
        platforms: strings(platforms),
        source: "https://example.org/s".into(),
        says: "it says so".into(),
    }
}

#[test]
fn the_data_file_parses_every_entry_has_a_source_and_os_arch_platforms() {
    let all = entries().expect("charts/image-platforms.yaml is valid");
    assert!(all.len() >= 5, "{all:?}");
    let mut seen = std::collections::BTreeSet::new();
    for e in all {
        assert!(!e.source.trim().is_empty() && !e.says.trim().is_empty(), "{e:?}");
        assert!(e.platforms.iter().all(|p| is_platform(p) && p.starts_with("linux/")), "{e:?}");
        for r in &e.repositories {
            let tags = if e.tags.is_empty() { vec!["*".to_string()] } else { e.tags.clone() };
            for t in tags {
                assert!(seen.insert(format!("{}:{t}", canonical(&ImageRef::parse(r)))), "{r}:{t} twice");
            }
        }
    }
    // the fact the cluster tests rely on
    let mlmd = lookup(all, "gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0").expect("known");
    assert!(mlmd.builds_for("amd64") && !mlmd.builds_for("arm64"));
    let kserve = lookup(all, "kserve/kserve-controller:v0.15.0").expect("Docker Hub short names match");
    assert!(kserve.builds_for("arm64") && kserve.builds_for("s390x"));
}

#[test]
fn a_bad_entry_is_refused_with_its_index() {
    let no_source = "images:\n- repositories: [x/y]\n  platforms: [linux/amd64]\n  source: ''\n  says: s\n";
    assert!(parse(no_source).unwrap_err().to_string().contains("images[0]: every entry names its source"));
    let bad = "images:\n- repositories: [x/y]\n  platforms: [amd64]\n  source: u\n  says: s\n";
    assert!(parse(bad).unwrap_err().to_string().contains("amd64: not an os/arch"));
    let tagged = "images:\n- repositories: ['x/y:v1']\n  platforms: [linux/amd64]\n  source: u\n  says: s\n";
    assert!(parse(tagged).unwrap_err().to_string().contains("names no tag or digest"));
    assert!(parse("images:\n- repositories: [x]\n  platform: []\n").is_err(), "unknown fields are refused");
}

#[test]
fn images_match_by_repository_whatever_the_tag_digest_or_docker_hub_spelling() {
    let data = [
        entry(&["ghcr.io/kubeflow/trainer/mlx-runtime"], &[], &["linux/amd64"]),
        entry(&["docker.io/library/mysql"], &["8.0"], &["linux/amd64", "linux/arm64/v8"]),
        entry(&["gcr.io/a/b"], &["1.0", "1.1"], &["linux/amd64"]),
    ];
    let found = |image: &str| lookup(&data, image).map(|e| e.repositories[0].as_str());
    assert_eq!(found("ghcr.io/kubeflow/trainer/mlx-runtime:v2.1.0"), Some("ghcr.io/kubeflow/trainer/mlx-runtime"));
    assert_eq!(found("ghcr.io/kubeflow/trainer/mlx-runtime@sha256:00"), Some("ghcr.io/kubeflow/trainer/mlx-runtime"));
    assert_eq!(found("ghcr.io/kubeflow/trainer/mlx-runtime-x:v1"), None, "another repository");
    assert_eq!(found("r.example.com/kubeflow/trainer/mlx-runtime:v1"), None, "moved to a mirror: unknown");
    assert_eq!(found("mysql:8.0"), Some("docker.io/library/mysql"));
    assert_eq!(found("docker.io/mysql:8.0@sha256:00"), Some("docker.io/library/mysql"));
    assert_eq!(found("mysql:8.4"), None, "a tag the source does not name");
    assert_eq!(found("gcr.io/a/b:1.1"), Some("gcr.io/a/b"));
    assert_eq!(found("gcr.io/a/b@sha256:00"), None, "a digest alone names no tag");
    assert!(data[1].builds_for("arm64") && !data[1].builds_for("arm"));
}

#[test]
fn coverage_names_missing_builds_and_counts_the_unknown() {
    let data = [
        entry(&["gcr.io/a/amd"], &[], &["linux/amd64"]),
        entry(&["gcr.io/a/both"], &[], &["linux/amd64", "linux/arm64"]),
    ];
    let images: Vec<String> = ["gcr.io/a/amd:1", "gcr.io/a/both:2", "web:1"].iter().map(|s| s.to_string()).collect();
    let archs = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let arm = coverage(&data, &images, &archs(&["amd64", "arm64"]));
    assert_eq!((arm.known, arm.unknown.clone()), (2, vec!["web:1".to_string()]));
    assert_eq!(arm.missing.len(), 1);
    assert_eq!(
        (arm.missing[0].image.as_str(), arm.missing[0].architectures.clone()),
        ("gcr.io/a/amd:1", archs(&["arm64"]))
    );
    assert_eq!(arm.missing[0].source, "https://example.org/s");
    let amd = coverage(&data, &images, &archs(&["amd64"]));
    assert!(amd.missing.is_empty() && amd.known == 2 && amd.unknown.len() == 1);
}
