//! A CRD's template made from its stub and the YAML text the render cache keeps for it.
//!
//! The export reads the render's CRDs as stubs (their version schemas `null`, the schemas left
//! in the render cache: [`crate::catalog::deferred`]). No parameter marks a point inside a
//! schema, so a CRD's template is its stub's template with each schema's lines put back. They
//! come from the CRD's cached YAML document: the stub is written with a placeholder line in
//! place of each schema (`<indent>schema: <placeholder>`), that text is laid beside the cached
//! document line by line, and each placeholder line is paired with the document's
//! `<indent>schema:` line and the more indented lines after it. Every other line must be the
//! same in both, or nothing is spliced and the CRD is templated whole (its schemas attached).
//!
//! So the template holds the same bytes as the template of the whole CRD: the schema lines are
//! the ones the writer wrote for the whole object, at the same place.

use kfctl_kustomize::build_cache::Deferred;
use serde_json::Value;
use std::ops::Range;

/// What a stub is templated as: the stub with a placeholder at each deferred schema, and each
/// placeholder line with the lines that replace it.
pub(crate) struct Spliced {
    /// The stub, each deferred `schema` a placeholder string.
    pub copy: Value,
    /// The whole CRD's cached YAML document.
    pub text: String,
    /// Each placeholder line (without its line break) and where in `text` the whole `schema:`
    /// block that replaces it is (its lines, each with its line break).
    pub blocks: Vec<(String, Range<usize>)>,
}

/// The placeholder standing for version `index`'s schema: plain text the writer writes as it is.
fn placeholder(index: usize) -> String {
    format!("kfctl-rs-deferred-schema-{index}-of-this-crd")
}

/// The splice of `stub` (a CRD whose schemas `deferred` holds), or `None` when its cached text
/// is not at hand or does not line up with the stub (then template the whole CRD).
pub(crate) fn splice(stub: &Value, deferred: &Deferred) -> Option<Spliced> {
    let text = deferred.text(stub)?;
    let mut copy = stub.clone();
    let mut placeholders = Vec::new();
    for index in deferred.versions() {
        let name = placeholder(index);
        if memchr::memmem::find(text.as_bytes(), name.as_bytes()).is_some() {
            return None;
        }
        *copy.pointer_mut(&format!("/spec/versions/{index}/schema"))? = Value::String(name.clone());
        placeholders.push(name);
    }
    let blocks = blocks(&kfctl_yaml::to_yaml(&copy), &text, &placeholders)?;
    Some(Spliced { copy, text, blocks })
}

/// Lay `stub` (the stub's text with placeholders) beside `whole` (the whole CRD's text): each
/// placeholder line with the block of `whole` at its place, if every other line is the same.
fn blocks(stub: &str, whole: &str, placeholders: &[String]) -> Option<Vec<(String, Range<usize>)>> {
    let mut out = Vec::new();
    let mut whole_lines = whole.split_inclusive('\n').peekable();
    let mut at = 0;
    for line in stub.split_inclusive('\n') {
        let content = line.strip_suffix('\n').unwrap_or(line);
        let holder = placeholders.iter().find(|p| content.trim_start().strip_prefix("schema: ") == Some(p.as_str()));
        let Some(_) = holder else {
            (whole_lines.next()? == line).then_some(())?;
            at += line.len();
            continue;
        };
        let indent = content.len() - content.trim_start().len();
        let key = whole_lines.next()?;
        (key.strip_suffix('\n')? == format!("{}schema:", &content[..indent])).then_some(())?;
        let start = at;
        at += key.len();
        while let Some(next) = whole_lines.next_if(|l| l.trim_end_matches('\n').is_empty() || indent_of(l) > indent) {
            at += next.len();
        }
        out.push((content.to_string(), start..at));
    }
    whole_lines.next().is_none().then_some(out)
}

/// The number of leading spaces of a line.
fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_placeholder_takes_the_block_at_its_place_and_the_rest_must_agree() {
        let holders = [placeholder(0), placeholder(2)];
        let stub = format!(
            "spec:\n  versions:\n  - name: a\n    schema: {}\n    served: true\n  - name: b\n  - name: c\n    schema: {}\n",
            holders[0], holders[1]
        );
        let whole = "spec:\n  versions:\n  - name: a\n    schema:\n      x:\n        y: |\n          one\n\n          two\n      z:\n      - 1\n    served: true\n  - name: b\n  - name: c\n    schema:\n      q: 1\n";
        let found = blocks(&stub, whole, &holders).expect("lines up");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].0, format!("    schema: {}", holders[0]));
        assert_eq!(
            &whole[found[0].1.clone()],
            "    schema:\n      x:\n        y: |\n          one\n\n          two\n      z:\n      - 1\n"
        );
        assert_eq!(&whole[found[1].1.clone()], "    schema:\n      q: 1\n");
        let mut spliced = String::new();
        for line in stub.split_inclusive('\n') {
            match found.iter().find(|(l, _)| format!("{l}\n") == line) {
                Some((_, block)) => spliced.push_str(&whole[block.clone()]),
                None => spliced.push_str(line),
            }
        }
        assert_eq!(spliced, whole);
        assert!(blocks(&stub, &whole.replace("served: true", "served: false"), &holders).is_none(), "a line differs");
        assert!(blocks(&stub, &format!("{whole}extra: 1\n"), &holders).is_none(), "the text goes on");
        assert!(blocks(&stub.replace("schema: ", "other: "), whole, &holders).is_none(), "no placeholder");
    }
}
