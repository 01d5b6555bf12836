//! `kfctl-rs chart package`: an export as one Helm chart archive, byte for byte reproducible.
//!
//! The archive is what `helm package` of the exported folder holds, laid out as Helm's
//! `chartutil.Save` writes it: `<name>/Chart.yaml`, `<name>/values.yaml`,
//! `<name>/values.schema.json`, the templates, the other files, then each subchart the same way
//! under `<name>/charts/<component>/` (subcharts are folders inside the one archive, so the
//! umbrella needs no `Chart.lock` and no repository). Regular-file entries only, as Helm writes.
//!
//! Nothing in it depends on when or where it was made: entries in that fixed order, every entry
//! with mtime 0, mode 0644, uid and gid 0 and no owner names; the gzip header with mtime 0, no
//! file name and the "unknown" OS byte; one compression level. The same export gives the same
//! bytes, so the same `sha256` digest ([`Package::digest`]), on every machine.
//!
//! Provenance (`<archive>.prov`, as `helm package --sign` writes it) is [`super::provenance`].

use super::ChartFiles;
use crate::staging::{StageError, Staging};
use flate2::{Compression, GzBuilder};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One packaged chart: its archive's file name, bytes and digest.
#[derive(Debug, Clone)]
pub struct Package {
    /// `<name>-<version>.tgz`, as `helm package` names it.
    pub file_name: String,
    /// The chart's name (Chart.yaml `name`).
    pub name: String,
    /// The chart's version (Chart.yaml `version`).
    pub version: String,
    /// The archive.
    pub bytes: Vec<u8>,
}

impl Package {
    /// The archive's sha256 digest, as Helm and OCI registries write it: `sha256:<hex>`.
    pub fn digest(&self) -> String {
        format!("sha256:{}", hex::encode(Sha256::digest(&self.bytes)))
    }
}

/// Why a chart could not be packaged or its archive written.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The files have no readable Chart.yaml with a name and a version.
    #[error(
        "Chart.yaml: {message}; expected the files of `kfctl-rs chart export` (a Chart.yaml with name and version)"
    )]
    BadChart {
        /// What is wrong with it.
        message: String,
    },
    /// Writing the archive (or its provenance) failed.
    #[error("--out {path}: cannot write: {message}; choose a writable folder")]
    Io {
        /// The file being written.
        path: String,
        /// The I/O error.
        message: String,
    },
}

/// Package `files` (an export: path relative to the chart folder → contents) as one archive.
pub fn package(files: &BTreeMap<String, String>) -> Result<Package, PackageError> {
    let chart = files.get("Chart.yaml").ok_or_else(|| bad("missing at the export's root"))?;
    let (name, version) = name_and_version(chart)?;
    let mut tar = tar::Builder::new(Vec::new());
    for path in entry_order(files) {
        append(&mut tar, &format!("{name}/{path}"), files[path].as_bytes()).map_err(|e| bad(&e.to_string()))?;
    }
    let tarball = tar.into_inner().map_err(|e| bad(&e.to_string()))?;
    let bytes = gzip(&tarball).map_err(|e| bad(&e.to_string()))?;
    Ok(Package { file_name: format!("{name}-{version}.tgz"), name, version, bytes })
}

/// Write `bytes` as `dir/file_name`, all or nothing, mode 0600 (an export's values files can
/// hold credentials, so its archive can too). Returns the path written.
pub fn write_file(dir: &Path, file_name: &str, bytes: &[u8]) -> Result<PathBuf, PackageError> {
    let dest = dir.join(file_name);
    let io = |e: StageError| PackageError::Io { path: dest.display().to_string(), message: e.message };
    std::fs::create_dir_all(dir).map_err(|e| io(StageError::at(dir)(e)))?;
    let staged = Staging::file(dir, "package").map_err(io)?;
    std::fs::write(staged.path(), bytes).map_err(|e| io(StageError::at(staged.path())(e)))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let private = std::fs::Permissions::from_mode(super::write::PRIVATE);
        std::fs::set_permissions(staged.path(), private).map_err(|e| io(StageError::at(staged.path())(e)))?;
    }
    staged.place(&dest).map_err(io)?;
    Ok(dest)
}

fn bad(message: &str) -> PackageError {
    PackageError::BadChart { message: message.to_string() }
}

/// Chart.yaml's `name` and `version`.
pub(crate) fn name_and_version(chart: &str) -> Result<(String, String), PackageError> {
    let docs = kfctl_yaml::parse_stream(chart, "Chart.yaml").map_err(|e| bad(&e.to_string()))?;
    let doc = docs.first().ok_or_else(|| bad("empty"))?;
    let field = |key: &str| {
        doc.get(key)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| bad(&format!("no `{key}`")))
    };
    let name = field("name")?;
    if name.contains('/') || name.starts_with('.') {
        return Err(bad(&format!("name `{name}` is no chart name")));
    }
    Ok((name, field("version")?))
}

/// The paths in Helm's order: per chart Chart.yaml, values.yaml, values.schema.json, its
/// templates, its other files, then its subcharts (by name), each the same way.
fn entry_order(files: &ChartFiles) -> Vec<&str> {
    let mut paths: Vec<(Vec<(u8, &str)>, &str)> = files.keys().map(|p| (order_key(files, p), p.as_str())).collect();
    paths.sort();
    paths.into_iter().map(|(_, p)| p).collect()
}

/// A path's place: a subchart's files sort after its parent's own (rank 9, then the subchart's
/// name), recursively; a chart's own files by rank, then path.
fn order_key<'a>(files: &ChartFiles, path: &'a str) -> Vec<(u8, &'a str)> {
    let mut key = Vec::new();
    let mut rest = path;
    let mut base = String::new();
    while let Some(sub) = subchart_of(files, &base, rest) {
        key.push((9, sub));
        rest = &rest["charts/".len() + sub.len() + 1..];
        base = format!("{base}charts/{sub}/");
    }
    let rank = match rest {
        "Chart.yaml" => 0,
        "values.yaml" => 1,
        "values.schema.json" => 2,
        _ if rest.starts_with("templates/") => 3,
        _ => 4,
    };
    key.push((rank, rest));
    key
}

/// The subchart `rest` (a path inside the chart at `base`) belongs to, if any.
fn subchart_of<'a>(files: &ChartFiles, base: &str, rest: &'a str) -> Option<&'a str> {
    let (sub, inner) = rest.strip_prefix("charts/")?.split_once('/')?;
    (!inner.is_empty() && files.contains_key(&format!("{base}charts/{sub}/Chart.yaml"))).then_some(sub)
}

/// One regular file entry with nothing of the machine in its header.
pub(crate) fn append(tar: &mut tar::Builder<Vec<u8>>, path: &str, body: &[u8]) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(body.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    tar.append_data(&mut header, path, body)
}

/// gzip with a header that says nothing of the machine: mtime 0, no name, OS "unknown".
pub(crate) fn gzip(data: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = GzBuilder::new().mtime(0).operating_system(255).write(Vec::new(), Compression::new(6));
    encoder.write_all(data)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn files() -> ChartFiles {
        let mut f = ChartFiles::new();
        f.insert("Chart.yaml".into(), "# Written by kfctl-rs\napiVersion: v2\nname: kf\nversion: 1.2.3\n".into());
        f.insert("values.yaml".into(), "a: 1\n".into());
        f.insert("values.schema.json".into(), "{}\n".into());
        f.insert(".helmignore".into(), "argocd/\n".into());
        f.insert("README.md".into(), "r\n".into());
        f.insert("templates/NOTES.txt".into(), "n\n".into());
        f.insert("charts/b/Chart.yaml".into(), "apiVersion: v2\nname: b\nversion: 1.2.3\n".into());
        f.insert("charts/b/templates/x.yaml".into(), "kind: X\n".into());
        f.insert("charts/a/values.yaml".into(), "v: 1\n".into());
        f.insert("charts/a/Chart.yaml".into(), "apiVersion: v2\nname: a\nversion: 1.2.3\n".into());
        f
    }

    fn entries(bytes: &[u8]) -> Vec<(String, u32, u64, u64, u64, Vec<u8>)> {
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
        let mut out = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let h = entry.header().clone();
            let mut body = Vec::new();
            entry.read_to_end(&mut body).unwrap();
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            out.push((path, h.mode().unwrap(), h.mtime().unwrap(), h.uid().unwrap(), h.gid().unwrap(), body));
        }
        out
    }

    #[test]
    fn entries_follow_helms_layout_with_fixed_headers() {
        let pkg = package(&files()).unwrap();
        assert_eq!(pkg.file_name, "kf-1.2.3.tgz");
        let got = entries(&pkg.bytes);
        let names: Vec<&str> = got.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "kf/Chart.yaml",
                "kf/values.yaml",
                "kf/values.schema.json",
                "kf/templates/NOTES.txt",
                "kf/.helmignore",
                "kf/README.md",
                "kf/charts/a/Chart.yaml",
                "kf/charts/a/values.yaml",
                "kf/charts/b/Chart.yaml",
                "kf/charts/b/templates/x.yaml",
            ]
        );
        assert!(got.iter().all(|e| e.1 == 0o644 && e.2 == 0 && e.3 == 0 && e.4 == 0), "{got:?}");
        assert_eq!(got[1].5, b"a: 1\n");
    }

    #[test]
    fn gzip_header_holds_no_time_name_or_os() {
        let pkg = package(&files()).unwrap();
        // magic, CM=8, FLG=0 (no name, no comment, no extra), MTIME=0, XFL, OS=255
        assert_eq!(&pkg.bytes[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&pkg.bytes[4..8], &[0, 0, 0, 0]);
        assert_eq!(pkg.bytes[9], 255);
    }

    #[test]
    fn the_same_files_give_the_same_bytes_and_others_do_not() {
        let a = package(&files()).unwrap();
        let b = package(&files()).unwrap();
        assert_eq!(a.bytes, b.bytes);
        assert_eq!(a.digest(), b.digest());
        assert!(a.digest().starts_with("sha256:") && a.digest().len() == 7 + 64);
        let mut other = files();
        other.insert("values.yaml".into(), "a: 2\n".into());
        assert_ne!(package(&other).unwrap().digest(), a.digest());
    }

    #[test]
    fn long_paths_survive() {
        let mut f = files();
        let long = format!("charts/b/templates/{}.yaml", "x".repeat(150));
        f.insert(long.clone(), "k: v\n".into());
        let got = entries(&package(&f).unwrap().bytes);
        assert!(got.iter().any(|e| e.0 == format!("kf/{long}")), "{:?}", got.iter().map(|e| &e.0).collect::<Vec<_>>());
    }

    #[test]
    fn a_chart_without_name_or_version_is_refused() {
        let mut f = files();
        f.insert("Chart.yaml".into(), "apiVersion: v2\nname: kf\n".into());
        let err = package(&f).unwrap_err().to_string();
        assert!(err.contains("no `version`"), "{err}");
        f.remove("Chart.yaml");
        assert!(package(&f).unwrap_err().to_string().contains("missing"));
        f.insert("Chart.yaml".into(), "name: ../x\nversion: 1\n".into());
        assert!(package(&f).is_err());
    }
}
