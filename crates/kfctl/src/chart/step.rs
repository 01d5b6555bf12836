//! One parameter's action on a point of an exported template, and the Helm expression it
//! becomes: a call of the helper its row names (`templates/chart/helpers/<row>.tpl`), taking
//! the field's value as JSON and returning it as JSON. [`super::params`] decides where the
//! points are and which steps act on each, in the parameter table's order.

use crate::catalog::credentials::Encoding;
use crate::catalog::image_refs::Rewrite;
use crate::catalog::scheduling::Source;

/// One parameter's action on a point.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// `<component>.images.<key>` (when the image has a key) and `global.imageRegistry`.
    Image { key: String },
    /// The same for every token of a text that names images (`charts/*/images.yaml`):
    /// (rewrite, key, token) each.
    ImageText { tokens: Vec<(Rewrite, String, String)> },
    /// `global.imagePullSecrets` appended to a pod spec's `imagePullSecrets`.
    PullSecrets,
    /// `nodeSelector` (from `from`: component, else global, …) merged over a pod spec's.
    NodeSelector { from: Source },
    /// `tolerations` (from `from`) appended to a pod spec's.
    Tolerations { from: Source },
    /// `affinity` (from `from`) replacing a pod spec's.
    Affinity { from: Source },
    /// `<component>.replicas.<workload>`.
    Replicas { workload: String },
    /// `<component>.resources.<workload>.<container>`.
    Resources { workload: String, container: String },
    /// `<component>.runtimes.resources` on a users' runtime's main container.
    RuntimeResources,
    /// `<component>.podAnnotations.<workload>` or `.podLabels.<workload>` (`value`) merged
    /// into the pod template's metadata.
    PodMetadata { value: &'static str, workload: String },
    /// `<component>.env.<workload>.<container>`: the entries appended to the container's
    /// `env` (at a [`SPLICE_KEY`](super::params::SPLICE_KEY) point at the end of upstream's list, or as the whole list when
    /// upstream has none); `taken` are upstream's names, which the values may not repeat.
    Env { workload: String, container: String, taken: Vec<String>, whole: bool },
    /// `global.commonLabels` or `global.commonAnnotations` (the value's name).
    CommonMetadata { value: &'static str },
    /// `global.resourcePolicy` on a guarded object's annotations.
    ResourcePolicy,
    /// A credential; `path` is the value's path inside the chart's values.
    Credential { path: String, encoding: Encoding },
    /// `global.podSecurity.namespaces` on a Namespace's labels.
    PssNamespace,
    /// `global.podSecurity.profiles` on the profile controller's label config.
    PssProfiles,
    /// `global.storageClass` on a claim's `storageClassName`.
    StorageClass,
    /// A field of the Profile the template repeats per user of `global.users` (`namespace`
    /// for its name, `email` for its owner); see [`USER_VAR`].
    ProfileUser { field: &'static str },
    /// `global.users` on Dex's configuration text.
    DexUsers,
    /// `global.users` on the demo user's hash.
    DexDemoHash,
    /// `dex.connectors` and `oauth2-proxy.oidc` ([`super::identity`]).
    Identity(super::identity::IdentityStep),
    /// `global.gateway` on the Kubeflow Gateway's `spec.servers` ([`super::gateway`]).
    GatewayServers,
    /// `global.gateway.serviceType` on the ingress gateway Service's `spec.type`.
    GatewayServiceType,
    /// A field of the Certificate `global.gateway.tls.issuer` adds (`dnsNames`, `issuer`).
    GatewayCertificate { field: &'static str },
    /// `pipelines.database` on the install config's host and port keys and the login's user
    /// (`field`: host, port, user; [`super::external_store`]).
    DatabaseField { field: &'static str },
}

/// The template variable holding the user a repeated Profile template renders.
pub(crate) const USER_VAR: &str = "$kfctlUser";

impl Step {
    /// The Helm expression for this step applied to `inner` (an expression giving JSON).
    pub(crate) fn wrap(&self, inner: &str) -> String {
        let q = |s: &str| super::gotmpl::go_quote(s);
        match self {
            Step::Image { key } => format!("include \"kfctl.image\" (list $ {} {inner})", q(key)),
            Step::ImageText { tokens } => {
                let list: Vec<String> = tokens
                    .iter()
                    .map(|(rewrite, key, token)| format!("(list {} {} {})", q(rewrite.as_str()), q(key), q(token)))
                    .collect();
                format!("include \"kfctl.imageText\" (list $ {inner} (list {}))", list.join(" "))
            }
            Step::PullSecrets => format!("include \"kfctl.pullSecrets\" (list $ {inner})"),
            Step::NodeSelector { from } => {
                format!("include \"kfctl.nodeSelector\" (list $ {inner} {})", q(from.as_str()))
            }
            Step::Tolerations { from } => {
                format!("include \"kfctl.tolerations\" (list $ {inner} {})", q(from.as_str()))
            }
            Step::Affinity { from } => format!("include \"kfctl.affinity\" (list $ {inner} {})", q(from.as_str())),
            Step::Replicas { workload } => format!("include \"kfctl.replicas\" (list $ {} {inner})", q(workload)),
            Step::Resources { workload, container } => {
                format!("include \"kfctl.resources\" (list $ {} {} {inner})", q(workload), q(container))
            }
            Step::RuntimeResources => format!("include \"kfctl.runtimeResources\" (list $ {inner})"),
            Step::PodMetadata { value, workload } => {
                format!("include \"kfctl.podMetadata\" (list $ {} {} {inner})", q(value), q(workload))
            }
            Step::Env { workload, container, taken, whole } => {
                let taken: Vec<String> = taken.iter().map(|t| q(t)).collect();
                let helper = if *whole { "kfctl.env" } else { "kfctl.envItems" };
                format!("include \"{helper}\" (list $ {} {} (list {}))", q(workload), q(container), taken.join(" "))
            }
            Step::CommonMetadata { value } => format!("include \"kfctl.commonMetadata\" (list $ {} {inner})", q(value)),
            Step::ResourcePolicy => format!("include \"kfctl.resourcePolicy\" (list $ {inner})"),
            Step::Credential { path, encoding } => {
                let (kind, needle, prefix) = match encoding {
                    Encoding::Plain => ("plain", "", ""),
                    Encoding::Base64 => ("base64", "", ""),
                    Encoding::InText { needle, prefix } => ("text", *needle, *prefix),
                };
                format!(
                    "include \"kfctl.credential\" (list $ {} {} {inner} {} {})",
                    q(path),
                    q(kind),
                    q(needle),
                    q(prefix)
                )
            }
            Step::PssNamespace => format!("include \"kfctl.pssNamespace\" (list $ {inner})"),
            Step::PssProfiles => format!("include \"kfctl.pssProfiles\" (list $ {inner})"),
            Step::StorageClass => format!("include \"kfctl.storageClass\" (list $ {inner})"),
            Step::ProfileUser { field } => {
                format!("include \"kfctl.profileUser\" (list $ {USER_VAR} {} {inner})", q(field))
            }
            Step::DexUsers => format!("include \"kfctl.dexUsers\" (list $ {inner})"),
            Step::DexDemoHash => format!("include \"kfctl.dexDemoHash\" (list $ {inner})"),
            Step::Identity(step) => step.wrap(inner),
            Step::GatewayServers => format!("include \"kfctl.gatewayServers\" (list $ {inner})"),
            Step::GatewayServiceType => format!("include \"kfctl.gatewayServiceType\" (list $ {inner})"),
            Step::GatewayCertificate { field } => {
                format!("include \"kfctl.gatewayCertificate\" (list $ {} {inner})", q(field))
            }
            Step::DatabaseField { field } => format!("include \"kfctl.databaseField\" (list $ {} {inner})", q(field)),
        }
    }

    /// Whether the step reads its input as a plain Go string rather than JSON (images only:
    /// it keeps image fields readable in the templates).
    pub(crate) fn takes_text(&self) -> bool {
        matches!(self, Step::Image { .. } | Step::ImageText { .. })
    }
}
