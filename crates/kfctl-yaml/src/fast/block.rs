//! Block collections and keys for the fast reader.
//!
//! A collection is identified by the column of its first entry: a mapping's keys and a
//! sequence's `-` all sit at exactly that column, on a line of their own or (for the first
//! entry of a compact form) after a `- `. A line indented more than the open collection, where
//! a new entry should start, is a continuation the reader does not handle (a multi-line plain
//! scalar, or an error): it declines.

use std::borrow::Cow;

use granit_parser::ScalarStyle;

use super::{Next, Reader};

/// A key as written: its text, style, and where its `:` ends.
struct Key<'t> {
    text: Cow<'t, str>,
    style: ScalarStyle,
    after: usize,
}

impl<'t> Reader<'t, '_, '_> {
    /// Whether a `-` at `at` starts a sequence entry (it is followed by a space or a line end).
    pub(super) fn is_item(&self, at: usize) -> bool {
        self.bytes.get(at) == Some(&b'-') && matches!(self.bytes.get(at + 1), None | Some(b' ' | b'\n'))
    }

    /// A block collection whose first entry is at byte `at`, column `col`.
    pub(super) fn collection(&mut self, col: usize, at: usize) -> Option<()> {
        if self.is_item(at) { self.sequence(col, at) } else { self.mapping(col, at) }
    }

    pub(super) fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        // Stay clear of the nesting and node limits: near them, granit decides.
        if self.depth + 4 >= self.limits.max_depth || self.b.nodes() >= self.limits.max_nodes / 2 {
            return None;
        }
        Some(())
    }

    fn sequence(&mut self, col: usize, mut at: usize) -> Option<()> {
        self.enter()?;
        self.b.open_seq(0).ok()?;
        loop {
            // `at` is a `-` at column `col`.
            let mut value = at + 1;
            while self.bytes.get(value) == Some(&b' ') {
                value += 1;
            }
            self.entry_value(col, col + (value - at), value, false)?;
            match self.peek()? {
                Next::Line(line) if line.indent == col && self.is_item(line.content()) => at = line.content(),
                Next::Line(line) if line.indent > col => return None,
                _ => break,
            }
        }
        self.b.close().ok()?;
        self.depth -= 1;
        Some(())
    }

    fn mapping(&mut self, col: usize, mut at: usize) -> Option<()> {
        self.enter()?;
        self.b.open_map(0).ok()?;
        loop {
            // `at` is a key at column `col`.
            let key = self.key(at)??;
            self.b.untagged_scalar(key.text, key.style, false).ok()?;
            let mut value = key.after;
            while self.bytes.get(value) == Some(&b' ') {
                value += 1;
            }
            // A value on the key's line is never a collection (`a: b: c` is an error).
            match self.bytes.get(value) {
                None | Some(b'\n' | b'#') => self.entry_value(col, 0, value, true)?,
                Some(_) => self.scalar(col, value)?,
            }
            match self.peek()? {
                Next::Line(line) if line.indent == col => at = line.content(),
                Next::Line(line) if line.indent > col => return None,
                _ => break,
            }
        }
        self.b.close().ok()?;
        self.depth -= 1;
        Some(())
    }

    /// The value of an entry of the collection at column `parent`, starting at byte `at`
    /// (column `col`) of the entry's line: a compact collection, a scalar, or (when the line
    /// ends, or a comment starts) a node on the following lines. `same_column_sequence`: a
    /// sequence at the parent's own column is this value (a mapping's `key:` then `- item`).
    fn entry_value(&mut self, parent: usize, col: usize, at: usize, same_column_sequence: bool) -> Option<()> {
        match self.bytes.get(at) {
            None | Some(b'\n' | b'#') => {
                if at < self.bytes.len() && self.bytes[at - 1] != b' ' && self.bytes[at] == b'#' {
                    return None;
                }
                self.pos = self.after(self.line_end(at));
                match self.peek()? {
                    Next::Line(line) if line.indent > parent => {
                        let at = line.content();
                        match self.bytes[at] {
                            _ if self.is_item(at) || self.key(at)?.is_some() => self.collection(line.indent, at),
                            // A scalar on a line of its own.
                            b'|' | b'>' => None,
                            _ => self.scalar(parent, at),
                        }
                    }
                    Next::Line(line)
                        if line.indent == parent && same_column_sequence && self.is_item(line.content()) =>
                    {
                        self.sequence(parent, line.content())
                    }
                    // Nothing written: a bare null.
                    _ => self.b.untagged_scalar(Cow::Borrowed("~"), ScalarStyle::Plain, true).ok(),
                }
            }
            Some(_) if self.is_item(at) => self.sequence(col, at),
            Some(_) if self.key(at)?.is_some() => self.mapping(col, at),
            Some(_) => self.scalar(parent, at),
        }
    }

    /// The key at `at`: `Some(None)` when the text there is not a key, `None` to decline.
    fn key(&self, at: usize) -> Option<Option<Key<'t>>> {
        let text: &'t str = self.text;
        let (key, style, after) = match self.bytes[at] {
            quote @ (b'"' | b'\'') => {
                let Some((key, close)) = self.quoted(at, usize::MAX, quote, true)? else {
                    return Some(None);
                };
                let style = if quote == b'"' { ScalarStyle::DoubleQuoted } else { ScalarStyle::SingleQuoted };
                let mut colon = close;
                while self.bytes.get(colon) == Some(&b' ') {
                    colon += 1;
                }
                if self.bytes.get(colon) != Some(&b':') {
                    return Some(None);
                }
                (key, style, colon + 1)
            }
            // Block scalars and flow collections are values, never keys here.
            b'|' | b'>' | b'[' | b'{' => return Some(None),
            first => {
                if !self.plain_start(at, first) {
                    return None;
                }
                let mut i = at;
                loop {
                    match self.bytes.get(i) {
                        None | Some(b'\n') => return Some(None),
                        Some(b':') if matches!(self.bytes.get(i + 1), None | Some(b' ' | b'\n')) => break,
                        Some(b'#') if self.bytes[i - 1] == b' ' => return Some(None),
                        Some(b'\t') => return None,
                        _ => i += 1,
                    }
                }
                let key = text[at..i].trim_end_matches(' ');
                if key == "<<" {
                    return None;
                }
                (Cow::Borrowed(key), ScalarStyle::Plain, i + 1)
            }
        };
        if after - at > 1024 {
            return None;
        }
        if !matches!(self.bytes.get(after), None | Some(b'\n' | b' ')) {
            return Some(None);
        }
        Some(Some(Key { text: key, style, after }))
    }

    /// Whether a plain scalar may start with `first` (at `at`); `false` declines.
    pub(super) fn plain_start(&self, at: usize, first: u8) -> bool {
        match first {
            b'-' | b'?' | b':' => !matches!(self.bytes.get(at + 1), None | Some(b' ' | b'\n' | b'\t')),
            b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@'
            | b'`' | b' ' | b'\t' | b'\n' => false,
            _ => true,
        }
    }
}
