//! Writing an entry, with the CRDs' deferred parts streamed out as they are made.
//!
//! An entry is a header line, the body (the inputs and one record an object), the schemas
//! region and the texts region (`deferred.rs`). A platform's entry is about 14 MB, 9 of them
//! the CRDs' texts and 3.6 their schemas. Those parts were once all made before the first
//! byte was written, 13 MB alive at once on top of the build: after the store they lay freed
//! but not yet given back to the system, and a first `chart export`, which stores an entry for
//! each of the peer variants it builds, peaked at 120 MB or more that way.
//!
//! Now the CRDs are taken [`BATCH`] at a time (made on all cores): each batch's schemas and
//! texts go straight to two unnamed side files and are dropped; only where each part landed
//! is kept, which the records need. The entry file is then written in its order: header,
//! body, and each side file copied in whole ([`std::io::copy`]: by the kernel, not through this
//! process's memory). The bytes are the same as before.
//!
//! A miss then gives its caller what a hit would ([`Stored::serve`]): with `defer_schemas`,
//! each CRD as its stub, its schemas and text read from the entry just written (through the
//! handle that wrote it, so another process's rename cannot swap the file under it), and with
//! `names`, only the objects so named. The whole build's schemas are freed at once instead of
//! being carried through the render: a first `template` or `chart export` holds no more than
//! a warm one.

use super::deferred::{self, Deferred, Placed, Regions};
use super::inputs::Input;
use super::{FORMAT, Header, Read, binary, checksum, unique};
use crate::resmap::ResMap;
use crate::resource::Resource;
use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// How many CRDs are made at once: enough for all cores, few enough to hold a few MB.
const BATCH: usize = 8;

/// An entry just written: its file (open), where its regions are, and where each object's
/// deferred parts went.
pub(super) struct Stored {
    regions: Regions,
    placed: Vec<Option<Placed>>,
}

/// Write the entry for `resources` (built from `inputs`) at `path`, through a temporary file
/// in `dir` renamed into place.
pub(super) fn store(dir: &Path, path: &Path, inputs: &[Input], resources: &ResMap) -> std::io::Result<Stored> {
    std::fs::create_dir_all(dir)?;
    let resources = resources.as_slice();
    let mut parts = SideParts::new(dir)?;
    let placed = parts.place_all(resources)?;
    let body = body(inputs, resources, &placed)?;
    let temp = dir.join(format!(".tmp-{}-{}", std::process::id(), unique()));
    let written = write_entry(&temp, &body, parts).and_then(|regions| std::fs::rename(&temp, path).map(|()| regions));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    Ok(Stored { regions: written?, placed })
}

impl Stored {
    /// The stored `resources` as a hit decodes them for `read` (see the module docs).
    pub(super) fn serve(self, resources: ResMap, read: Read, path: &Path) -> ResMap {
        if !read.defer_schemas && read.names.is_none() {
            return resources;
        }
        let regions = Arc::new(self.regions);
        let path: Arc<Path> = Arc::from(path);
        let named = |r: &Resource| read.wants(r.obj.pointer("/metadata/name").and_then(serde_json::Value::as_str));
        let served =
            resources.into_vec().into_iter().zip(self.placed).filter(|(r, _)| named(r)).map(|(built, placed)| {
                let mut resource = Resource::new(built.obj);
                resource.origin = built.origin;
                resource.influenced_by = built.influenced_by;
                if let Some(placed) = placed.filter(|_| read.defer_schemas) {
                    deferred::make_stub(&mut resource.obj, &placed);
                    let deferred = Deferred::new(regions.clone(), path.clone(), placed, &resource.obj);
                    resource.deferred = Some(Arc::new(deferred));
                }
                resource
            });
        let mut out = ResMap::new();
        out.replace_all(served.collect());
        out
    }
}

/// The schemas and texts of the CRDs written so far, each region in a side file of its own.
struct SideParts {
    schemas: BufWriter<File>,
    texts: BufWriter<File>,
    schemas_len: u64,
    texts_len: u64,
    texts_crc: crc32fast::Hasher,
}

impl SideParts {
    fn new(dir: &Path) -> std::io::Result<Self> {
        let side = || tempfile::tempfile_in(dir).map(|file| BufWriter::with_capacity(1 << 20, file));
        Ok(SideParts {
            schemas: side()?,
            texts: side()?,
            schemas_len: 0,
            texts_len: 0,
            texts_crc: crc32fast::Hasher::new(),
        })
    }

    /// Where each resource's deferred parts are (`None` for one kept whole), writing them out
    /// a batch of CRDs at a time.
    fn place_all(&mut self, resources: &[Resource]) -> std::io::Result<Vec<Option<Placed>>> {
        use rayon::prelude::*;
        let mut placed: Vec<Option<Placed>> = vec![None; resources.len()];
        let crds: Vec<usize> =
            (0..resources.len()).filter(|&i| !deferred::deferrable(&resources[i].obj).is_empty()).collect();
        for batch in crds.chunks(BATCH) {
            let made: Vec<Option<deferred::Apart>> =
                batch.par_iter().map(|&i| deferred::apart(&resources[i].obj)).collect();
            for (&i, apart) in batch.iter().zip(made) {
                let Some(apart) = apart else { continue };
                placed[i] = Some(deferred::place(&apart, &mut self.schemas_len, &mut self.texts_len));
                for (_, encoded) in &apart.schemas {
                    self.schemas.write_all(encoded)?;
                }
                self.texts.write_all(apart.text.as_bytes())?;
                self.texts_crc.update(apart.text.as_bytes());
            }
        }
        Ok(placed)
    }
}

/// The entry's body: the inputs as JSON on a line, then each resource's record.
fn body(inputs: &[Input], resources: &[Resource], placed: &[Option<Placed>]) -> std::io::Result<Vec<u8>> {
    use rayon::prelude::*;
    let mut body = serde_json::to_vec(inputs)?;
    body.push(b'\n');
    let records: Vec<Vec<u8>> = resources
        .par_iter()
        .zip(placed)
        .map(|(resource, placed)| {
            let mut record = Vec::new();
            let influenced_by: Vec<&str> = resource.influenced_by.iter().map(|o| &**o).collect();
            binary::write_record(
                &mut record,
                resource.origin.as_deref(),
                &resource.obj,
                &influenced_by,
                placed.as_ref(),
            );
            record
        })
        .collect();
    body.reserve(records.iter().map(Vec::len).sum());
    records.iter().for_each(|record| body.extend_from_slice(record));
    Ok(body)
}

/// Write header, body and the two regions to `temp` and sync it; the file stays open to read
/// the regions from.
fn write_entry(temp: &Path, body: &[u8], parts: SideParts) -> std::io::Result<Regions> {
    let SideParts { schemas, texts, schemas_len, texts_len, texts_crc } = parts;
    let texts_crc = texts_crc.finalize();
    let created = File::options().read(true).write(true).create_new(true).open(temp)?;
    let mut file = BufWriter::with_capacity(1 << 20, created);
    let header = format!("{FORMAT} {:08x} {} {schemas_len} {texts_crc:08x}\n", checksum(body), body.len());
    debug_assert!(header.len() <= Header::MAX_LEN);
    file.write_all(header.as_bytes())?;
    file.write_all(body)?;
    let mut file = file.into_inner().map_err(|e| e.into_error())?;
    for side in [schemas, texts] {
        let mut side = side.into_inner().map_err(|e| e.into_error())?;
        side.rewind()?;
        std::io::copy(&mut side, &mut file)?;
    }
    file.sync_data()?;
    let schemas_at = (header.len() + body.len()) as u64;
    let texts_at = schemas_at + schemas_len;
    Ok(Regions { file, schemas_at, texts_at, texts_len, texts_crc, texts_whole: OnceLock::new() })
}
