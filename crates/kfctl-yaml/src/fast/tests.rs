//! The fast reader on the tricky forms it implements, each checked against granit.

use super::parse;
use crate::read::{Dialect, LIMITS, Parsed};

/// granit's reading of `text` (the fast reader bypassed).
fn granit(text: &str) -> Parsed {
    crate::read::parse_documents_granit(text, "t.yaml", 0, LIMITS, Dialect::GoYamlV3).expect("granit reads it")
}

/// The fast reader accepts `text` and agrees with granit.
#[track_caller]
fn same(text: &str) {
    let fast = parse(text, LIMITS, Dialect::GoYamlV3).unwrap_or_else(|| panic!("declined: {text:?}"));
    assert_eq!(fast, granit(text), "{text:?}");
}

/// The fast reader declines `text`.
#[track_caller]
fn declines(text: &str) {
    assert!(parse(text, LIMITS, Dialect::GoYamlV3).is_none(), "accepted: {text:?}");
}

#[test]
fn mappings_sequences_and_compact_forms() {
    same("a: 1\nb:\n  c: x\n  d:\n  - 1\n  - 2\ne:\n- f: 1\n  g: 2\n- - x\n  - y\n-\n");
    same("- a\n-\n- b: 1\n  c:\n    d: 2\n-   e: 3\n    f: 4\n");
    same("list:\n  - name: a\n    args:\n    - --x=1\n    - -y\n  - name: b\n");
    same("a: []\nb: {}\nc: [] # empty\n");
}

#[test]
fn bare_nulls_and_comments() {
    same("# only a comment\n");
    same("---\n# c\n---\na:\nb: # comment\nc:\n  # comment\nd: ~\n");
    same("a:\n  b:\n  c: null\nl:\n- x:\n- \n-\n- # c\n");
    same("a: b # comment\nc: d#e\nf: 'g' # c\n  # indented comment\nh: i\n");
    same("---\na: 1\n...\n---\nb: 2\n");
    same("--- # doc\na: 1\n");
}

#[test]
fn quoted_scalars_escapes_and_folding() {
    same(r#"a: "tab\tnl\nq\"bs\\sl\/x\x41u\u00e9U\U0001F600 \N\_\L\P\0\a\b\v\f\r\e\ end""#);
    same("a: 'it''s'\nb: ''\nc: \"\"\n");
    same("a: \"one\n  two\n\n  three  \n   four\"\n");
    same("a: 'one\n  two\n\n\n  three  \n  four '\n");
    same("a: \"esc\\\n   aped\\  \n  x\\t  \n  y\"\n");
    same("- \"a\n  b\"\n- 'c\n\n  d'\n");
    same("\"quoted key\": 1\n'single': 2\n\"k\" : 3\n");
}

#[test]
fn block_scalars_chomping_and_indentation() {
    same("a: |\n  x\n  y\nb: 1\n");
    same("a: |-\n  x\n\n  y\n\n\nb: 1\n");
    same("a: |+\n  x\n\n\nb: 1\n");
    same("a: >\n  x\n  y\n\n  z\n    more\n  w\n\n\nb: 1\n");
    same("a: >-\n  x\n   spaced\n  y\nb: >+\n  k\n\n");
    same("a: |\n\n  after empty\n    deeper\n  # not a comment\n\n  \n      \nb: |\n  x\n");
    same("- |\n  item\n- key: |\n    nested\n  other: >\n    folded\n");
    same("a: |\nb: |-\n\nc: 1\n");
    same("a: | # comment\n  x\n");
    same("a: |\n  trailing spaces   \n  \ttab\n");
    same("a: |2-\n\n\n    Valid: x\n  y\nb:\n  c: >1\n    x\n\n     y\n  d: |-1\n    z\n");
    same("- |1\n  two\n   three\n- x\n");
}

#[test]
fn plain_scalars_keep_their_text() {
    same("a: http://x:80/y\nb: -1\nc: --flag=x\nd: a, b [c] {d}\ne: trailing   \nf: 0x1F\ng: 2024-01-01\n");
    same("key with spaces: v\na#b: c\n\"x\": y\n");
}

#[test]
fn multi_line_plain_and_own_line_scalars() {
    same("a: one\n  two\n\n  three   \n\n\n    four\nb: x\n");
    same("- one\n  two\n- k: v\n    w\n  j: 'q'\n");
    same("a:\n  own line\n  continued\nb:\n  \"quoted\"\nc:\n  []\n");
    same("a: one\n  'two' [x] {y} |z >w &v *u !t %s @r\n");
    same("a: x\n  # comment ends it\nb: y\n");
    same("a: feature flag\n  - kubernetes.podspec\nb: y\n");
}

#[test]
fn flow_sequences_of_scalars() {
    same("a: [x, \"y\", 'z', 1, true, ~]\nb: [ \"get\", \"list\" ]\nc: []\nd: [on, off] # c\n");
}

#[test]
fn dialects_and_limits_go_through_the_builder() {
    let text = "y: yes\nmetadata:\n  annotations:\n    p: 8080\n    b:\n";
    for (limits, dialect) in
        [(LIMITS, Dialect::HelmValues), (crate::read::Limits { annotation_text: true, ..LIMITS }, Dialect::GoYamlV3)]
    {
        let fast = parse(text, limits, dialect).expect("accepted");
        let slow = crate::read::parse_documents_granit(text, "t", 0, limits, dialect).unwrap();
        assert_eq!(fast, slow);
    }
}

#[test]
fn declines_what_it_does_not_implement() {
    for text in [
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "<<: {a: 1}\n",
        "? a\n: b\n",
        "%YAML 1.2\n---\na: 1\n",
        "a:\tb\n",
        "a: 1\r\n",
        "\u{feff}a: 1\n",
        "a: [1, [2]]\n",
        "a: {b: 1}\n",
        "a: |\n  x",
        "plain root\n",
        "a: 1\n...\nb: 2\n",
        "a: 1\n  b: 2\n",
        "a: 1\na: 2\n",
        "a: b: c\n",
        "a: 'unclosed\n",
        "a: \"bad \\q escape\"\n",
        "- a\nb: 1\n",
        "a: |\n\n      deep empty\n    shallow\n",
    ] {
        declines(text);
    }
}
