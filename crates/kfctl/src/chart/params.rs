//! The parameter table, Helm side: where in an object each value can act, and the Helm
//! expression that computes the field there.
//!
//! Each function below mirrors one function of [`crate::catalog::params`] and walks the
//! object with the same traversal (`for_each_image`, `for_each_pod_spec`, the workload and
//! credential rules), but instead of changing a field for one set of values it marks the field
//! as a *point*: the place where some values could change it. A point remembers the raw
//! upstream value (or that the field is absent upstream) and the chain of [`Step`]s that act
//! on it, in the table's order. [`super::object`] writes each point as a Helm expression: the
//! steps nest as calls of the helpers each row of the table names ([`params::Param::helm`],
//! assembled into the charts' `_helpers.tpl` by [`super::helpers`]), each taking the field's
//! value as JSON and returning it as JSON, `""` for absent. There is one table: the marking
//! function of each row is found by its [`ParamId`], in [`params::PARAMS`]' order.
//!
//! The marks do not depend on values: every field any value could touch is a point, so the
//! chart is right for any values, not only the ones given at export.

use crate::catalog::image_refs::{self, Rewrite};
use crate::catalog::params::{self, CREDENTIALS, Credential, ParamId};
use crate::catalog::scheduling;
use crate::catalog::{users, workloads};
use serde_json::{Map, Value};

pub(crate) use super::step::{Step, USER_VAR};

/// The marker a point leaves in the object copy: a plain scalar no upstream text contains.
pub(crate) const TOKEN_PREFIX: &str = "KFCTLPOINT";

/// Where [`TOKEN_PREFIX`] first occurs in `text` (one searcher for the process: an export
/// looks in every key and string of every object).
pub(crate) fn find_token(text: &str) -> Option<usize> {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(TOKEN_PREFIX));
    FINDER.find(text.as_bytes())
}

/// Whether `text` holds [`TOKEN_PREFIX`].
pub(crate) fn has_token(text: &str) -> bool {
    find_token(text).is_some()
}

/// The key of a point that stands for items spliced into a list at its end (a marker item
/// `- MARKER: null`, written as a `range` over the helper's JSON list).
pub(crate) const SPLICE_KEY: &str = "-";

/// A field some values could change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    /// The map key the field sits at.
    pub key: String,
    /// The upstream value; `None` when upstream has no such field.
    pub raw: Option<Value>,
    pub steps: Vec<Step>,
}

/// Why an object cannot become a template.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PointError {
    #[error(
        "two parameters act on overlapping fields (`{key}` holds another parameter's field); the chart cannot express both"
    )]
    Overlap { key: String },
    #[error("credential `{value}` lives in an object of component `{component}`, whose chart cannot read that value")]
    ForeignCredential { value: String, component: String },
    #[error("the object's YAML already contains the text `{TOKEN_PREFIX}`, which the export uses as a marker")]
    MarkerInData,
    #[error(
        "a value can add a field to the content kustomize hashes into this generated object's name; the chart cannot compute that name"
    )]
    HashedFieldAdded,
}

/// The points of one object: the object copy with markers in place, and the points.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    pub points: Vec<Point>,
    error: Option<PointError>,
}

/// The marker of point `i`.
pub(crate) fn token(i: usize) -> String {
    format!("{TOKEN_PREFIX}{i:05}Z")
}

fn token_index(text: &str) -> Option<usize> {
    text.strip_prefix(TOKEN_PREFIX)?.strip_suffix('Z')?.parse().ok()
}

fn holds_token(value: &Value) -> bool {
    match value {
        Value::String(s) => has_token(s),
        Value::Array(items) => items.iter().any(holds_token),
        Value::Object(m) => m.iter().any(|(k, v)| has_token(k) || holds_token(v)),
        _ => false,
    }
}

impl Marks {
    fn fail(&mut self, error: PointError) {
        self.error.get_or_insert(error);
    }

    fn new_point(&mut self, key: &str, raw: Option<Value>, step: Step) -> String {
        self.points.push(Point { key: key.to_string(), raw, steps: vec![step] });
        token(self.points.len() - 1)
    }

    /// Mark the string at an `image` field (or add a step to its point).
    fn mark_string(&mut self, text: &mut String, step: Step) {
        match token_index(text) {
            Some(i) => self.points[i].steps.push(step),
            None => *text = self.new_point("image", Some(Value::String(text.clone())), step),
        }
    }

    /// Mark `map[key]`: its value when present, else a marker key standing for the field.
    pub(super) fn mark(&mut self, map: &mut Map<String, Value>, key: &str, step: Step) {
        if let Some(value) = map.get_mut(key) {
            if let Some(i) = value.as_str().and_then(token_index) {
                self.points[i].steps.push(step);
            } else if holds_token(value) {
                self.fail(PointError::Overlap { key: key.to_string() });
            } else {
                *value = Value::String(self.new_point(key, Some(value.clone()), step));
            }
            return;
        }
        let inserted = map.keys().filter_map(|k| token_index(k)).find(|i| self.points[*i].key == key);
        match inserted {
            Some(i) => self.points[i].steps.push(step),
            None => {
                let marker = self.new_point(key, None, step);
                map.insert(marker, Value::Null);
            }
        }
    }

    /// The points, or the first problem met.
    pub(crate) fn finish(self) -> Result<Vec<Point>, PointError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.points),
        }
    }
}

/// What the marking functions know besides the object: its component, its chart's values
/// layout, and the defaults (images, workloads) derived from the default render.
pub(crate) struct Scope<'a> {
    pub component: &'a str,
    pub defaults: &'a Value,
}

impl Scope<'_> {
    fn default_of(&self, path: &[&str]) -> Option<&Value> {
        crate::catalog::values::get(self.defaults, &[&[self.component], path].concat())
    }
}

type MarkFn = fn(&mut Value, &Scope, &mut Marks);

/// The marking function of a row (exhaustive: a new row needs its Helm side to compile).
fn marker(id: ParamId) -> MarkFn {
    match id {
        ParamId::Images => mark_images,
        ParamId::ImagePullSecrets => mark_pull_secrets,
        ParamId::Scheduling => mark_scheduling,
        ParamId::Replicas => mark_replicas,
        ParamId::Resources => mark_resources,
        ParamId::PodMetadata => mark_pod_metadata,
        ParamId::Env => mark_env,
        ParamId::CommonMetadata => mark_common_metadata,
        ParamId::ResourcePolicy => mark_resource_policy,
        ParamId::Credentials => mark_credentials,
        ParamId::PodSecurity => mark_pod_security,
        ParamId::StorageClass => mark_storage_class,
        ParamId::Users => mark_users,
        ParamId::Identity => super::identity::mark_identity,
        ParamId::Gateway => super::gateway::mark_gateway,
        ParamId::Database => super::external_store::mark_database,
    }
}

/// The rows of [`params::PARAMS`] with their marking functions, in the table's order.
pub(crate) fn points() -> impl Iterator<Item = (&'static str, MarkFn)> {
    params::PARAMS.iter().map(|p| (p.name, marker(p.id)))
}

/// Mark every point of `obj` (which becomes the copy with markers) .
pub(crate) fn mark_all(obj: &mut Value, scope: &Scope) -> Result<Vec<Point>, PointError> {
    if holds_token(obj) {
        return Err(PointError::MarkerInData);
    }
    let mut marks = Marks::default();
    for (_, mark) in points() {
        mark(obj, scope, &mut marks);
    }
    marks.finish()
}

/// [`params::apply_images`]: every `image` string, and every text a location of
/// `charts/*/images.yaml` selects (with the tokens found in it); each image with its key
/// when the defaults list it.
fn mark_images(obj: &mut Value, scope: &Scope, marks: &mut Marks) {
    let defaults = scope.default_of(&["images"]).and_then(Value::as_object);
    let key_of = |image: &str| {
        defaults
            .and_then(|d| d.iter().find(|(_, v)| v.as_str() == Some(image)))
            .map(|(k, _)| k.clone())
            .unwrap_or_default()
    };
    params::for_each_image(obj, &mut |image| {
        marks.mark_string(image, Step::Image { key: key_of(image) });
    });
    image_refs::for_each_location(obj, &mut |text, loc| {
        let tokens: Vec<(Rewrite, String, String)> = image_refs::tokens(&loc.find, text)
            .into_iter()
            .map(|t| {
                let key = if t.rewrite == Rewrite::Image { key_of(&t.text) } else { String::new() };
                (t.rewrite, key, t.text)
            })
            .collect();
        if !tokens.is_empty() {
            marks.mark_string(text, Step::ImageText { tokens });
        }
    });
}

/// `apply_pull_secrets`: every pod spec's `imagePullSecrets`.
fn mark_pull_secrets(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    params::for_each_pod_spec(obj, &mut |spec| marks.mark(spec, "imagePullSecrets", Step::PullSecrets));
}

/// `apply_scheduling`: `nodeSelector`, `tolerations` and `affinity` of every pod spec the
/// catalog's `podScopes` lets scheduling reach, with where its values come from.
fn mark_scheduling(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    scheduling::for_each_scheduled_pod_spec(obj, &mut |spec, from| {
        marks.mark(spec, "nodeSelector", Step::NodeSelector { from });
        marks.mark(spec, "tolerations", Step::Tolerations { from });
        marks.mark(spec, "affinity", Step::Affinity { from });
    });
}

/// `apply_replicas`: `spec.replicas` of a workload whose name has a default (the schema
/// allows no other name).
fn mark_replicas(obj: &mut Value, scope: &Scope, marks: &mut Marks) {
    if !params::is_workload(obj) {
        return;
    }
    let workload = params::object_name(obj);
    if scope.default_of(&["replicas", &workload]).is_none() {
        return;
    }
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        marks.mark(spec, "replicas", Step::Replicas { workload });
    }
}

/// `apply_resources`: `resources` of each container of a workload's pod template that has a
/// default (the schema allows no other container), and of a users' runtime's main container.
fn mark_resources(obj: &mut Value, scope: &Scope, marks: &mut Marks) {
    if let scheduling::PodScope::Runtime(runtime) = scheduling::pod_scope(obj) {
        scheduling::for_each_runtime_container(obj, runtime, &mut |c| {
            marks.mark(c, "resources", Step::RuntimeResources)
        });
        return;
    }
    if !params::is_workload(obj) {
        return;
    }
    let workload = params::object_name(obj);
    let Some(known) = scope.default_of(&["resources", &workload]).and_then(Value::as_object) else {
        return;
    };
    let Some(containers) = obj.pointer_mut("/spec/template/spec/containers").and_then(Value::as_array_mut) else {
        return;
    };
    for c in containers.iter_mut().filter_map(Value::as_object_mut) {
        let container = c.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        if known.contains_key(&container) {
            marks.mark(c, "resources", Step::Resources { workload: workload.clone(), container });
        }
    }
}

/// `workloads::apply_pod_metadata`: the pod template's `annotations` and `labels` of a
/// workload the defaults know.
fn mark_pod_metadata(obj: &mut Value, scope: &Scope, marks: &mut Marks) {
    if !params::is_workload(obj) {
        return;
    }
    let workload = params::object_name(obj);
    let Some(meta) = obj.pointer_mut("/spec/template/metadata").and_then(Value::as_object_mut) else {
        return;
    };
    for (value, field) in workloads::POD_METADATA {
        if scope.default_of(&[value, &workload]).is_some() {
            marks.mark(meta, field, Step::PodMetadata { value, workload: workload.clone() });
        }
    }
}

/// `workloads::apply_env`: `env` of each container of a workload that has a default.
fn mark_env(obj: &mut Value, scope: &Scope, marks: &mut Marks) {
    if !params::is_workload(obj) {
        return;
    }
    let workload = params::object_name(obj);
    let Some(known) = scope.default_of(&["env", &workload]).and_then(Value::as_object) else {
        return;
    };
    let Some(containers) = obj.pointer_mut("/spec/template/spec/containers").and_then(Value::as_array_mut) else {
        return;
    };
    for c in containers.iter_mut().filter_map(Value::as_object_mut) {
        let container = c.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        if !known.contains_key(&container) {
            continue;
        }
        let taken = workloads::env_names(c);
        match c.get_mut("env").and_then(Value::as_array_mut) {
            // upstream's `env: []` (26.03.1's model-registry-deployment): the whole list is the
            // extra entries, `[]` when there are none
            Some(env) if env.is_empty() => {
                marks.mark(c, "env", Step::Env { workload: workload.clone(), container, taken, whole: false })
            }
            Some(env) => {
                let step = Step::Env { workload: workload.clone(), container, taken, whole: false };
                let marker = marks.new_point(SPLICE_KEY, None, step);
                env.push(serde_json::json!({ marker: null }));
            }
            None => marks.mark(c, "env", Step::Env { workload: workload.clone(), container, taken, whole: true }),
        }
    }
}

/// `apply_common_metadata`: every object's `metadata.labels` and `metadata.annotations`.
fn mark_common_metadata(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    marks.mark(meta, "labels", Step::CommonMetadata { value: "commonLabels" });
    marks.mark(meta, "annotations", Step::CommonMetadata { value: "commonAnnotations" });
}

/// `apply_resource_policy`: the annotations of an object of a guarded kind.
fn mark_resource_policy(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    if crate::catalog::guarded::guarded_object(obj).is_none() {
        return;
    }
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        marks.mark(meta, "annotations", Step::ResourcePolicy);
    }
}

/// The path of a credential's value inside the chart of `component`: `global.…` stays, the
/// component's own section loses its name; anything else is out of the chart's reach.
pub(crate) fn chart_value_path(value: &str, component: &str) -> Option<String> {
    if value.starts_with("global.") {
        return Some(value.to_string());
    }
    value.strip_prefix(component).and_then(|rest| rest.strip_prefix('.')).map(str::to_string)
}

/// `apply_credentials`: the field of every credential that lives in the object.
fn mark_credentials(obj: &mut Value, scope: &Scope, marks: &mut Marks) {
    let matching: Vec<&Credential> = CREDENTIALS.iter().filter(|c| c.matches(obj)).collect();
    for cred in matching {
        let Some(path) = chart_value_path(cred.value, scope.component) else {
            marks.fail(PointError::ForeignCredential { value: cred.value.into(), component: scope.component.into() });
            continue;
        };
        let Some((parent, key)) = cred.field.rsplit_once('/') else {
            continue;
        };
        let key = key.replace("~1", "/").replace("~0", "~");
        if let Some(map) = obj.pointer_mut(parent).and_then(Value::as_object_mut) {
            marks.mark(map, &key, Step::Credential { path, encoding: cred.encoding });
        }
    }
}

/// `apply_pod_security`: a Namespace's labels, and the profile controller's label config.
fn mark_pod_security(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    match obj.get("kind").and_then(Value::as_str) {
        Some("Namespace") => {
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                marks.mark(meta, "labels", Step::PssNamespace);
            }
        }
        Some("ConfigMap") => {
            if let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut)
                && data.get("namespace-labels.yaml").is_some_and(Value::is_string)
            {
                marks.mark(data, "namespace-labels.yaml", Step::PssProfiles);
            }
        }
        _ => {}
    }
}

/// `apply_storage_class`: `storageClassName` of every claim's spec.
fn mark_storage_class(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    params::for_each_claim_spec(obj, &mut |spec| marks.mark(spec, "storageClassName", Step::StorageClass));
}

/// `apply_users` and `users::expand_profiles`: the demo Profile's name and owner (the
/// template repeats per user, [`USER_VAR`]), Dex's configuration and the demo hash.
fn mark_users(obj: &mut Value, _: &Scope, marks: &mut Marks) {
    if users::is_demo_profile(obj) {
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            marks.mark(meta, "name", Step::ProfileUser { field: "namespace" });
        }
        if let Some(owner) = obj.pointer_mut("/spec/owner").and_then(Value::as_object_mut) {
            marks.mark(owner, "name", Step::ProfileUser { field: "email" });
        }
    }
    if users::is_dex_config_with_demo_login(obj)
        && let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut)
    {
        marks.mark(data, "config.yaml", Step::DexUsers);
    }
    if users::is_dex_passwords(obj)
        && let Some(data) = obj.get_mut("stringData").and_then(Value::as_object_mut)
    {
        let key = crate::catalog::credentials::DEX_PASSWORD_FIELD.rsplit('/').next().unwrap_or_default();
        marks.mark(data, key, Step::DexDemoHash);
    }
}

/// Whether a template's points repeat it once per user (the demo Profile).
pub(crate) fn repeats_per_user(points: &[Point]) -> bool {
    points.iter().any(|p| p.steps.iter().any(|s| matches!(s, Step::ProfileUser { .. })))
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
