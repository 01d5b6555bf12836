//! `kfctl-rs compare EXPECTED ACTUAL`: a semantic diff of two YAML streams. Exit 0 when
//! equal, 1 when they differ, 2 on bad input.
//!
//! Secrets are compared on their real values, but the report never prints one: every value
//! of a Secret's `data`/`stringData` in either stream (in each form it may appear in) is
//! scrubbed from the text, unless `--show-secrets`.

use crate::cli::CompareArgs;
use crate::error::{CliError, usage};
use crate::exit::Outcome;
use kfctl::cluster::redact::Redactor;
use kfctl_yaml::compare;
use serde_json::Value;

fn read_stream(arg: &str) -> anyhow::Result<Vec<Value>> {
    let text = kfctl::input::read_stream(arg, "YAML stream")?;
    let origin = if arg == "-" { "stdin" } else { arg };
    let docs = kfctl_yaml::parse_stream(&text, origin).map_err(CliError::Input)?;
    Ok(docs.into_iter().filter(Value::is_object).collect())
}

pub(crate) fn run(args: CompareArgs) -> anyhow::Result<Outcome> {
    if args.expected == "-" && args.actual == "-" {
        return Err(usage("compare: only one of EXPECTED and ACTUAL can be - (stdin)"));
    }
    let mut expected = read_stream(&args.expected)?;
    let mut actual = read_stream(&args.actual)?;
    for stream in [&mut expected, &mut actual] {
        if args.ignore_helm_labels {
            stream.iter_mut().for_each(compare::strip_helm_metadata);
        }
        if args.ignore_hash_suffix {
            compare::mask_hash_suffixes(stream);
        }
    }
    let report = if args.ignore_order {
        compare::unordered_report(&expected, &actual, 200)
    } else {
        compare::ordered_report(&expected, &actual, 200)
    };
    match report {
        None => {
            println!("equal: {} objects", expected.len());
            Ok(Outcome::Done)
        }
        Some(text) => {
            let text = if args.show_secrets { text } else { secret_free(&expected, &actual, &text) };
            println!("{text}");
            Ok(Outcome::Differs)
        }
    }
}

/// The report with every Secret value of both streams replaced by `<redacted>`.
fn secret_free(expected: &[Value], actual: &[Value], report: &str) -> String {
    Redactor::from_docs(expected.iter().chain(actual)).scrub(report)
}
