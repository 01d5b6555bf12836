//! The image-reference model: every place a component names an image, as catalog data.
//!
//! Container `image` fields (pods, and custom resources such as serving or training
//! runtimes) are found everywhere on their own, by key. Everything else — an image named in
//! an env value, an argument, a ConfigMap key, inside a JSON or YAML configuration blob, or
//! composed from Istio's `hub` + name + `tag` — is listed per component in
//! `charts/<component>/images.yaml`: which object, which field, and how to find the
//! reference in that field's text ([`Find`]). The same data drives three things:
//!
//! - `kfctl-rs images` (every pullable reference, once, with where it is used);
//! - the native render: `rewrite_text` replaces each found reference in the field's text
//!   (only whole tokens, every other byte kept) with its override and registry;
//! - the chart export: each such field becomes one point whose Helm helper
//!   (`kfctl.imageText`) does the same replacement.
//!
//! `exceptions:` name fields that hold image-like text no workload pulls (upstream's
//! commented examples), each with its reason; the tests' independent scan allows them.

use super::CatalogError;
use super::object_id::ObjectId;
use crate::embedded;
use serde::Deserialize;
use serde_json::Value;
use std::sync::OnceLock;

/// One component's `images.yaml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageFile {
    #[serde(default)]
    pub(crate) references: Vec<Location>,
    /// Fields with image-like text that no workload pulls, allowed by the checks.
    #[serde(default)]
    pub exceptions: Vec<Exception>,
}

/// A field of one object that names images.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Location {
    /// `Kind/name`; the name before kustomize's hash suffix.
    pub(crate) object: String,
    /// Path to the field: map keys, `*` (every item or value), `name=X` (the list item named
    /// X), `after=X` (the list item that follows the item `X`).
    pub(crate) field: Vec<String>,
    #[serde(default)]
    pub(crate) find: Find,
    /// Whether the found text is itself a pullable reference (false: it is completed at run
    /// time, e.g. tagged with the release, and the pulled image is listed elsewhere).
    #[serde(default = "yes")]
    pub(crate) pulls: bool,
}

fn yes() -> bool {
    true
}

/// How references are found in the field's text.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Find {
    /// The whole text is one reference.
    #[default]
    Whole,
    /// The text starts with this; the rest is the reference (`--flag=IMAGE`).
    Prefix(String),
    /// The text is JSON or YAML: every string under a key of `keys`, at any depth.
    Keys(KeysFind),
    /// Lines whose text (indentation aside) starts with this; the rest is the reference
    /// (lines holding template actions `{{` are not references).
    Lines(String),
    /// The text following this, up to the next `"`.
    Quoted(String),
    /// Istio's composition: a JSON text whose `hub` (a registry and path) is rewritten as a
    /// registry; the pulled references are `<hub>/<name>:<tag>` for each name.
    Hub(HubFind),
}

/// [`Find::Keys`]: the keys whose string values are references, at any depth.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeysFind {
    pub(crate) keys: Vec<String>,
    /// A sibling key holding the tag of an untagged image (KServe's `defaultImageVersion`).
    #[serde(default)]
    pub(crate) version_key: Option<String>,
}

/// [`Find::Hub`]: the keys of Istio's `hub`, `tag` and image names.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HubFind {
    pub(crate) hub: Vec<String>,
    pub(crate) tag: Vec<String>,
    pub(crate) names: Vec<Vec<String>>,
}

/// A field with image-like text that no workload pulls.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Exception {
    /// `Kind/name` of the object; the name before kustomize's hash suffix.
    pub object: String,
    /// Path to the field, as in a location.
    pub field: Vec<String>,
    /// Why the token is allowed (the data file requires it; only the tests read it).
    #[cfg_attr(not(test), allow(dead_code, reason = "the data file requires it; only the tests read it"))]
    pub(crate) reason: String,
}

/// How a found token is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rewrite {
    /// An image reference: its per-image override, then `global.imageRegistry`.
    Image,
    /// A registry and path (Istio's hub): `global.imageRegistry` only.
    Hub,
}

impl Rewrite {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Rewrite::Image => "image",
            Rewrite::Hub => "hub",
        }
    }
}

/// A token found in a field's text: what to replace, how, and the pullable references it
/// stands for (a hub stands for every image composed from it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Token {
    pub text: String,
    pub rewrite: Rewrite,
    pub pulled: Vec<String>,
}

/// The model of every component: (component, its file), in component order.
pub fn all() -> Result<&'static [(String, ImageFile)], CatalogError> {
    static ALL: OnceLock<Result<Vec<(String, ImageFile)>, CatalogError>> = OnceLock::new();
    match ALL.get_or_init(load) {
        Ok(v) => Ok(v),
        Err(CatalogError::Data { path, message }) => {
            Err(CatalogError::Data { path: path.clone(), message: message.clone() })
        }
        Err(other) => Err(CatalogError::Data { path: "charts/*/images.yaml".into(), message: other.to_string() }),
    }
}

fn load() -> Result<Vec<(String, ImageFile)>, CatalogError> {
    let mut out = Vec::new();
    for (path, text) in embedded::files_under("charts/") {
        let Some(component) = path.strip_prefix("charts/").and_then(|p| p.strip_suffix("/images.yaml")) else {
            continue;
        };
        let doc = kfctl_yaml::parse_stream(text, path)
            .map_err(|e| CatalogError::Data { path: path.into(), message: format!("not valid YAML: {e}") })?
            .into_iter()
            .next()
            .unwrap_or_default();
        let file: ImageFile = serde_json::from_value(doc)
            .map_err(|e| CatalogError::Data { path: path.into(), message: e.to_string() })?;
        out.push((component.to_string(), file));
    }
    Ok(out)
}

/// Does `obj` match `Kind/name` (the name as is, or with kustomize's hash suffix)?
pub fn is_object(obj: &Value, spec: &str) -> bool {
    let Some((kind, name)) = spec.split_once('/') else { return false };
    ObjectId::new(kind, name).or_hashed().matches(obj)
}

/// The locations of any component in `obj` ([`is_object`], its kind and name read once: this
/// runs for every object of a render against every location).
pub(crate) fn locations_in(obj: &Value) -> Vec<&'static Location> {
    let Ok(all) = all() else { return Vec::new() };
    let (kind, name) = (super::object_id::text(obj, "/kind"), super::object_id::text(obj, "/metadata/name"));
    let of_obj = |loc: &&Location| {
        loc.object.split_once('/').is_some_and(|(k, n)| k == kind && super::object_id::is_name_or_hashed(name, n))
    };
    all.iter().flat_map(|(_, file)| &file.references).filter(of_obj).collect()
}

/// Visit each field of `obj` that a location of any component selects, with its location.
pub(crate) fn for_each_location(obj: &mut Value, f: &mut dyn FnMut(&mut String, &Location)) {
    for loc in locations_in(obj) {
        select_mut(obj, &loc.field, String::new(), &mut |text, _| f(text, loc));
    }
}

/// Visit each string the path selects, with its concrete path (`a.b[0].c`).
pub(crate) fn select_mut(value: &mut Value, path: &[String], at: String, f: &mut dyn FnMut(&mut String, &str)) {
    let Some((first, rest)) = path.split_first() else {
        if let Value::String(s) = value {
            f(s, &at);
        }
        return;
    };
    match value {
        Value::Array(items) => {
            for i in chosen_items(items, first) {
                if let Some(item) = items.get_mut(i) {
                    select_mut(item, rest, format!("{at}[{i}]"), f);
                }
            }
        }
        Value::Object(map) => {
            if first == "*" {
                for (k, v) in map.iter_mut() {
                    select_mut(v, rest, joined(&at, k), f);
                }
            } else if let Some(v) = map.get_mut(first.as_str()) {
                select_mut(v, rest, joined(&at, first), f);
            }
        }
        _ => {}
    }
}

/// [`select_mut`] for reading: the same strings, the same paths, nothing copied.
pub(crate) fn select(value: &Value, path: &[String], at: String, f: &mut dyn FnMut(&str, &str)) {
    let Some((first, rest)) = path.split_first() else {
        if let Value::String(s) = value {
            f(s, &at);
        }
        return;
    };
    match value {
        Value::Array(items) => {
            for i in chosen_items(items, first) {
                if let Some(item) = items.get(i) {
                    select(item, rest, format!("{at}[{i}]"), f);
                }
            }
        }
        Value::Object(map) => {
            if first == "*" {
                for (k, v) in map {
                    select(v, rest, joined(&at, k), f);
                }
            } else if let Some(v) = map.get(first.as_str()) {
                select(v, rest, joined(&at, first), f);
            }
        }
        _ => {}
    }
}

/// The items of a list a path segment selects: `*` all, `name=X` the one named X, `after=X`
/// the one after the item X.
fn chosen_items(items: &[Value], segment: &str) -> Vec<usize> {
    if segment == "*" {
        (0..items.len()).collect()
    } else if let Some(name) = segment.strip_prefix("name=") {
        items.iter().position(|i| i.get("name").and_then(Value::as_str) == Some(name)).into_iter().collect()
    } else if let Some(prev) = segment.strip_prefix("after=") {
        items.iter().position(|i| i.as_str() == Some(prev)).map(|i| i + 1).into_iter().collect()
    } else {
        Vec::new()
    }
}

fn joined(at: &str, key: &str) -> String {
    if at.is_empty() { key.to_string() } else { format!("{at}.{key}") }
}

/// The tokens `find` finds in `text`, each once, in the order first found.
pub(crate) fn tokens(find: &Find, text: &str) -> Vec<Token> {
    let image = |t: &str| Token { text: t.to_string(), rewrite: Rewrite::Image, pulled: vec![t.to_string()] };
    let mut out: Vec<Token> = match find {
        Find::Whole => vec![image(text.trim())],
        Find::Prefix(p) => text.strip_prefix(p.as_str()).map(|r| vec![image(r)]).unwrap_or_default(),
        Find::Keys(k) => {
            let mut found = Vec::new();
            if let Some(doc) = parse_config(text) {
                strings_under(&doc, k, None, &mut found);
            }
            found
                .into_iter()
                .map(|(s, version)| Token {
                    pulled: vec![match version {
                        Some(v) if !has_tag_or_digest(&s) => format!("{s}:{v}"),
                        _ => s.clone(),
                    }],
                    text: s,
                    rewrite: Rewrite::Image,
                })
                .collect()
        }
        Find::Lines(start) => text
            .lines()
            .filter(|l| !l.contains("{{"))
            .filter_map(|l| l.trim_start().strip_prefix(start.as_str()))
            .map(|r| r.trim().trim_matches('"').trim_matches('\''))
            .map(image)
            .collect(),
        Find::Quoted(start) => text
            .match_indices(start.as_str())
            .filter_map(|(i, _)| text[i + start.len()..].split('"').next())
            .map(image)
            .collect(),
        Find::Hub(h) => parse_config(text).map(|doc| hub_tokens(h, &doc)).unwrap_or_default(),
    };
    out.retain(|t| !t.text.is_empty() && is_token(&t.text));
    let mut seen = Vec::new();
    out.retain(|t| {
        let fresh = !seen.contains(&t.text);
        seen.push(t.text.clone());
        fresh
    });
    out
}

fn hub_tokens(h: &HubFind, doc: &Value) -> Vec<Token> {
    let at = |p: &[String]| {
        let p: Vec<&str> = p.iter().map(String::as_str).collect();
        super::values::get(doc, &p).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
    };
    let (Some(hub), Some(tag)) = (at(&h.hub), at(&h.tag)) else { return Vec::new() };
    let pulled = h.names.iter().filter_map(|n| at(n)).map(|name| format!("{hub}/{name}:{tag}")).collect();
    vec![Token { text: hub, rewrite: Rewrite::Hub, pulled }]
}

fn parse_config(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text)
        .ok()
        .or_else(|| kfctl_yaml::parse_stream(text, "config").ok().and_then(|d| d.into_iter().next()))
}

/// Strings under the keys of `k` (`inside`: below such a key, with the version beside it).
fn strings_under(value: &Value, k: &KeysFind, inside: Option<Option<&str>>, out: &mut Vec<(String, Option<String>)>) {
    match value {
        Value::String(s) => {
            if let Some(version) = inside {
                out.push((s.clone(), version.map(str::to_string)));
            }
        }
        Value::Array(items) => items.iter().for_each(|i| strings_under(i, k, inside, out)),
        Value::Object(m) => {
            let version = k.version_key.as_ref().and_then(|key| m.get(key)).and_then(Value::as_str);
            for (key, v) in m {
                let here = if k.keys.contains(key) { Some(inside.flatten().or(version)) } else { inside };
                strings_under(v, k, here, out);
            }
        }
        _ => {}
    }
}

/// Whether the reference has a `:tag` or a digest ([`crate::image::ImageRef`]).
pub(crate) fn has_tag_or_digest(image: &str) -> bool {
    let parsed = crate::image::ImageRef::parse(image);
    parsed.tag.is_some() || parsed.digest.is_some()
}

/// A character that can be part of an image reference: a found token is replaced only
/// where the characters around it are not.
pub(crate) fn is_reference_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._/:@-".contains(c)
}

fn is_token(s: &str) -> bool {
    s.chars().all(is_reference_char) && s.chars().any(|c| c.is_ascii_alphabetic())
}

/// Replace every whole-token occurrence of `old` in `text` with `new`: the character before
/// and after must not be a reference character (the same rule the Helm helper's regular
/// expression applies; a boundary character is consumed with its match, as Go's
/// `ReplaceAllString` consumes it).
pub(crate) fn replace_token(text: &str, old: &str, new: &str) -> String {
    if old.is_empty() || old == new {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev_is_ref = false;
    while let Some(i) = rest.find(old) {
        let before_ok = match rest[..i].chars().next_back() {
            Some(c) => !is_reference_char(c),
            None => !prev_is_ref,
        };
        let after = rest[i + old.len()..].chars().next();
        if before_ok && after.is_none_or(|c| !is_reference_char(c)) {
            out.push_str(&rest[..i]);
            out.push_str(new);
            let mut consumed = i + old.len();
            if let Some(c) = after {
                out.push(c);
                consumed += c.len_utf8();
            }
            // The boundary after a match was consumed: the next match cannot start right here.
            prev_is_ref = true;
            rest = &rest[consumed..];
        } else {
            let step = i + rest[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&rest[..step]);
            prev_is_ref = rest[..step].chars().next_back().is_some_and(is_reference_char);
            rest = &rest[step..];
        }
    }
    out.push_str(rest);
    out
}

/// Rewrite the tokens of one field's text with `new_of` (which gives the token's new text).
pub(crate) fn rewrite_text(text: &mut String, find: &Find, new_of: &dyn Fn(&Token) -> String) {
    for token in tokens(find, text) {
        let new = new_of(&token);
        *text = replace_token(text, &token.text, &new);
    }
}

/// A hub moved to `registry`: `gcr.io/istio-release` → `R/istio-release`.
pub(crate) fn hub_with_registry(hub: &str, registry: &str) -> String {
    let moved = super::images::with_registry(&format!("{hub}/x"), registry);
    moved.strip_suffix("/x").unwrap_or(&moved).to_string()
}

#[cfg(test)]
#[path = "image_refs_tests.rs"]
mod tests;
