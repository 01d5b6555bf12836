//! The merge walk: kyaml's `walk.Walker` driving `merge2.Merger`, as kustomize's
//! `patchstrategicmerge` filter runs it (patch elements are *prepended*).
//!
//! The walk visits the target (`dest`) and the patch (`origin`) together, field by field in
//! sorted order, and returns the merged node (or `None` when the value is cleared):
//!
//! - maps merge recursively; a `null` patch value clears; `$patch: delete|replace` apply;
//! - scalars take the patch's value when the patch has one;
//! - lists whose schema strategy names `merge` merge element-wise by the schema's keys (a list of
//!   scalars merges as a set); every other list, and every list without a schema (custom
//!   resources), is replaced by the patch's list.
//!
//! Element-wise merging follows kyaml step by step, quirks included, because its results are
//! what kustomize prints: elements are matched by the *text* of their keys; the merged list is
//! built patch-order first, then target-only elements; elements that are null or `{}` vanish;
//! elements with equal keys collapse into one; an element lacking the merge key disturbs the
//! list. Every list with a merge strategy is rebuilt this way, even when the patch does not
//! mention it.

use super::MergeError;
use super::directive::{Directive, take_directive};
use super::schema::resource_schema;
use super::schema_types::Schema;
use super::tree::{Kind, Node, NodeId, Tree};
use serde_json::Value;

/// `[dest, origin]`: the target's node and the patch's node at the same place.
type Sources = [Option<NodeId>; 2];

/// Runs the walk over one arena.
pub(super) struct Merger<'t> {
    pub tree: &'t mut Tree,
}

impl Merger<'_> {
    /// Merge `sources[1]` into `sources[0]`; `schema` is the schema already known for them.
    pub(super) fn walk(
        &mut self,
        sources: Sources,
        schema: Option<&'static Schema>,
    ) -> Result<Option<NodeId>, MergeError> {
        let schema = schema.or_else(|| self.schema_from_type(&sources));
        let kind =
            sources.iter().flatten().find(|id| !self.tree.missing_or_null(Some(**id))).map(|id| self.tree.kind(*id));
        match kind {
            None => self.walk_map(sources, schema),
            Some(kind) => {
                for id in sources {
                    self.tree.check_kind(id, kind)?;
                }
                match kind {
                    Kind::Map => self.walk_map(sources, schema),
                    Kind::Seq if schema.is_some_and(Schema::is_associative) => {
                        sources.iter().flatten().for_each(|id| self.tree.unpack(*id));
                        self.walk_associative(sources, schema)
                    }
                    Kind::Seq | Kind::Scalar => Ok(sources[1].or(sources[0])),
                }
            }
        }
    }

    /// kyaml's `GetSchema` without a known schema: the first source whose `apiVersion` and
    /// `kind` name a built-in kind.
    fn schema_from_type(&self, sources: &Sources) -> Option<&'static Schema> {
        sources.iter().flatten().find_map(|&id| {
            let text =
                |name| self.tree.field(id, name).filter(|f| !self.tree.nil_or_empty(*f)).map(|f| self.tree.text(f));
            resource_schema(&text("apiVersion")?, &text("kind")?)
        })
    }

    fn walk_map(&mut self, sources: Sources, schema: Option<&'static Schema>) -> Result<Option<NodeId>, MergeError> {
        let Some(dest) = self.visit_map(sources)? else { return Ok(None) };
        let origin = sources[1];
        let mut names: Vec<String> = self.tree.field_names(dest);
        if let Some(origin) = origin {
            names.extend(self.tree.field_names(origin));
        }
        names.sort();
        names.dedup();
        for name in names {
            let child_schema = schema.and_then(|s| s.field(&name));
            let child = [self.tree.field(dest, &name), origin.and_then(|o| self.tree.field(o, &name))];
            // merge2's VisitMap: "if Origin is missing, preserve explicitly set null in Dest".
            if child[1].is_none() && child[0].is_some() && self.tree.missing_or_null(child[0]) {
                continue;
            }
            let merged = self.walk(child, child_schema)?;
            self.tree.set_field(dest, &name, merged)?;
        }
        Ok(Some(dest))
    }

    /// merge2's `VisitMap`: the node the map's fields are merged into.
    fn visit_map(&mut self, [dest, origin]: Sources) -> Result<Option<NodeId>, MergeError> {
        if self.tree.missing_or_null(dest) {
            // Adding: a directive error is ignored here, as kyaml does.
            let directive = take_directive(self.tree, origin).unwrap_or(Directive::Merge);
            return Ok(if directive == Directive::Delete { None } else { origin });
        }
        self.visit_existing([dest, origin])
    }

    /// merge2's `VisitList` for associative lists.
    fn visit_associative_list(&mut self, [dest, origin]: Sources) -> Result<Option<NodeId>, MergeError> {
        if self.tree.missing_or_null(dest) {
            return Ok(origin);
        }
        self.visit_existing([dest, origin])
    }

    /// Both visits once the target has a value: a `null` patch clears it, else the patch's
    /// directive decides between the target (merge), the patch (replace) and nothing (delete).
    fn visit_existing(&mut self, [dest, origin]: Sources) -> Result<Option<NodeId>, MergeError> {
        if origin.is_some() && self.tree.missing_or_null(origin) {
            return Ok(None);
        }
        Ok(match take_directive(self.tree, origin)? {
            Directive::Delete => None,
            Directive::Replace => origin,
            Directive::Merge => dest,
        })
    }

    fn walk_associative(
        &mut self,
        sources: Sources,
        schema: Option<&'static Schema>,
    ) -> Result<Option<NodeId>, MergeError> {
        let Some(dest) = self.visit_associative_list(sources)? else { return Ok(None) };
        let sources = [Some(dest), sources[1]];
        let keys: Vec<String> =
            schema.map(|s| s.strategy_and_keys().1).unwrap_or(&[]).iter().map(|k| k.to_string()).collect();
        let element_schema = schema.and_then(Schema::elements);
        let values = self.element_values(&sources, &keys);
        if !values.is_empty() || !keys.is_empty() {
            self.merge_elements(&sources, values, &keys, dest, element_schema)
        } else {
            let values = self.element_primitive_values(&sources);
            self.merge_elements(&sources, values, &[String::new()], dest, element_schema)
        }
    }

    /// kyaml's `setAssociativeSequenceElements`: merge element by element into a new list.
    fn merge_elements(
        &mut self,
        sources: &Sources,
        mut values_list: Vec<Vec<String>>,
        keys: &[String],
        dest: NodeId,
        element_schema: Option<&'static Schema>,
    ) -> Result<Option<NodeId>, MergeError> {
        let items = self.tree.new_seq();
        if keys.len() > 1 {
            merge_values(&mut values_list);
        }
        let mut valid_keys = Vec::new();
        for values in &values_list {
            if values.is_empty() {
                continue;
            }
            let valid_values;
            (valid_keys, valid_values) = validate_keys(&values_list, values, keys);
            let element = self.element_sources(sources, &valid_keys, &valid_values);
            let merged = self.walk(element, element_schema)?;
            if self.tree.empty_map(merged) {
                if !valid_keys.is_empty() {
                    self.tree.element_setter(dest, None, &valid_keys, &valid_values)?;
                }
                continue;
            }
            let merged = merged.expect("a non-empty element is present");
            for (key, value) in valid_keys.iter().zip(&valid_values) {
                if self.tree.field(merged, key).is_none() && !value.is_empty() && self.tree.kind(merged) == Kind::Map {
                    let scalar = self.tree.push(Node::Scalar(scalar_from_text(value)));
                    self.tree.set_field(merged, key, Some(scalar))?;
                }
            }
            self.tree.element_setter(items, Some(merged), &valid_keys, &valid_values)?;
        }
        if values_list.is_empty() {
            return Ok(Some(dest));
        }
        self.append_list(items, dest, &valid_keys)?;
        Ok(Some(items))
    }

    /// kyaml's `elementValueList`: each source's element matching the key values.
    fn element_sources(&self, sources: &Sources, keys: &[String], values: &[String]) -> Sources {
        let (keys, values) = validate_keys(std::slice::from_ref(&values.to_vec()), values, keys);
        sources.map(|s| self.tree.element_list(s, &keys, &values))
    }

    /// kyaml's `appendListNode` (prepend direction): set every target element into `items`.
    fn append_list(&mut self, items: NodeId, dest: NodeId, keys: &[String]) -> Result<(), MergeError> {
        for elem in self.tree.items(dest) {
            if keys.first().is_none_or(|k| k.is_empty()) {
                let text = self.tree.text(elem);
                self.tree.element_setter(items, Some(elem), &[String::new()], &[text])?;
                continue;
            }
            let mut values = Vec::new();
            for key in keys {
                match self.tree.field_matcher(elem, key, "")? {
                    Some(found) => values.push(self.tree.text(found)),
                    None => self.tree.append(items, elem),
                }
            }
            if keys.len() > 1 {
                self.tree.element_setter(items, None, keys, &values)?;
            }
            self.tree.element_setter(items, Some(elem), keys, &values)?;
        }
        Ok(())
    }

    /// kyaml's `elementValues`: the key values of every element, patch first, without repeats.
    fn element_values(&self, sources: &Sources, keys: &[String]) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        for source in [sources[1], sources[0]].into_iter().flatten() {
            if self.tree.kind(source) != Kind::Seq && !self.tree.missing_or_null(Some(source)) {
                continue;
            }
            for elem in self.tree.items(source) {
                let values: Vec<String> = keys.iter().map(|k| self.key_value(elem, k)).collect();
                if !values.is_empty() && !out.contains(&values) {
                    out.push(values);
                }
            }
        }
        out
    }

    /// kyaml's `ElementValuesList` entry: a key's text, empty when missing or empty.
    fn key_value(&self, elem: NodeId, key: &str) -> String {
        match self.tree.field(elem, key) {
            Some(f) if !self.tree.nil_or_empty(f) => self.tree.text(f),
            _ => String::new(),
        }
    }

    /// kyaml's `elementPrimitiveValues`: the texts of a list of scalars, patch first.
    fn element_primitive_values(&self, sources: &Sources) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        for source in [sources[1], sources[0]].into_iter().flatten() {
            for elem in self.tree.items(source) {
                let text = vec![self.tree.text(elem)];
                if !out.contains(&text) {
                    out.push(text);
                }
            }
        }
        out
    }
}

/// kyaml's `validateKeys`: keep the keys that have a value in some element (all keys when none
/// has), and this element's values for them.
fn validate_keys(values_list: &[Vec<String>], values: &[String], keys: &[String]) -> (Vec<String>, Vec<String>) {
    let present =
        |key: &String| values_list.iter().any(|vs| vs.iter().zip(keys).any(|(v, k)| !v.is_empty() && k == key));
    if !keys.iter().any(present) {
        return (keys.to_vec(), values.to_vec());
    }
    let valid_keys = keys.iter().filter(|k| present(k)).cloned().collect();
    let valid_values =
        values.iter().zip(keys).filter(|(v, k)| !v.is_empty() || present(k)).map(|(v, _)| v.clone()).collect();
    (valid_keys, valid_values)
}

/// kyaml's `mergeValues`: key tuples equal up to empty entries become one tuple.
/// As in kyaml, the left tuple is read once per outer step while the right one is re-read.
fn merge_values(values_list: &mut [Vec<String>]) {
    for i in 0..values_list.len() {
        let left = values_list[i].clone();
        for j in 0..values_list.len() {
            if let Some(merged) = unify(&left, &values_list[j]) {
                values_list[i] = merged.clone();
                values_list[j] = merged;
            }
        }
    }
}

/// Two key tuples match when they share an entry and differ only where one side is empty.
fn unify(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b) {
        if x == y {
            common = true;
            out.push(x.clone());
        } else if !x.is_empty() && !y.is_empty() {
            return None;
        } else {
            out.push(if x.is_empty() { y.clone() } else { x.clone() });
        }
    }
    common.then_some(out)
}

/// A scalar kyaml writes from text (an untagged plain scalar): integers and booleans read back
/// as such, everything else as a string.
fn scalar_from_text(text: &str) -> Value {
    if let Ok(n) = text.parse::<i64>() {
        return Value::from(n);
    }
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(text.to_string()),
    }
}
