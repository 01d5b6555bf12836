//! Reading: parser events straight into `serde_json::Value`, typed as kustomize types them.
//!
//! The events come from granit-parser, the YAML 1.2 parser underneath serde-saphyr. Building the
//! `Value` here instead of going through serde-saphyr's `Deserializer` halves the cost of reading
//! (the deserializer re-checks every event through serde's generic machinery), and lets scalars be
//! typed exactly as kustomize types them: by go-yaml v3's resolver (see [`super::resolve`]).
//!
//! Structure, as go-yaml v3 decodes into `map[string]interface{}` (scalar typing is in
//! [`super::typing`]):
//! - duplicate keys are an error (or, with [`Limits::last_key_wins`], the last one counts); a key whose value is a sequence or mapping is refused;
//! - `<<` merges (YAML 1.1): explicit keys win, then earlier merged maps win;
//! - anchors and aliases are expanded (an alias copies the anchored value);
//! - documents that are empty or null are dropped;
//! - a block scalar that ends the input without a line break gets no final `\n` (granit's
//!   `block_scalar_eof_without_line_feed`, libyaml's behaviour; serde-saphyr adds one).
//!
//! Bounds: every node, including each node an alias copies, counts against
//! [`Limits::max_nodes`], and alias copies alone against [`Limits::max_alias_nodes`]; nesting
//! deeper than [`Limits::max_depth`] fails. The checks run before a copy is made, so alias bombs
//! stop fast with [`YamlError::Limit`].

use std::borrow::Cow;
use std::collections::HashMap;

use granit_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::YamlError;
use super::typing::{KeySlot, apply_merge, is_merge_source, key_slot, scalar_value};

/// Resource bounds for one input. Generous for real manifests (the whole Kubeflow platform is
/// 10 MB and ~320k nodes), small enough that hostile input fails fast.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_input_bytes: usize,
    pub max_depth: usize,
    pub max_nodes: usize,
    /// Of `max_nodes`, how many may be copies made by aliases.
    pub max_alias_nodes: usize,
    /// A duplicate mapping key replaces the earlier value instead of being an error: how
    /// go-yaml v2 (under `sigs.k8s.io/yaml`, kustomize's reader of kustomization files) reads.
    pub last_key_wins: bool,
    /// A plain scalar in an object's `metadata.annotations` keeps its source text as a
    /// string (`port: 8080` is `"8080"`, `0x1F` stays `"0x1F"`): kustomize reads annotations as
    /// text and writes them back quoted. A bare null (`key:`) is still null.
    pub annotation_text: bool,
}

pub(crate) const LIMITS: Limits = Limits {
    max_input_bytes: 64 << 20,
    max_depth: 128,
    max_nodes: 4_000_000,
    max_alias_nodes: 250_000,
    last_key_wins: false,
    annotation_text: false,
};

/// How plain scalars are typed: as go-yaml v3 (kustomize's reader), or as Helm reads values
/// files (sigs.k8s.io/yaml over go-yaml v2, YAML 1.1: `yes`, `no`, `on`, `off`, `y`, `n` in any
/// of their spellings are booleans too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    GoYamlV3,
    HelmValues,
}

/// The documents of a chunk, and for each the JSON pointers of its bare nulls (a key written
/// with nothing after it, `key:`), which kustomize's merge treats differently from `null`.
pub(crate) type Parsed = (Vec<Value>, Vec<Vec<String>>);

/// Parse one chunk of a stream (whole documents). `line_offset` is added to reported lines.
pub(crate) fn parse_documents(
    text: &str,
    origin: &str,
    line_offset: usize,
    limits: Limits,
) -> Result<Parsed, YamlError> {
    parse_documents_as(text, origin, line_offset, limits, Dialect::GoYamlV3)
}

/// [`parse_documents`] in a given [`Dialect`].
pub(crate) fn parse_documents_as(
    text: &str,
    origin: &str,
    line_offset: usize,
    limits: Limits,
    dialect: Dialect,
) -> Result<Parsed, YamlError> {
    if let Some(parsed) = super::fast::parse(text, limits, dialect) {
        return Ok(parsed);
    }
    parse_documents_granit(text, origin, line_offset, limits, dialect)
}

/// [`parse_documents_as`] with granit alone (what the fast reader is checked against).
pub(crate) fn parse_documents_granit(
    text: &str,
    origin: &str,
    line_offset: usize,
    limits: Limits,
    dialect: Dialect,
) -> Result<Parsed, YamlError> {
    let options = granit_parser::options! {
        block_scalar_eof_without_line_feed: true,
        bom_inside_document_as_content: true,
        block_nesting_limit: limits.max_depth + 1,
        flow_nesting_limit: limits.max_depth + 1,
    };
    let mut builder = Builder::new(origin, line_offset, limits);
    builder.dialect = dialect;
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, span) = event.map_err(|e| builder.scan_error(&e))?;
        builder.event(event, span)?;
    }
    Ok((builder.docs, builder.bare_by_doc))
}

/// The YAML 1.1 booleans go-yaml v2 knows beyond `true` and `false`.
fn yaml11_bool(text: &str) -> Option<bool> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// The YAML booleans both versions know.
fn core_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

struct Anchored {
    value: Value,
    nodes: usize,
}

enum Frame {
    Seq { items: Vec<Value>, anchor: usize, first_node: usize },
    Map { map: Map<String, Value>, slot: KeySlot, merge: Option<Box<Value>>, anchor: usize, first_node: usize },
}

/// Builds documents from parser events; also driven by the fast reader ([`super::fast`]).
pub(crate) struct Builder<'o> {
    origin: &'o str,
    line_offset: usize,
    limits: Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    nodes: usize,
    alias_nodes: usize,
    root: Option<Value>,
    pub(crate) docs: Vec<Value>,
    /// Bare nulls of the document being read, then of each finished document.
    bare: Vec<String>,
    pub(crate) bare_by_doc: Vec<Vec<String>>,
    span: Option<Span>,
    pub(crate) dialect: Dialect,
}

impl<'o> Builder<'o> {
    pub(crate) fn new(origin: &'o str, line_offset: usize, limits: Limits) -> Self {
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
            bare: Vec::new(),
            bare_by_doc: Vec::new(),
            span: None,
            dialect: Dialect::GoYamlV3,
        }
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        self.span = Some(span);
        match event {
            Event::DocumentStart(..) => self.anchors.clear(),
            Event::DocumentEnd => self.document_end(),
            Event::Scalar(text, style, anchor, tag) => {
                // The parser reports an empty node as a plain `~` with an empty span.
                let empty = span.is_empty();
                self.scalar(text, style, anchor, tag, empty)?;
            }
            Event::Alias(id) => self.alias(id)?,
            Event::SequenceStart(_, anchor, _) => self.open_seq(anchor)?,
            Event::MappingStart(_, anchor, _) => self.open_map(anchor)?,
            Event::SequenceEnd | Event::MappingEnd => self.close()?,
            _ => {}
        }
        Ok(())
    }

    /// The end of a document: keep it unless it is empty or null.
    pub(crate) fn document_end(&mut self) {
        let bare = std::mem::take(&mut self.bare);
        if let Some(doc) = self.root.take().filter(|d| !d.is_null()) {
            self.docs.push(doc);
            self.bare_by_doc.push(bare);
        }
    }

    pub(crate) fn open_seq(&mut self, anchor: usize) -> Result<(), YamlError> {
        self.open(Frame::Seq { items: Vec::new(), anchor, first_node: self.nodes })
    }

    pub(crate) fn open_map(&mut self, anchor: usize) -> Result<(), YamlError> {
        self.open(Frame::Map { map: Map::new(), slot: KeySlot::Expecting, merge: None, anchor, first_node: self.nodes })
    }

    /// An untagged, unanchored scalar (what the fast reader produces); `empty` marks a node
    /// with nothing written (a bare null when plain `~`).
    pub(crate) fn untagged_scalar(
        &mut self,
        text: Cow<'_, str>,
        style: ScalarStyle,
        empty: bool,
    ) -> Result<(), YamlError> {
        self.scalar(text, style, 0, None, empty)
    }

    fn open(&mut self, frame: Frame) -> Result<(), YamlError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(self.limit(format!("nesting deeper than {}", self.limits.max_depth)));
        }
        self.count_nodes(1)?;
        self.stack.push(frame);
        Ok(())
    }

    pub(crate) fn close(&mut self) -> Result<(), YamlError> {
        let (value, anchor, first_node) = match self.stack.pop() {
            Some(Frame::Seq { items, anchor, first_node }) => (Value::Array(items), anchor, first_node),
            Some(Frame::Map { mut map, merge, anchor, first_node, .. }) => {
                if let Some(source) = merge {
                    apply_merge(&mut map, *source);
                }
                (Value::Object(map), anchor, first_node)
            }
            None => return Err(self.invalid("unbalanced collection end".to_string())),
        };
        if anchor != 0 {
            let nodes = self.nodes - first_node;
            self.anchors.insert(anchor, Anchored { value: value.clone(), nodes });
        }
        self.attach(value)
    }

    fn scalar(
        &mut self,
        text: Cow<'_, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<Cow<'_, Tag>>,
        empty: bool,
    ) -> Result<(), YamlError> {
        self.count_nodes(1)?;
        let full_tag = tag.map(|t| format!("{}{}", t.handle(), t.suffix()));
        if self.expecting_key() {
            if anchor != 0 {
                let value = scalar_value(text.clone(), style, full_tag.as_deref()).map_err(|m| self.invalid(m))?;
                self.anchors.insert(anchor, Anchored { value, nodes: 1 });
            }
            let slot = match self.dialect {
                // sigs.k8s.io/yaml writes a boolean key (`y:`, `on:`, `true:`) as "true"/"false".
                Dialect::HelmValues if style == ScalarStyle::Plain && full_tag.is_none() => {
                    match yaml11_bool(&text).or_else(|| core_bool(&text)) {
                        Some(b) => KeySlot::Key(b.to_string()),
                        None => key_slot(text, style, full_tag.as_deref()),
                    }
                }
                _ => key_slot(text, style, full_tag.as_deref()),
            };
            self.set_key(slot);
            return Ok(());
        }
        let plain = style == ScalarStyle::Plain && full_tag.is_none();
        let bare = plain && text == "~" && empty;
        if bare {
            self.bare.push(self.pointer());
        }
        let yaml11_bool = match self.dialect {
            Dialect::HelmValues if plain => yaml11_bool(&text),
            _ => None,
        };
        let value = if let Some(b) = yaml11_bool {
            Value::Bool(b)
        } else if plain && !bare && self.limits.annotation_text && self.in_annotations() {
            Value::String(text.into_owned())
        } else {
            scalar_value(text, style, full_tag.as_deref()).map_err(|m| self.invalid(m))?
        };
        if anchor != 0 {
            self.anchors.insert(anchor, Anchored { value: value.clone(), nodes: 1 });
        }
        self.attach(value)
    }

    /// Whether the value about to be attached is one of the root object's annotations.
    fn in_annotations(&self) -> bool {
        let key = |frame: &Frame| match frame {
            Frame::Map { slot: KeySlot::Key(k), .. } => Some(k.clone()),
            _ => None,
        };
        match self.stack.as_slice() {
            [root, meta, annotations] => {
                key(root).as_deref() == Some("metadata")
                    && key(meta).as_deref() == Some("annotations")
                    && key(annotations).is_some()
            }
            _ => false,
        }
    }

    fn alias(&mut self, id: usize) -> Result<(), YamlError> {
        let Some(anchored) = self.anchors.get(&id) else {
            return Err(self.invalid("alias to an anchor that is not complete (recursive alias)".into()));
        };
        let nodes = anchored.nodes;
        // Count before copying: the check is what bounds alias bombs.
        self.alias_nodes = self.alias_nodes.saturating_add(nodes);
        if self.alias_nodes > self.limits.max_alias_nodes {
            let limit = format!("aliases expand to more than {} nodes", self.limits.max_alias_nodes);
            return Err(self.limit(limit));
        }
        self.count_nodes(nodes)?;
        let value = self.anchors.get(&id).map(|a| a.value.clone()).unwrap_or_default();
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

    /// The JSON pointer of the value about to be attached.
    fn pointer(&self) -> String {
        let mut out = String::new();
        for frame in &self.stack {
            out.push('/');
            match frame {
                Frame::Seq { items, .. } => out.push_str(&items.len().to_string()),
                Frame::Map { slot: KeySlot::Key(k), .. } => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
                Frame::Map { .. } => out.push('-'),
            }
        }
        out
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { slot: KeySlot::Expecting, .. }))
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
            Some(Frame::Map { map, slot, merge, .. }) => match std::mem::replace(slot, KeySlot::Expecting) {
                KeySlot::Key(key) => match map.entry(key) {
                    Entry::Vacant(slot) => {
                        slot.insert(value);
                    }
                    Entry::Occupied(mut slot) if self.limits.last_key_wins => {
                        slot.insert(value);
                    }
                    Entry::Occupied(slot) => {
                        let message = format!("mapping key {:?} already defined; keep only one", slot.key());
                        return Err(self.invalid(message));
                    }
                },
                KeySlot::Merge => {
                    if !is_merge_source(&value) {
                        return Err(self.invalid("map merge requires a map or a sequence of maps as the value".into()));
                    }
                    *merge = Some(Box::new(value));
                }
                KeySlot::Dropped => {}
                KeySlot::Expecting => return Err(self.complex_key()),
            },
        }
        Ok(())
    }

    /// Nodes counted so far (aliases expanded).
    pub(crate) fn nodes(&self) -> usize {
        self.nodes
    }

    fn count_nodes(&mut self, n: usize) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.limits.max_nodes {
            let limit = format!("more than {} nodes, aliases expanded", self.limits.max_nodes);
            return Err(self.limit(limit));
        }
        Ok(())
    }

    fn location(&self) -> (usize, usize) {
        self.span.map_or((0, 0), |s| (s.start.line() + self.line_offset, s.start.col() + 1))
    }

    fn invalid(&self, message: String) -> YamlError {
        let (line, column) = self.location();
        YamlError::Syntax { origin: self.origin.to_string(), line, column, message }
    }

    fn complex_key(&self) -> YamlError {
        self.invalid("mapping keys must be scalars; sequence and mapping keys are not supported".into())
    }

    fn limit(&self, limit: String) -> YamlError {
        let (line, _) = self.location();
        YamlError::Limit { origin: self.origin.to_string(), limit: format!("{limit}, at line {line}") }
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
