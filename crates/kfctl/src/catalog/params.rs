//! The parameter table: every value kfctl-rs takes is one parameter point here.
//!
//! A parameter has a native side — `Param::apply`, a change to one rendered object — and
//! the chart export turns the same table into Helm template expressions, so the native
//! render and the exported charts read one model and cannot drift (real Helm checks it).
//! Values that are empty (`""`, `[]`, `{}`) leave upstream's objects exactly as they are,
//! which is what makes the default render 1:1 with kustomize.
//!
//! | value | where it acts |
//! |---|---|
//! | `<component>.images.<key>` | every `image` field holding that image, anywhere in the component's objects, and every place `charts/*/images.yaml` names it |
//! | `global.imageRegistry` | every `image` field and every place `charts/*/images.yaml` names an image (Istio's hub included): the image moves to that registry |
//! | `global.imagePullSecrets` | every pod spec (a map with `containers`), users' runtimes included, gets these pull secrets |
//! | `global.`/`<component>.nodeSelector`, `tolerations`, `affinity` | every pod spec of the platform's own objects; the component's own setting wins over the global one; node agents (DaemonSets) take only the component's; users' runtimes neither ([`scheduling`], the catalog's `podScopes`) |
//! | `<component>.runtimes.nodeSelector`, `.tolerations`, `.affinity` | the pod templates of the component's users' runtimes (Trainer's `ClusterTrainingRuntime`s, KServe's `ClusterServingRuntime`s) that run the runtime's main container |
//! | `<component>.runtimes.resources` | `resources` of that main container (`node`, `kserve-container`) in every runtime |
//! | `<component>.replicas.<workload>` | `spec.replicas` of that Deployment or StatefulSet; every one has a key, `null` where upstream sets none (it stays unset: 1, or an autoscaler's) |
//! | `<component>.resources.<workload>.<container>` | that container's `resources` |
//! | `<component>.podAnnotations.<workload>`, `.podLabels.<workload>` | merged into that workload's `spec.template.metadata.annotations` / `.labels` (`super::workloads`) |
//! | `<component>.env.<workload>.<container>` | appended to that container's `env` (a name upstream's container already has is refused) |
//! | `global.commonLabels`, `global.commonAnnotations` | `metadata.labels` / `metadata.annotations` of every object |
//! | `global.resourcePolicy` | `keep`: Helm's `helm.sh/resource-policy: keep` and Argo CD's `Delete=false,Prune=false` sync options on every object of a kind in `super::guarded::GUARDED` (CRDs, PVCs, Namespaces) |
//! | credentials (see [`CREDENTIALS`]) | the upstream Secret or ConfigMap field holding them |
//! | `global.podSecurity.namespaces` / `.profiles` | the PSS `enforce` label of static namespaces / the label profile namespaces get |
//! | `global.storageClass` | `spec.storageClassName` of every PersistentVolumeClaim and of every StatefulSet's `volumeClaimTemplates` |
//! | `global.users` | upstream's demo Profile becomes one per user (`super::users::expand_profiles`, after the table); Dex's `staticPasswords` and the demo hash |
//! | `global.existingSecrets` | not a row: the listed credential Secrets are dropped after the table (`super::existing_secrets`) and references to a generated one's hashed name take its plain name |
//! | `dex.connectors`, `oauth2-proxy.oidc.*` | Dex's `config.yaml` `connectors:`; `oauth2_proxy.cfg`, oauth2-proxy's client id and the `RequestAuthentication` rules trusting Dex's issuer (`super::identity`) |
//! | `global.gateway` | `kubeflow-gateway`'s servers (host, an HTTPS server, the HTTP→HTTPS redirect) and `istio-ingressgateway`'s `spec.type`; with `tls.issuer` a cert-manager Certificate is added (`super::gateway::add_certificate`, after the table) |
//! | `pipelines.database` | `dbHost`/`mysqlHost`, `dbPort`/`mysqlPort` of `pipeline-install-config` and `username` of `mysql-secret` (its `password` is a credential) (`super::external_store`) |
//! | `global.crds` | which objects render at all: `""` every object, `only` just the CustomResourceDefinitions, `skip` all but them (see [`keep`]) |
//!
//! The Helm side of every row is named in the row itself (`Param::helm`): the helpers the
//! exported charts call, kept in `templates/chart/helpers/<row name>.tpl`, from which the
//! export generates each chart's `_helpers.tpl` (`chart/helpers.rs`); `chart/params.rs` finds,
//! for each row (`ParamId`), the same points in each object that the functions here change.

pub use super::credentials::{CREDENTIALS, Credential, Encoding};
use super::scheduling::{self, PodScope, apply_scheduling};
pub(crate) use super::traverse::{for_each_claim_spec, visit_images};
pub use super::traverse::{for_each_image, for_each_pod_spec};
use super::{image_refs, images, workloads};
use serde_json::{Value, json};

/// The context a parameter applies in: all values, the defaults they were merged onto
/// (per-image overrides find their image by its default), and the object's component.
pub(crate) struct Ctx<'a> {
    pub values: &'a Value,
    pub defaults: &'a Value,
    pub component: &'a str,
}

impl Ctx<'_> {
    /// A component's value, falling back to the global one when the component's is empty.
    pub(super) fn scoped(&self, key: &str) -> Option<&Value> {
        let own = self.values.get(self.component).and_then(|c| c.get(key)).filter(|v| !is_empty(v));
        own.or_else(|| self.values.get("global").and_then(|g| g.get(key)).filter(|v| !is_empty(v)))
    }
    fn global(&self, path: &[&str]) -> Option<&Value> {
        super::values::get(self.values, &[&["global"], path].concat()).filter(|v| !is_empty(v))
    }
    pub(super) fn own(&self, path: &[&str]) -> Option<&Value> {
        super::values::get(self.values, &[&[self.component], path].concat())
    }
}

pub(crate) fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Which row a [`Param`] is; the chart export's marking matches on it exhaustively, so a row
/// cannot be added without its Helm side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamId {
    Images,
    ImagePullSecrets,
    Scheduling,
    Replicas,
    Resources,
    PodMetadata,
    Env,
    CommonMetadata,
    ResourcePolicy,
    Credentials,
    PodSecurity,
    StorageClass,
    Users,
    Identity,
    Gateway,
    Database,
}

/// One parameter point.
pub(crate) struct Param {
    pub id: ParamId,
    pub name: &'static str,
    pub apply: fn(&mut Value, &Ctx),
    /// The Helm side: the helpers the exported charts call where this row acts, defined in
    /// this order in `templates/chart/helpers/<name>.tpl`.
    pub helm: &'static [&'static str],
}

const fn row(id: ParamId, name: &'static str, apply: fn(&mut Value, &Ctx), helm: &'static [&'static str]) -> Param {
    Param { id, name, apply, helm }
}

/// The table, in the order parameters apply.
pub(crate) const PARAMS: &[Param] = &[
    row(ParamId::Images, "images", apply_images, &["kfctl.image", "kfctl.imageText"]),
    row(ParamId::ImagePullSecrets, "imagePullSecrets", apply_pull_secrets, &["kfctl.pullSecrets"]),
    row(
        ParamId::Scheduling,
        "scheduling",
        apply_scheduling,
        &["kfctl.scoped", "kfctl.nodeSelector", "kfctl.tolerations", "kfctl.affinity"],
    ),
    row(ParamId::Replicas, "replicas", apply_replicas, &["kfctl.replicas"]),
    row(ParamId::Resources, "resources", apply_resources, &["kfctl.resources", "kfctl.runtimeResources"]),
    row(ParamId::PodMetadata, "podMetadata", workloads::apply_pod_metadata, &["kfctl.podMetadata"]),
    row(ParamId::Env, "env", workloads::apply_env, &["kfctl.envItems", "kfctl.env"]),
    row(ParamId::CommonMetadata, "commonMetadata", apply_common_metadata, &["kfctl.commonMetadata"]),
    row(ParamId::ResourcePolicy, "resourcePolicy", apply_resource_policy, &["kfctl.resourcePolicy"]),
    row(
        ParamId::Users,
        "users",
        apply_users,
        &["kfctl.users", "kfctl.profileUser", "kfctl.dexUsers", "kfctl.dexDemoHash"],
    ),
    row(
        ParamId::Identity,
        "identity",
        apply_identity,
        &[
            "kfctl.dexConnectors",
            "kfctl.oidc",
            "kfctl.oidcProxyConfig",
            "kfctl.oidcIssuer",
            "kfctl.oidcClientID",
            "kfctl.oidcWithDex",
        ],
    ),
    row(ParamId::Credentials, "credentials", apply_credentials, &["kfctl.credential"]),
    row(
        ParamId::PodSecurity,
        "podSecurity",
        apply_pod_security,
        &["kfctl.podSecurityLevel", "kfctl.pssNamespace", "kfctl.pssProfiles"],
    ),
    row(ParamId::StorageClass, "storageClass", apply_storage_class, &["kfctl.storageClass"]),
    row(
        ParamId::Gateway,
        "gateway",
        apply_gateway,
        &[
            "kfctl.gateway",
            "kfctl.gatewayServers",
            "kfctl.gatewayServiceType",
            "kfctl.gatewayIssuer",
            "kfctl.gatewayCertificate",
        ],
    ),
    row(ParamId::Database, "database", apply_database, &["kfctl.database", "kfctl.databaseField"]),
];

/// Apply every parameter to one object of `component`.
pub fn apply_all(obj: &mut Value, values: &Value, defaults: &Value, component: &str) {
    let ctx = Ctx { values, defaults, component };
    for p in PARAMS {
        (p.apply)(obj, &ctx);
    }
}

fn apply_images(obj: &mut Value, ctx: &Ctx) {
    let overrides = ctx.own(&["images"]).and_then(Value::as_object);
    let defaults = ctx.defaults.get(ctx.component).and_then(|c| c.get("images")).and_then(Value::as_object);
    let registry = ctx.global(&["imageRegistry"]).and_then(Value::as_str);
    // (default image, its override) for every key whose value differs from the default.
    let changed: Vec<(&str, &str)> = match (overrides, defaults) {
        (Some(o), Some(d)) => d
            .iter()
            .filter_map(|(key, default)| {
                let new = o.get(key)?.as_str().filter(|s| !s.is_empty())?;
                let old = default.as_str()?;
                (new != old).then_some((old, new))
            })
            .collect(),
        _ => Vec::new(),
    };
    if changed.is_empty() && registry.is_none() {
        return;
    }
    // An image given by its key is pulled as given; `global.imageRegistry` moves the others.
    let new_image = |image: &str| match (changed.iter().find(|(old, _)| *old == image), registry) {
        (Some((_, given)), _) => given.to_string(),
        (None, Some(registry)) => images::with_registry(image, registry),
        (None, None) => image.to_string(),
    };
    for_each_image(obj, &mut |image| *image = new_image(image));
    // Images named inside other fields (`charts/*/images.yaml`): whole tokens replaced.
    image_refs::for_each_location(obj, &mut |text, loc| {
        image_refs::rewrite_text(text, &loc.find, &|t| match t.rewrite {
            image_refs::Rewrite::Image => new_image(&t.text),
            image_refs::Rewrite::Hub => {
                registry.map_or_else(|| t.text.clone(), |r| image_refs::hub_with_registry(&t.text, r))
            }
        })
    });
}

fn apply_pull_secrets(obj: &mut Value, ctx: &Ctx) {
    let Some(names) = ctx.global(&["imagePullSecrets"]).and_then(Value::as_array).cloned() else { return };
    for_each_pod_spec(obj, &mut |spec| {
        let list = spec.entry("imagePullSecrets").or_insert_with(|| json!([]));
        if let Value::Array(items) = list {
            items.extend(names.iter().map(|n| json!({"name": n})));
        }
    });
}

/// An `apps/v1` Deployment or StatefulSet: the objects `replicas` and `resources` act on.
pub fn is_workload(obj: &Value) -> bool {
    obj.get("apiVersion").and_then(Value::as_str) == Some("apps/v1")
        && matches!(obj.get("kind").and_then(Value::as_str), Some("Deployment" | "StatefulSet"))
}

pub(crate) fn object_name(obj: &Value) -> String {
    obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string()
}

fn apply_replicas(obj: &mut Value, ctx: &Ctx) {
    if !is_workload(obj) {
        return;
    }
    let name = object_name(obj);
    if let Some(n) = ctx.own(&["replicas", &name]).and_then(super::schema::whole_count)
        && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.insert("replicas".into(), json!(n));
    }
}

fn apply_resources(obj: &mut Value, ctx: &Ctx) {
    if let PodScope::Runtime(runtime) = scheduling::pod_scope(obj) {
        // merged over upstream's, as a workload's `resources` value is over its defaults: a GPU
        // limit keeps each runtime's own CPU and memory
        if let Some(resources) = ctx.own(&["runtimes", "resources"]).filter(|v| !is_empty(v)).cloned() {
            scheduling::for_each_runtime_container(obj, runtime, &mut |c| {
                super::values::merge(c.entry("resources").or_insert_with(|| json!({})), &resources);
            });
        }
        return;
    }
    if !is_workload(obj) {
        return;
    }
    let name = object_name(obj);
    let Some(per_container) = ctx.own(&["resources", &name]).and_then(Value::as_object).cloned() else { return };
    let Some(containers) = obj.pointer_mut("/spec/template/spec/containers").and_then(Value::as_array_mut) else {
        return;
    };
    for c in containers.iter_mut().filter_map(Value::as_object_mut) {
        let cname = c.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        if let Some(r) = per_container.get(&cname).filter(|r| !is_empty(r)) {
            c.insert("resources".into(), r.clone());
        }
    }
}

fn apply_common_metadata(obj: &mut Value, ctx: &Ctx) {
    for (value, field) in [("commonLabels", "labels"), ("commonAnnotations", "annotations")] {
        let Some(Value::Object(extra)) = ctx.global(&[value]).cloned() else { continue };
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else { continue };
        if let Value::Object(m) = meta.entry(field).or_insert_with(|| json!({})) {
            m.extend(extra);
        }
    }
}

/// The annotations `global.resourcePolicy: keep` sets: Helm's, which keeps an object on `helm
/// uninstall` and `helm upgrade`, and Argo CD's, which keeps it when it leaves the Application
/// (prune) or the Application is deleted.
pub(crate) const KEEP_ANNOTATIONS: [(&str, &str); 2] =
    [("helm.sh/resource-policy", "keep"), ("argocd.argoproj.io/sync-options", "Delete=false,Prune=false")];

/// `global.resourcePolicy: keep` on the guarded kinds (after `commonAnnotations`: it wins).
fn apply_resource_policy(obj: &mut Value, ctx: &Ctx) {
    if ctx.global(&["resourcePolicy"]).and_then(Value::as_str) != Some("keep") {
        return;
    }
    if super::guarded::guarded_object(obj).is_none() {
        return;
    }
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    if let Value::Object(m) = meta.entry("annotations").or_insert_with(|| json!({})) {
        for (key, value) in KEEP_ANNOTATIONS {
            m.insert(key.into(), value.into());
        }
    }
}

fn apply_credentials(obj: &mut Value, ctx: &Ctx) {
    let matching: Vec<&Credential> = CREDENTIALS.iter().filter(|c| c.matches(obj)).collect();
    for cred in matching {
        let Some(secret) =
            super::values::get(ctx.values, &cred.value_path()).and_then(Value::as_str).filter(|s| !s.is_empty())
        else {
            continue;
        };
        let Some(field) = obj.pointer_mut(cred.field) else { continue };
        let new = match (cred.encoding, field.as_str()) {
            (Encoding::Plain, _) => secret.to_string(),
            (Encoding::Base64, _) => base64_encode(secret.as_bytes()),
            (Encoding::InText { needle, prefix }, Some(text)) => text.replace(needle, &format!("{prefix}{secret}")),
            (Encoding::InText { .. }, None) => continue,
        };
        *field = Value::String(new);
    }
}

const PSS_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// The line of the profile controller's namespace-labels config that sets the PSS level.
const PSS_PROFILE_LINE: &str = "pod-security.kubernetes.io/enforce: \"";

fn apply_pod_security(obj: &mut Value, ctx: &Ctx) {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
    if kind == "Namespace" {
        let Some(level) = ctx.global(&["podSecurity", "namespaces"]).and_then(Value::as_str) else { return };
        let Some(labels) = obj.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) else { return };
        if labels.contains_key(PSS_LABEL) {
            if level == "off" {
                labels.remove(PSS_LABEL);
            } else {
                labels.insert(PSS_LABEL.into(), json!(level));
            }
        }
    } else if kind == "ConfigMap" {
        let Some(level) = ctx.global(&["podSecurity", "profiles"]).and_then(Value::as_str) else { return };
        let Some(Value::String(text)) = obj.pointer_mut("/data/namespace-labels.yaml") else { return };
        let value = if level == "off" { "" } else { level };
        *text = replace_pss_line(text, value);
    }
}

/// Replace the value of the PSS line in the profile controller's label config: every line
/// (split at `\n` only, so every other byte stays as it is) that starts with the PSS key.
pub(crate) fn replace_pss_line(text: &str, level: &str) -> String {
    text.split('\n')
        .map(
            |line| {
                if line.starts_with(PSS_PROFILE_LINE) {
                    format!("{PSS_PROFILE_LINE}{level}\"")
                } else {
                    line.to_string()
                }
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

fn apply_storage_class(obj: &mut Value, ctx: &Ctx) {
    let Some(class) = ctx.global(&["storageClass"]).cloned() else { return };
    for_each_claim_spec(obj, &mut |spec| {
        spec.insert("storageClassName".into(), class.clone());
    });
}

fn apply_users(obj: &mut Value, ctx: &Ctx) {
    super::users::apply_dex(obj, ctx.values);
}

fn apply_identity(obj: &mut Value, ctx: &Ctx) {
    super::identity::apply(obj, ctx.values);
}

fn apply_gateway(obj: &mut Value, ctx: &Ctx) {
    super::gateway::apply(obj, ctx.values);
}

fn apply_database(obj: &mut Value, ctx: &Ctx) {
    super::external_store::apply(obj, ctx.values);
}

/// [`keep`]'s Helm side, the helper every exported template is wrapped in
/// (`templates/chart/helpers/keep.tpl`).
pub(crate) const KEEP_HELM: &[&str] = &["kfctl.enabled", "kfctl.existingSecret"];

/// Whether `obj`, of `component`, renders at all: not when the cluster provides its component
/// (`<component>.provided`, see [`super::provided`]), unless it is one of Kubeflow's own
/// objects that dependency's folders hold (`keeps` in `provided`); then `global.crds`: `only` keeps just the
/// CustomResourceDefinitions (the first step of a two-step install), `skip` everything else,
/// and any other value (the default `""`) every object.
pub fn keep(obj: &Value, values: &Value, component: &str, provided: &[super::provided::Dependency]) -> bool {
    if super::provided::is_provided(values, component) && !super::provided::kept(provided, component, obj) {
        return false;
    }
    let is_crd = super::object_id::is_crd(obj);
    match super::values::get(values, &["global", "crds"]).and_then(Value::as_str) {
        Some("only") => is_crd,
        Some("skip") => !is_crd,
        _ => true,
    }
}

/// Standard base64 with padding, as the generators write `data` (the `base64` crate).
pub fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
