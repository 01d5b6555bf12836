//! The fast reader against granit on real manifests: every `.yaml`/`.yml` file of the four
//! snapshots, the remote mirror and the goldens (`../shared/kubeflow`, or
//! `$KFCTL_TEST_UPSTREAM`), as they are and with seeded small edits. The fast reader must
//! decline or give exactly granit's documents and bare-null pointers, under every reading
//! mode the crate uses (the goldens, kustomize's own output and four fifths of the bytes,
//! under the default mode only: the other modes are for the files people write); and it must
//! accept the large majority of the real files. Files are checked on all cores.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::parse;
use crate::read::{Dialect, LIMITS, Limits, parse_documents_granit};
use crate::split::split_at_documents;

/// The reading modes of the crate's entry points.
fn modes() -> [(&'static str, Limits, Dialect); 4] {
    [
        ("default", LIMITS, Dialect::GoYamlV3),
        ("annotation_text", Limits { annotation_text: true, ..LIMITS }, Dialect::GoYamlV3),
        ("last_key_wins", Limits { last_key_wins: true, ..LIMITS }, Dialect::GoYamlV3),
        ("helm_values", LIMITS, Dialect::HelmValues),
    ]
}

/// Every distinct YAML text under the test data, with one path it was found at.
fn corpus() -> Vec<(PathBuf, String)> {
    let root = PathBuf::from(env!("KFCTL_YAML_SHARED_DIR"));
    let mut dirs: Vec<PathBuf> =
        ["v1.10.2", "v1.11.0", "26.03", "26.03.1"].iter().map(|r| root.join("manifests").join(r)).collect();
    dirs.push(root.join("remote"));
    dirs.push(root.join("golden"));
    let mut files = Vec::new();
    for dir in &dirs {
        assert!(dir.is_dir(), "missing test data {}", dir.display());
        walk(dir, &mut files);
    }
    files.sort();
    let mut seen = HashSet::new();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            seen.insert(text.clone()).then_some((path, text))
        })
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            walk(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// Fast declines, or equals granit. Returns whether it accepted.
#[track_caller]
fn check(text: &str, what: &str, limits: Limits, dialect: Dialect) -> bool {
    let Some(fast) = parse(text, limits, dialect) else { return false };
    match parse_documents_granit(text, "t", 0, limits, dialect) {
        Ok(slow) => {
            if fast != slow {
                let at = fast.0.iter().zip(&slow.0).position(|(a, b)| a != b);
                let detail = at.map(|i| format!("doc {i}:\nfast  {}\ngranit {}", fast.0[i], slow.0[i]));
                panic!(
                    "{what}: fast reader differs from granit; {}",
                    detail.unwrap_or_else(|| "bare nulls or doc count".into())
                );
            }
        }
        Err(e) => panic!("{what}: fast reader accepted what granit refuses: {e}"),
    }
    true
}

#[test]
#[cfg_attr(
    kfctl_yaml_no_shared,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn fast_reader_equals_granit_on_every_manifest() {
    use rayon::prelude::*;
    let files = corpus();
    assert!(files.len() > 1000, "only {} files", files.len());
    let golden = PathBuf::from(env!("KFCTL_YAML_SHARED_DIR")).join("golden");
    for (name, limits, dialect) in modes() {
        let written = |(path, _): &&(PathBuf, String)| name == "default" || !path.starts_with(&golden);
        let checked: Vec<(bool, usize)> = files
            .par_iter()
            .filter(|f| written(f))
            .map(|(path, text)| {
                let what = format!("{} ({name})", path.display());
                // The parts a large stream is read in.
                if text.len() > 512 << 10 {
                    for (start, end) in split_at_documents(text, 128 << 10) {
                        check(&text[start..end], &format!("{what} [{start}..{end}]"), limits, dialect);
                    }
                }
                (check(text, &what, limits, dialect), text.len())
            })
            .collect();
        let accepted = checked.iter().filter(|(ok, _)| *ok).count();
        let bytes_accepted: usize = checked.iter().filter(|(ok, _)| *ok).map(|(_, len)| len).sum();
        let bytes: usize = checked.iter().map(|(_, len)| len).sum();
        println!(
            "{name}: fast reader accepted {accepted} of {} distinct files ({:.1} of {:.1} MB)",
            checked.len(),
            bytes_accepted as f64 / 1e6,
            bytes as f64 / 1e6
        );
        assert!(accepted * 10 >= checked.len() * 9, "{name}: accepted only {accepted} of {}", checked.len());
    }
}

/// A seeded xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One small edit of `text` at a random line.
fn mutate(text: &str, rng: &mut Rng) -> String {
    const INSERTS: &[&str] = &[
        "&a ", "*a", "!!str ", "? ", "\t", "\"", "'", "|", "|-", ">+", "#", " #", "- ", ": ", "  ", "\\", "[", "{",
        "]", "\n", "\n  ", "---\n", "...\n", "%", "<<: ", "~", "-", ":", "|2", "\r", "\u{feff}", "\u{85}",
    ];
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let at = rng.below(lines.len());
    let mut out = String::with_capacity(text.len() + 8);
    match rng.below(6) {
        0 => {
            for (i, line) in lines.iter().enumerate() {
                if i != at {
                    out.push_str(line);
                }
            }
        }
        1 => {
            for (i, line) in lines.iter().enumerate() {
                if i == at {
                    match rng.below(3) {
                        0 => out.push_str(line.strip_prefix(' ').unwrap_or(line)),
                        1 => out.push_str(line.strip_prefix("  ").unwrap_or(line)),
                        _ => {
                            out.push(' ');
                            out.push_str(line);
                        }
                    }
                } else {
                    out.push_str(line);
                }
            }
        }
        2 => {
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&text[..cut]);
        }
        _ => {
            let insert = INSERTS[rng.below(INSERTS.len())];
            for (i, line) in lines.iter().enumerate() {
                if i == at {
                    let mut col = rng.below(line.len() + 1);
                    while !line.is_char_boundary(col) {
                        col -= 1;
                    }
                    out.push_str(&line[..col]);
                    out.push_str(insert);
                    out.push_str(&line[col..]);
                } else {
                    out.push_str(line);
                }
            }
        }
    }
    out
}

#[test]
#[cfg_attr(
    kfctl_yaml_no_shared,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
fn fast_reader_declines_or_equals_granit_on_edited_manifests() {
    let files: Vec<(PathBuf, String)> = corpus().into_iter().filter(|(_, t)| t.len() < 40_000).collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut edits, mut accepted, mut refused) = (0, 0, 0);
    for (path, text) in files.iter().step_by(7) {
        let mut current = text.clone();
        for round in 0..12 {
            // Mostly one edit of the original, sometimes edits on edits.
            if round % 4 == 0 {
                current = text.clone();
            }
            current = mutate(&current, &mut rng);
            edits += 1;
            for (name, limits, dialect) in [modes()[0], modes()[3]] {
                let what = format!("{} edit {round} ({name})", path.display());
                let fast = parse(&current, limits, dialect);
                match parse_documents_granit(&current, "t", 0, limits, dialect) {
                    Ok(slow) => {
                        if let Some(fast) = fast {
                            assert_eq!(fast, slow, "{what}: differs from granit on\n{current}");
                            accepted += 1;
                        }
                    }
                    Err(e) => {
                        refused += 1;
                        assert!(fast.is_none(), "{what}: accepted what granit refuses ({e}):\n{current}");
                    }
                }
            }
        }
    }
    println!("{edits} edits: fast reader accepted {accepted} readings, granit refused {refused}");
    assert!(edits > 1000 && accepted > 0 && refused > 0);
}
