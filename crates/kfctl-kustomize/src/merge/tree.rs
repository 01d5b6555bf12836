//! A mutable node tree with identity, standing in for kyaml's `*yaml.Node` graph.
//!
//! kyaml's merge works on shared node pointers: an element merged in place in the target list is
//! the same node that is later set into the result list, and its list matchers compare scalar
//! *text* (`Node.Value`), not typed values. To reproduce its results exactly (including its
//! quirks), the merge runs on this arena, where a [`NodeId`] plays the pointer, and only turns
//! back into a `serde_json::Value` at the end.
//!
//! The filters here mirror kyaml's `Field`, `FieldSetter`, `FieldMatcher`, `ElementMatcher`
//! (`ElementList`) and `ElementSetter`, with the same matching rules.

use super::MergeError;
use serde_json::{Map, Value};

/// An index into the arena: the identity of one node.
pub(super) type NodeId = usize;

/// One node: a scalar (JSON null is kyaml's `!!null`), a map with ordered fields, or a list.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Scalar(Value),
    Map(Vec<(String, NodeId)>),
    Seq(Vec<NodeId>),
    /// A list of the merge's target not taken apart (always a `Value::Array`): the walk passes
    /// a list through whole unless it merges element-wise, so a target's other lists (a CRD's
    /// `versions`, with their schemas: most of a platform's bytes) are never copied into the
    /// arena. [`Tree::unpack`] takes one apart before its elements are read.
    Packed(Value),
}

/// The kind of a node, as kyaml's node kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Scalar,
    Map,
    Seq,
}

impl Kind {
    pub(super) fn yaml_name(self) -> &'static str {
        match self {
            Kind::Scalar => "ScalarNode",
            Kind::Map => "MappingNode",
            Kind::Seq => "SequenceNode",
        }
    }
}

/// The arena.
#[derive(Debug, Default)]
pub(super) struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    /// Add a JSON value (recursively) and return its root node.
    pub(super) fn add(&mut self, value: &Value) -> NodeId {
        let node = match value {
            Value::Object(map) => Node::Map(map.iter().map(|(k, v)| (k.clone(), self.add(v))).collect()),
            Value::Array(items) => Node::Seq(items.iter().map(|v| self.add(v)).collect()),
            scalar => Node::Scalar(scalar.clone()),
        };
        self.push(node)
    }

    /// Add the merge's target, taking it: maps as nodes, lists [`Node::Packed`].
    pub(super) fn add_target(&mut self, value: Value) -> NodeId {
        let node = match value {
            Value::Object(map) => Node::Map(map.into_iter().map(|(k, v)| (k, self.add_target(v))).collect()),
            list @ Value::Array(_) => Node::Packed(list),
            scalar => Node::Scalar(scalar),
        };
        self.push(node)
    }

    /// Take a packed list apart (its elements added as [`Tree::add_target`] adds them); any
    /// other node stays as it is.
    pub(super) fn unpack(&mut self, id: NodeId) {
        if !matches!(self.nodes[id], Node::Packed(_)) {
            return;
        }
        if let Node::Packed(Value::Array(items)) = std::mem::replace(&mut self.nodes[id], Node::Seq(Vec::new())) {
            let items = items.into_iter().map(|item| self.add_target(item)).collect();
            self.nodes[id] = Node::Seq(items);
        }
    }

    pub(super) fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The JSON value of a node.
    pub(super) fn to_value(&self, id: NodeId) -> Value {
        match &self.nodes[id] {
            Node::Scalar(v) => v.clone(),
            Node::Map(fields) => {
                Value::Object(fields.iter().map(|(k, v)| (k.clone(), self.to_value(*v))).collect::<Map<_, _>>())
            }
            Node::Seq(items) => Value::Array(items.iter().map(|v| self.to_value(*v)).collect()),
            Node::Packed(list) => list.clone(),
        }
    }

    /// The JSON value of a node, the tree taken: each node's contents are moved out, not
    /// copied, unless the result reaches some node twice (then as [`Tree::to_value`]).
    pub(super) fn into_value(mut self, id: NodeId) -> Value {
        if self.reached_twice(id) {
            return self.to_value(id);
        }
        self.take_value(id)
    }

    /// Whether the nodes under `id` (and `id`) hold some node twice.
    fn reached_twice(&self, id: NodeId) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut todo = vec![id];
        while let Some(id) = todo.pop() {
            if std::mem::replace(&mut seen[id], true) {
                return true;
            }
            match &self.nodes[id] {
                Node::Map(fields) => todo.extend(fields.iter().map(|(_, v)| *v)),
                Node::Seq(items) => todo.extend(items),
                Node::Scalar(_) | Node::Packed(_) => {}
            }
        }
        false
    }

    fn take_value(&mut self, id: NodeId) -> Value {
        match std::mem::replace(&mut self.nodes[id], Node::Scalar(Value::Null)) {
            Node::Scalar(v) | Node::Packed(v) => v,
            Node::Map(fields) => {
                Value::Object(fields.into_iter().map(|(k, v)| (k, self.take_value(v))).collect::<Map<_, _>>())
            }
            Node::Seq(items) => Value::Array(items.into_iter().map(|v| self.take_value(v)).collect()),
        }
    }

    pub(super) fn kind(&self, id: NodeId) -> Kind {
        match &self.nodes[id] {
            Node::Scalar(_) => Kind::Scalar,
            Node::Map(_) => Kind::Map,
            Node::Seq(_) | Node::Packed(_) => Kind::Seq,
        }
    }

    pub(super) fn new_seq(&mut self) -> NodeId {
        self.push(Node::Seq(Vec::new()))
    }

    /// kyaml's `IsMissingOrNull`.
    pub(super) fn missing_or_null(&self, id: Option<NodeId>) -> bool {
        id.is_none_or(|id| matches!(self.nodes[id], Node::Scalar(Value::Null)))
    }

    /// kyaml's `IsEmptyMap`: missing, null or `{}`.
    pub(super) fn empty_map(&self, id: Option<NodeId>) -> bool {
        self.missing_or_null(id) || id.is_some_and(|id| matches!(&self.nodes[id], Node::Map(f) if f.is_empty()))
    }

    /// kyaml's `IsNilOrEmpty` on a present node: null, `{}` or `[]`.
    pub(super) fn nil_or_empty(&self, id: NodeId) -> bool {
        match &self.nodes[id] {
            Node::Scalar(v) => v.is_null(),
            Node::Map(f) => f.is_empty(),
            Node::Seq(items) => items.is_empty(),
            Node::Packed(list) => list.as_array().is_none_or(Vec::is_empty),
        }
    }

    /// A node's `Node.Value` text: the scalar as written (maps and lists have none).
    pub(super) fn text(&self, id: NodeId) -> String {
        match &self.nodes[id] {
            Node::Scalar(Value::String(s)) => s.clone(),
            Node::Scalar(Value::Null) => "null".to_string(),
            Node::Scalar(v) => v.to_string(),
            Node::Map(_) | Node::Seq(_) | Node::Packed(_) => String::new(),
        }
    }

    /// kyaml's `GetValue`: the text, or empty for missing and null nodes.
    pub(super) fn get_value(&self, id: Option<NodeId>) -> String {
        match id {
            Some(id) if !self.missing_or_null(Some(id)) => self.text(id),
            _ => String::new(),
        }
    }

    /// The names of a map's fields (nothing for other nodes).
    pub(super) fn field_names(&self, id: NodeId) -> Vec<String> {
        match &self.nodes[id] {
            Node::Map(fields) => fields.iter().map(|(k, _)| k.clone()).collect(),
            _ => Vec::new(),
        }
    }

    /// A list's elements (nothing for other nodes). A packed list must be unpacked first
    /// ([`Tree::unpack`]): reading one here is a bug, and panics in tests.
    pub(super) fn items(&self, id: NodeId) -> Vec<NodeId> {
        match &self.nodes[id] {
            Node::Seq(items) => items.clone(),
            Node::Packed(_) => {
                debug_assert!(false, "a packed list read before it was unpacked");
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn set_items(&mut self, id: NodeId, items: Vec<NodeId>) {
        self.nodes[id] = Node::Seq(items);
    }

    pub(super) fn append(&mut self, seq: NodeId, elem: NodeId) {
        self.unpack(seq);
        if let Node::Seq(items) = &mut self.nodes[seq] {
            items.push(elem);
        }
    }

    /// kyaml's `Field(name).Value`: the value of the first field so named, for maps only.
    pub(super) fn field(&self, id: NodeId, name: &str) -> Option<NodeId> {
        match &self.nodes[id] {
            Node::Map(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| *v),
            _ => None,
        }
    }

    /// kyaml's `ErrorIfInvalid`: a present, non-null node must be of `kind`.
    pub(super) fn check_kind(&self, id: Option<NodeId>, kind: Kind) -> Result<(), MergeError> {
        match id {
            Some(id) if !self.missing_or_null(Some(id)) && self.kind(id) != kind => Err(MergeError::WrongKind {
                expected: kind.yaml_name(),
                found: self.kind(id).yaml_name(),
                value: self.to_value(id).to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// kyaml's `FieldClearer`: remove the first field so named.
    pub(super) fn clear_field(&mut self, id: NodeId, name: &str) -> Result<(), MergeError> {
        self.check_kind(Some(id), Kind::Map)?;
        if let Node::Map(fields) = &mut self.nodes[id]
            && let Some(pos) = fields.iter().position(|(k, _)| k == name)
        {
            fields.remove(pos);
        }
        Ok(())
    }

    /// kyaml's `FieldSetter`: a missing or null value clears the field; an existing field takes
    /// the value's content in place; a new field is appended.
    pub(super) fn set_field(&mut self, id: NodeId, name: &str, value: Option<NodeId>) -> Result<(), MergeError> {
        let Some(value) = value.filter(|v| !self.missing_or_null(Some(*v))) else {
            return self.clear_field(id, name);
        };
        if name.is_empty() {
            // Setting a scalar in place: kyaml rebuilds it from its own text and keeps its style,
            // which leaves the value as it was.
            return self.check_kind(Some(id), Kind::Scalar);
        }
        self.check_kind(Some(id), Kind::Map)?;
        match self.field(id, name) {
            Some(existing) if existing != value => self.nodes[existing] = self.restyled(existing, value),
            Some(_) => {}
            None => {
                if let Node::Map(fields) = &mut self.nodes[id] {
                    fields.push((name.to_string(), value));
                }
            }
        }
        Ok(())
    }

    /// The node `value` becomes when set over `existing`. kyaml keeps the existing scalar's
    /// quoting style, so a number or boolean written over a quoted string stays a string. The
    /// tree does not know how a string was written; it takes a string as quoted when it could
    /// not have been written plain.
    fn restyled(&self, existing: NodeId, value: NodeId) -> Node {
        match (&self.nodes[existing], &self.nodes[value]) {
            (Node::Scalar(Value::String(old)), Node::Scalar(new @ (Value::Number(_) | Value::Bool(_))))
                if written_quoted(old) =>
            {
                Node::Scalar(Value::String(match new {
                    Value::Number(n) => n.to_string(),
                    other => other.to_string(),
                }))
            }
            (_, node) => node.clone(),
        }
    }

    /// kyaml's `FieldMatcher{Name, StringValue}`: the field's value when present and, unless
    /// `value` is empty, equal in text. With an empty `name`, a scalar compared by its value.
    pub(super) fn field_matcher(&self, id: NodeId, name: &str, value: &str) -> Result<Option<NodeId>, MergeError> {
        if self.missing_or_null(Some(id)) {
            return Ok(None);
        }
        if name.is_empty() {
            self.check_kind(Some(id), Kind::Scalar)?;
            let wanted = if value.is_empty() { String::new() } else { value.to_string() };
            return Ok((self.get_value(Some(id)) == wanted).then_some(id));
        }
        self.check_kind(Some(id), Kind::Map)?;
        let Some(found) = self.field(id, name) else { return Ok(None) };
        Ok((value.is_empty() || self.text(found) == value).then_some(found))
    }

    /// kyaml's `ElementList(keys, values)`: the first element whose fields equal all values in
    /// text (an empty key matches scalar elements by text).
    pub(super) fn element_list(&self, seq: Option<NodeId>, keys: &[String], values: &[String]) -> Option<NodeId> {
        let seq = seq.filter(|s| self.kind(*s) == Kind::Seq)?;
        if keys.len() != values.len() {
            return None;
        }
        let items = self.items(seq);
        if keys.first().is_none_or(|k| k.is_empty()) {
            let wanted = values.first().map(String::as_str).unwrap_or("");
            return items.into_iter().find(|e| self.text(*e) == wanted);
        }
        items.into_iter().find(|&elem| {
            matches!(self.nodes[elem], Node::Map(_))
                && keys.iter().zip(values).all(|(k, v)| self.field(elem, k).is_some_and(|f| self.text(f) == *v))
        })
    }

    /// kyaml's `ElementSetter`: replace every element matching all key/value pairs with
    /// `element` (or remove them when `element` is `None`), append `element` when none matched.
    /// As in kyaml, null and empty-map elements are dropped on the way, and with no values at
    /// all every non-matching element is dropped too.
    pub(super) fn element_setter(
        &mut self,
        seq: NodeId,
        element: Option<NodeId>,
        keys: &[String],
        values: &[String],
    ) -> Result<(), MergeError> {
        self.check_kind(Some(seq), Kind::Seq)?;
        let empty_key = [String::new()];
        let keys = if keys.is_empty() { &empty_key[..] } else { keys };
        let mapping_setter = !keys[0].is_empty() && values.first().is_some_and(|v| !v.is_empty());
        let mut kept = Vec::new();
        let mut matched_any = false;
        for elem in self.items(seq) {
            if self.empty_map(Some(elem)) {
                continue;
            }
            if self.kind(elem) != Kind::Map && mapping_setter {
                kept.push(elem);
                continue;
            }
            if !self.matches_all(elem, keys, values)? {
                if !values.is_empty() {
                    kept.push(elem);
                }
                continue;
            }
            matched_any = true;
            if let Some(new) = element {
                kept.push(new);
            }
        }
        self.set_items(seq, kept);
        if let Some(new) = element.filter(|e| !self.missing_or_null(Some(*e)))
            && !matched_any
        {
            self.append(seq, new);
        }
        Ok(())
    }

    /// ElementSetter's match test, including its quirk: keys beyond the values reuse the last
    /// lookup's result.
    fn matches_all(&self, elem: NodeId, keys: &[String], values: &[String]) -> Result<bool, MergeError> {
        let mut last = None;
        for (j, key) in keys.iter().enumerate() {
            if let Some(value) = values.get(j) {
                last = self.field_matcher(elem, key, value)?;
            }
            if last.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Whether a string must have been quoted (or written as a block) in YAML: written plain, it
/// would read as another type, or it has characters a plain scalar cannot hold.
pub(super) fn written_quoted(s: &str) -> bool {
    const INDICATORS: &[char] =
        &['-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`'];
    s.is_empty()
        || s.contains('\n')
        || s.trim() != s
        || s.starts_with(INDICATORS)
        || s.contains(": ")
        || s.contains(" #")
        || reads_as_non_string(s)
}

/// Whether a plain scalar reads as null, a boolean or a number (go-yaml v3's resolution).
fn reads_as_non_string(s: &str) -> bool {
    matches!(s, "~" | "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE")
        || matches!(s.to_ascii_lowercase().trim_start_matches(['+', '-']), ".inf" | ".nan")
        || looks_numeric(s)
}

fn looks_numeric(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
        .iter()
        .find_map(|(prefix, radix)| body.strip_prefix(prefix).map(|digits| (digits, *radix)));
    if let Some((digits, radix)) = radix {
        return !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix) || c == '_');
    }
    let has_digit = body.chars().any(|c| c.is_ascii_digit());
    has_digit
        && body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-' | '_'))
        && body.parse::<f64>().is_ok()
}
