//! Scalars: which style, and how each style is written, as libyaml (go-yaml v2) does it.
//!
//! Three steps, each a port of the emitter function named in brackets:
//!
//! 1. [`requested_style`] (go-yaml's `encoder.stringv`): a string with a line feed asks for a
//!    literal block, a string v2 would read back as another type (`"true"`, `"8080"`, `""`,
//!    `"1:20"`) asks for double quotes, anything else asks for plain.
//! 2. [`super::analyze::analyze`] (`yaml_emitter_analyze_scalar`) finds which styles the
//!    characters allow.
//! 3. [`select_style`] (`yaml_emitter_select_scalar_style`) downgrades the request: plain →
//!    single quotes → double quotes, literal → double quotes.
//!
//! The writers (`yaml_emitter_write_*_scalar`) then fold long plain and quoted scalars at spaces
//! once the column passes 80, escape in double quotes (`\t`, `\U0001F600`, `\"`...), and write
//! literal blocks with their indentation (`|2`) and chomping (`|-`, `|+`) indicators.
//!
//! Scalars here are always in block context (kustomize never writes a non-empty flow
//! collection), so libyaml's flow-context branches are left out.

use super::analyze::{Analysis, BOM, Shape, at, is_break, is_printable, width};
use super::emit::{BEST_INDENT, BEST_WIDTH, Context, Writer};
use super::resolve::plain_is_safe;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// The style go-yaml v2's encoder asks for a string.
pub(super) fn requested_style(s: &str) -> ScalarStyle {
    if s.contains('\n') {
        ScalarStyle::Literal
    } else if plain_is_safe(s) {
        ScalarStyle::Plain
    } else {
        ScalarStyle::DoubleQuoted
    }
}

/// Whether a string of [`Shape::visible`] bytes is written plain as it is, as a key or a
/// value, without analysis: its first byte is no indicator, it does not end with `:` (nor
/// start with `---` or `...`), and go-yaml v2 would read it back as a string. The resolver is
/// asked only about strings its first-byte hint (`resolve::hint`) could type: a sign, digit
/// or `.` start, or a word of at most five bytes from its table's initials (`false` is the
/// longest such word).
pub(super) fn is_plain_word(s: &str, shape: Shape) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    let indicator = match first {
        b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' => true,
        b'\'' | b'"' | b'%' | b'@' | b'`' => true,
        b'?' | b'-' => b.len() == 1,
        _ => false,
    };
    let document_marker = matches!(first, b'-' | b'.') && (b.starts_with(b"---") || b.starts_with(b"..."));
    if !shape.visible || indicator || last == b':' || document_marker {
        return false;
    }
    let maybe_typed = match first {
        b'+' | b'-' | b'.' | b'0'..=b'9' => true,
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => b.len() <= 5,
        _ => false,
    };
    !maybe_typed || plain_is_safe(s)
}

/// `yaml_emitter_select_scalar_style`, block context, no tags.
pub(super) fn select_style(requested: ScalarStyle, a: &Analysis, ctx: Context) -> ScalarStyle {
    let mut style = requested;
    if ctx.simple_key && a.multiline {
        style = ScalarStyle::DoubleQuoted;
    }
    if style == ScalarStyle::Plain && (!a.block_plain_allowed || (a.empty && ctx.simple_key)) {
        style = ScalarStyle::SingleQuoted;
    }
    if style == ScalarStyle::SingleQuoted && !a.single_quoted_allowed {
        style = ScalarStyle::DoubleQuoted;
    }
    if style == ScalarStyle::Literal && (!a.block_allowed || ctx.simple_key) {
        style = ScalarStyle::DoubleQuoted;
    }
    style
}

impl Writer<'_> {
    /// Copy the character at byte `i`; returns the index after it.
    fn write_at(&mut self, s: &str, i: usize) -> usize {
        let end = i + width(s.as_bytes()[i]);
        self.out.push_str(&s[i..end]);
        self.column += 1;
        end
    }

    /// libyaml's `write_break`: a line feed becomes a line break, other breaks are copied.
    fn write_break_at(&mut self, s: &str, i: usize) -> usize {
        if s.as_bytes()[i] == b'\n' {
            self.put_break();
            return i + 1;
        }
        let next = self.write_at(s, i);
        self.column = 0;
        next
    }

    pub(super) fn write_plain(&mut self, s: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        if !allow_breaks || self.column + s.len() <= BEST_WIDTH {
            self.out.push_str(s);
            self.column += columns(s);
        } else {
            self.write_folding(s, true, false);
        }
        self.whitespace = false;
        self.indention = false;
    }

    pub(super) fn write_single_quoted(&mut self, s: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        self.write_folding(s, allow_breaks, true);
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// The shared loop of `write_plain` and `write_single_quoted`: fold at a single space past
    /// the width, keep line breaks (doubling a line feed), double single quotes when quoting.
    /// Plain scalars reach it only with breaks allowed, and never with quotes or line breaks.
    fn write_folding(&mut self, s: &str, allow_breaks: bool, quoted: bool) {
        let b = s.as_bytes();
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < b.len() {
            if b[i] == b' ' {
                let inner = !quoted || (i > 0 && i + 1 < b.len());
                if allow_breaks && !spaces && self.column > BEST_WIDTH && inner && at(b, i + 1) != b' ' {
                    self.write_indent();
                    i += 1;
                } else {
                    i = self.write_at(s, i);
                }
                spaces = true;
            } else if is_break(b, i) {
                if !breaks && b[i] == b'\n' {
                    self.put_break();
                }
                i = self.write_break_at(s, i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if quoted && b[i] == b'\'' {
                    self.put('\'');
                }
                // This character and the ones up to the next space, break or quote take the
                // same path one by one; copy them at once.
                let end = (i + 1..b.len())
                    .find(|&j| match b[j] {
                        b' ' => true,
                        b'\'' => quoted,
                        b'\r' | b'\n' | 0xC2 | 0xE2 => is_break(b, j),
                        _ => false,
                    })
                    .unwrap_or(b.len());
                self.write_run(s, i, end);
                i = end;
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
    }

    pub(super) fn write_double_quoted(&mut self, s: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let b = s.as_bytes();
        // go-yaml's `is_bom` looks at the start of the value, not at the current character:
        // a value that starts with a BOM is escaped entirely.
        let escape_all = b.starts_with(BOM);
        let mut spaces = false;
        let mut i = 0;
        while i < b.len() {
            if escape_all || needs_escape(b, i) {
                let ch = s[i..].chars().next().unwrap_or('\0');
                i += ch.len_utf8();
                self.write_escape(ch);
                spaces = false;
            } else if b[i] == b' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i + 1 < b.len() {
                    self.write_indent();
                    if at(b, i + 1) == b' ' {
                        self.put('\\');
                    }
                    i += 1;
                } else {
                    i = self.write_at(s, i);
                }
                spaces = true;
            } else {
                let end = (i..b.len())
                    .find(|&j| match b[j] {
                        b' ' | b'"' | b'\\' => true,
                        0x21..=0x7E | 0x80..=0xBF => false,
                        _ => needs_escape(b, j),
                    })
                    .unwrap_or(b.len());
                self.write_run(s, i, end);
                i = end;
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_escape(&mut self, ch: char) {
        self.put('\\');
        let short = match ch {
            '\0' => '0',
            '\u{7}' => 'a',
            '\u{8}' => 'b',
            '\t' => 't',
            '\n' => 'n',
            '\u{b}' => 'v',
            '\u{c}' => 'f',
            '\r' => 'r',
            '\u{1b}' => 'e',
            '"' => '"',
            '\\' => '\\',
            '\u{85}' => 'N',
            '\u{a0}' => '_',
            '\u{2028}' => 'L',
            '\u{2029}' => 'P',
            _ => {
                let (letter, digits) = match ch as u32 {
                    0..=0xFF => ('x', 2),
                    0x100..=0xFFFF => ('u', 4),
                    _ => ('U', 8),
                };
                self.put(letter);
                for c in format!("{:0digits$X}", ch as u32).chars() {
                    self.put(c);
                }
                return;
            }
        };
        self.put(short);
    }

    /// A literal block; `text` says `s` is printable ASCII with line feeds as its only breaks.
    pub(super) fn write_literal(&mut self, s: &str, text: bool) {
        self.write_indicator("|", true, false, false);
        self.write_block_hints(s);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let b = s.as_bytes();
        let mut breaks = true;
        let mut i = 0;
        while i < b.len() {
            if is_break(b, i) {
                i = self.write_break_at(s, i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                let end = if text {
                    s[i..].find('\n').map_or(b.len(), |k| i + k)
                } else {
                    (i..b.len())
                        .find(|&j| matches!(b[j], b'\r' | b'\n' | 0xC2 | 0xE2) && is_break(b, j))
                        .unwrap_or(b.len())
                };
                self.write_run(s, i, end);
                i = end;
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// Copy `s[start..end]` (whole characters, no breaks), counting columns.
    fn write_run(&mut self, s: &str, start: usize, end: usize) {
        let run = &s[start..end];
        self.out.push_str(run);
        self.column += columns(run);
    }

    /// `yaml_emitter_write_block_scalar_hints`: an indentation indicator when the text starts
    /// with a space or break, `-` without a final break, `+` with more than one.
    fn write_block_hints(&mut self, s: &str) {
        let b = s.as_bytes();
        if at(b, 0) == b' ' || is_break(b, 0) {
            let hint = char::from(b'0' + BEST_INDENT as u8);
            self.write_indicator(hint.encode_utf8(&mut [0; 4]), false, false, false);
        }
        let last = last_char_start(b, b.len());
        let chomp = match last {
            None => Some("-"),
            Some(i) if !is_break(b, i) => Some("-"),
            Some(0) => Some("+"),
            Some(i) => last_char_start(b, i).filter(|&j| is_break(b, j)).map(|_| "+"),
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
    }
}

/// How many characters (columns, for libyaml) `s` holds.
fn columns(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().count() }
}

/// Characters written as escapes inside double quotes.
fn needs_escape(b: &[u8], i: usize) -> bool {
    !is_printable(b, i) || is_break(b, i) || matches!(b[i], b'"' | b'\\')
}

/// Start of the character that ends before byte `end`.
fn last_char_start(b: &[u8], end: usize) -> Option<usize> {
    let mut i = end.checked_sub(1)?;
    while i > 0 && b[i] & 0xC0 == 0x80 {
        i -= 1;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, shape};

    /// The word shortcut says "plain" exactly when the full style selection does, as a key and
    /// as a value.
    #[test]
    fn plain_words_are_what_style_selection_writes_plain() {
        let value = Context { mapping: true, simple_key: false };
        let key = Context { mapping: true, simple_key: true };
        let check = |s: &str| {
            let form = shape(s.as_bytes());
            let full = |ctx| select_style(requested_style(s), &analyze(s), ctx) == ScalarStyle::Plain;
            let word = is_plain_word(s, form);
            assert!(!word || (full(value) && full(key)), "{s:?} is no plain word");
            if form.visible && !s.is_empty() {
                assert_eq!(word, full(value), "{s:?}");
            }
        };
        let alphabet: Vec<char> = "yntfoYNOTF~a0.-+:?#'e_x".chars().collect();
        let (mut level, mut checked) = (vec![String::new()], 0);
        for _ in 0..4 {
            level = level.iter().flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}"))).collect();
            level.iter().for_each(|t| check(t));
            checked += level.len();
        }
        assert!(checked > 250_000, "{checked}");
        for word in [
            "true",
            "false",
            "FALSE",
            "falsey",
            "null",
            "nullable",
            "~",
            "yes",
            "Off",
            "offset",
            "n",
            "no",
            "none",
            "8080",
            "08",
            "1e3",
            "1:20",
            "1.16.2",
            "0x1F",
            "0b101",
            ".5",
            ".inf",
            "-.inf",
            "+1",
            "-",
            "-x",
            "?x",
            "a:",
            "a:b",
            "---x",
            "...x",
            "2024-01-01",
            "2024-01-01T00:00:00Z",
            "v1",
            "name",
            "type",
            "template",
            "*x",
            "&x",
            "%x",
            "@x",
            "`x",
            "!x",
            "|x",
            ">x",
            "'x",
            "\"x",
            "#x",
            "x#",
            "[x",
            "ü",
            "a b",
            "",
        ] {
            check(word);
        }
    }

    #[test]
    fn style_requests_follow_go_yaml_v2() {
        assert_eq!(requested_style("a\nb"), ScalarStyle::Literal);
        assert_eq!(requested_style("true"), ScalarStyle::DoubleQuoted);
        assert_eq!(requested_style("*"), ScalarStyle::Plain, "quoting is the emitter's choice");
        let value = Context { mapping: true, simple_key: false };
        let key = Context { mapping: true, simple_key: true };
        assert_eq!(select_style(ScalarStyle::Plain, &analyze("*"), value), ScalarStyle::SingleQuoted);
        assert_eq!(select_style(ScalarStyle::Plain, &analyze("a\tb"), value), ScalarStyle::DoubleQuoted);
        assert_eq!(select_style(ScalarStyle::Literal, &analyze("a \nb"), value), ScalarStyle::DoubleQuoted);
        assert_eq!(select_style(ScalarStyle::Literal, &analyze("a\nb"), key), ScalarStyle::DoubleQuoted);
    }
}
