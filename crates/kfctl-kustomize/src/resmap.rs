//! An ordered list of resources with kustomize's id rules: no two objects with the same id,
//! lookups by any id an object has had, and target selection for patches and replacements.

use super::error::{KustomizeError, Result};
use super::kustomization::Selector;
use super::resource::{ResId, Resource};
use crate::gvk::Gvk;
use crate::name_index::{NameIndex, is_literal_name};
use regex::Regex;

/// The objects of a build (or of one level of it) in order, no two with the same id.
#[derive(Clone, Default)]
pub struct ResMap {
    resources: Vec<Resource>,
    /// Positions by every name each object has had (see [`crate::name_index`]).
    index: NameIndex,
}

impl PartialEq for ResMap {
    fn eq(&self, other: &Self) -> bool {
        self.resources == other.resources
    }
}

impl std::fmt::Debug for ResMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResMap").field("resources", &self.resources).finish()
    }
}

impl ResMap {
    pub(crate) fn new() -> Self {
        ResMap::default()
    }

    /// How many objects there are.
    pub fn len(&self) -> usize {
        self.resources.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }
    /// The objects in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Resource> {
        self.resources.iter()
    }
    pub(crate) fn as_slice(&self) -> &[Resource] {
        &self.resources
    }
    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, Resource> {
        self.index.clear();
        self.resources.iter_mut()
    }
    pub(crate) fn get(&self, index: usize) -> &Resource {
        &self.resources[index]
    }
    pub(crate) fn get_mut(&mut self, index: usize) -> &mut Resource {
        self.index.touch(index);
        &mut self.resources[index]
    }
    /// The objects in order, consuming the map.
    pub fn into_vec(self) -> Vec<Resource> {
        self.resources
    }
    pub(crate) fn replace_all(&mut self, resources: Vec<Resource>) {
        self.index.clear();
        self.resources = resources;
    }
    pub(crate) fn remove(&mut self, index: usize) -> Resource {
        self.index.clear();
        self.resources.remove(index)
    }

    /// Add one resource; an object whose current id is already present is an error.
    pub(crate) fn append(&mut self, resource: Resource, origin: &str) -> Result<()> {
        self.index.refresh(&self.resources);
        let id = resource.current_id();
        if !self.matching(&id, |r| r.current_id().same_object(&id)).is_empty() {
            return Err(KustomizeError::DuplicateId { id: Box::new(id), origin: origin.to_string() });
        }
        self.resources.push(resource);
        Ok(())
    }

    /// Add every resource of `other`, each checked as [`ResMap::append`] checks it.
    pub(crate) fn append_all(&mut self, other: ResMap, origin: &str) -> Result<()> {
        self.resources.reserve(other.len());
        other.resources.into_iter().try_for_each(|resource| self.append(resource, origin))
    }

    /// Positions among the candidates for `id`'s name (the index refreshed) where `pred` holds.
    fn matching(&self, id: &ResId, pred: impl Fn(&Resource) -> bool) -> Vec<usize> {
        self.index.candidates(&id.name).into_iter().filter(|&i| pred(&self.resources[i])).collect()
    }

    /// Indexes of resources for which any id they have had matches `id`.
    pub(crate) fn find_by_any_id(&mut self, id: &ResId) -> Vec<usize> {
        self.index.refresh(&self.resources);
        self.matching(id, |r| r.all_ids().any(|rid| rid.same_object(id)))
    }

    /// Indexes of resources whose current id matches `id`.
    pub(crate) fn find_by_current_id(&mut self, id: &ResId) -> Vec<usize> {
        self.index.refresh(&self.resources);
        self.matching(id, |r| r.current_id().same_object(id))
    }

    pub(crate) fn positions(&self, pred: impl Fn(&Resource) -> bool) -> Vec<usize> {
        self.resources.iter().enumerate().filter(|(_, r)| pred(r)).map(|(i, _)| i).collect()
    }

    /// kustomize's target selection: gvk, name and namespace as anchored regexes matched against
    /// the original or the current id, and label and annotation selectors.
    pub(crate) fn select(&mut self, selector: &Selector) -> Result<Vec<usize>> {
        let compiled = CompiledSelector::new(selector)?;
        if !is_literal_name(&selector.name) {
            return Ok(self.positions(|r| compiled.matches(r)));
        }
        // A literal name is matched against the original and the current name, both indexed.
        self.index.refresh(&self.resources);
        let candidates = self.index.candidates(&selector.name);
        Ok(candidates.into_iter().filter(|&i| compiled.matches(&self.resources[i])).collect())
    }
}

/// A selector ready to match: its regexes compiled once.
pub(crate) struct CompiledSelector {
    gvk: Gvk,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: Option<LabelSelector>,
    annotations: Option<LabelSelector>,
}

fn anchored(pattern: &str, what: &str) -> Result<Option<Regex>> {
    if pattern.is_empty() {
        return Ok(None);
    }
    Regex::new(&format!("^(?:{pattern})$")).map(Some).map_err(|e| {
        KustomizeError::transform(format!("target {what} `{pattern}`"), format!("not a valid regular expression: {e}"))
    })
}

impl CompiledSelector {
    pub(crate) fn new(s: &Selector) -> Result<Self> {
        Ok(CompiledSelector {
            gvk: Gvk::new(&s.group, &s.version, &s.kind),
            name: anchored(&s.name, "name")?,
            namespace: anchored(&s.namespace, "namespace")?,
            labels: LabelSelector::parse_opt(&s.label_selector)?,
            annotations: LabelSelector::parse_opt(&s.annotation_selector)?,
        })
    }

    pub(crate) fn matches(&self, r: &Resource) -> bool {
        let cur = r.current_id();
        let org = r.original_id();
        if let Some(ns) = &self.namespace
            && !ns.is_match(org.effective_namespace())
            && !ns.is_match(cur.effective_namespace())
        {
            return false;
        }
        if let Some(name) = &self.name
            && !name.is_match(&org.name)
            && !name.is_match(&cur.name)
        {
            return false;
        }
        if !cur.gvk.is_selected_by(&self.gvk) {
            return false;
        }
        if let Some(sel) = &self.labels
            && !sel.matches(&r.string_map("labels"))
        {
            return false;
        }
        if let Some(sel) = &self.annotations
            && !sel.matches(&r.string_map("annotations"))
        {
            return false;
        }
        true
    }
}

/// A Kubernetes label selector: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

impl LabelSelector {
    fn parse_opt(text: &str) -> Result<Option<Self>> {
        if text.trim().is_empty() { Ok(None) } else { Self::parse(text).map(Some) }
    }

    pub(crate) fn parse(text: &str) -> Result<Self> {
        let bad = |why: &str| KustomizeError::transform(format!("label selector `{text}`"), why.to_string());
        let mut requirements = Vec::new();
        for clause in split_top_level_commas(text) {
            let clause = clause.trim();
            if clause.is_empty() {
                return Err(bad("empty requirement"));
            }
            requirements
                .push(parse_requirement(clause).ok_or_else(|| {
                    bad("expected key=value, key!=value, key in (a,b), key notin (a,b), key or !key")
                })?);
        }
        Ok(LabelSelector { requirements })
    }

    pub(crate) fn matches(&self, labels: &[(String, String)]) -> bool {
        let get = |k: &str| labels.iter().find(|(lk, _)| lk == k).map(|(_, v)| v.as_str());
        self.requirements.iter().all(|req| match req {
            Requirement::In(k, vs) => get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|v| vs.iter().all(|x| x != v)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        })
    }
}

fn split_top_level_commas(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_set(text: &str) -> Option<Vec<String>> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
}

fn parse_requirement(clause: &str) -> Option<Requirement> {
    if let Some(key) = clause.strip_prefix('!') {
        return Some(Requirement::NotExists(key.trim().to_string()));
    }
    if let Some((k, v)) = clause.split_once("!=") {
        return Some(Requirement::NotIn(k.trim().to_string(), vec![v.trim().to_string()]));
    }
    if let Some((k, v)) = clause.split_once("==").or_else(|| clause.split_once('=')) {
        return Some(Requirement::In(k.trim().to_string(), vec![v.trim().to_string()]));
    }
    let words: Vec<&str> = clause.splitn(3, char::is_whitespace).collect();
    match words.as_slice() {
        [key] => Some(Requirement::Exists(key.to_string())),
        [key, "in", set] => Some(Requirement::In(key.to_string(), parse_set(set)?)),
        [key, "notin", set] => Some(Requirement::NotIn(key.to_string(), parse_set(set)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map_of(objects: &[serde_json::Value]) -> ResMap {
        let mut map = ResMap::new();
        for o in objects {
            map.append(Resource::new(o.clone()), "t").unwrap();
        }
        map
    }

    #[test]
    fn append_all_refuses_an_id_already_present_and_admits_same_names_of_other_ids() {
        let cm = |name: &str, ns: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}});
        let mut base = map_of(&[cm("a", "x"), cm("b", "x")]);
        let other = map_of(&[
            cm("a", "y"),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a", "namespace": "x"}}),
            cm("c", "x"),
        ]);
        base.append_all(other, "o").unwrap();
        assert_eq!(base.len(), 5);
        let err = base.append_all(map_of(&[cm("d", "x"), cm("b", "x")]), "dup").unwrap_err();
        assert!(matches!(err, KustomizeError::DuplicateId { ref origin, .. } if origin == "dup"), "{err}");
        assert!(base.append_all(map_of(&[cm("d", "x")]), "again").is_err(), "the failed call had appended `d`");
    }

    #[test]
    fn lookups_find_objects_by_every_name_they_have_had_after_changes_through_positions() {
        let cm = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        let mut map = map_of(&[cm("a"), cm("b"), cm("ab")]);
        map.get_mut(1).set_name("p-b");
        let by_name = |name: &str| Selector { name: name.into(), ..Selector::default() };
        assert_eq!(map.select(&by_name("b")).unwrap(), vec![1], "the original name");
        assert_eq!(map.select(&by_name("p-b")).unwrap(), vec![1], "the current name");
        assert_eq!(map.select(&by_name("a.*")).unwrap(), vec![0, 2], "a pattern scans every object");
        let id = |name: &str| ResId::new(Gvk::new("", "v1", "ConfigMap"), name, "");
        assert_eq!(map.find_by_any_id(&id("b")), vec![1]);
        assert!(map.find_by_current_id(&id("b")).is_empty());
        map.iter_mut().for_each(|r| r.set_namespace("x"));
        assert!(map.append(Resource::new(cm("p-b")), "t").is_ok(), "another namespace, another id");
        assert!(
            map.append(
                Resource::new(
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-b", "namespace": "x"}})
                ),
                "t"
            )
            .is_err()
        );
        assert_eq!(map.find_by_current_id(&ResId::new(Gvk::new("", "v1", "ConfigMap"), "p-b", "x")), vec![1]);
    }

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn label_selector_forms() {
        let l = labels(&[("app", "web"), ("tier", "front")]);
        assert!(LabelSelector::parse("app=web").unwrap().matches(&l));
        assert!(LabelSelector::parse("app==web,tier").unwrap().matches(&l));
        assert!(!LabelSelector::parse("app!=web").unwrap().matches(&l));
        assert!(LabelSelector::parse("tier in (back, front)").unwrap().matches(&l));
        assert!(!LabelSelector::parse("tier notin (front)").unwrap().matches(&l));
        assert!(LabelSelector::parse("!missing").unwrap().matches(&l));
        assert!(LabelSelector::parse("a in (b").is_err());
    }
}
