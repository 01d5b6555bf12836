//! No silent divergence: kustomization fields the engine does not implement are refused.
//!
//! kustomize acts on every field below; an engine that read them and did nothing would build
//! something else than kustomize without a word. So a kustomization that sets one of them (to
//! anything but an empty value) is an error naming the file and the field. Fields the engine
//! does not know at all are refused earlier, by serde (`deny_unknown_fields`), as kustomize
//! refuses them. (`generators:` and `transformers:` are run, and their unsupported entries
//! refused, by [`crate::builtins::plugins`]. `openapi:` is checked in load order by
//! [`crate::openapi`], which refuses its one unsupported case with [`refusal`].)

use super::error::{KustomizeError, Result};
use super::kustomization::Kustomization;
use serde_json::Value;
use std::path::Path;

/// The `buildMetadata` option for the managed-by label (see [`crate::build`]).
pub(crate) const MANAGED_BY_LABEL: &str = "managedByLabel";

/// The `buildMetadata` options kustomize v5.6 knows, all implemented (the annotations in
/// [`crate::build_metadata`]).
const BUILD_METADATA: [&str; 3] = [MANAGED_BY_LABEL, "originAnnotations", "transformerAnnotations"];

/// Each field kfctl-rs refuses, with a hint for the user.
const HINTS: &[(&str, &str)] = &[
    (
        "openapi.path",
        "in a base or component, kustomize v5.6 swaps its one global schema in the middle of the build, and whether the built-in Kubernetes schema survives beside the file depends on whether anything consulted the schema before this folder was loaded (load-order dependent global state, a kustomize bug); move `openapi: path:` to the kustomization being built",
    ),
    ("buildMetadata", "the options are `managedByLabel`, `originAnnotations` and `transformerAnnotations`"),
    ("validators", "remove it, or build with kustomize"),
    ("helmCharts", "render the chart with `helm template` and list its output under `resources`"),
    ("helmGlobals", "render the chart with `helm template` and list its output under `resources`"),
    ("helmChartInflationGenerator", "render the chart with `helm template` and list its output under `resources`"),
];

/// Refuse the first unsupported field `k` sets. `origin` is its kustomization file (or the
/// folder of an in-memory kustomization).
pub(crate) fn check(k: &Kustomization, origin: &Path) -> Result<()> {
    match set_fields(k).into_iter().next() {
        Some(field) => Err(refusal(origin, field)),
        None => Ok(()),
    }
}

/// The error for one unsupported field.
pub(crate) fn refusal(origin: &Path, field: &str) -> KustomizeError {
    let hint = HINTS.iter().find(|(name, _)| *name == field).map_or("build with kustomize", |(_, hint)| hint);
    KustomizeError::Unsupported { path: origin.to_path_buf(), field: field.to_string(), hint: hint.to_string() }
}

/// The unsupported fields `k` sets, in the order of [`HINTS`].
fn set_fields(k: &Kustomization) -> Vec<&'static str> {
    let set = |name: &str| -> bool {
        match name {
            "buildMetadata" => k.build_metadata.iter().any(|option| !BUILD_METADATA.contains(&option.as_str())),
            "validators" => !k.validators.is_empty(),
            "helmCharts" => present(k.helm_charts.as_ref()),
            "helmGlobals" => present(k.helm_globals.as_ref()),
            "helmChartInflationGenerator" => present(k.helm_chart_inflation_generator.as_ref()),
            _ => false,
        }
    };
    HINTS.iter().map(|(name, _)| *name).filter(|name| set(name)).collect()
}

/// Set to something: not null, not an empty list, map or string.
fn present(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(yaml: &str) -> String {
        let doc = kfctl_yaml::parse_stream(yaml, "k.yaml").expect("yaml").remove(0);
        let k: Kustomization = serde_json::from_value(doc).expect("parses");
        check(&k, Path::new("/x/kustomization.yaml")).expect_err("refused").to_string()
    }

    #[test]
    fn each_unsupported_field_is_refused_by_name() {
        let cases = [
            ("buildMetadata", "buildMetadata: [originAnotations]\n"),
            ("buildMetadata", "buildMetadata: [managedByLabel, transformerAnnotations, other]\n"),
            ("validators", "validators:\n- v.yaml\n"),
            ("helmCharts", "helmCharts:\n- name: x\n"),
            ("helmGlobals", "helmGlobals:\n  chartHome: c\n"),
            ("helmChartInflationGenerator", "helmChartInflationGenerator:\n- chartName: x\n"),
        ];
        for (field, yaml) in cases {
            let e = refused(yaml);
            assert!(e.starts_with("/x/kustomization.yaml: `"), "{e}");
            assert!(e.contains(&format!("`{field}` is not supported by kfctl-rs")), "{field}: {e}");
        }
    }

    #[test]
    fn a_custom_schema_in_a_base_is_refused_as_openapi_path() {
        // Raised by `crate::openapi::nested`, which has its own load-order logic.
        let e = refusal(Path::new("/x/base/kustomization.yaml"), "openapi.path").to_string();
        assert!(e.contains("`openapi.path` is not supported by kfctl-rs; in a base or component"), "{e}");
    }

    #[test]
    fn empty_values_are_not_refused() {
        let yaml = "openapi: {path: schema.json}\nhelmCharts: []\nbuildMetadata: [managedByLabel, originAnnotations, transformerAnnotations]\n";
        let doc = kfctl_yaml::parse_stream(yaml, "k.yaml").expect("yaml").remove(0);
        let k: Kustomization = serde_json::from_value(doc).expect("parses");
        assert!(check(&k, Path::new("k.yaml")).is_ok());
    }
}
