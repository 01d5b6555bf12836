//! The writer on purpose-made values: every scalar class its shortcuts decide (plain words,
//! words the resolver would type, indicators, blanks, non-ASCII and control characters, NEL,
//! line breaks, long text that folds), as values, as keys and in sequences, with numbers,
//! nulls, empty collections and unsorted keys, against pinned bytes.
//!
//! `testdata/writer_cases.yaml` was written by the writer before its shortcuts (commit
//! 921f827, the byte-by-byte port of libyaml that reproduces every kustomize golden); the
//! shortcuts must not change a byte of it. Rewrite it only for a deliberate change of output,
//! checked against real kustomize.

use serde_json::{Map, Value, json};

use super::to_yaml;

/// Strings of every class whose writing path the emitter's shortcuts touch.
fn scalar_cases() -> Vec<String> {
    let mut cases: Vec<String> = [
        // Words the resolver would type, and words that stay strings.
        "true",
        "True",
        "TRUE",
        "false",
        "yes",
        "Yes",
        "y",
        "Y",
        "n",
        "N",
        "no",
        "on",
        "On",
        "off",
        "OFF",
        "null",
        "Null",
        "~",
        "",
        "8080",
        "-1",
        "+1",
        "0",
        "0x1F",
        "0o17",
        "017",
        "08",
        "1_000",
        "1e3",
        "1.5",
        ".5",
        "+.5",
        ".inf",
        "-.Inf",
        ".nan",
        "1:20",
        "1:60",
        "2024-01-01",
        "2024-01-01T10:00:00Z",
        "2024-13-01",
        "1.16.2",
        "v1",
        "yess",
        "nullable",
        "falsey",
        "offset",
        "tRue",
        "o",
        "~x",
        "0b101",
        "12345678901234567890",
        "0xFFFFFFFFFFFFFFFFFFFF",
        "1e400",
        // Indicators and blanks.
        " leading",
        "trailing ",
        "  ",
        " ",
        "a: b",
        "a:b",
        "a:",
        "a #b",
        "a#b",
        "#x",
        "x#",
        "- x",
        "-x",
        "-",
        "--",
        "?",
        "? x",
        "?x",
        ":",
        ": x",
        ":x",
        "*x",
        "&x",
        "!x",
        "|x",
        ">x",
        "%x",
        "@x",
        "`x",
        "'x",
        "\"x",
        "x'y",
        "it's a test",
        "say \"hi\"",
        "back\\slash",
        "---",
        "--- x",
        "---x",
        "...",
        "...x",
        "x,y",
        "[x]",
        "{x}",
        "a  b",
        "a\tb",
        "tab\t",
        "a b: c d",
        // Non-ASCII and special characters.
        "ünï",
        "✓ ok",
        "😀",
        "a😀b",
        "a\u{85}b",
        "a \u{85}  b",
        "nel\u{85}\u{85}\u{85}x",
        "\u{feff}bom",
        "\u{a0}nbsp",
        "x\u{a0}",
        "ls\u{2028}x",
        "é:",
        "\u{7}",
        "a\u{1b}b",
        "del\u{7f}",
        "a\rb",
        "\u{0}",
        "\u{fffe}",
        "\u{e000}x",
        // Line breaks.
        "a\nb",
        "a\nb\n",
        "a\nb\n\n",
        "\n",
        "\nleading break",
        " leading space\nx",
        "trailing space \nx",
        "line\n next",
        "x\n\n\ny",
        "a\r\nb",
        "# comment\nkey: value\n",
        "- item\n- item\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let prose = "The quick brown fox jumps over the lazy dog, and then: it rests #1 near the river bank while";
    cases.push(format!("{prose} {prose}"));
    cases.push(format!("*{prose} it's {prose}"));
    cases.push(format!("{prose}\t{prose}  {prose}"));
    cases.push(format!("  {prose}  {prose}  "));
    cases.push(format!("ünïcödé {prose} ✓ {prose} 😀"));
    cases.push("x".repeat(130));
    cases.push(format!("{}-{}", "word".repeat(30), "tail ".repeat(20)));
    cases.push(format!("{prose}\n{prose} {prose}\n\n  indented {prose}\n"));
    cases.push(format!("{prose}  \n{prose}"));
    cases.push(format!("a {}b", " ".repeat(100)));
    cases.push(format!("{} x", "y".repeat(85)));
    cases
}

/// One document holding every case as a value, as a key, in a sequence, at depth; numbers,
/// booleans, nulls, empty collections and unsorted keys.
fn writer_cases() -> Value {
    let strings = scalar_cases();
    let mut values = Map::new();
    let mut keys = Map::new();
    for (i, s) in strings.iter().enumerate() {
        values.insert(format!("v{i:03}"), Value::String(s.clone()));
        keys.insert(s.clone(), json!(i));
    }
    let numbers = json!([
        0,
        -5,
        8080,
        i64::MIN,
        i64::MAX,
        u64::MAX,
        1.5,
        1e20,
        1.8e19,
        1e21,
        -0.0,
        1e-7,
        1.0,
        -2.5e-300,
        123456.5
    ]);
    json!({
        "values": values,
        "keys": keys,
        "list": strings,
        "numbers": numbers,
        "scalars": {"null": null, "true": true, "false": false, "emptyList": [], "emptyMap": {}},
        "nested": [[["a", {"b": [1, {"c": "d e"}]}]], [], {}, [{}], {"z": [], "a": {}}],
        "unsorted": {"b": 1, "a10": 2, "a9": 3, "_x": 4, "A": 5, "a": {"y": 1, "x": 2}},
        "deep": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": strings[strings.len() - 4].clone()}}}}}}}},
    })
}

#[test]
fn writer_cases_are_written_as_pinned() {
    let expected = include_str!("testdata/writer_cases.yaml");
    let written = to_yaml(&writer_cases());
    for (number, (e, w)) in expected.lines().zip(written.lines()).enumerate() {
        assert_eq!(w, e, "line {}", number + 1);
    }
    assert_eq!(written, expected);
}
