//! `kfctl-rs support-bundle`: one archive of what a maintainer needs to help
//! (`kfctl::cluster::bundle`): status, the post-install check, the record, events and the
//! failing pods' bounded logs. No Secret is read; every text is scrubbed of the credentials the
//! render (when `--profile` is given) holds.

use crate::cli::SupportBundleArgs;
use crate::exit::Outcome;
use kfctl::cluster::redact::Redactor;

pub(crate) fn run(args: SupportBundleArgs) -> anyhow::Result<Outcome> {
    let redactor = match args.source.render.profile.is_empty() && args.source.objects.is_none() {
        true => Redactor::default(),
        false => {
            let (objects, _) = args.source.objects_and_meta()?;
            Redactor::from_docs(objects.iter().map(|o| &o.obj))
        }
    };
    let target = args.cluster.target();
    let report = super::runtime()?.block_on(kfctl::cluster::bundle::support_bundle(
        &target,
        &args.out,
        args.deadline.timeout,
        &redactor,
    ))?;
    super::output::print_report(args.output.format, &report, || {
        let mut text =
            format!("wrote {} ({} bytes, {} files)\n", report.path.display(), report.bytes, report.files.len());
        for problem in &report.problems {
            text.push_str(&format!("  not collected: {problem}\n"));
        }
        text
    })?;
    Ok(Outcome::Done)
}
