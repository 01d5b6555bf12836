//! The values' descriptions: the one place that says what each key of the values does.
//!
//! [`describe`] takes a key's full value path (`global.crds`, `katib.replicas.katib-ui`) and
//! gives its sentence. Every reader takes it from here: the comments of the exported
//! `values.yaml` files (helm-docs style, `# -- …`), the `description` of every property of
//! `values.schema.json` ([`super::schema::Schema::to_json_schema`]), the READMEs' values
//! tables and `kfctl-rs values`. Keys derived from the default render (one per image,
//! workload or container) get a generated sentence naming that image, workload or container;
//! a component's section is described by its catalog entry (`charts/<component>/component.yaml`);
//! credentials by [`super::params::CREDENTIALS`].
//!
//! [`free_form`] names the places whose keys are the user's own (labels, node selectors,
//! affinity, a container's resources): they are described as a whole, on their parent key.

use super::Catalog;
use super::params::CREDENTIALS;

/// What the value at `path` (a full value path) does; `None` for a key the values do not have.
pub(crate) fn describe(path: &[&str], catalog: &Catalog) -> Option<String> {
    if let Some(text) = identity(path) {
        return Some(text.into());
    }
    match path {
        [EXPORTED_GLOBAL_KEY] => Some(EXPORTED_GLOBAL.into()),
        [EXPORTED_GLOBAL_KEY, rest @ ..] => describe(&[&["global"], rest].concat(), catalog),
        ["global", "existingSecrets"] => Some(super::existing_secrets::description()),
        ["global", rest @ ..] => global(rest).map(str::to_string).or_else(|| credential(path)),
        [component] => Some(section(component, catalog)),
        [_, rest @ ..] => component_key(rest).or_else(|| credential(path)),
        [] => None,
    }
}

/// Whether the keys under `path` (a full value path) are the user's own, so that only the
/// key at `path` itself is described.
pub(crate) fn free_form(path: &[&str]) -> bool {
    if let [EXPORTED_GLOBAL_KEY, rest @ ..] = path {
        return free_form(&[&["global"], rest].concat());
    }
    let scheduling = matches!(path.last(), Some(&("nodeSelector" | "affinity" | "tolerations")));
    let metadata = matches!(
        path,
        ["global", "commonLabels" | "commonAnnotations" | "imagePullSecrets" | "users" | "existingSecrets"]
    );
    let resources =
        matches!(path, [c, "resources", _, _] if *c != "global") || matches!(path, [_, "runtimes", "resources"]);
    let pod_metadata = matches!(path, [c, "podAnnotations" | "podLabels", _] if *c != "global");
    scheduling || metadata || resources || pod_metadata
}

/// `path` (inside the chart of `component`, `None` for the umbrella) as a full value path:
/// a subchart's own keys sit under its component, `global` stays where it is.
pub(crate) fn full_path<'a>(path: &[&'a str], component: Option<&'a str>) -> Vec<&'a str> {
    match (component, path.first()) {
        (Some(c), Some(first)) if !matches!(*first, "global" | EXPORTED_GLOBAL_KEY) => {
            std::iter::once(c).chain(path.iter().copied()).collect()
        }
        _ => path.to_vec(),
    }
}

/// The key of an exported chart's values that holds the globals given at export
/// (`chart::exported_global`).
pub(crate) const EXPORTED_GLOBAL_KEY: &str = "exportedGlobal";

/// What [`EXPORTED_GLOBAL_KEY`] holds.
pub(crate) const EXPORTED_GLOBAL: &str = "The `global:` values given at export, this chart's defaults for those keys: a value under `global:` replaces or merges over one, a null removes it. They stand here, not under `global:`, because Helm copies `global:` defaults into every subchart, where an install's null cannot reach them (helm/helm#6277); set them under `global:`.";

/// The copy of `global:` Helm hands each subchart (in a subchart's schema).
pub(crate) const GLOBAL_COPY: &str = "Helm's copy of the umbrella chart's `global:` values; set them there.";

fn global(rest: &[&str]) -> Option<&'static str> {
    Some(match rest {
        [] => "Values every component shares (Helm hands them to every subchart).",
        ["imageRegistry"] => {
            "Pull every image from this registry instead (path, tag and digest kept); empty keeps upstream's."
        }
        ["imagePullSecrets"] => "Names of pull secrets added to every pod (users' runtimes included).",
        ["nodeSelector"] => {
            "Node selector merged into the platform's pods (a component's own wins); not into users' runtimes or node agents (DaemonSets), see `podScopes` in charts/catalog.yaml."
        }
        ["tolerations"] => {
            "Tolerations added to the platform's pods (a component's own win); not to users' runtimes or node agents."
        }
        ["affinity"] => {
            "Affinity set on the platform's pods (a component's own wins); not on users' runtimes or node agents."
        }
        ["commonLabels"] => "Labels added to every object.",
        ["commonAnnotations"] => "Annotations added to every object.",
        ["storageClass"] => {
            "StorageClass set as `spec.storageClassName` of every PersistentVolumeClaim and StatefulSet `volumeClaimTemplates` entry; empty keeps upstream's (none: the cluster default)."
        }
        ["users"] => {
            "Kubeflow users `[{email, namespace, passwordHash}]`: one Profile each (owner = email; namespace defaults to the email lowercased with `@` and `.` as `-`), and a Dex login for each with a bcrypt `passwordHash`. Empty keeps upstream's demo user; set, it replaces it (and `dex.staticUser` must stay empty)."
        }
        ["users", "email"] => "The user's email: the Profile's owner and the Dex login.",
        ["users", "namespace"] => {
            "The user's profile namespace (a DNS-1123 label); empty: `kubeflow-` + the email lowercased, `@` and `.` as `-`."
        }
        ["users", "passwordHash"] => {
            "A bcrypt hash (`$2a$`/`$2b$`/`$2y$`): the user gets a Dex static password login; empty: none (log in through another connector)."
        }
        ["gateway"] => {
            "How Kubeflow is reached: the Kubeflow Gateway `kubeflow/kubeflow-gateway` and the `istio-system/istio-ingressgateway` Service. Empty keeps upstream's (port 80, any host, ClusterIP: port-forward)."
        }
        ["gateway", "host"] => {
            "The hostname `kubeflow-gateway` serves instead of `*` (a DNS name; `*.example.com` allowed)."
        }
        ["gateway", "tls"] => {
            "HTTPS on port 443: give `secretName` or `issuer`, not both (upstream asks for HTTPS before exposing Kubeflow: its web apps use secure cookies)."
        }
        ["gateway", "tls", "secretName"] => {
            "An existing TLS Secret in `istio-system` (the ingress gateway's namespace): the HTTPS server's `credentialName`."
        }
        ["gateway", "tls", "issuer"] => {
            "A cert-manager ClusterIssuer: a Certificate `istio-system/kubeflow-gateway-tls` for `host` is added (needs `host`) and its Secret is the HTTPS server's `credentialName`."
        }
        ["gateway", "httpsRedirect"] => {
            "With TLS on, the HTTP server redirects to HTTPS (Istio's `tls.httpsRedirect`); `false` keeps serving plain HTTP too. No effect without TLS."
        }
        ["gateway", "serviceType"] => {
            "`spec.type` of the `istio-ingressgateway` Service: `ClusterIP`, `NodePort` or `LoadBalancer`; empty keeps upstream's (ClusterIP)."
        }
        ["crds"] => "`\"\"` renders every object, `only` just the CRDs, `skip` all but them (two-step install).",
        ["resourcePolicy"] => {
            "`keep` annotates every CRD, PersistentVolumeClaim and Namespace with `helm.sh/resource-policy: keep` and Argo CD's `argocd.argoproj.io/sync-options: Delete=false,Prune=false`, so neither `helm uninstall`/`upgrade` nor an Argo CD prune or Application deletion deletes them (custom resources, volumes' data, users' namespaces); empty adds nothing (they go with the release)."
        }
        ["podSecurity"] => {
            "Pod Security Standards `enforce` levels (`\"\"` keeps upstream's, `off` removes the label)."
        }
        ["podSecurity", "namespaces"] => {
            "PSS `enforce` level of the static namespaces that have one (`off` removes it)."
        }
        ["podSecurity", "profiles"] => {
            "PSS `enforce` level the Profiles controller gives profile namespaces (`off` none)."
        }
        _ => return None,
    })
}

fn section(component: &str, catalog: &Catalog) -> String {
    let def = catalog.components.get(component).or_else(|| catalog.absent.get(component));
    match def.map(|d| d.description.trim()).filter(|d| !d.is_empty()) {
        Some(what) => format!("Component `{component}`: {what}"),
        None => format!("Component `{component}`."),
    }
}

fn component_key(rest: &[&str]) -> Option<String> {
    Some(match rest {
        ["database"] => "Pipelines on an external MySQL (`pipeline-install-config` and `mysql-secret`, which every Pipelines server reads): `host`, `user` and `password` together, `port` optional. Empty keeps upstream's in-cluster MySQL.".into(),
        ["database", "host"] => "The external MySQL's host name or IP (no port): `dbHost` and `mysqlHost` of `pipeline-install-config`.".into(),
        ["database", "port"] => "The external MySQL's port (`dbPort`, `mysqlPort`); `null` keeps upstream's 3306.".into(),
        ["database", "password"] => "Credential: the external MySQL's password (`password` of `mysql-secret`; needs `host` and `user`); empty keeps upstream's (empty: the in-cluster MySQL's root).".into(),
        ["database", "user"] => "The external MySQL's user (`username` of `mysql-secret`; upstream's: root).".into(),
        ["enabled"] => "Render this component (the umbrella chart's condition).".into(),
        ["provided"] => "The cluster already runs this dependency: render none of its objects, keep what needs it, and have `kfctl-rs install` check the cluster's copy first (GUIDE.md, \"Dependencies your cluster already runs\").".into(),
        ["images"] => "The component's images by key; another reference replaces the image everywhere upstream names it.".into(),
        ["images", key] => format!("Image `{key}` (default: upstream's)."),
        ["replicas"] => "`spec.replicas` of the component's Deployments and StatefulSets, by name (a whole number, 0 or more; `null` where upstream sets none).".into(),
        ["replicas", workload] => format!("`spec.replicas` of `{workload}`; `null` leaves it unset, as upstream does (1, or what an autoscaler sets)."),
        ["podAnnotations"] => "Annotations merged into the pod template of the component's Deployments and StatefulSets, by workload; empty keeps upstream's.".into(),
        ["podAnnotations", workload] => format!("Annotations merged into the pods of `{workload}` (`spec.template.metadata.annotations`)."),
        ["podLabels"] => "Labels merged into the pod template of the component's Deployments and StatefulSets, by workload; empty keeps upstream's.".into(),
        ["podLabels", workload] => format!("Labels merged into the pods of `{workload}` (`spec.template.metadata.labels`; the selector is left as it is)."),
        ["env"] => "Extra environment variables of the component's containers, by workload and container: a list of EnvVar appended to upstream's (a name upstream's container has is refused).".into(),
        ["env", workload] => format!("Extra `env` of the containers of `{workload}`, by container name."),
        ["env", workload, container] => format!("Extra `env` of container `{container}` in `{workload}` (EnvVar list); empty keeps upstream's."),
        ["resources"] => "Container `resources` of the component's Deployments and StatefulSets, by workload and container; empty keeps upstream's.".into(),
        ["resources", workload] => format!("Container `resources` of `{workload}`, by container name."),
        ["resources", workload, container] => {
            format!("`resources` of container `{container}` in `{workload}`; empty keeps upstream's.")
        }
        ["resources", _, _, "limits"] | ["runtimes", "resources", "limits"] => {
            "Resource limits by resource name (`cpu`, `memory`, `nvidia.com/gpu`...), each a Kubernetes quantity (`500m`, `1.5Gi`, `2`).".into()
        }
        ["resources", _, _, "requests"] | ["runtimes", "resources", "requests"] => {
            "Resource requests by resource name, each a Kubernetes quantity (`250m`, `512Mi`).".into()
        }
        ["resources", _, _, "claims"] | ["runtimes", "resources", "claims"] => {
            "Dynamic resource claims (`[{name}]`), as Kubernetes takes them.".into()
        }
        ["nodeSelector"] => "Node selector merged into this component's pods (wins over global; users' runtimes excepted, see `runtimes`).".into(),
        ["tolerations"] => "Tolerations added to this component's pods (instead of global's; users' runtimes excepted).".into(),
        ["affinity"] => "Affinity set on this component's pods (instead of global's; users' runtimes excepted).".into(),
        ["runtimes"] => "The pods of users' runtimes (Trainer's training runtimes, KServe's serving runtimes; `podScopes` in charts/catalog.yaml): only these values reach them, on every pod template running the runtime's main container (`node`, `kserve-container`).".into(),
        ["runtimes", "nodeSelector"] => "Node selector merged into the runtimes' pods (e.g. `nvidia.com/gpu.present: \"true\"` for GPU nodes).".into(),
        ["runtimes", "tolerations"] => "Tolerations added to the runtimes' pods (e.g. for tainted GPU nodes).".into(),
        ["runtimes", "affinity"] => "Affinity set on the runtimes' pods.".into(),
        ["runtimes", "resources"] => "`resources` of the runtimes' main container (e.g. `limits: {nvidia.com/gpu: 1}`); empty keeps upstream's.".into(),
        ["staticUser"] => "Dex's static demo user (credentials; see `kfctl-rs secrets generate`).".into(),
        ["objectStore"] => "The Pipelines object store's (minio) credentials.".into(),
        _ => return None,
    })
}

/// `dex.connectors` and `oauth2-proxy.oidc` ([`super::identity`]).
fn identity(path: &[&str]) -> Option<&'static str> {
    Some(match path {
        ["dex", "connectors"] => {
            "Dex connectors `[{type, id, name, config}]`, as Dex's config.yaml takes them (oidc, ldap, github, microsoft, saml…), appended to Dex's configuration as `connectors:`; empty keeps upstream's. Secrets in `config` are refused inline: write `$NAME` and give Dex the variable from your own Secret with `dex.env.dex.dex` (secretKeyRef)."
        }
        ["dex", "connectors", "type"] => "The connector's type (Dex's name for it: oidc, ldap, github, …).",
        ["dex", "connectors", "id"] => "The connector's id, unique among the connectors (Dex's login URLs name it).",
        ["dex", "connectors", "name"] => "The name Dex's login page shows for the connector.",
        ["dex", "connectors", "config"] => {
            "The connector's configuration, as Dex documents it for its type; secrets as `$NAME` (expanded from Dex's environment)."
        }
        ["oauth2-proxy", "oidc"] => {
            "oauth2-proxy straight to an external OIDC issuer, without Dex (upstream's \"oauth2-proxy only\"); the client secret is `global.oidcClientSecret`. Needs `dex.enabled=false`."
        }
        ["oauth2-proxy", "oidc", "issuerURL"] => {
            "The external issuer (an https URL): oauth2-proxy discovers its endpoints, and Istio's RequestAuthentication trusts it instead of Dex; empty keeps Dex."
        }
        ["oauth2-proxy", "oidc", "clientID"] => {
            "oauth2-proxy's client id at the external issuer (required with `issuerURL`, only with it)."
        }
        ["oauth2-proxy", "oidc", "scope"] => {
            "The scopes oauth2-proxy asks for, space-separated (e.g. `openid email profile offline_access`); empty keeps upstream's `profile email groups openid`."
        }
        _ => return None,
    })
}

fn credential(path: &[&str]) -> Option<String> {
    let dotted = path.join(".");
    CREDENTIALS.iter().find(|c| c.value == dotted).map(|c| {
        format!(
            "Credential: {}; empty keeps upstream's well-known default (`kfctl-rs secrets generate` makes fresh ones).",
            c.what
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_component_and_generated_keys_are_described() {
        let catalog = Catalog::embedded().unwrap();
        let d = |p: &[&str]| describe(p, &catalog).unwrap_or_default();
        assert!(d(&["global", "crds"]).contains("`only`"));
        assert!(d(&["katib"]).starts_with("Component `katib`: Katib"), "{}", d(&["katib"]));
        assert!(
            d(&["katib", "replicas", "katib-ui"]).starts_with("`spec.replicas` of `katib-ui`; `null` leaves it unset")
        );
        assert!(d(&["katib", "env", "katib-ui", "katib-ui"]).starts_with("Extra `env` of container `katib-ui`"));
        assert!(d(&["dex", "staticUser", "passwordHash"]).starts_with("Credential: the Dex demo user's password hash"));
        assert!(d(&["global", "oidcClientSecret"]).starts_with("Credential:"));
        assert_eq!(describe(&["katib", "nope"], &catalog), None);
    }

    #[test]
    fn free_form_places_and_full_paths() {
        assert!(free_form(&["global", "commonLabels"]) && free_form(&["katib", "nodeSelector"]));
        assert!(free_form(&["katib", "resources", "w", "c"]) && !free_form(&["katib", "resources", "w"]));
        assert_eq!(full_path(&["replicas", "w"], Some("katib")), ["katib", "replicas", "w"]);
        assert_eq!(full_path(&["global", "crds"], Some("katib")), ["global", "crds"]);
        assert_eq!(full_path(&["katib"], None), ["katib"]);
        assert_eq!(full_path(&["exportedGlobal", "crds"], Some("katib")), ["exportedGlobal", "crds"]);
        assert!(free_form(&["exportedGlobal", "commonLabels"]) && !free_form(&["exportedGlobal", "gateway"]));
    }
}
