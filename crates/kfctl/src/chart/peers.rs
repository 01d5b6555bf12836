//! Objects whose fields depend on other components, as chart templates.
//!
//! [`crate::catalog::peers`] finds the objects of the default render that kustomize prints
//! differently when some *other* component is left out, and builds each variant. A subchart
//! cannot see another subchart's values, so such an object is written twice over:
//!
//! - in its component's chart, `templates/<file>` defines `kfctl.peers.<component>.<file>`:
//!   one branch per variant, chosen by `kfctlPeersOff` (the peers left out, sorted,
//!   comma-joined: `kfctl.peersOff`), the default build's object when none is; and renders it
//!   with no peer left out only when the chart is installed alone (`kfctl.inUmbrella`: an
//!   Argo CD Application of one component);
//! - in the umbrella chart, `templates/peers-<component>-<file>` renders it with the peers
//!   the install's values leave out, in the component chart's own scope
//!   (`.Subcharts.<component>`, present only while that component is enabled).
//!
//! So `helm template` of the umbrella prints, for any combination of enabled components, what
//! `kfctl-rs template` prints after building that combination.

use super::ChartError;
use crate::catalog::peers::Variant;
use crate::catalog::render::{Prepared, RenderedObject};

/// An object's peers and its variants.
pub(crate) type PeersAndVariants<'p> = (&'p [String], &'p [Variant]);

/// The peers and variants of `o` (one of `prepared.objects`) when its fields depend on other
/// components and some variant differs from it.
pub(crate) fn of<'p>(prepared: &'p Prepared, o: &RenderedObject) -> Result<Option<PeersAndVariants<'p>>, ChartError> {
    let Some(index) = prepared.objects.iter().position(|x| std::ptr::eq(x, o)) else { return Ok(None) };
    let Some(dependent) = prepared.peers.iter().find(|d| d.index == index) else { return Ok(None) };
    let Some(all) = prepared.peer_variants.as_ref() else {
        return Err(ChartError::PeersNotBuilt { object: kfctl_yaml::compare::object_label(&o.obj) });
    };
    Ok(all.get(&index).map(|variants| (dependent.peers.as_slice(), variants.as_slice())))
}

/// One object's branches: the default template text and each variant's, headers removed.
pub(crate) struct Branches<'a> {
    /// The component whose chart holds it.
    pub component: &'a str,
    /// Its template file name in that chart (`<kind>-<namespace>-<name>.yaml`).
    pub file: &'a str,
    /// The other components it depends on, sorted.
    pub peers: &'a [String],
    /// The default build's template text.
    pub default: String,
    /// Each variant's template text, by the peers it leaves out.
    pub variants: Vec<(&'a Variant, String)>,
}

/// The name of the object's `define`.
fn define_name(component: &str, file: &str) -> String {
    format!("kfctl.peers.{component}.{file}")
}

/// The component chart's file: the object's comment line, the `define`, and its rendering
/// when the chart is alone; `umbrella` is the umbrella chart's name.
pub(crate) fn component_file(branches: &Branches, umbrella: &str) -> String {
    let name = define_name(branches.component, branches.file);
    let header = branches.default.split_once('\n').map_or("", |(first, _)| first);
    let mut out = format!("{header}\n{{{{- define {name:?} }}}}\n{{{{- $off := index . \"kfctlPeersOff\" }}}}\n");
    out.push_str("{{- if eq $off \"\" }}\n");
    out.push_str(body(&branches.default));
    for (variant, text) in &branches.variants {
        out.push_str(&format!("{{{{- else if eq $off {:?} }}}}\n", variant.off.join(",")));
        out.push_str(body(text));
    }
    out.push_str(&format!(
        "{{{{- else }}}}\n{{{{- fail (printf \"{name}: no branch for the components left out: %s\" $off) }}}}\n{{{{- end }}}}\n{{{{- end }}}}\n"
    ));
    out.push_str(&format!(
        "{{{{- if not (include \"kfctl.inUmbrella\" (list $ {umbrella:?} {:?})) }}}}\n{{{{- include {name:?} (merge (dict \"kfctlPeersOff\" \"\") $) }}}}\n{{{{- end }}}}\n",
        branches.component
    ));
    out
}

/// The umbrella chart's file `templates/<umbrella_file_name>` rendering the object.
pub(crate) fn umbrella_file(branches: &Branches, label: &str) -> String {
    let name = define_name(branches.component, branches.file);
    let peers: Vec<String> = branches.peers.iter().map(|p| format!("{p:?}")).collect();
    format!(
        "{{{{- /* {label} of chart {component}: rendered here, where every component's values are seen, as its fields depend on whether {list} {verb} installed; written by kfctl-rs, do not edit */}}}}\n{{{{- with index $.Subcharts {component:?} }}}}\n{{{{- include {name:?} (merge (dict \"kfctlPeersOff\" (include \"kfctl.peersOff\" (list $ (list {peers})))) .) }}}}\n{{{{- end }}}}\n",
        label = label.replace("*/", "* /"),
        component = branches.component,
        list = branches.peers.join(", "),
        verb = if branches.peers.len() == 1 { "is" } else { "are" },
        peers = peers.join(" "),
    )
}

/// The umbrella's file name for the object.
pub(crate) fn umbrella_file_name(component: &str, file: &str) -> String {
    format!("peers-{component}-{file}")
}

/// A template text without its header comment line, ending with a newline.
fn body(text: &str) -> &str {
    match text.split_once('\n') {
        Some((first, rest)) if first.starts_with("{{- /*") => rest,
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_variant_is_a_branch_and_the_umbrella_passes_the_peers_left_out() {
        let variant = Variant { off: vec!["a".into(), "b".into()], obj: json!({}) };
        let peers = vec!["a".to_string(), "b".to_string()];
        let branches = Branches {
            component: "c",
            file: "x.yaml",
            peers: &peers,
            default: "{{- /* h */}}\nkind: D\n".into(),
            variants: vec![(&variant, "{{- /* h */}}\nkind: V\n".into())],
        };
        let text = component_file(&branches, "kubeflow");
        assert!(text.starts_with("{{- /* h */}}\n{{- define \"kfctl.peers.c.x.yaml\" }}"), "{text}");
        assert!(text.contains("{{- if eq $off \"\" }}\nkind: D\n{{- else if eq $off \"a,b\" }}\nkind: V\n"), "{text}");
        assert!(text.contains("(list $ \"kubeflow\" \"c\")"), "{text}");
        let umbrella = umbrella_file(&branches, "Kind x");
        assert!(umbrella.contains("{{- with index $.Subcharts \"c\" }}"), "{umbrella}");
        assert!(umbrella.contains("(list $ (list \"a\" \"b\"))"), "{umbrella}");
    }
}
