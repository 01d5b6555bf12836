//! CRDs whose schemas a render leaves in the render cache.
//!
//! Nine tenths of a platform's render, by size, is the `openAPIV3Schema` of its CRDs'
//! versions. No step of a render reads or changes those schemas: the walks for images and pod
//! specs skip CRDs (`catalog::traverse`), every other row of the parameter table acts on
//! metadata or on other kinds, and the one step that rewrites strings anywhere (the references
//! to a renamed generated object, `rehash::rename_references`) attaches a CRD's
//! schemas first when they may hold the old name. So a warm render reads each CRD from the
//! render cache as a *stub*, its schemas `null` ([`kfctl_kustomize::build_cache::Deferred`]),
//! and:
//!
//! - [`super::render::render`] attaches every schema before it returns: what callers get is
//!   always whole;
//! - [`render_stream`] (`template` to standard output) writes a CRD the values left unchanged
//!   from the YAML text the cache holds for it, never building its tree; one they changed
//!   (`global.commonLabels`, `global.resourcePolicy`…) is attached and written as any object.
//!
//! The stream is byte for byte the YAML of [`super::render::render`]'s objects; a test holds
//! them equal with and without values that change CRDs.

use super::CatalogError;
use super::credentials::Credential;
use super::profile::Resolved;
use super::render::{RenderRequest, RenderedObject};
use rayon::prelude::*;

/// Put `object`'s deferred schemas back (nothing when it has none).
pub(crate) fn attach(object: &mut RenderedObject) -> Result<(), CatalogError> {
    if let Some(deferred) = object.deferred.take() {
        deferred.attach(&mut object.obj)?;
    }
    Ok(())
}

/// [`attach`] every object, on all cores.
pub(crate) fn attach_all(objects: &mut [RenderedObject]) -> Result<(), CatalogError> {
    objects.par_iter_mut().filter(|o| o.deferred.is_some()).try_for_each(attach)
}

/// A render on its way to standard output: what [`render_stream`] gives.
pub struct Stream {
    /// The resolved profile (its warnings are the render's).
    pub profile: Resolved,
    /// Upstream default credentials still in the output (values left them unset).
    pub default_credentials: Vec<&'static Credential>,
    /// The objects; a CRD may be a stub whose text the render cache holds.
    objects: Vec<RenderedObject>,
}

/// Render a profile with values for writing as one YAML stream ([`Stream::write_yaml`]): the
/// CRDs the values leave unchanged stay as their cached text.
pub fn render_stream(req: &RenderRequest) -> Result<Stream, CatalogError> {
    let rendered = super::render::render_deferred(req)?;
    let mut objects = rendered.objects;
    let changed = |o: &&mut RenderedObject| o.deferred.as_ref().is_some_and(|d| !d.has_text_for(&o.obj));
    objects.par_iter_mut().filter(changed).try_for_each(attach)?;
    Ok(Stream { profile: rendered.profile, default_credentials: rendered.default_credentials, objects })
}

/// Documents written at a time: each chunk's texts are made in parallel, then written in
/// order, so their memory is reused from chunk to chunk.
const WRITE_CHUNK: usize = 128;

impl Stream {
    /// Write the objects as kustomize writes a build (documents separated by `---\n`), as
    /// `kfctl_yaml::write_yaml_stream` writes [`super::render::render`]'s objects.
    pub fn write_yaml(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for (c, chunk) in self.objects.chunks(WRITE_CHUNK).enumerate() {
            let texts: Vec<String> = chunk.par_iter().map(written).collect();
            for (i, (object, text)) in chunk.iter().zip(texts).enumerate() {
                if c > 0 || i > 0 {
                    out.write_all(b"---\n")?;
                }
                match &object.deferred {
                    Some(deferred) => deferred.write_text(out)?,
                    None => out.write_all(text.as_bytes())?,
                }
            }
        }
        Ok(())
    }
}

/// An object's YAML document; nothing for an unchanged CRD stub, whose text the render cache
/// holds ([`Stream::write_yaml`] copies it out).
fn written(object: &RenderedObject) -> String {
    match &object.deferred {
        Some(_) => String::new(),
        None => kfctl_yaml::to_yaml(&object.obj),
    }
}
