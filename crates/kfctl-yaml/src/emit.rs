//! Writing: a port of the go-yaml v2 emitter (itself a port of libyaml), for the node shapes
//! kustomize produces.
//!
//! kustomize writes each resource with `sigs.k8s.io/yaml.JSONToYAML`: the object goes through
//! JSON and is re-encoded by go-yaml v2 with its defaults (indent 2, width 80, unicode on). The
//! encoder sends events to the emitter: every mapping is a block mapping with keys sorted by
//! [`go_yaml_key_cmp`], every sequence a block sequence, an empty collection is written in flow
//! style (`{}`, `[]`), and every scalar comes with a requested style (see
//! [`super::scalar::requested_style`]) that the emitter may overrule.
//!
//! This module keeps libyaml's emitter state (`column`, `whitespace`, `indention`, `indent`) and
//! its writing primitives (`write_indent`, `write_indicator`), and walks the value tree the way
//! libyaml's state machine walks the event stream, so the layout decisions are the same:
//! - block sequences inside a mapping are not indented (`key:\n- a`), elsewhere they are;
//! - a key longer than 128 bytes, or spanning lines, is written as an explicit `? key` entry;
//! - scalars are indented one step deeper than their collection (block scalar bodies, folds).
//!
//! Most scalars are words (`name`, `v1`, `ClusterIP`): once their bytes are classified
//! ([`super::analyze::shape`]) and [`super::scalar::is_plain_word`] holds, they are copied
//! without the analysis and style selection, which would choose plain for them anyway. Numbers,
//! booleans and nulls are always such words.
//!
//! Numbers are spelled as they come out of JSON and back: integral floats below 1e21 become
//! integers, other floats use Go's `%g` shortest form ([`format_float_g`]).

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use super::analyze::{Analysis, Shape, analyze_shaped, shape};
use super::gonum::format_float_g;
use super::keyorder::go_yaml_key_cmp;
use super::resolve::plain_is_safe;
use super::scalar::{ScalarStyle, is_plain_word, requested_style, select_style};

/// libyaml's `best_indent` and `best_width` as go-yaml sets them.
pub(super) const BEST_INDENT: usize = 2;
pub(super) const BEST_WIDTH: usize = 80;
/// libyaml's limit for an implicit ("simple") key, in bytes.
const MAX_SIMPLE_KEY_BYTES: usize = 128;

/// Where a node sits, as libyaml's `emit_node` records it.
#[derive(Clone, Copy, Default)]
pub(super) struct Context {
    pub mapping: bool,
    pub simple_key: bool,
}

/// The emitter state and output buffer.
pub(super) struct Writer<'o> {
    pub out: &'o mut String,
    pub column: usize,
    pub whitespace: bool,
    pub indention: bool,
    /// Current indentation; `None` before the root collection (libyaml's `-1`).
    pub indent: Option<usize>,
}

/// Write one document as kustomize writes a resource (ending with a line break).
pub(super) fn write_document(out: &mut String, doc: &Value) {
    let mut w = Writer { out, column: 0, whitespace: true, indention: true, indent: None };
    w.node(doc, Context::default());
    w.write_indent();
}

impl Writer<'_> {
    fn node(&mut self, value: &Value, ctx: Context) {
        match value {
            Value::Null => self.write_word("null"),
            Value::Bool(b) => self.write_word(if *b { "true" } else { "false" }),
            Value::Number(n) => self.number(n),
            Value::String(s) => {
                let form = shape(s.as_bytes());
                if is_plain_word(s, form) {
                    self.write_word(s);
                } else if form.ascii {
                    self.scalar(s, form, ctx);
                } else {
                    let s = json_reread(s);
                    self.scalar(&s, shape(s.as_bytes()), ctx);
                }
            }
            Value::Array(items) if items.is_empty() => self.empty_flow("[", "]"),
            Value::Object(map) if map.is_empty() => self.empty_flow("{", "}"),
            Value::Array(items) => self.block_sequence(items, ctx),
            Value::Object(map) => self.block_mapping(map),
        }
    }

    /// A string scalar whose [`Shape`] is known.
    fn scalar(&mut self, text: &str, form: Shape, ctx: Context) {
        self.analyzed_scalar(text, form, &analyze_shaped(text.as_bytes(), form), ctx);
    }

    fn analyzed_scalar(&mut self, text: &str, form: Shape, analysis: &Analysis, ctx: Context) {
        let requested = if form.visible {
            // No line feed: only the resolver decides, and only for the first bytes its
            // table hints at (`resolve::hint`).
            let hinted = matches!(
                text.as_bytes().first(),
                None | Some(b'+' | b'-' | b'.' | b'0'..=b'9' | b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F')
                    | Some(b'o' | b'O' | b'~')
            );
            if !hinted || plain_is_safe(text) { ScalarStyle::Plain } else { ScalarStyle::DoubleQuoted }
        } else {
            requested_style(text)
        };
        let style = select_style(requested, analysis, ctx);
        if style == ScalarStyle::Plain && form.visible {
            // No spaces to fold at, no breaks: `write_plain` copies it whole.
            self.write_word(text);
            return;
        }
        let saved = self.increase_indent(true, false);
        let allow_breaks = !ctx.simple_key;
        match style {
            ScalarStyle::Plain => self.write_plain(text, allow_breaks),
            ScalarStyle::SingleQuoted => self.write_single_quoted(text, allow_breaks),
            ScalarStyle::DoubleQuoted => self.write_double_quoted(text, allow_breaks),
            ScalarStyle::Literal => self.write_literal(text, form.text),
        }
        self.indent = saved;
    }

    /// A plain scalar of printable ASCII without spaces (a word, a number, `null`): what
    /// `write_plain` does with it, which never breaks a line or indents.
    fn write_word(&mut self, text: &str) {
        if !self.whitespace {
            self.put(' ');
        }
        self.out.push_str(text);
        self.column += text.len();
        self.whitespace = false;
        self.indention = false;
    }

    /// A number as Go's JSON-then-YAML round trip spells it; always a plain word.
    fn number(&mut self, n: &Number) {
        let mut buf = [0u8; 20];
        if let Some(i) = n.as_i64() {
            let digits = decimal(i.unsigned_abs(), &mut buf);
            if i < 0 {
                self.write_word("-");
                self.out.push_str(digits);
                self.column += digits.len();
            } else {
                self.write_word(digits);
            }
        } else if let Some(u) = n.as_u64() {
            self.write_word(decimal(u, &mut buf));
        } else {
            self.write_word(&float_text(n.as_f64().unwrap_or(0.0)));
        }
    }

    /// An empty collection: libyaml switches to flow style and closes it at once.
    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn block_sequence(&mut self, items: &[Value], ctx: Context) {
        let saved = self.increase_indent(false, ctx.mapping && !self.indention);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(item, Context::default());
        }
        self.indent = saved;
    }

    fn block_mapping(&mut self, map: &Map<String, Value>) {
        let saved = self.increase_indent(false, false);
        let in_order = map.keys().all(|k| !has_nel(k)) && map.keys().is_sorted_by(|a, b| go_yaml_key_cmp(a, b).is_lt());
        if in_order {
            for (key, value) in map {
                self.entry(key, value);
            }
        } else {
            let mut entries: Vec<(Cow<str>, &Value)> = map.iter().map(|(k, v)| (json_reread(k), v)).collect();
            entries.sort_unstable_by(|a, b| go_yaml_key_cmp(&a.0, &b.0));
            for (key, value) in &entries {
                self.entry(key, value);
            }
        }
        self.indent = saved;
    }

    /// One `key: value` of a block mapping (libyaml's block mapping key and value states).
    fn entry(&mut self, key: &str, value: &Value) {
        let value_ctx = Context { mapping: true, simple_key: false };
        self.write_indent();
        let form = shape(key.as_bytes());
        if key.len() <= MAX_SIMPLE_KEY_BYTES && is_plain_word(key, form) {
            self.write_word(key);
            self.write_indicator(":", false, false, false);
            self.node(value, value_ctx);
            return;
        }
        let analysis = analyze_shaped(key.as_bytes(), form);
        if key.len() <= MAX_SIMPLE_KEY_BYTES && !analysis.multiline {
            let key_ctx = Context { mapping: true, simple_key: true };
            self.analyzed_scalar(key, form, &analysis, key_ctx);
            self.write_indicator(":", false, false, false);
        } else {
            self.write_indicator("?", true, false, true);
            self.analyzed_scalar(key, form, &analysis, value_ctx);
            self.write_indent();
            self.write_indicator(":", true, false, true);
        }
        self.node(value, value_ctx);
    }

    /// libyaml's `increase_indent`; returns the indentation to restore afterwards.
    fn increase_indent(&mut self, flow: bool, indentless: bool) -> Option<usize> {
        let saved = self.indent;
        self.indent = Some(match saved {
            None if flow => BEST_INDENT,
            None => 0,
            Some(indent) if indentless => indent,
            Some(indent) => indent + BEST_INDENT,
        });
        saved
    }

    pub(super) fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    pub(super) fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// libyaml's `write_indent`: a line break unless already at a fresh indentation, then
    /// spaces up to the current indentation.
    pub(super) fn write_indent(&mut self) {
        let indent = self.indent.unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        const SPACES: &str = "                                                                ";
        while self.column < indent {
            let n = (indent - self.column).min(SPACES.len());
            self.out.push_str(&SPACES[..n]);
            self.column += n;
        }
        self.whitespace = true;
        self.indention = true;
    }

    pub(super) fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        self.out.push_str(indicator);
        self.column += indicator.chars().count();
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }
}

/// A string as go-yaml v2 reads it back from Go's JSON encoding. Go's JSON escapes every line
/// break but NEL (U+0085), which it writes raw; go-yaml (YAML 1.1) reads a raw NEL inside the
/// double-quoted JSON string as a line break and folds it: one break between words becomes a
/// space (the spaces around it vanish), each further break a line feed.
pub(super) fn json_reread(s: &str) -> Cow<'_, str> {
    const NEL: char = '\u{85}';
    if !has_nel(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while chars.peek().is_some() {
        while let Some(&c) = chars.peek().filter(|&&c| c != ' ' && c != NEL) {
            out.push(c);
            chars.next();
        }
        let (mut spaces, mut breaks) = (0, 0);
        while let Some(&c) = chars.peek().filter(|&&c| c == ' ' || c == NEL) {
            match (c, breaks) {
                (' ', 0) => spaces += 1,
                (' ', _) => {}
                _ => breaks += 1,
            }
            chars.next();
        }
        match breaks {
            0 => out.extend(std::iter::repeat_n(' ', spaces)),
            1 => out.push(' '),
            n => out.extend(std::iter::repeat_n('\n', n - 1)),
        }
    }
    Cow::Owned(out)
}

/// Whether `s` contains U+0085 (encoded C2 85); the byte search is the fast common "no".
fn has_nel(s: &str) -> bool {
    s.as_bytes().contains(&0xC2) && s.contains('\u{85}')
}

/// The decimal digits of `n`, written at the end of `buf`.
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &str {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[start..]).unwrap_or("0")
}

/// Go's JSON writes an integral float below 1e21 as plain digits, which go-yaml then reads as
/// an integer when it fits 64 bits; every other float is read as a float and written `%g`.
pub(super) fn float_text(f: f64) -> String {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if (-TWO_63..TWO_63).contains(&f) {
            return (f as i64).to_string();
        }
        if (0.0..TWO_64).contains(&f) {
            return (f as u64).to_string();
        }
    }
    format_float_g(f)
}

#[cfg(test)]
mod tests {
    use super::{decimal, float_text, json_reread};

    #[test]
    fn integers_are_spelled_in_decimal() {
        for n in [0, 1, 9, 10, 8080, 65_535, i64::MAX as u64, u64::MAX] {
            assert_eq!(decimal(n, &mut [0; 20]), n.to_string());
        }
    }

    #[test]
    fn raw_nel_folds_like_a_yaml_1_1_line_break() {
        assert_eq!(json_reread("plain"), "plain");
        assert_eq!(json_reread("nel\u{85}x"), "nel x");
        assert_eq!(json_reread("a \u{85}  b"), "a b");
        assert_eq!(json_reread("a\u{85}\u{85}\u{85}b"), "a\n\nb");
        assert_eq!(json_reread("end\u{85}"), "end ");
    }

    #[test]
    fn floats_are_spelled_as_after_a_json_round_trip() {
        assert_eq!(float_text(1.0), "1");
        assert_eq!(float_text(-0.0), "0");
        assert_eq!(float_text(1e20), "1e+20", "integral but beyond uint64: read back as a float");
        assert_eq!(float_text(1.8e19), "18000000000000000000");
        assert_eq!(float_text(1e21), "1e+21");
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(1e-7), "1e-07");
    }
}
