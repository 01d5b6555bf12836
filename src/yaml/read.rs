//! Reading: parser events straight into `serde_json::Value`, typed as kustomize types them.
//!
//! The events come from granit-parser, the YAML 1.2 parser underneath serde-saphyr. Building the
//! `Value` here instead of going through serde-saphyr's `Deserializer` halves the cost of reading
//! (the deserializer re-checks every event through serde's generic machinery), and lets scalars be
//! typed exactly as kustomize types them: by go-yaml v3's resolver (see [`super::resolve`]).
//!
//! Semantics, all taken from go-yaml v3 decoding into `map[string]interface{}`:
//! - quoted and block scalars are strings; plain scalars go through [`resolve_plain`]; a plain
//!   timestamp becomes the RFC 3339 text Go's JSON writes for a `time.Time`
//!   (`2024-01-01` → `2024-01-01T00:00:00Z`), as it does in kustomize;
//! - tags: `!!str` forces a string, `!!int`/`!!float`/`!!bool`/`!!null`/`!!timestamp` check and
//!   convert (`!!float 1` is a float), `!!binary` is base64-decoded, the non-specific `!` changes
//!   nothing (go-yaml ignores it), other tags make a string of the scalar's text;
//! - mapping keys keep their source text (`0x1F: a` has the key `"0x1F"`); a key that resolves to
//!   null drops its entry, as v3 does for string-keyed maps; duplicate keys are an error;
//! - `<<` merges (YAML 1.1): explicit keys win, then earlier merged maps win;
//! - anchors and aliases are expanded (aliases copy the anchored value);
//! - `.inf`/`.nan` (which JSON, and so kustomize, cannot carry) are kept as their text;
//! - documents that are empty or null are dropped.
//!
//! Bounds: every node, including each node an alias copies, counts against
//! [`Limits::max_nodes`], and alias copies alone against [`Limits::max_alias_nodes`]; nesting
//! deeper than [`Limits::max_depth`] fails. The checks run before a copy is made, so alias bombs
//! stop fast with [`YamlError::Limit`].

use std::borrow::Cow;
use std::collections::HashMap;

use granit_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use super::YamlError;
use super::resolve::{Plain, resolve_plain};

/// Resource bounds for one input. Generous for real manifests (the whole Kubeflow platform is
/// 10 MB and ~320k nodes), small enough that hostile input fails fast.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_input_bytes: usize,
    pub max_depth: usize,
    pub max_nodes: usize,
    /// Of `max_nodes`, how many may be copies made by aliases.
    pub max_alias_nodes: usize,
}

pub(crate) const LIMITS: Limits = Limits {
    max_input_bytes: 64 << 20,
    max_depth: 128,
    max_nodes: 4_000_000,
    max_alias_nodes: 250_000,
};

const CORE_TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// Parse one chunk of a stream (whole documents). `line_offset` is added to reported lines.
pub(crate) fn parse_documents(
    text: &str,
    origin: &str,
    line_offset: usize,
    limits: Limits,
) -> Result<Vec<Value>, YamlError> {
    let options = granit_parser::options! {
        block_scalar_eof_without_line_feed: true,
        bom_inside_document_as_content: true,
        block_nesting_limit: limits.max_depth + 1,
        flow_nesting_limit: limits.max_depth + 1,
    };
    let mut builder = Builder::new(origin, line_offset, limits);
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, span) = event.map_err(|e| builder.scan_error(&e))?;
        builder.event(event, span)?;
    }
    Ok(builder.docs)
}

struct Anchored {
    value: Value,
    nodes: usize,
}

/// What the next node of an open mapping is for.
enum KeySlot {
    /// The next node is a key.
    Expecting,
    /// The next node is the value of this key.
    Key(String),
    /// The next node is a `<<` merge source.
    Merge,
    /// The next node is the value of a null key; v3 drops the entry.
    Dropped,
}

enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        first_node: usize,
    },
    Map {
        map: Map<String, Value>,
        slot: KeySlot,
        merge: Option<Value>,
        anchor: usize,
        first_node: usize,
    },
}

struct Builder<'o> {
    origin: &'o str,
    line_offset: usize,
    limits: Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    nodes: usize,
    alias_nodes: usize,
    root: Option<Value>,
    docs: Vec<Value>,
    span: Option<Span>,
}

impl<'o> Builder<'o> {
    fn new(origin: &'o str, line_offset: usize, limits: Limits) -> Self {
        Builder {
            origin,
            line_offset,
            limits,
            stack: Vec::new(),
            anchors: HashMap::new(),
            nodes: 0,
            alias_nodes: 0,
            root: None,
            docs: Vec::new(),
            span: None,
        }
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        self.span = Some(span);
        match event {
            Event::DocumentStart(..) => self.anchors.clear(),
            Event::DocumentEnd => {
                if let Some(doc) = self.root.take().filter(|d| !d.is_null()) {
                    self.docs.push(doc);
                }
            }
            Event::Scalar(text, style, anchor, tag) => self.scalar(text, style, anchor, tag)?,
            Event::Alias(id) => self.alias(id)?,
            Event::SequenceStart(_, anchor, _) => {
                self.open(Frame::Seq {
                    items: Vec::new(),
                    anchor,
                    first_node: self.nodes,
                })?;
            }
            Event::MappingStart(_, anchor, _) => self.open(Frame::Map {
                map: Map::new(),
                slot: KeySlot::Expecting,
                merge: None,
                anchor,
                first_node: self.nodes,
            })?,
            Event::SequenceEnd | Event::MappingEnd => self.close()?,
            _ => {}
        }
        Ok(())
    }

    fn open(&mut self, frame: Frame) -> Result<(), YamlError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(self.limit(format!("nesting deeper than {}", self.limits.max_depth)));
        }
        self.count_nodes(1)?;
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self) -> Result<(), YamlError> {
        let (value, anchor, first_node) = match self.stack.pop() {
            Some(Frame::Seq {
                items,
                anchor,
                first_node,
            }) => (Value::Array(items), anchor, first_node),
            Some(Frame::Map {
                mut map,
                merge,
                anchor,
                first_node,
                ..
            }) => {
                if let Some(source) = merge {
                    apply_merge(&mut map, source);
                }
                (Value::Object(map), anchor, first_node)
            }
            None => return Err(self.invalid("unbalanced collection end".to_string())),
        };
        if anchor != 0 {
            let nodes = self.nodes - first_node;
            self.anchors.insert(
                anchor,
                Anchored {
                    value: value.clone(),
                    nodes,
                },
            );
        }
        self.attach(value)
    }

    fn scalar(
        &mut self,
        text: Cow<'_, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<Cow<'_, Tag>>,
    ) -> Result<(), YamlError> {
        self.count_nodes(1)?;
        let full_tag = tag.map(|t| format!("{}{}", t.handle(), t.suffix()));
        if self.expecting_key() {
            if anchor != 0 {
                let value = self.scalar_value(text.clone(), style, full_tag.as_deref())?;
                self.anchors.insert(anchor, Anchored { value, nodes: 1 });
            }
            let slot = key_slot(text, style, full_tag.as_deref());
            self.set_key(slot);
            return Ok(());
        }
        let value = self.scalar_value(text, style, full_tag.as_deref())?;
        if anchor != 0 {
            self.anchors.insert(
                anchor,
                Anchored {
                    value: value.clone(),
                    nodes: 1,
                },
            );
        }
        self.attach(value)
    }

    fn alias(&mut self, id: usize) -> Result<(), YamlError> {
        let Some(anchored) = self.anchors.get(&id) else {
            return Err(
                self.invalid("alias to an anchor that is not complete (recursive alias)".into())
            );
        };
        let nodes = anchored.nodes;
        // Count before copying: the check is what bounds alias bombs.
        self.alias_nodes = self.alias_nodes.saturating_add(nodes);
        if self.alias_nodes > self.limits.max_alias_nodes {
            let limit = format!(
                "aliases expand to more than {} nodes",
                self.limits.max_alias_nodes
            );
            return Err(self.limit(limit));
        }
        self.count_nodes(nodes)?;
        let value = self
            .anchors
            .get(&id)
            .map(|a| a.value.clone())
            .unwrap_or_default();
        if self.expecting_key() {
            let slot = match &value {
                Value::Null => KeySlot::Dropped,
                Value::String(s) => KeySlot::Key(s.clone()),
                Value::Bool(b) => KeySlot::Key(b.to_string()),
                Value::Number(n) => KeySlot::Key(n.to_string()),
                Value::Array(_) | Value::Object(_) => return Err(self.complex_key()),
            };
            self.set_key(slot);
            return Ok(());
        }
        self.attach(value)
    }

    fn expecting_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Map {
                slot: KeySlot::Expecting,
                ..
            })
        )
    }

    fn set_key(&mut self, new_slot: KeySlot) {
        if let Some(Frame::Map { slot, .. }) = self.stack.last_mut() {
            *slot = new_slot;
        }
    }

    /// Put a finished node where it belongs: document root, sequence item or mapping value.
    fn attach(&mut self, value: Value) -> Result<(), YamlError> {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map {
                map, slot, merge, ..
            }) => match std::mem::replace(slot, KeySlot::Expecting) {
                KeySlot::Key(key) => match map.entry(key) {
                    Entry::Vacant(slot) => {
                        slot.insert(value);
                    }
                    Entry::Occupied(slot) => {
                        let message = format!("mapping key {:?} already defined", slot.key());
                        return Err(self.invalid(message));
                    }
                },
                KeySlot::Merge => {
                    if !is_merge_source(&value) {
                        return Err(self.invalid(
                            "map merge requires a map or a sequence of maps as the value".into(),
                        ));
                    }
                    *merge = Some(value);
                }
                KeySlot::Dropped => {}
                KeySlot::Expecting => return Err(self.complex_key()),
            },
        }
        Ok(())
    }

    fn scalar_value(
        &self,
        text: Cow<'_, str>,
        style: ScalarStyle,
        tag: Option<&str>,
    ) -> Result<Value, YamlError> {
        match tag {
            None | Some("!") if style == ScalarStyle::Plain => {
                Ok(plain_to_value(text, resolve_plain))
            }
            None | Some("!") => Ok(Value::String(text.into_owned())),
            Some(tag) => match tag.strip_prefix(CORE_TAG_PREFIX) {
                Some("str") => Ok(Value::String(text.into_owned())),
                Some("binary") => decode_binary(&text).ok_or_else(|| {
                    self.invalid("!!binary value contains invalid base64 data".into())
                }),
                Some(short @ ("null" | "bool" | "int" | "float" | "timestamp")) => {
                    self.tagged_value(text, short)
                }
                _ => Ok(Value::String(text.into_owned())),
            },
        }
    }

    /// v3's resolve with an explicit core tag: the text must resolve to that type (an integer
    /// may stand for a float).
    fn tagged_value(&self, text: Cow<'_, str>, tag: &str) -> Result<Value, YamlError> {
        let plain = resolve_plain(&text);
        let resolved_tag = match plain {
            Plain::Null => "null",
            Plain::Bool(_) => "bool",
            Plain::Int(_) | Plain::Uint(_) => "int",
            Plain::Float(_) | Plain::NonFinite => "float",
            Plain::Timestamp(_) => "timestamp",
            Plain::Str => "str",
        };
        match (tag, plain) {
            (_, plain) if resolved_tag == tag => Ok(plain_to_value(text, |_| plain)),
            ("float", Plain::Int(i)) => Ok(plain_to_value(text, |_| Plain::Float(i as f64))),
            _ => Err(self.invalid(format!(
                "cannot decode !!{resolved_tag} `{text}` as a !!{tag}"
            ))),
        }
    }

    fn count_nodes(&mut self, n: usize) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.limits.max_nodes {
            let limit = format!(
                "more than {} nodes, aliases expanded",
                self.limits.max_nodes
            );
            return Err(self.limit(limit));
        }
        Ok(())
    }

    fn location(&self) -> (usize, usize) {
        self.span.map_or((0, 0), |s| {
            (s.start.line() + self.line_offset, s.start.col() + 1)
        })
    }

    fn invalid(&self, message: String) -> YamlError {
        let (line, column) = self.location();
        YamlError::Syntax {
            origin: self.origin.to_string(),
            line,
            column,
            message,
        }
    }

    fn complex_key(&self) -> YamlError {
        self.invalid(
            "mapping keys must be scalars; sequence and mapping keys are not supported".into(),
        )
    }

    fn limit(&self, limit: String) -> YamlError {
        let (line, _) = self.location();
        YamlError::Limit {
            origin: self.origin.to_string(),
            limit: format!("{limit}, at line {line}"),
        }
    }

    fn scan_error(&self, error: &ScanError) -> YamlError {
        let marker = error.marker();
        YamlError::Syntax {
            origin: self.origin.to_string(),
            line: marker.line() + self.line_offset,
            column: marker.col() + 1,
            message: error.kind().to_string(),
        }
    }
}

/// What a scalar in key position means: a key text, a merge, or a dropped (null) key.
fn key_slot(text: Cow<'_, str>, style: ScalarStyle, tag: Option<&str>) -> KeySlot {
    let is_merge_tag = tag == Some("tag:yaml.org,2002:merge");
    if text == "<<" && (is_merge_tag || (tag.is_none() && style == ScalarStyle::Plain)) {
        return KeySlot::Merge;
    }
    let null_key = match tag {
        None => style == ScalarStyle::Plain && resolve_plain(&text) == Plain::Null,
        Some(t) => t == "tag:yaml.org,2002:null",
    };
    if null_key {
        KeySlot::Dropped
    } else {
        KeySlot::Key(text.into_owned())
    }
}

/// The value of a scalar typed by `typing`; strings reuse the parser's buffer when it owns one.
fn plain_to_value(text: Cow<'_, str>, typing: impl FnOnce(&str) -> Plain) -> Value {
    match typing(&text) {
        Plain::Null => Value::Null,
        Plain::Bool(b) => Value::Bool(b),
        Plain::Int(i) => Value::Number(i.into()),
        Plain::Uint(u) => Value::Number(u.into()),
        Plain::Float(f) => {
            Number::from_f64(f).map_or_else(|| Value::String(text.into_owned()), Value::Number)
        }
        Plain::Timestamp(t) => Value::String(t.to_rfc3339_nano()),
        Plain::NonFinite | Plain::Str => Value::String(text.into_owned()),
    }
}

fn is_merge_source(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().all(Value::is_object),
        _ => false,
    }
}

/// Merge keys fill in what the mapping does not define; earlier sources win over later ones.
fn apply_merge(map: &mut Map<String, Value>, source: Value) {
    let sources = match source {
        Value::Object(m) => vec![m],
        Value::Array(items) => items
            .into_iter()
            .filter_map(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for source in sources {
        for (key, value) in source {
            map.entry(key).or_insert(value);
        }
    }
}

/// `!!binary`: padded standard base64 (line breaks ignored, as Go's `DecodeString` does);
/// the decoded bytes are read as UTF-8 with replacement characters, as Go's JSON encoder
/// writes an invalid string.
fn decode_binary(text: &str) -> Option<Value> {
    let mut bytes = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    let (mut padding, mut count) = (0, 0usize);
    for c in text.bytes().filter(|c| !matches!(c, b'\r' | b'\n')) {
        count += 1;
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            _ => return None,
        };
        if padding > 0 {
            return None;
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
        }
    }
    if count % 4 != 0 || padding > 2 {
        return None;
    }
    Some(Value::String(String::from_utf8_lossy(&bytes).into_owned()))
}
