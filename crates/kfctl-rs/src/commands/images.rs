//! `kfctl-rs images`: every image a profile's render would pull, one per line.

use super::{catalog_error, render_request};
use crate::cli::ImagesArgs;
use crate::exit::Code;

pub fn run(args: ImagesArgs) -> anyhow::Result<Code> {
    crate::commands::print_notice();
    let rendered = kfctl::catalog::render(&render_request(&args.render)?).map_err(catalog_error)?;
    let objects: Vec<_> = rendered.objects.into_iter().map(|o| o.obj).collect();
    for image in kfctl::catalog::images::collect(&objects) {
        println!("{image}");
    }
    Ok(Code::Success)
}
