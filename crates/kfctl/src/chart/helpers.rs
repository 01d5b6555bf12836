//! The exported charts' `templates/_helpers.tpl`, generated from the parameter table.
//!
//! No copy of the whole file is kept: [`helpers_file`] assembles it at export time from the
//! pieces in `templates/chart/helpers/`, in this order: `header.tpl`; `keep.tpl`, the Helm side
//! of [`params::keep`] (`<component>.enabled` and `global.crds`, [`params::KEEP_HELM`]); `hash.tpl`,
//! kustomize's hashed names ([`super::hashed`]); one
//! file per row of [`params::PARAMS`], named after the row (`images.tpl`, …) and holding the
//! helpers the row names in [`params::Param::helm`], in the table's order; `requires.tpl`,
//! the umbrella's dependency check; `peers.tpl`, objects that depend on other components
//! ([`super::peers`]); and `globals.tpl`, how every helper reads `global`
//! (`global:` coalesced over the globals given at export, [`super::exported_global`]). A row
//! added to the table without its file fails the export, and a test holds each file's
//! `define`s equal to the helpers its row names.

use super::ChartError;
use super::scaffold::verbatim;
use crate::catalog::params;

/// The umbrella's dependency check (`templates/checks.yaml`), the last piece.
pub(crate) const REQUIRES_HELM: &[&str] = &["kfctl.requires", "kfctl.providedGroup", "kfctl.absent"];

/// Every helper's view of `global`: `global:` coalesced over the globals given at export
/// ([`super::exported_global`]).
pub(crate) const GLOBALS_HELM: &[&str] = &["kfctl.globals", "kfctl.coalesce"];

/// Objects whose fields depend on other components ([`super::peers`]).
pub(crate) const PEERS_HELM: &[&str] = &["kfctl.peersOff", "kfctl.inUmbrella"];

/// kustomize's hashed names for generated objects whose content values change ([`super::hashed`]).
pub(crate) const HASH_HELM: &[&str] = &["kfctl.hashedName", "kfctl.secretName"];

/// Every piece of the helpers file, in order: (file under `templates/chart/helpers/`, the
/// helpers it defines); the header defines none.
pub(crate) fn pieces() -> Vec<(String, &'static [&'static str])> {
    let mut pieces = vec![("header".to_string(), &[][..]), ("keep".to_string(), params::KEEP_HELM)];
    pieces.push(("hash".to_string(), HASH_HELM));
    pieces.extend(params::PARAMS.iter().map(|p| (p.name.to_string(), p.helm)));
    pieces.push(("requires".to_string(), REQUIRES_HELM));
    pieces.push(("peers".to_string(), PEERS_HELM));
    pieces.push(("globals".to_string(), GLOBALS_HELM));
    pieces
}

/// The text of `templates/_helpers.tpl`: the pieces, one blank line between them.
pub(crate) fn helpers_file() -> Result<String, ChartError> {
    let texts = pieces()
        .iter()
        .map(|(file, _)| verbatim(&format!("chart/helpers/{file}.tpl")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(texts.join("\n"))
}

/// The helpers a piece of text defines, in order.
#[cfg(test)]
pub(crate) fn defines(text: &str) -> Vec<&str> {
    text.split("{{- define \"").skip(1).filter_map(|rest| rest.split_once('"')).map(|(name, _)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_piece_defines_exactly_the_helpers_its_row_names() {
        for (file, helm) in pieces() {
            let text = verbatim(&format!("chart/helpers/{file}.tpl")).unwrap();
            assert_eq!(defines(&text), helm, "templates/chart/helpers/{file}.tpl");
            assert!(text.ends_with('\n'), "{file}.tpl ends with a newline");
        }
    }

    #[test]
    fn every_helper_called_is_defined_once() {
        let file = helpers_file().unwrap();
        let defined = defines(&file);
        let mut unique = defined.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), defined.len(), "a helper is defined twice");
        use super::super::params::Step;
        use crate::catalog::scheduling::Source;
        let encoding = params::Encoding::Plain;
        let steps = [
            Step::Image { key: "k".into() },
            Step::PullSecrets,
            Step::NodeSelector { from: Source::Scoped },
            Step::Tolerations { from: Source::Scoped },
            Step::Affinity { from: Source::Runtimes },
            Step::Replicas { workload: "w".into() },
            Step::Resources { workload: "w".into(), container: "c".into() },
            Step::RuntimeResources,
            Step::PodMetadata { value: "podLabels", workload: "w".into() },
            Step::Env { workload: "w".into(), container: "c".into(), taken: vec!["A".into()], whole: false },
            Step::Env { workload: "w".into(), container: "c".into(), taken: Vec::new(), whole: true },
            Step::CommonMetadata { value: "commonLabels" },
            Step::Credential { path: "p".into(), encoding },
            Step::PssNamespace,
            Step::PssProfiles,
        ];
        let mut calls: Vec<String> = steps.iter().map(|s| s.wrap("\"\"")).collect();
        calls.push(file.clone());
        calls.push("include \"kfctl.enabled\"".into()); // object.rs wraps every template in it
        calls.push("include \"kfctl.hashedName\"".into()); // hashed.rs names generated objects with it
        calls.push("include \"kfctl.secretName\"".into()); // and an existing Secret's references
        calls.push("include \"kfctl.existingSecret\"".into()); // object.rs wraps a credential Secret in it
        for text in &calls {
            for called in text.split("include \"").skip(1).filter_map(|r| r.split_once('"')).map(|(n, _)| n) {
                assert!(defined.contains(&called), "`{called}` is called but not defined");
            }
        }
    }
}
