//! Helm's `--set` family, parsed as Helm's `strvals` package parses it.
//!
//! As the helm CLI does, the flags of each kind are parsed into one tree of that kind (Helm's
//! `ParseInto`), so list indexes accumulate across flags of a kind (`--set a[0]=x --set a[2]=z`
//! is `[x, null, z]`); the kinds' trees then stack onto the `-f` files in the order
//! `SetKind::HELM_ORDER`, each replacing what it names ([`parse_all`]). The grammar, rune by
//! rune as Helm reads it:
//!
//! - `key.path=value`, several separated by `,`; `\` makes the next character literal (`\.`,
//!   `\,`, `\=`, `\\`), in keys and values alike;
//! - `key[3]=v` sets a list item (lists grow with nulls; at most index 65536), `key[1].x=v` and
//!   `key[0][1]=v` nest;
//! - `key={a,b}` is a list, and `{}` is a list holding one empty string, as in Helm;
//! - `key=` is the empty string; a key with no `=` is an error.
//!
//! Typing ([`SetKind`]): `--set` makes `true`/`false`/`null` (any case) booleans and null, and
//! a whole number without a leading zero an integer (`0` too); everything else, `1.5`
//! included, stays a string. `--set-string` keeps every value a string; `--set-json` decodes
//! each value as JSON (numbers become floats, as Go's decoder makes them); `--set-file` reads
//! the named file as the string value; `--set-literal` takes everything after the first `=`
//! as one literal string (no commas, no escapes, no lists). Writing a map key into something
//! that is not a map, or an index into something that is not a list, is an error, as Helm's
//! parser refuses it.

use kfctl_yaml::type_name as describe;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// Which `--set` flag an expression came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetKind {
    /// `--set`: typed values (numbers, booleans, null).
    Set,
    /// `--set-string`: every value a string.
    String,
    /// `--set-json`: values as JSON.
    Json,
    /// `--set-file`: the value is a file's contents.
    File,
    /// `--set-literal`: one value, taken verbatim.
    Literal,
}

impl SetKind {
    /// The flag's name, for messages and for recording export arguments.
    pub fn flag(self) -> &'static str {
        match self {
            SetKind::Set => "--set",
            SetKind::String => "--set-string",
            SetKind::Json => "--set-json",
            SetKind::File => "--set-file",
            SetKind::Literal => "--set-literal",
        }
    }

    /// The order the helm CLI applies the flag kinds in, after the `-f` files.
    pub(crate) const HELM_ORDER: [SetKind; 5] =
        [SetKind::Json, SetKind::Set, SetKind::String, SetKind::File, SetKind::Literal];
}

/// One `--set`-family flag as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetFlag {
    /// Which flag it was.
    pub kind: SetKind,
    /// The expression, as given.
    pub expression: String,
}

impl SetFlag {
    /// A flag of `kind` with `expression`.
    pub fn new(kind: SetKind, expression: impl Into<String>) -> SetFlag {
        SetFlag { kind, expression: expression.into() }
    }
}

/// A malformed `--set`-family expression.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{flag} {expression:?}: {problem}; expected key.path=value (e.g. --set katib.enabled=false)")]
pub struct SetError {
    pub(crate) flag: &'static str,
    pub(crate) expression: String,
    pub(crate) problem: String,
}

/// The deepest `a.b.c…` key Helm accepts, and the largest list index.
const MAX_NESTED_NAME_LEVEL: usize = 30;
const MAX_INDEX: usize = 65536;

/// Every flag, as the helm CLI applies them: each kind parsed into its own tree, the trees
/// stacked in `SetKind::HELM_ORDER` (a later kind replaces what it names).
pub fn parse_all(flags: &[SetFlag]) -> Result<Value, SetError> {
    let mut out = Value::Object(Map::new());
    for kind in SetKind::HELM_ORDER {
        let mut tree = Value::Object(Map::new());
        for flag in flags.iter().filter(|f| f.kind == kind) {
            parse_into(flag, &mut tree)?;
        }
        super::values::merge_layer(&mut out, &tree);
    }
    Ok(out)
}

/// Apply one flag to `values` (a map) in place, as Helm's `ParseInto` family does.
pub fn parse_into(flag: &SetFlag, values: &mut Value) -> Result<(), SetError> {
    let error = |problem: String| SetError { flag: flag.kind.flag(), expression: flag.expression.clone(), problem };
    if !values.is_object() {
        *values = Value::Object(Map::new());
    }
    let data = values.as_object_mut().expect("just made a map");
    let mut parser = Parser { chars: flag.expression.chars().collect(), pos: 0, kind: flag.kind };
    loop {
        match parser.key(data, 0) {
            Ok(()) => continue,
            Err(Stop::End) => return Ok(()),
            Err(Stop::Error(problem)) => return Err(error(problem)),
        }
    }
}

/// Why the parser stopped: the end of the input (Go's `io.EOF`) or an error.
enum Stop {
    End,
    Error(String),
}

/// A list after an item was written, and whether the input goes on.
type Item = (Vec<Value>, Result<(), Stop>);

fn fail<T>(problem: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Error(problem.into()))
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    kind: SetKind,
}

impl Parser {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        self.pos += usize::from(c.is_some());
        c
    }

    /// Characters up to one of `stop` (consumed and returned), honouring `\` escapes unless
    /// the flag is `--set-literal`. `None` as the stop character means the input ended.
    fn until(&mut self, stop: &[char]) -> (String, Option<char>) {
        let mut out = String::new();
        while let Some(c) = self.next() {
            if stop.contains(&c) {
                return (out, Some(c));
            }
            if c == '\\' && self.kind != SetKind::Literal {
                match self.next() {
                    Some(escaped) => out.push(escaped),
                    None => return (out, None),
                }
            } else {
                out.push(c);
            }
        }
        (out, None)
    }

    fn rest(&mut self) -> String {
        let rest: String = self.chars[self.pos..].iter().collect();
        self.pos = self.chars.len();
        rest
    }

    /// One `key…=value` assignment into `data`.
    fn key(&mut self, data: &mut Map<String, Value>, level: usize) -> Result<(), Stop> {
        let stop: &[char] = if self.kind == SetKind::Literal { &['=', '[', '.'] } else { &['=', '[', ',', '.'] };
        let (key, last) = self.until(stop);
        match last {
            None if key.is_empty() => Err(Stop::End),
            None => fail(format!("key {key:?} has no value (no `=`)")),
            Some('[') => {
                let index = self.index()?;
                let list = match data.get(&key) {
                    None => Vec::new(),
                    Some(Value::Array(list)) => list.clone(),
                    Some(other) => return fail(format!("key {key:?} is {}, not a list", describe(other))),
                };
                let (list, rest) = self.list_item(list, index, level)?;
                set(data, &key, Value::Array(list));
                rest
            }
            Some('=') => self.assign(data, &key),
            Some(',') => fail(format!("key {key:?} has no value (cannot end with ,)")),
            Some(_) => {
                if level + 1 > MAX_NESTED_NAME_LEVEL {
                    return fail(format!("the key is nested deeper than {MAX_NESTED_NAME_LEVEL} levels"));
                }
                let mut inner = match data.get(&key) {
                    None => Map::new(),
                    Some(Value::Object(map)) => map.clone(),
                    Some(other) => return fail(format!("key {key:?} is {}, not a map", describe(other))),
                };
                let result = self.key(&mut inner, level + 1);
                if matches!(result, Ok(())) && inner.is_empty() {
                    return fail(format!("key map {key:?} has no value"));
                }
                if !inner.is_empty() {
                    set(data, &key, Value::Object(inner));
                }
                result
            }
        }
    }

    /// The value after `key=`: JSON, a literal, a `{…}` list or a scalar.
    fn assign(&mut self, data: &mut Map<String, Value>, key: &str) -> Result<(), Stop> {
        let (value, result) = self.value()?;
        set(data, key, value);
        result
    }

    /// The value at the cursor, and whether the input continues (`Ok`) or ended.
    fn value(&mut self) -> Result<(Value, Result<(), Stop>), Stop> {
        match self.kind {
            SetKind::Literal => Ok((Value::String(self.rest()), Ok(()))),
            SetKind::Json => self.json_value().map(|v| (v, Ok(()))),
            _ => match self.value_list()? {
                Some(list) => Ok((Value::Array(list), Ok(()))),
                None if self.pos >= self.chars.len() => Ok((Value::String(String::new()), Err(Stop::End))),
                // As Helm's parser: after a scalar the assignment is complete even at the end of
                // the input (the next key finds the end); only `key=` at the very end is "ended".
                None => {
                    let (raw, _) = self.until(&[',']);
                    Ok((self.typed(raw)?, Ok(())))
                }
            },
        }
    }

    /// `{a,b}` at the cursor as a list; `None` (nothing consumed) when the value is no list.
    fn value_list(&mut self) -> Result<Option<Vec<Value>>, Stop> {
        if self.chars.get(self.pos) != Some(&'{') {
            return Ok(None);
        }
        self.pos += 1;
        let mut list = Vec::new();
        loop {
            let (raw, last) = self.until(&[',', '}']);
            match last {
                None => return fail("list must terminate with '}'"),
                Some('}') => {
                    if self.chars.get(self.pos) == Some(&',') {
                        self.pos += 1;
                    }
                    list.push(self.typed(raw)?);
                    return Ok(Some(list));
                }
                Some(_) => list.push(self.typed(raw)?),
            }
        }
    }

    /// A JSON value at the cursor (`--set-json`), then optional blanks and a comma.
    fn json_value(&mut self) -> Result<Value, Stop> {
        if self.empty_value() {
            return Ok(Value::Null);
        }
        let rest: String = self.chars[self.pos..].iter().collect();
        let mut stream = serde_json::Deserializer::from_str(&rest).into_iter::<Value>();
        let value = match stream.next() {
            Some(Ok(value)) => value,
            Some(Err(e)) => return fail(format!("invalid JSON: {e}")),
            None => return fail("no JSON value after `=`"),
        };
        let consumed = rest[..stream.byte_offset()].chars().count();
        self.pos += consumed;
        self.empty_value();
        Ok(floats(value))
    }

    /// Skip blanks; true (and the comma consumed) when the value is empty.
    fn empty_value(&mut self) -> bool {
        while let Some(&c) = self.chars.get(self.pos) {
            match c {
                ',' => {
                    self.pos += 1;
                    return true;
                }
                c if c.is_whitespace() => self.pos += 1,
                _ => return false,
            }
        }
        true
    }

    /// `[N]` after a key: the index.
    fn index(&mut self) -> Result<usize, Stop> {
        let (text, last) = self.until(&[']']);
        if last.is_none() {
            return fail(format!("unclosed `[` before {text:?}"));
        }
        let index: i64 = text.parse().map_err(|_| Stop::Error(format!("list index {text:?} is not a number")))?;
        match usize::try_from(index) {
            Err(_) => fail(format!("negative {index} index not allowed")),
            Ok(i) if i > MAX_INDEX => fail(format!("index of {i} is greater than the maximum of {MAX_INDEX}")),
            Ok(i) => Ok(i),
        }
    }

    /// What follows `key[i]`: `=value`, a nested `[j]` or `.key`. The list comes back with
    /// whether the input goes on (`Ok`) or ended; an outer `Err` is a parse error.
    fn list_item(&mut self, mut list: Vec<Value>, index: usize, level: usize) -> Result<Item, Stop> {
        let (_, last) = self.until(&['[', '.', '=']);
        match last {
            None => fail("error parsing index: the expression ends after `]`"),
            Some('=') => {
                let (value, rest) = self.value()?;
                set_index(&mut list, index, value);
                Ok((list, rest))
            }
            Some('[') => {
                let next = self.index()?;
                let inner = match list.get(index) {
                    None => Vec::new(),
                    Some(Value::Array(inner)) => inner.clone(),
                    Some(other) => return fail(format!("list item {index} is {}, not a list", describe(other))),
                };
                let (inner, rest) = self.list_item(inner, next, level)?;
                set_index(&mut list, index, Value::Array(inner));
                Ok((list, rest))
            }
            Some(_) => {
                let mut inner = match list.get(index) {
                    Some(Value::Object(map)) => map.clone(),
                    _ => Map::new(),
                };
                let rest = self.key(&mut inner, level);
                if let Err(Stop::Error(problem)) = rest {
                    return Err(Stop::Error(problem));
                }
                set_index(&mut list, index, Value::Object(inner));
                Ok((list, rest))
            }
        }
    }

    /// A scalar as this flag types it.
    fn typed(&self, raw: String) -> Result<Value, Stop> {
        match self.kind {
            SetKind::String | SetKind::Literal => Ok(Value::String(raw)),
            SetKind::File => {
                crate::input::read_bounded(&PathBuf::from(&raw), "--set-file file", crate::input::MAX_INPUT_BYTES)
                    .map(Value::String)
                    .map_err(|e| Stop::Error(e.to_string()))
            }
            SetKind::Set | SetKind::Json => Ok(typed_value(raw)),
        }
    }
}

/// Helm's `typedVal`: booleans and null in any case, integers without a leading zero.
pub(crate) fn typed_value(raw: String) -> Value {
    if raw.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if raw.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if raw.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    if raw == "0" {
        return Value::from(0);
    }
    if !raw.is_empty()
        && !raw.starts_with('0')
        && let Ok(n) = raw.parse::<i64>()
    {
        return Value::from(n);
    }
    Value::String(raw)
}

/// Go's JSON decoder makes every number a float64.
fn floats(value: Value) -> Value {
    match value {
        Value::Number(n) => n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Number(n), Value::Number),
        Value::Array(items) => Value::Array(items.into_iter().map(floats).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, floats(v))).collect()),
        other => other,
    }
}

fn set(data: &mut Map<String, Value>, key: &str, value: Value) {
    if !key.is_empty() {
        data.insert(key.to_string(), value);
    }
}

fn set_index(list: &mut Vec<Value>, index: usize, value: Value) {
    if list.len() <= index {
        list.resize(index + 1, Value::Null);
    }
    list[index] = value;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(flags: &[(SetKind, &str)]) -> Result<Value, SetError> {
        let mut values = json!({});
        for (kind, expression) in flags {
            parse_into(&SetFlag::new(*kind, *expression), &mut values)?;
        }
        Ok(values)
    }

    fn set(expression: &str) -> Value {
        apply(&[(SetKind::Set, expression)]).unwrap()
    }

    #[test]
    fn types_like_helm_typed_val() {
        assert_eq!(
            set("x=True,y=NULL,z=0,w=012,f=1.5,n=-3,e=,t=FALSE"),
            json!({"x": true, "y": null, "z": 0, "w": "012", "f": "1.5", "n": -3, "e": "", "t": false})
        );
    }

    #[test]
    fn lists_and_the_empty_list_that_holds_one_empty_string() {
        assert_eq!(set("l={a,1,true},m={}"), json!({"l": ["a", 1, true], "m": [""]}));
    }

    #[test]
    fn indexes_accumulate_across_flags() {
        let values = apply(&[(SetKind::Set, "list[2]=z"), (SetKind::Set, "list[0]=q")]).unwrap();
        assert_eq!(values, json!({"list": ["q", null, "z"]}));
        assert_eq!(set("a[0].b=1,a[0].c=2,a[1][1]=x"), json!({"a": [{"b": 1, "c": 2}, [null, "x"]]}));
    }

    #[test]
    fn escapes_make_dots_commas_and_equals_literal() {
        assert_eq!(set(r"a.b\.c=v\,w,k=x\=y"), json!({"a": {"b.c": "v,w"}, "k": "x=y"}));
    }

    #[test]
    fn string_json_file_and_literal_flags() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "line one\nline two\n").unwrap();
        let values = apply(&[
            (SetKind::String, "s=true,t={1,2}"),
            (SetKind::Json, r#"j={"k":[1,2.5]},n=null"#),
            (SetKind::File, &format!("f={}", file.display())),
            (SetKind::Literal, "lit=a,b=c\\d"),
        ])
        .unwrap();
        assert_eq!(values["s"], json!("true"));
        assert_eq!(values["t"], json!(["1", "2"]));
        assert_eq!(values["j"], json!({"k": [1.0, 2.5]}));
        assert_eq!(values["n"], json!(null));
        assert_eq!(values["f"], json!("line one\nline two\n"));
        assert_eq!(values["lit"], json!("a,b=c\\d"));
    }

    #[test]
    fn malformed_expressions_name_flag_and_expression() {
        for bad in ["novalue", "a,b=1", "a[x]=1", "a[-1]=1", "l={a,b", "a.=1"] {
            let err = apply(&[(SetKind::Set, bad)]).unwrap_err();
            assert!(err.to_string().starts_with(&format!("--set {bad:?}: ")), "{err}");
        }
        let err = apply(&[(SetKind::Set, "a=1"), (SetKind::Set, "a.b=2")]).unwrap_err();
        assert!(err.problem.contains("not a map"), "{err}");
        let err = apply(&[(SetKind::Json, "a={bad")]).unwrap_err();
        assert!(err.to_string().starts_with("--set-json"), "{err}");
    }

    #[test]
    fn writes_into_what_files_gave() {
        let mut values = json!({"list": ["a", "b", "c"], "m": {"x": 1}});
        parse_into(&SetFlag::new(SetKind::Set, "list[1]=x,m.y=2"), &mut values).unwrap();
        assert_eq!(values, json!({"list": ["a", "x", "c"], "m": {"x": 1, "y": 2}}));
    }
}
