//! How the engine reads a file: bounded in size, and decoded as kustomize decodes YAML.
//!
//! Every file a build reads (kustomization files, resources, patches, generator inputs, schemas)
//! is read through [`read_file`]: at most [`MAX_FILE_BYTES`], refused past it without reading
//! the rest, so `resources: [/dev/zero]` (under `LoadRestrictionsNone`) or a runaway file ends
//! at once with the file named. Text that is parsed as YAML goes through [`decode_text`], which
//! does what go-yaml (and so kustomize v5.6) does with a byte order mark: UTF-16 with a BOM
//! (little- or big-endian) is decoded, a UTF-8 BOM is kept for the YAML reader to skip, and
//! anything else must be UTF-8 (UTF-16 without a BOM is refused, as kustomize refuses it).

use std::io::Read;
use std::path::Path;

/// The largest file a build reads: 64 MiB (upstream's largest, `kserve_kubeflow.yaml`, is 3.7 MB).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Read `path`, refusing it past [`MAX_FILE_BYTES`] without reading further.
pub(crate) fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    read_at_most(path, MAX_FILE_BYTES)
}

fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    // Sized from the file's length, as `fs::read` is (a `Take` gives no size hint: the buffer
    // grew by doubling, copying each time).
    let size = file.metadata().map_or(0, |m| m.len().min(limit + 1));
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0) + 1);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        let message = format!(
            "larger than the {} MiB limit of a file a kustomization reads; check that the path names the file you meant",
            limit / (1024 * 1024)
        );
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, message));
    }
    Ok(bytes)
}

/// The text of a YAML file's bytes, as go-yaml reads them: UTF-16 behind its byte order mark
/// (`FF FE` little-endian, `FE FF` big-endian) is decoded; everything else must be UTF-8.
pub(crate) fn decode_text(bytes: Vec<u8>) -> std::io::Result<String> {
    let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let utf16 = |rest: &[u8], unit: fn([u8; 2]) -> u16| -> std::io::Result<String> {
        if !rest.len().is_multiple_of(2) {
            return Err(invalid("UTF-16 text (by its byte order mark) with an odd number of bytes"));
        }
        let units: Vec<u16> = rest.chunks_exact(2).map(|pair| unit([pair[0], pair[1]])).collect();
        String::from_utf16(&units).map_err(|_| invalid("UTF-16 text (by its byte order mark) that is not valid UTF-16"))
    };
    match bytes.as_slice() {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        _ => String::from_utf8(bytes).map_err(|_| invalid("stream did not contain valid UTF-8")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, bom: [u8; 2], unit: fn(u16) -> [u8; 2]) -> Vec<u8> {
        bom.into_iter().chain(text.encode_utf16().flat_map(unit)).collect()
    }

    #[test]
    fn utf16_behind_a_bom_is_decoded_either_way_round() {
        let text = "kind: ConfigMap # é ✓\n";
        assert_eq!(decode_text(utf16(text, [0xFF, 0xFE], u16::to_le_bytes)).unwrap(), text);
        assert_eq!(decode_text(utf16(text, [0xFE, 0xFF], u16::to_be_bytes)).unwrap(), text);
        assert_eq!(decode_text(text.as_bytes().to_vec()).unwrap(), text);
    }

    #[test]
    fn utf16_without_a_bom_or_broken_is_refused() {
        let bare: Vec<u8> = "a: b\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
        // no BOM: UTF-8 with NULs, which the YAML reader refuses (as go-yaml does)
        assert_eq!(decode_text(bare).unwrap(), "a\0:\0 \0b\0\n\0");
        assert!(decode_text(vec![0xFF, 0xFE, b'a']).is_err());
        assert!(decode_text(vec![0xFF, 0xFE, 0x00, 0xD8]).is_err(), "a lone surrogate");
        assert!(decode_text(vec![0xC3, 0x28]).is_err());
    }

    #[test]
    fn a_file_past_the_limit_is_refused_and_dev_zero_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.yaml");
        std::fs::write(&path, "x".repeat(11)).unwrap();
        assert_eq!(read_at_most(&path, 11).unwrap().len(), 11);
        let err = read_at_most(&path, 10).unwrap_err();
        assert!(err.to_string().starts_with("larger than the"), "{err}");
        let started = std::time::Instant::now();
        assert!(read_at_most(Path::new("/dev/zero"), 1024 * 1024).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
