//! Scalars: which style, and how each style is written, as libyaml (go-yaml v2) does it.
//!
//! Three steps, each a port of the emitter function named in brackets:
//!
//! 1. [`requested_style`] (go-yaml's `encoder.stringv`): a string with a line feed asks for a
//!    literal block, a string v2 would read back as another type (`"true"`, `"8080"`, `""`,
//!    `"1:20"`) asks for double quotes, anything else asks for plain.
//! 2. [`analyze`] (`yaml_emitter_analyze_scalar`) looks at the characters: indicators that
//!    forbid a plain scalar (`- `, `: `, ` #`, a leading `*`, `'`, `{`...), leading or trailing
//!    spaces and line breaks, characters libyaml deems non-printable (C0/C1 controls, tab, BOM,
//!    anything outside the Basic Multilingual Plane), space-before-break and break-before-space.
//! 3. [`select_style`] (`yaml_emitter_select_scalar_style`) downgrades the request: plain →
//!    single quotes → double quotes, literal → double quotes.
//!
//! The writers (`yaml_emitter_write_*_scalar`) then fold long plain and quoted scalars at spaces
//! once the column passes 80, escape in double quotes (`\t`, `\U0001F600`, `\"`...), and write
//! literal blocks with their indentation (`|2`) and chomping (`|-`, `|+`) indicators.
//!
//! Scalars here are always in block context (kustomize never writes a non-empty flow
//! collection), so libyaml's flow-context branches are left out.

use super::emit::{BEST_INDENT, BEST_WIDTH, Context, Writer};
use super::resolve::plain_is_safe;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// What `yaml_emitter_analyze_scalar` concludes about a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Analysis {
    pub empty: bool,
    pub multiline: bool,
    pub block_plain_allowed: bool,
    pub single_quoted_allowed: bool,
    pub block_allowed: bool,
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

/// `yaml_emitter_analyze_scalar` (the block-context half of it).
pub(super) fn analyze(value: &str) -> Analysis {
    let b = value.as_bytes();
    if b.is_empty() {
        return Analysis {
            empty: true,
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    if b.iter().all(|c| (0x21..=0x7E).contains(c)) {
        return analyze_visible_ascii(b);
    }
    analyze_general(b)
}

/// The full character-by-character analysis of a non-empty scalar.
fn analyze_general(b: &[u8]) -> Analysis {
    let mut block_indicators = b.starts_with(b"---") || b.starts_with(b"...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let mut i = 0;
    while i < b.len() {
        let w = width(b[i]);
        let followed_by_whitespace = i + w >= b.len() || is_blank(b, i + w);
        block_indicators |= match (i, b[i]) {
            (0, b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>') => true,
            (0, b'\'' | b'"' | b'%' | b'@' | b'`') => true,
            (0, b'?' | b':' | b'-') => followed_by_whitespace,
            (_, b':') => followed_by_whitespace,
            (_, b'#') => preceded_by_whitespace,
            _ => false,
        };
        special |= !is_printable(b, i);
        let last = i + w == b.len();
        if b[i] == b' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            (previous_space, previous_break) = (true, false);
        } else if is_break(b, i) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            (previous_space, previous_break) = (false, true);
        } else {
            (previous_space, previous_break) = (false, false);
        }
        preceded_by_whitespace = is_blank(b, i) || is_break(b, i) || b[i] == 0;
        i += w;
    }
    let edges = leading_space || leading_break || trailing_space || trailing_break;
    Analysis {
        empty: false,
        multiline: line_breaks,
        block_plain_allowed: !(edges
            || break_space
            || space_break
            || special
            || line_breaks
            || block_indicators),
        single_quoted_allowed: !(break_space || space_break || special),
        block_allowed: !(trailing_space || space_break || special),
    }
}

/// The common case, printable ASCII without spaces: only the first and last characters can be
/// indicators (a `: ` needs a following blank, a ` #` a preceding one), nothing else matters.
fn analyze_visible_ascii(b: &[u8]) -> Analysis {
    let first_forbids = match b[0] {
        b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' => true,
        b'\'' | b'"' | b'%' | b'@' | b'`' => true,
        b'?' | b'-' => b.len() == 1,
        _ => false,
    };
    let block_indicators =
        first_forbids || b.ends_with(b":") || b.starts_with(b"---") || b.starts_with(b"...");
    Analysis {
        empty: false,
        multiline: false,
        block_plain_allowed: !block_indicators,
        single_quoted_allowed: true,
        block_allowed: true,
    }
}

/// Width in bytes of the UTF-8 sequence starting with `lead`.
fn width(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

fn is_blank(b: &[u8], i: usize) -> bool {
    matches!(at(b, i), b' ' | b'\t')
}

/// `\r`, `\n`, NEL (U+0085), LS (U+2028), PS (U+2029).
fn is_break(b: &[u8], i: usize) -> bool {
    match at(b, i) {
        b'\r' | b'\n' => true,
        0xC2 => at(b, i + 1) == 0x85,
        0xE2 => at(b, i + 1) == 0x80 && matches!(at(b, i + 2), 0xA8 | 0xA9),
        _ => false,
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// libyaml's printable set: LF, 0x20-0x7E, and BMP characters from U+00A0 except surrogates,
/// the BOM and U+FFFE/U+FFFF. Tab, CR, other controls and 4-byte characters are not.
fn is_printable(b: &[u8], i: usize) -> bool {
    let (c0, c1, c2) = (at(b, i), at(b, i + 1), at(b, i + 2));
    match c0 {
        0x0A | 0x20..=0x7E => true,
        0xC2 => c1 >= 0xA0,
        0xC3..=0xEC | 0xEE => true,
        0xED => c1 < 0xA0,
        0xEF => !((c1 == 0xBB && c2 == 0xBF) || (c1 == 0xBF && matches!(c2, 0xBE | 0xBF))),
        _ => false,
    }
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
            self.column += s.chars().count();
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
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && inner
                    && at(b, i + 1) != b' '
                {
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
                i = self.write_at(s, i);
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
                    .find(|&j| b[j] == b' ' || (b[j] & 0xC0 != 0x80 && needs_escape(b, j)))
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

    pub(super) fn write_literal(&mut self, s: &str) {
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
                let end = (i..b.len()).find(|&j| is_break(b, j)).unwrap_or(b.len());
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
        self.column += run.bytes().filter(|b| b & 0xC0 != 0x80).count();
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
            Some(i) => last_char_start(b, i)
                .filter(|&j| is_break(b, j))
                .map(|_| "+"),
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
    }
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

    fn plain_ok(s: &str) -> bool {
        analyze(s).block_plain_allowed
    }

    #[test]
    fn indicators_forbid_plain() {
        for quoted in [
            "*", "- a", "-", ": a", "a: b", "x #y", "'a", "@x", "`x", "---", "...x", "? x",
        ] {
            assert!(!plain_ok(quoted), "{quoted:?}");
        }
        for plain in [
            "-a",
            "a:b",
            "a#b",
            "x# y",
            "1.16.2",
            "ünï",
            "http://x:80/y",
            "?x",
        ] {
            assert!(plain_ok(plain), "{plain:?}");
        }
    }

    #[test]
    fn edges_and_specials_forbid_plain_and_blocks() {
        assert!(!plain_ok(" leading"));
        assert!(!plain_ok("trailing "));
        let tab = analyze("a\tb");
        assert!(
            !tab.single_quoted_allowed && !tab.block_allowed,
            "tab is not printable"
        );
        assert!(
            !analyze("emoji 😀").single_quoted_allowed,
            "4-byte characters are special"
        );
        assert!(
            !analyze("line \nnext").block_allowed,
            "space before a break"
        );
        assert!(
            analyze("line\n next").block_allowed,
            "break before a space is fine in a block"
        );
        assert!(!analyze("line\n next").single_quoted_allowed);
        assert!(!analyze("text\n").block_plain_allowed);
        assert!(analyze("").block_plain_allowed && !analyze("").block_allowed);
    }

    /// The printable-ASCII shortcut must agree with the full analysis.
    #[test]
    fn visible_ascii_shortcut_equals_full_analysis() {
        let alphabet: Vec<u8> = b"a-:#?.*'\"|%@`!&,[]{}>1_".to_vec();
        let mut checked = 0;
        for len in 1..=4usize {
            let total = alphabet.len().pow(len as u32);
            for mut n in 0..total {
                let mut s = Vec::with_capacity(len);
                for _ in 0..len {
                    s.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                assert_eq!(
                    analyze_visible_ascii(&s),
                    analyze_general(&s),
                    "{:?}",
                    String::from_utf8_lossy(&s)
                );
                checked += 1;
            }
        }
        assert!(checked > 250_000);
    }

    #[test]
    fn style_requests_follow_go_yaml_v2() {
        assert_eq!(requested_style("a\nb"), ScalarStyle::Literal);
        assert_eq!(requested_style("true"), ScalarStyle::DoubleQuoted);
        assert_eq!(
            requested_style("*"),
            ScalarStyle::Plain,
            "quoting is the emitter's choice"
        );
        let value = Context {
            mapping: true,
            simple_key: false,
        };
        let key = Context {
            mapping: true,
            simple_key: true,
        };
        assert_eq!(
            select_style(ScalarStyle::Plain, &analyze("*"), value),
            ScalarStyle::SingleQuoted
        );
        assert_eq!(
            select_style(ScalarStyle::Plain, &analyze("a\tb"), value),
            ScalarStyle::DoubleQuoted
        );
        assert_eq!(
            select_style(ScalarStyle::Literal, &analyze("a \nb"), value),
            ScalarStyle::DoubleQuoted
        );
        assert_eq!(
            select_style(ScalarStyle::Literal, &analyze("a\nb"), key),
            ScalarStyle::DoubleQuoted
        );
    }
}
