//! Go template text: the two escapes the chart export needs.
//!
//! - Upstream data is printed literally by Helm only if every `{{` in it is escaped, because
//!   Helm runs every file under `templates/` through Go's `text/template`. Istio, Knative and
//!   Argo configurations carry their own `{{ ... }}` templates, so [`escape_actions`] turns
//!   each `{{` into the action `{{"{{"}}`, which prints `{{`. A lone `}}` is plain text to Go.
//! - Raw upstream values travel into helper calls as Go string literals ([`go_quote`]): an
//!   interpreted literal with `\\`, `\"`, `\n` and friends escaped. Inside an action Go's
//!   lexer reads a quoted string to its closing quote, so `{{` or `}}` inside one is harmless.
//!   [`go_literal`] prefers a raw literal (`` `...` ``, no escapes at all, newlines allowed)
//!   whenever the text has no backquote and no carriage return (Go drops those from raw
//!   literals), so JSON and configuration texts stay readable in the templates.

/// `text` with every `{{` made into an action that prints `{{`.
pub(crate) fn escape_actions(text: &str) -> String {
    match memchr::memmem::find(text.as_bytes(), b"{{") {
        None => text.to_string(),
        Some(_) => text.replace("{{", "{{\"{{\"}}"),
    }
}

/// A Go interpreted string literal whose value is `text`.
pub(crate) fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Go string literal whose value is `text`: raw (backquoted) when that keeps every byte,
/// else interpreted ([`go_quote`]).
pub(crate) fn go_literal(text: &str) -> String {
    if text.contains('`') || text.contains('\r') { go_quote(text) } else { format!("`{text}`") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opening_delimiter_is_escaped_and_closing_ones_stay() {
        assert_eq!(escape_actions("a {{ .x }} b"), "a {{\"{{\"}} .x }} b");
        assert_eq!(escape_actions("{{{"), "{{\"{{\"}}{");
        assert_eq!(escape_actions("}} only"), "}} only");
    }

    #[test]
    fn go_quote_escapes_quotes_backslashes_and_control_characters() {
        assert_eq!(go_quote("plain"), "\"plain\"");
        assert_eq!(go_quote("a\"b\\c\nd\te\r\u{1}"), "\"a\\\"b\\\\c\\nd\\te\\r\\x01\"");
        assert_eq!(go_quote("ünï {{ x }}"), "\"ünï {{ x }}\"");
    }

    #[test]
    fn go_literal_is_raw_unless_a_backquote_or_carriage_return_forbids_it() {
        assert_eq!(go_literal("{\"a\":\"b\"}"), "`{\"a\":\"b\"}`");
        assert_eq!(go_literal("line 1\nline 2"), "`line 1\nline 2`");
        assert_eq!(go_literal("a `b`"), "\"a `b`\"");
        assert_eq!(go_literal("a\r\n"), "\"a\\r\\n\"");
    }
}
