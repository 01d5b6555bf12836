//! `kfctl-rs images`: every image a profile's render would pull, each once and fully
//! qualified as upstream pins it (`image` fields and every place `charts/*/images.yaml`
//! names one), after the values' overrides and registry. `-o json` adds where each is used;
//! `-o script --mirror R` prints the skopeo commands that copy each image to R.

use super::{catalog_error, render_request};
use crate::cli::{ImagesArgs, ImagesOutput, Output};
use crate::error::usage;
use crate::exit::Outcome;
use kfctl::catalog::images::{self, ImageUse};
use kfctl::image::ImageRef;
use serde_json::json;
use std::collections::BTreeMap;

pub(crate) fn run(args: ImagesArgs) -> anyhow::Result<Outcome> {
    if let Some(mirror) = &args.mirror {
        images::check_registry("--mirror", mirror)?;
    }
    if args.output == ImagesOutput::Script && args.mirror.is_none() {
        return Err(usage(
            "images -o script: the registry to copy to is missing; pass --mirror registry.example.com/kubeflow",
        ));
    }
    crate::commands::print_notice();
    let rendered = kfctl::catalog::render(&render_request(&args.render)?).map_err(catalog_error)?;
    let objects: Vec<_> = rendered.objects.into_iter().map(|o| o.obj).collect();
    let uses = images::uses(&objects);
    let mut by_reference: BTreeMap<&str, Vec<&ImageUse>> = BTreeMap::new();
    for u in &uses {
        by_reference.entry(&u.reference).or_default().push(u);
    }
    match args.output {
        ImagesOutput::Text => by_reference.keys().for_each(|r| println!("{r}")),
        ImagesOutput::Json | ImagesOutput::Yaml => {
            let list: Vec<_> = by_reference
                .iter()
                .map(|(reference, uses)| {
                    let used: Vec<_> = uses.iter().map(|u| json!({"object": u.object, "field": u.field})).collect();
                    json!({"image": reference, "usedBy": used})
                })
                .collect();
            let format = if args.output == ImagesOutput::Yaml { Output::Yaml } else { Output::Json };
            super::output::print_data(format, &list)?;
        }
        ImagesOutput::Script => {
            let mirror = args.mirror.as_deref().unwrap_or_default();
            println!("#!/bin/sh");
            println!(
                "# Copy every image of profile {} to {mirror} (run on a connected machine; needs skopeo",
                args.render.profile
            );
            println!("# and a login to {mirror}). Then install with --set global.imageRegistry={mirror}.");
            println!("set -eu");
            for reference in by_reference.keys() {
                println!("{}", copy_command(reference, mirror));
            }
        }
    }
    Ok(Outcome::Done)
}

/// The skopeo command that copies one image (every architecture, the manifest byte for
/// byte so digests stay valid) to the mirror, where `global.imageRegistry` will look for it.
/// A registry cannot be pushed to by digest, so an image pinned by digest only is pushed
/// under the tag `sha256-<hex>`; pulls by digest find it there.
fn copy_command(reference: &str, mirror: &str) -> String {
    let target = images::with_registry(reference, mirror);
    let parsed = ImageRef::parse(&target);
    let target = match (parsed.tag, parsed.digest) {
        (Some(tag), Some(_)) => format!("{}:{tag}", parsed.name()),
        (None, Some(digest)) => format!("{}:{}", parsed.name(), digest.replace(':', "-")),
        _ => target,
    };
    format!("skopeo copy --all --preserve-digests docker://{reference} docker://{target}")
}

#[cfg(test)]
mod tests {
    use super::copy_command;

    #[test]
    fn a_digest_only_image_is_pushed_under_a_tag_named_after_it_and_a_port_is_no_tag() {
        let copy = |image: &str| copy_command(image, "localhost:5000/m");
        assert!(copy("ghcr.io/k/x:v1@sha256:ab").ends_with(" docker://localhost:5000/m/k/x:v1"));
        assert!(copy("gcr.io/k/x@sha256:ab").ends_with(" docker://localhost:5000/m/k/x:sha256-ab"));
        assert!(copy("registry.io:443/k/x@sha256:ab").ends_with(" docker://localhost:5000/m/k/x:sha256-ab"));
        assert!(copy("mysql:8.0").ends_with(" docker://localhost:5000/m/mysql:8.0"));
    }
}
