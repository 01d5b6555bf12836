//! Reader behaviour through the public entry point: typing, structure, errors and limits.

use serde_json::json;

use super::read::{Limits, parse_documents};
use super::{YamlError, parse_stream};

fn one(text: &str) -> serde_json::Value {
    let mut docs = parse_stream(text, "test.yaml").expect("valid YAML");
    assert_eq!(docs.len(), 1, "{docs:?}");
    docs.remove(0)
}

#[test]
fn block_scalar_ending_the_file_without_newline_gets_no_newline() {
    // serde-saphyr (granit's default) adds "\n" here; go-yaml does not.
    assert_eq!(one("a: |\n  foo\n  bar"), json!({"a": "foo\nbar"}));
    assert_eq!(one("a: |+\n  foo"), json!({"a": "foo"}));
    assert_eq!(one("a: >\n  foo\n  bar"), json!({"a": "foo bar"}));
    // Only that case: a final newline, or a last line of only spaces, keeps the clip newline.
    assert_eq!(one("a: |\n  foo\n"), json!({"a": "foo\n"}));
    assert_eq!(one("a: |\n  foo\n  "), json!({"a": "foo\n"}));
    assert_eq!(one("a: |\n  foo\nb: 1"), json!({"a": "foo\n", "b": 1}));
}

#[test]
fn empty_and_null_documents_are_dropped() {
    let docs = parse_stream("# only a comment\n---\n---\na: 1\n---\n~\n---\nb: 2\n...\n", "t").unwrap();
    assert_eq!(docs, vec![json!({"a": 1}), json!({"b": 2})]);
    assert!(parse_stream("", "t").unwrap().is_empty());
}

#[test]
fn plain_scalars_are_typed_like_go_yaml_v3() {
    let doc = one("a: yes\nb: 0o17\nc: 017\nd: 08\ne: 1_000\nf: 2.0\ng: ~\nh: 2024-01-01\ni: '08'\nj: 1:20");
    assert_eq!(
        doc,
        json!({"a": "yes", "b": 15, "c": 15, "d": 8.0, "e": 1000, "f": 2.0, "g": null,
               "h": "2024-01-01T00:00:00Z", "i": "08", "j": "1:20"})
    );
}

#[test]
fn tags_check_and_convert() {
    let doc = one("a: !!str 12\nb: !!int '12'\nc: !!float 1\nd: !!binary aGk=\ne: !x 5\nf: ! 5\n");
    assert_eq!(doc, json!({"a": "12", "b": 12, "c": 1.0, "d": "hi", "e": "5", "f": 5}));
    let err = parse_stream("a: !!int abc\n", "t.yaml").unwrap_err();
    assert!(err.to_string().contains("cannot decode !!str `abc` as a !!int"), "{err}");
}

#[test]
fn keys_keep_their_text_and_null_keys_are_dropped() {
    assert_eq!(
        one("0x1F: a\n1.0: b\ntrue: c\n~: d\n'~': e\n"),
        json!({"0x1F": "a", "1.0": "b", "true": "c", "~": "e"})
    );
}

#[test]
fn anchors_aliases_and_merges() {
    let doc = one("base: &b {a: 1, b: 2}\ncopy: *b\nm:\n  <<: [*b, {c: 3, a: 9}]\n  b: 5\n'<<': literal\n");
    assert_eq!(
        doc,
        json!({"base": {"a": 1, "b": 2}, "copy": {"a": 1, "b": 2}, "m": {"a": 1, "b": 5, "c": 3}, "<<": "literal"})
    );
}

#[test]
fn duplicate_keys_are_an_error_with_location() {
    match parse_stream("a: 1\nb:\n  c: 1\n  c: 2\n", "dup.yaml") {
        Err(YamlError::Syntax { origin, line, message, .. }) => {
            assert_eq!((origin.as_str(), line), ("dup.yaml", 4));
            assert!(message.contains("\"c\" already defined"), "{message}");
        }
        other => panic!("expected a duplicate key error, got {other:?}"),
    }
}

#[test]
fn last_key_wins_keeps_the_last_value_of_a_duplicate_key() {
    let docs = crate::parse_stream_last_key_wins("a: 1\nb:\n  c: 1\n  c: 2\n", "dup.yaml").expect("reads");
    assert_eq!(docs, vec![serde_json::json!({"a": 1, "b": {"c": 2}})]);
}

#[test]
fn annotation_values_keep_their_source_text_in_resources() {
    let text = "metadata:\n  annotations:\n    p: 8080\n    h: 0x1F\n    t: ~\n    b:\n  labels:\n    n: 1\n";
    let (doc, bare) = crate::parse_resources(text, "r.yaml").expect("reads").remove(0);
    assert_eq!(doc["metadata"]["annotations"], json!({"p": "8080", "h": "0x1F", "t": "~", "b": null}));
    assert_eq!(doc["metadata"]["labels"]["n"], json!(1));
    assert_eq!(bare, vec!["/metadata/annotations/b".to_string()]);
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let err = parse_stream("a: 1\nb: [1, 2\n", "bad.yaml").unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("bad.yaml:"), "{text}");
    assert!(matches!(err, YamlError::Syntax { line: 2..=3, .. }), "{err:?}");
}

#[test]
fn alias_bombs_stop_at_the_node_limit() {
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
    }
    let started = std::time::Instant::now();
    let err = parse_stream(&bomb, "bomb.yaml").unwrap_err();
    assert!(matches!(err, YamlError::Limit { .. }), "{err:?}");
    assert!(started.elapsed().as_secs() < 5, "fails fast");
}

#[test]
fn node_limit_counts_every_node() {
    let limits = Limits {
        max_input_bytes: 1 << 20,
        max_depth: 8,
        max_nodes: 10,
        max_alias_nodes: 10,
        last_key_wins: false,
        annotation_text: false,
    };
    let text = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]";
    assert!(matches!(parse_documents(text, "n.yaml", 0, limits), Err(YamlError::Limit { .. })));
    assert!(parse_documents("[1, 2, 3]", "n.yaml", 0, limits).is_ok());
}

#[test]
fn deep_nesting_stops_at_the_depth_limit() {
    let deep = format!("{}1{}", "[".repeat(500), "]".repeat(500));
    assert!(matches!(parse_stream(&deep, "deep.yaml"), Err(YamlError::Limit { .. } | YamlError::Syntax { .. })));
    let limits = Limits {
        max_input_bytes: 1 << 20,
        max_depth: 3,
        max_nodes: 100,
        max_alias_nodes: 10,
        last_key_wins: false,
        annotation_text: false,
    };
    let nested = "a:\n  b:\n    c:\n      d: 1\n";
    assert!(matches!(parse_documents(nested, "n.yaml", 0, limits), Err(YamlError::Limit { .. })));
}

#[test]
fn oversized_input_is_refused() {
    let limits = Limits {
        max_input_bytes: 10,
        max_depth: 8,
        max_nodes: 100,
        max_alias_nodes: 10,
        last_key_wins: false,
        annotation_text: false,
    };
    let err = super::split::parse_stream_with("a: 123456789012\n", "big.yaml", limits).unwrap_err();
    assert!(matches!(err, YamlError::Limit { .. }), "{err:?}");
}

/// Arbitrary text never panics the reader: it parses or reports an error.
#[test]
fn random_text_never_panics() {
    const PIECES: &[&str] = &[
        "a",
        ":",
        ": ",
        "-",
        "- ",
        "\n",
        "\n  ",
        "  ",
        "\t",
        "'",
        "\"",
        "\\",
        "[",
        "]",
        "{",
        "}",
        ",",
        "#",
        "&a ",
        "*a",
        "!!int ",
        "!x ",
        "|",
        "|-",
        ">+",
        "|2",
        "---",
        "...",
        "%YAML 1.2",
        "<<",
        "?",
        "~",
        "08",
        "yes",
        "😀",
        "\u{85}",
        "\r",
        "\u{feff}",
        "@",
        "`",
        "0x",
        "1e9",
    ];
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..4000 {
        let mut text = String::new();
        for _ in 0..(state % 40) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(PIECES[(state % PIECES.len() as u64) as usize]);
        }
        let _ = parse_stream(&text, "random.yaml");
    }
}

#[test]
fn bare_nulls_are_reported_by_pointer_and_explicit_ones_are_not() {
    let docs = crate::parse_stream_with_bare_nulls("a:\n  b:\n  c: null\n  d: ~\nl:\n- x:\n- \n", "t").unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].1, ["/a/b", "/l/0/x", "/l/1"]);
}
