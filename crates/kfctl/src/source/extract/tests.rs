//! A corpus of hostile archives, generated here at run time, each of which must be refused
//! with a `security:` error and nothing left outside (or inside) the destination's parent.

use super::*;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::Write;

/// A tar stream written header by header, so tests can say things `tar::Builder` refuses to.
#[derive(Default)]
struct RawTar(Vec<u8>);

impl RawTar {
    fn header(name: &[u8], kind: EntryType, size: u64, link: &[u8]) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        {
            let gnu = header.as_gnu_mut().unwrap();
            gnu.name[..name.len()].copy_from_slice(name);
            gnu.linkname[..link.len()].copy_from_slice(link);
        }
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        header
    }

    fn file(mut self, name: &str, data: &[u8]) -> Self {
        self.0.extend_from_slice(Self::header(name.as_bytes(), EntryType::Regular, data.len() as u64, b"").as_bytes());
        self.0.extend_from_slice(data);
        self.0.resize(self.0.len().next_multiple_of(512), 0);
        self
    }

    fn dir(mut self, name: &str) -> Self {
        self.0.extend_from_slice(Self::header(name.as_bytes(), EntryType::Directory, 0, b"").as_bytes());
        self
    }

    fn link(mut self, name: &str, kind: EntryType, target: &str) -> Self {
        self.0.extend_from_slice(Self::header(name.as_bytes(), kind, 0, target.as_bytes()).as_bytes());
        self
    }

    /// A header that claims `size` bytes, followed by only a little data.
    fn claimed(mut self, name: &str, size: u64) -> Self {
        self.0.extend_from_slice(Self::header(name.as_bytes(), EntryType::Regular, size, b"").as_bytes());
        self.0.extend_from_slice(&[b'x'; 512]);
        self
    }

    fn gzip(mut self) -> Vec<u8> {
        self.0.extend_from_slice(&[0u8; 1024]);
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(&self.0).unwrap();
        gz.finish().unwrap()
    }
}

/// A scratch area: `<tmp>/arena/` is the destination's parent, `<tmp>/` holds the archive.
struct Arena {
    tmp: tempfile::TempDir,
}

impl Arena {
    fn new() -> Arena {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("arena")).unwrap();
        Arena { tmp }
    }

    fn dest(&self) -> PathBuf {
        self.tmp.path().join("arena/dest")
    }

    fn run(&self, gz: &[u8], strip: bool, limits: &ExtractLimits) -> Result<Extracted, SourceError> {
        let archive = self.tmp.path().join("input.tar.gz");
        std::fs::write(&archive, gz).unwrap();
        extract_archive(&archive, &self.dest(), strip, limits)
    }

    /// Refused with `security:`, the message containing `needle`, and nothing left behind.
    fn refused(&self, gz: &[u8], needle: &str) {
        self.refused_with(gz, needle, &ExtractLimits::default());
    }

    fn refused_with(&self, gz: &[u8], needle: &str, limits: &ExtractLimits) {
        let err = self.run(gz, false, limits).expect_err("hostile archive was accepted").to_string();
        assert!(err.starts_with("security:"), "not a security refusal: {err}");
        assert!(err.contains(needle), "expected `{needle}` in: {err}");
        self.assert_nothing_written();
    }

    fn assert_nothing_written(&self) {
        let arena: Vec<_> = std::fs::read_dir(self.tmp.path().join("arena")).unwrap().collect();
        assert!(arena.is_empty(), "left behind in the destination's parent: {arena:?}");
        let mut top: Vec<_> = std::fs::read_dir(self.tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        top.sort();
        assert_eq!(top, ["arena", "input.tar.gz"], "something was written next to the arena");
    }
}

#[test]
fn github_style_archive_extracts_with_top_folder_stripped() {
    let arena = Arena::new();
    let gz = RawTar::default()
        .link("pax_global_header", EntryType::XGlobalHeader, "")
        .dir("manifests-abc/")
        .file("manifests-abc/example/kustomization.yaml", b"resources: []\n")
        .link("manifests-abc/example/k.yaml", EntryType::Symlink, "kustomization.yaml")
        .gzip();
    let done = arena.run(&gz, true, &ExtractLimits::default()).unwrap();
    assert_eq!((done.files, done.bytes), (1, 14));
    assert_eq!(std::fs::read_to_string(arena.dest().join("example/k.yaml")).unwrap(), "resources: []\n");
}

#[test]
fn strip_refuses_more_than_one_top_folder() {
    let arena = Arena::new();
    let gz = RawTar::default().file("a/x", b"1").file("b/y", b"2").gzip();
    let err = arena.run(&gz, true, &ExtractLimits::default()).unwrap_err().to_string();
    assert!(err.contains("exactly one top folder"), "{err}");
    arena.assert_nothing_written();
}

#[test]
fn refuses_dotdot() {
    Arena::new().refused(&RawTar::default().file("top/../../x", b"evil").gzip(), "`..`");
}

#[test]
fn refuses_absolute_path() {
    let arena = Arena::new();
    let target = arena.tmp.path().join("abs-target");
    let gz = RawTar::default().file(&format!("{}/evil", target.display()), b"evil").gzip();
    arena.refused(&gz, "absolute");
    assert!(!target.exists());
}

#[test]
fn refuses_drive_prefix_and_backslash() {
    Arena::new().refused(&RawTar::default().file("C:/evil", b"x").gzip(), "drive");
    Arena::new().refused(&RawTar::default().file("..\\evil", b"x").gzip(), "backslash");
}

#[test]
fn refuses_symlink_to_parent_then_file_through_it() {
    let gz = RawTar::default().link("l", EntryType::Symlink, "..").file("l/x", b"evil").gzip();
    Arena::new().refused(&gz, "points outside");
}

#[test]
fn refuses_writing_through_an_inside_symlink() {
    let gz = RawTar::default().dir("sub/").link("l", EntryType::Symlink, "sub").file("l/x", b"x").gzip();
    Arena::new().refused(&gz, "through a symlink");
}

#[test]
fn refuses_absolute_symlink() {
    Arena::new().refused(&RawTar::default().link("l", EntryType::Symlink, "/etc").gzip(), "absolute");
}

#[cfg(unix)]
#[test]
fn refuses_symlink_chain_that_escapes_for_real() {
    // Lexically `d/l2 -> l1/../..` stays at the root; really `l1` is `e`, so it climbs one above.
    let gz = RawTar::default()
        .dir("e/")
        .link("d/l1", EntryType::Symlink, "../e")
        .link("d/l2", EntryType::Symlink, "l1/../..")
        .gzip();
    Arena::new().refused(&gz, "resolves outside");
}

#[test]
fn refuses_dangling_symlink() {
    Arena::new().refused(&RawTar::default().link("l", EntryType::Symlink, "missing").gzip(), "does not resolve");
}

#[test]
fn refuses_hardlink() {
    let gz = RawTar::default().file("a", b"1").link("b", EntryType::Link, "a").gzip();
    Arena::new().refused(&gz, "hardlinks");
}

#[test]
fn refuses_device_node_and_fifo() {
    Arena::new().refused(&RawTar::default().link("dev", EntryType::Char, "").gzip(), "device");
    Arena::new().refused(&RawTar::default().link("blk", EntryType::Block, "").gzip(), "device");
    Arena::new().refused(&RawTar::default().link("fifo", EntryType::Fifo, "").gzip(), "fifos");
}

#[test]
fn refuses_duplicate_entries() {
    Arena::new().refused(&RawTar::default().file("a", b"1").file("a", b"2").gzip(), "appears twice");
}

#[test]
fn refuses_gzip_bomb() {
    let zeros = vec![0u8; 40 * 1024 * 1024];
    let gz = RawTar::default().file("a", &zeros).file("b", &zeros).file("c", &zeros).gzip();
    assert!(gz.len() < 1024 * 1024, "the bomb should be small: {} bytes", gz.len());
    Arena::new().refused(&gz, "gzip bomb");
}

#[test]
fn refuses_file_claiming_to_be_huge() {
    Arena::new().refused(&RawTar::default().claimed("big", 100 * 1024 * 1024 * 1024).gzip(), "per-file cap");
}

#[test]
fn refuses_oversized_file_and_total() {
    let small = ExtractLimits { max_file_bytes: 1000, max_total_bytes: 1500, ..ExtractLimits::default() };
    Arena::new().refused_with(&RawTar::default().file("a", &[b'x'; 1001]).gzip(), "per-file cap", &small);
    let gz = RawTar::default().file("a", &[b'x'; 1000]).file("b", &[b'y'; 1000]).gzip();
    Arena::new().refused_with(&gz, "total size cap", &small);
}

#[test]
fn refuses_100_000_entries() {
    let mut tar = RawTar::default();
    for i in 0..100_000 {
        tar = tar.file(&format!("d/f{i:06}"), b"");
    }
    Arena::new().refused(&tar.gzip(), "more than 50000 entries");
}

#[test]
fn refuses_non_gzip_input() {
    let arena = Arena::new();
    let err = arena.run(b"PK\x03\x04 not a tarball", false, &ExtractLimits::default()).unwrap_err().to_string();
    assert!(err.contains("not a gzip-compressed tar archive"), "{err}");
    arena.assert_nothing_written();
}

#[test]
fn path_rule_nul_is_refused() {
    assert_eq!(checked_relative_path(b"a\0b"), Err("NUL bytes are not allowed in paths"));
}

#[test]
fn path_rule_non_utf8_is_refused() {
    assert_eq!(checked_relative_path(b"a\xffb"), Err("paths must be UTF-8"));
}

#[test]
fn path_rule_dot_segments_are_dropped() {
    assert_eq!(checked_relative_path(b"./a//./b/"), Ok(PathBuf::from("a/b")));
}
