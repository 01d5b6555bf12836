//! A fast reader for the block-style YAML that real manifests are written in; granit for the rest.
//!
//! Nearly every manifest kustomize reads (and every build it writes) uses a small corner of
//! YAML: block mappings and block sequences (with the compact `- key: value` and `- - item`
//! forms, and a sequence at its key's indentation), single-line plain scalars, single- and
//! double-quoted scalars (with escapes and line folding), literal and folded block scalars with
//! any chomping (`|`, `|-`, `|+`, `>`, `>-`, `>+`), comments, `---` and `...` lines, and the
//! empty flow collections `[]` and `{}`. granit-parser reads all of YAML, but spends most of
//! its time on the generality (a token queue, simple-key bookkeeping, copies of every token).
//! This reader walks the text line by line instead, and drives the very same
//! [`Builder`] with the very same node sequence granit would produce, so typing (go-yaml v3's
//! resolver, [`super::typing`]), duplicate keys, annotation text, the Helm dialect, bare-null
//! pointers and node counting are shared code, not a second implementation.
//!
//! **The declining rule.** The reader returns `None` ("decline") as soon as it meets anything
//! it does not implement with certainty, and the caller then parses the same text with granit,
//! which also produces every error message. The reader never reports an error itself. It
//! declines on: anchors, aliases, tags, `<<` merge keys, complex keys (`?`), directives (`%`),
//! reserved indicators (`@`, `` ` ``), any tab outside the content of a block or quoted scalar,
//! carriage returns, a byte-order mark, control and other non-printable characters, plain
//! scalars that span lines (a more-indented line after a value), a scalar on a line of its own
//! (`key:` then a scalar on the next line), a scalar or an empty-looking oddity as a document's
//! root, flow collections other than `[]` and `{}`, block-scalar indentation indicators,
//! leading empty lines of a block scalar indented more than its first line, a block scalar
//! reaching an input that does not end with a line break, content after `...` without a new
//! `---`, keys longer than 1024 bytes, any indentation that does not line up exactly with an
//! open collection, and nesting or node counts anywhere near the [`Limits`]. An error the
//! [`Builder`] raises (a duplicate key, a limit) is a decline too, so granit reports it.
//!
//! The differential tests (`differential_tests.rs`) hold this to the promise: on every
//! manifest of the snapshots, the remote mirror and the goldens, and on seeded mutations of
//! them, the reader declines or gives exactly granit's documents and bare-null pointers.

mod block;
mod scalar;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod differential_tests;

use super::read::{Builder, Dialect, Limits, Parsed};

/// Read `text` with the fast reader, or decline (`None`): then granit must read it.
pub(crate) fn parse(text: &str, limits: Limits, dialect: Dialect) -> Option<Parsed> {
    if !printable(text.as_bytes()) {
        return None;
    }
    let mut builder = Builder::new("", 0, limits);
    builder.dialect = dialect;
    let mut reader = Reader { text, bytes: text.as_bytes(), pos: 0, depth: 0, limits, b: &mut builder };
    reader.stream()?;
    Some((builder.docs, builder.bare_by_doc))
}

/// No carriage return, byte-order mark, line or paragraph separator, next-line character, or
/// non-printable character: those are the parser's business.
fn printable(bytes: &[u8]) -> bool {
    // Mostly plain ASCII: look at 64 bytes at a time without branching, byte by byte only
    // where something stands out.
    let odd = |b: u8| !(0x20..0x7f).contains(&b) && b != b'\n' && b != b'\t';
    let mut start = 0;
    for chunk in bytes.chunks(64) {
        if chunk.iter().fold(false, |any, &b| any | odd(b)) && !printable_at(bytes, start, start + chunk.len()) {
            return false;
        }
        start += chunk.len();
    }
    true
}

fn printable_at(bytes: &[u8], start: usize, end: usize) -> bool {
    for i in start..end {
        let b = bytes[i];
        if b < 0x20 {
            if b != b'\n' && b != b'\t' {
                return false;
            }
        } else if b >= 0x7f {
            match b {
                0x7f => return false,
                // U+0080..U+009F (C1 controls and NEL).
                0xc2 if bytes.get(i + 1).is_some_and(|&c| c < 0xa0) => return false,
                // U+2028, U+2029.
                0xe2 if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) => {
                    return false;
                }
                // U+FEFF, U+FFFE, U+FFFF.
                0xef if matches!(
                    (bytes.get(i + 1), bytes.get(i + 2)),
                    (Some(0xbb), Some(0xbf)) | (Some(0xbf), Some(0xbe | 0xbf))
                ) =>
                {
                    return false;
                }
                _ => {}
            }
        }
    }
    true
}

/// A line with content: where it starts, and how many spaces indent it.
#[derive(Clone, Copy)]
struct Line {
    start: usize,
    indent: usize,
}

impl Line {
    fn content(&self) -> usize {
        self.start + self.indent
    }
}

/// What comes next, past blank and comment lines.
enum Next {
    Eof,
    /// `---` (true) or `...` (false) at the start of a line.
    Marker(bool, Line),
    Line(Line),
}

struct Reader<'t, 'b, 'o> {
    text: &'t str,
    bytes: &'t [u8],
    /// The start of the line to read next (or the end of input).
    pos: usize,
    /// Open collections.
    depth: usize,
    limits: Limits,
    b: &'b mut Builder<'o>,
}

impl Reader<'_, '_, '_> {
    /// The index of the `\n` ending the line that holds `from`, or the end of input.
    fn line_end(&self, from: usize) -> usize {
        self.bytes[from..].iter().position(|&b| b == b'\n').map_or(self.bytes.len(), |i| from + i)
    }

    /// The start of the line after the one that ends at `end`.
    fn after(&self, end: usize) -> usize {
        (end + 1).min(self.bytes.len())
    }

    fn spaces(&self, from: usize) -> usize {
        self.bytes[from..].iter().take_while(|&&b| b == b' ').count()
    }

    /// Skip blank and comment lines from `self.pos`; `None` declines (a tab in indentation,
    /// a directive, or a line that only looks like a document marker).
    fn peek(&mut self) -> Option<Next> {
        loop {
            let start = self.pos;
            if start >= self.bytes.len() {
                return Some(Next::Eof);
            }
            let indent = self.spaces(start);
            let at = start + indent;
            match self.bytes.get(at) {
                None => {
                    self.pos = self.bytes.len();
                    return Some(Next::Eof);
                }
                Some(b'\n') => {
                    self.pos = at + 1;
                    continue;
                }
                Some(b'#') => {
                    self.pos = self.after(self.line_end(at));
                    continue;
                }
                Some(b'\t' | b'%') => return None,
                Some(_) => {}
            }
            let line = Line { start, indent };
            let head = &self.bytes[start..];
            if indent == 0 && (head.starts_with(b"---") || head.starts_with(b"...")) {
                if !matches!(head.get(3), None | Some(b' ' | b'\n')) {
                    return None;
                }
                return Some(Next::Marker(head[0] == b'-', line));
            }
            return Some(Next::Line(line));
        }
    }

    /// After a node that ends at `at` on its line: only spaces and a comment may follow. Moves
    /// to the next line.
    fn end_line(&mut self, mut at: usize) -> Option<()> {
        let start = at;
        while self.bytes.get(at) == Some(&b' ') {
            at += 1;
        }
        match self.bytes.get(at) {
            None => self.pos = self.bytes.len(),
            Some(b'\n') => self.pos = at + 1,
            Some(b'#') if at > start => self.pos = self.after(self.line_end(at)),
            Some(_) => return None,
        }
        Some(())
    }

    fn stream(&mut self) -> Option<()> {
        // After `...`, only `---` may start the next document.
        let mut ended = false;
        loop {
            match self.peek()? {
                Next::Eof => return Some(()),
                Next::Marker(start, line) => {
                    self.end_line(line.start + 3)?;
                    if start {
                        ended = false;
                        self.document()?;
                    } else {
                        ended = true;
                    }
                }
                Next::Line(_) if ended => return None,
                Next::Line(_) => self.document()?,
            }
        }
    }

    /// One document's content: a block mapping or sequence, or nothing.
    fn document(&mut self) -> Option<()> {
        let Next::Line(line) = self.peek()? else {
            return Some(());
        };
        self.collection(line.indent, line.content())?;
        if let Next::Line(_) = self.peek()? {
            return None;
        }
        self.b.document_end();
        Some(())
    }
}
