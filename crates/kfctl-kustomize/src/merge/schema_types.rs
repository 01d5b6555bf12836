//! The schema types the merge walks with, shared by the generated table of built-in kinds
//! (`openapi_table.rs`), custom schema files (`custom.rs`) and the lookups (`schema.rs`). A
//! leaf: it imports none of them.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The schema of one field, list element or map value.
#[derive(Debug)]
pub(crate) enum Schema {
    /// An object definition: its non-scalar properties are `DEFINITIONS[index]`.
    Def(u16),
    /// A list, with kyaml's patch strategy and merge keys, and the schema of its elements.
    List { strategy: &'static str, keys: &'static [&'static str], items: Option<&'static Schema> },
    /// A map whose every value has this schema (`additionalProperties`).
    Map(&'static Schema),
    /// A known field of scalar or opaque type: nothing below it has a schema.
    Leaf,
    /// A schema of a custom schema file (`openapi: path:`, see `custom.rs`).
    Custom(&'static Node),
    /// A `$ref` of a custom schema file to one of its definitions; never returned by the
    /// lookups below, which resolve it (an unresolvable one is no schema).
    Ref(&'static Definitions, &'static str),
}

/// How kustomize places a built-in kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Namespaced,
    Cluster,
    /// Listed without a scope: handled as namespaced, as kustomize does.
    Unknown,
}

/// One built-in kind of the OpenAPI data.
#[derive(Debug)]
pub(crate) struct Resource {
    pub api_version: &'static str,
    pub kind: &'static str,
    /// `None` for the few kinds that are listed without a definition.
    pub schema: Option<Schema>,
    pub scope: Scope,
}

/// The definitions of a custom schema by name; set once, after every `$ref` to it is made.
pub(crate) type Definitions = OnceLock<HashMap<String, Schema>>;

/// One schema of a custom file.
#[derive(Debug)]
pub(crate) struct Node {
    pub(super) properties: HashMap<String, Schema>,
    pub(super) additional: Option<Schema>,
    /// The element schema, for a schema of type `array`.
    pub(super) items: Option<Schema>,
    pub(super) strategy: &'static str,
    pub(super) keys: &'static [&'static str],
}

impl Node {
    pub(super) fn field(&self, name: &str) -> Option<&Schema> {
        self.properties.get(name).or(self.additional.as_ref())
    }

    pub(super) fn items(&self) -> Option<&Schema> {
        self.items.as_ref()
    }

    pub(super) fn strategy_and_keys(&self) -> (&'static str, &'static [&'static str]) {
        (self.strategy, self.keys)
    }
}

/// Follow `$ref`s to a definition (at most a few dozen, as a guard against cycles).
pub(super) fn resolve(mut schema: &'static Schema) -> Option<&'static Schema> {
    for _ in 0..64 {
        match schema {
            Schema::Ref(definitions, name) => schema = definitions.get()?.get(*name)?,
            other => return Some(other),
        }
    }
    None
}
