//! Parallel reading of large streams: split at document boundaries, parse the parts at once.
//!
//! A line that starts with `---` followed by a space, tab or line break always starts a new
//! document (YAML forbids such a line inside any scalar), and anchors never cross documents,
//! so the documents between two such lines can be parsed independently and concatenated.
//! Streams with directives (`%YAML`, `%TAG`, which bind to the following document) are parsed
//! in one piece, as are streams under [`PARALLEL_MIN_BYTES`].
//!
//! A part reports errors with lines relative to itself; the failing part is then parsed again
//! with its line offset so the error names the line in the whole stream. The node budget
//! applies per part (alias expansion never crosses a document; the input size bounds the rest).

use rayon::prelude::*;

use super::YamlError;
use super::read::{Limits, Parsed, parse_documents};

/// Streams smaller than this are parsed on the calling thread.
const PARALLEL_MIN_BYTES: usize = 512 << 10;
/// Parts are at least this large, so that splitting pays for itself.
const MIN_PART_BYTES: usize = 128 << 10;

pub(super) fn parse_stream_with(text: &str, origin: &str, limits: Limits) -> Result<Parsed, YamlError> {
    if text.len() > limits.max_input_bytes {
        let limit = format!("{} bytes, more than {}", text.len(), limits.max_input_bytes);
        return Err(YamlError::Limit { origin: origin.to_string(), limit });
    }
    if text.len() < PARALLEL_MIN_BYTES || text.starts_with('%') || text.contains("\n%") {
        return parse_documents(text, origin, 0, limits);
    }
    let parts = split_at_documents(text, part_size(text.len()));
    if parts.len() < 2 {
        return parse_documents(text, origin, 0, limits);
    }
    let results: Vec<Result<Parsed, YamlError>> =
        parts.par_iter().map(|&(start, end)| parse_documents(&text[start..end], origin, 0, limits)).collect();
    let (mut docs, mut bare) = (Vec::new(), Vec::new());
    for (result, &(start, end)) in results.into_iter().zip(&parts) {
        match result {
            Ok((part, part_bare)) => {
                docs.extend(part);
                bare.extend(part_bare);
            }
            Err(_) => {
                let offset = text.as_bytes()[..start].iter().filter(|&&b| b == b'\n').count();
                return parse_documents(&text[start..end], origin, offset, limits);
            }
        }
    }
    Ok((docs, bare))
}

fn part_size(len: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    (len / (threads * 4)).max(MIN_PART_BYTES)
}

/// Byte ranges covering `text`, each ending just before a `---` document start line, each
/// (but the last) at least `target` bytes long.
pub(super) fn split_at_documents(text: &str, target: usize) -> Vec<(usize, usize)> {
    let mut parts = Vec::new();
    let mut start = 0;
    while start + target < text.len() {
        match next_document_start(text, start + target) {
            Some(boundary) => {
                parts.push((start, boundary));
                start = boundary;
            }
            None => break,
        }
    }
    parts.push((start, text.len()));
    parts
}

/// The first line start at or after `from` that begins a document (`---` then a blank, a line
/// break or the end).
fn next_document_start(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut search = from;
    while let Some(found) = text.get(search..)?.find("\n---") {
        let line_start = search + found + 1;
        match bytes.get(line_start + 3) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r') => return Some(line_start),
            Some(_) => search = line_start,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::LIMITS;

    fn stream(docs: usize) -> String {
        (0..docs).map(|i| format!("---\nname: doc{i}\nbody: |\n  line\n  ---x\n")).collect()
    }

    #[test]
    fn splits_only_before_document_start_lines() {
        let text = stream(50);
        let parts = split_at_documents(&text, 100);
        assert!(parts.len() > 10);
        for &(start, end) in &parts {
            assert!(text[start..end].starts_with("---\n"), "part starts at a document");
        }
        assert_eq!(parts.last().map(|p| p.1), Some(text.len()));
        let dashes_then_text = "a: 1\n---x: 2\n";
        assert_eq!(split_at_documents(dashes_then_text, 1), vec![(0, dashes_then_text.len())]);
    }

    #[test]
    fn parallel_parse_equals_sequential_parse() {
        let text = stream(40_000);
        assert!(text.len() > PARALLEL_MIN_BYTES);
        let parallel = parse_stream_with(&text, "big.yaml", LIMITS).expect("parses");
        let sequential = parse_documents(&text, "big.yaml", 0, LIMITS).expect("parses");
        assert_eq!(parallel.0.len(), 40_000);
        assert_eq!(parallel, sequential);
    }

    #[test]
    fn errors_in_a_part_name_the_line_in_the_whole_stream() {
        let mut text = stream(40_000);
        text.push_str("---\nbad: [unclosed\n");
        let lines = text.lines().count();
        match parse_stream_with(&text, "big.yaml", LIMITS) {
            Err(YamlError::Syntax { line, .. }) => {
                assert!(line + 1 >= lines, "line {line} of {lines}")
            }
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }
}
