//! Scalars for the fast reader: plain (one line), quoted (with escapes and line folding), block
//! (literal and folded, any chomping), and the empty flow collections `[]` and `{}`.
//!
//! The folding rules are YAML 1.2's (and libyaml's, which granit follows):
//! - a quoted scalar's line break becomes a space, or, when empty lines follow it, one `\n` per
//!   empty line; whitespace around the break is dropped (but not whitespace an escape wrote),
//!   and an escaped break (`\` at the end of a line) joins the lines without a space;
//! - a literal block scalar keeps its lines; a folded one joins two adjacent lines that both
//!   start with a non-blank character with a space (or the empty lines' `\n`s between them),
//!   and keeps every break next to a more-indented line;
//! - chomping: `-` drops the final line break, the default keeps one, `+` keeps them all.

use std::borrow::Cow;

use granit_parser::ScalarStyle;

use super::Reader;

#[derive(Clone, Copy, PartialEq)]
enum Chomp {
    Strip,
    Clip,
    Keep,
}

impl<'t> Reader<'t, '_, '_> {
    /// The scalar value starting at `at` of an entry of the collection at column `parent`;
    /// moves past it.
    pub(super) fn scalar(&mut self, parent: usize, at: usize) -> Option<()> {
        match self.bytes[at] {
            quote @ (b'"' | b'\'') => {
                let (text, after) = self.quoted(at, parent + 1, quote, false)??;
                let style = if quote == b'"' { ScalarStyle::DoubleQuoted } else { ScalarStyle::SingleQuoted };
                self.b.untagged_scalar(text, style, false).ok()?;
                self.end_line(after)
            }
            b'|' | b'>' => self.block_scalar(parent, at),
            b'{' => {
                if self.bytes.get(at + 1) != Some(&b'}') {
                    return None;
                }
                self.enter()?;
                self.b.open_map(0).ok()?;
                self.b.close().ok()?;
                self.depth -= 1;
                self.end_line(at + 2)
            }
            b'[' => self.flow_sequence(at),
            first if self.plain_start(at, first) => self.plain(parent, at),
            _ => None,
        }
    }

    /// The plain scalar at `at`, continued on following lines indented more than `parent`.
    fn plain(&mut self, parent: usize, at: usize) -> Option<()> {
        let (first, mut end, mut comment) = self.plain_line(at)?;
        let mut value = Cow::Borrowed(first);
        // Continuation lines: blank lines, then a line indented more than the parent.
        while !comment && end < self.bytes.len() {
            let mut line = end + 1;
            let mut empty = 0;
            let indent = loop {
                let spaces = self.spaces(line);
                match self.bytes.get(line + spaces) {
                    Some(b'\n') => {
                        empty += 1;
                        line += spaces + 1;
                    }
                    Some(b'\t') => return None,
                    _ => break spaces,
                }
            };
            let start = line + indent;
            if indent <= parent || matches!(self.bytes.get(start), None | Some(b'#')) {
                break;
            }
            if matches!(self.bytes[start], b'?' | b':')
                && matches!(self.bytes.get(start + 1), None | Some(b' ' | b'\n'))
            {
                return None;
            }
            let (more, more_end, more_comment) = self.plain_line(start)?;
            let value = value.to_mut();
            if empty == 0 {
                value.push(' ');
            }
            value.extend(std::iter::repeat_n('\n', empty));
            value.push_str(more);
            (end, comment) = (more_end, more_comment);
        }
        self.b.untagged_scalar(value, ScalarStyle::Plain, false).ok()?;
        self.pos = self.after(self.line_end(end));
        Some(())
    }

    /// One line of a plain scalar from `at`: its text (trailing spaces dropped), where its line
    /// ends, and whether a comment ends it.
    fn plain_line(&self, at: usize) -> Option<(&'t str, usize, bool)> {
        let text: &'t str = self.text;
        let bytes = self.bytes;
        let mut i = at;
        let end = loop {
            match bytes.get(i) {
                None | Some(b'\n') => break i,
                Some(b':') if matches!(bytes.get(i + 1), None | Some(b' ' | b'\n')) => return None,
                Some(b'#') if bytes[i - 1] == b' ' => {
                    let end = self.line_end(i);
                    return Some((text[at..i].trim_end_matches(' '), end, true));
                }
                Some(b'\t') => return None,
                _ => i += 1,
            }
        };
        let comment = false;
        Some((text[at..i].trim_end_matches(' '), end, comment))
    }

    /// A flow sequence of scalars on one line (`[a, "b", 'c']`, `[]`).
    fn flow_sequence(&mut self, at: usize) -> Option<()> {
        let text: &'t str = self.text;
        let bytes = self.bytes;
        self.enter()?;
        self.b.open_seq(0).ok()?;
        let mut i = at + 1;
        let mut first = true;
        loop {
            while bytes.get(i) == Some(&b' ') {
                i += 1;
            }
            match *bytes.get(i)? {
                b']' if first => break,
                quote @ (b'"' | b'\'') => {
                    let (value, after) = self.quoted(i, usize::MAX, quote, true)??;
                    let style = if quote == b'"' { ScalarStyle::DoubleQuoted } else { ScalarStyle::SingleQuoted };
                    self.b.untagged_scalar(value, style, false).ok()?;
                    i = after;
                }
                c if self.plain_start(i, c) => {
                    let start = i;
                    while !matches!(bytes.get(i)?, b',' | b']') {
                        if matches!(bytes[i], b'[' | b'{' | b'}' | b':' | b'#' | b'\t' | b'\n') {
                            return None;
                        }
                        i += 1;
                    }
                    let value = text[start..i].trim_end_matches(' ');
                    self.b.untagged_scalar(Cow::Borrowed(value), ScalarStyle::Plain, false).ok()?;
                }
                _ => return None,
            }
            first = false;
            while bytes.get(i) == Some(&b' ') {
                i += 1;
            }
            match bytes.get(i)? {
                b',' if bytes.get(i + 1) == Some(&b' ') => i += 1,
                b']' => break,
                _ => return None,
            }
        }
        self.b.close().ok()?;
        self.depth -= 1;
        self.end_line(i + 1)
    }

    /// The quoted scalar opening at `at`, and the index after its closing quote. Continuation
    /// lines must be indented at least `min_indent`. `one_line`: `Some(None)` if it does not
    /// close on its line.
    #[allow(clippy::type_complexity)]
    pub(super) fn quoted(
        &self,
        at: usize,
        min_indent: usize,
        quote: u8,
        one_line: bool,
    ) -> Option<Option<(Cow<'t, str>, usize)>> {
        let text: &'t str = self.text;
        let bytes = self.bytes;
        let double = quote == b'"';
        let mut out = String::new();
        let mut owned = false;
        let mut i = at + 1;
        // `out` is never trimmed below this: what escapes and earlier lines wrote.
        let mut keep = 0;
        loop {
            let run = bytes[i..].iter().position(|&b| b == quote || b == b'\n' || (double && b == b'\\'))?;
            let j = i + run;
            match bytes[j] {
                b'\'' if !double && bytes.get(j + 1) == Some(&b'\'') => {
                    out.push_str(&text[i..j]);
                    out.push('\'');
                    owned = true;
                    keep = out.len();
                    i = j + 2;
                }
                b'\n' => {
                    if one_line {
                        return Some(None);
                    }
                    out.push_str(&text[i..j]);
                    let trimmed = out.trim_end_matches(' ').len().max(keep);
                    if out[trimmed..].contains('\t') {
                        return None;
                    }
                    out.truncate(trimmed);
                    owned = true;
                    i = self.fold(j, min_indent, &mut out, false)?;
                    keep = out.len();
                }
                b'\\' => {
                    out.push_str(&text[i..j]);
                    owned = true;
                    i = self.escape(j, min_indent, one_line, &mut out)?;
                    keep = out.len();
                }
                _ => {
                    if !owned {
                        return Some(Some((Cow::Borrowed(&text[at + 1..j]), j + 1)));
                    }
                    out.push_str(&text[i..j]);
                    return Some(Some((Cow::Owned(out), j + 1)));
                }
            }
        }
    }

    /// From the line break at `at` inside a quoted scalar to the next line's content: one `\n`
    /// per empty line, else a space (none after an escaped break).
    fn fold(&self, at: usize, min_indent: usize, out: &mut String, escaped: bool) -> Option<usize> {
        let mut line = at + 1;
        let mut empty = 0;
        loop {
            let indent = self.spaces(line);
            match self.bytes.get(line + indent)? {
                b'\n' => {
                    empty += 1;
                    line += indent + 1;
                }
                b'\t' => return None,
                _ if indent < min_indent => return None,
                _ => {
                    if empty == 0 && !escaped {
                        out.push(' ');
                    }
                    out.extend(std::iter::repeat_n('\n', empty));
                    return Some(line + indent);
                }
            }
        }
    }

    /// The escape sequence at `at` (a backslash) into `out`; the index after it.
    fn escape(&self, at: usize, min_indent: usize, one_line: bool, out: &mut String) -> Option<usize> {
        let simple = match *self.bytes.get(at + 1)? {
            b'\n' if one_line => return None,
            b'\n' => return self.fold(at + 1, min_indent, out, true),
            b'0' => '\0',
            b'a' => '\x07',
            b'b' => '\x08',
            b't' | b'\t' => '\t',
            b'n' => '\n',
            b'v' => '\x0b',
            b'f' => '\x0c',
            b'r' => '\r',
            b'e' => '\x1b',
            b' ' => ' ',
            b'"' => '"',
            b'/' => '/',
            b'\\' => '\\',
            b'N' => '\u{85}',
            b'_' => '\u{a0}',
            b'L' => '\u{2028}',
            b'P' => '\u{2029}',
            kind @ (b'x' | b'u' | b'U') => {
                let digits = match kind {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self.text.get(at + 2..at + 2 + digits)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
                return Some(at + 2 + digits);
            }
            _ => return None,
        };
        out.push(simple);
        Some(at + 2)
    }

    /// The block scalar whose header is at `at`, value of an entry of the collection at
    /// column `parent`; moves to the line that ends it.
    fn block_scalar(&mut self, parent: usize, at: usize) -> Option<()> {
        let bytes = self.bytes;
        let text: &'t str = self.text;
        let literal = bytes[at] == b'|';
        let style = if literal { ScalarStyle::Literal } else { ScalarStyle::Folded };
        let mut i = at + 1;
        let (mut chomp, mut explicit) = (Chomp::Clip, None);
        for _ in 0..2 {
            match bytes.get(i) {
                Some(b'-') if chomp == Chomp::Clip => chomp = Chomp::Strip,
                Some(b'+') if chomp == Chomp::Clip => chomp = Chomp::Keep,
                Some(&digit @ b'1'..=b'9') if explicit.is_none() => explicit = Some(usize::from(digit - b'0')),
                _ => break,
            }
            i += 1;
        }
        match bytes.get(i)? {
            b'\n' => {}
            b' ' => {
                i += self.spaces(i);
                if !matches!(bytes.get(i)?, b'\n' | b'#') {
                    return None;
                }
            }
            _ => return None,
        }
        let mut line = self.line_end(i) + 1;
        // Leading empty lines, then the first content line (which sets the indentation unless
        // the header gives it).
        let (mut leading, mut widest_empty) = (0, 0);
        let indent = loop {
            let spaces = self.spaces(line);
            match bytes.get(line + spaces)? {
                b'\n' if explicit.is_none_or(|m| spaces <= parent + m) => {
                    leading += 1;
                    widest_empty = widest_empty.max(spaces);
                    line += spaces + 1;
                }
                b'\t' => return None,
                _ => break explicit.map_or(spaces, |m| parent + m),
            }
        };
        if self.spaces(line) < indent || indent <= parent {
            // No content: the next line belongs to the parent.
            if chomp == Chomp::Keep || widest_empty > parent {
                return None;
            }
            self.b.untagged_scalar(Cow::Borrowed(""), style, false).ok()?;
            self.pos = line;
            return Some(());
        }
        if widest_empty > indent {
            return None;
        }
        let mut out = "\n".repeat(leading);
        let mut previous_spaced: Option<bool> = None;
        let mut breaks = 0;
        'lines: loop {
            let end = self.line_end(line);
            if end == bytes.len() {
                return None;
            }
            let content = &text[line + indent..end];
            let spaced = content.starts_with([' ', '\t']);
            if let Some(previous) = previous_spaced {
                if !literal && !previous && !spaced {
                    if breaks == 0 {
                        out.push(' ');
                    }
                    out.extend(std::iter::repeat_n('\n', breaks));
                } else {
                    out.extend(std::iter::repeat_n('\n', breaks + 1));
                }
            }
            out.push_str(content);
            previous_spaced = Some(spaced);
            breaks = 0;
            line = end + 1;
            loop {
                if line >= bytes.len() {
                    break 'lines;
                }
                let spaces = self.spaces(line);
                match bytes.get(line + spaces)? {
                    b'\n' if spaces <= indent => {
                        breaks += 1;
                        line += spaces + 1;
                    }
                    b'\t' if spaces < indent => return None,
                    _ if spaces >= indent => continue 'lines,
                    _ => break 'lines,
                }
            }
        }
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip => out.push('\n'),
            Chomp::Keep => out.extend(std::iter::repeat_n('\n', breaks + 1)),
        }
        self.b.untagged_scalar(Cow::Owned(out), style, false).ok()?;
        self.pos = line;
        Some(())
    }
}
