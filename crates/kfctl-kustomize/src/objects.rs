//! Documents into resources: a parsed document becomes one [`Resource`], a `List` kind its
//! items; a document that is not a Kubernetes object is refused, naming where it came from.
//! Used for resource files, patches and generated objects alike.

use crate::error::{KustomizeError, Result};
use crate::resource::Resource;
use serde_json::Value;

/// Turn parsed documents into resources (expanding lists), for inline or generated input.
pub(crate) fn push_objects(mut doc: Value, origin: &str, out: &mut Vec<Resource>) -> Result<()> {
    let not_object =
        |message: &str| KustomizeError::NotAnObject { origin: origin.to_string(), message: message.to_string() };
    let map = doc.as_object_mut().ok_or_else(|| not_object("expected a map with apiVersion, kind and metadata"))?;
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
    if kind.ends_with("List") && map.get("items").is_some_and(Value::is_array) {
        if let Some(Value::Array(items)) = map.remove("items") {
            for item in items {
                push_objects(item, origin, out)?;
            }
        }
        return Ok(());
    }
    if kind.is_empty() {
        return Err(not_object("missing `kind`"));
    }
    if doc.pointer("/metadata/name").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err(not_object(&format!("the {kind} has no metadata.name")));
    }
    out.push(Resource::new(doc));
    Ok(())
}
