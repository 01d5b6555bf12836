//! The install as a dependency graph: each object waits only for what it needs.
//!
//! The plan's waves (`crate::cluster::plan`) are an order a person can follow, and a correct
//! one: everything an object needs is in an earlier wave. But a wave waits for all of the
//! previous wave, most of which the object does not need. [`Graph::build`] keeps from the
//! wave order only the edges a fact names ([`Why`], described by [`WHY`]):
//!
//! * an object needs its Namespace (Active), a custom resource its CRD (Established and
//!   served), an object of an aggregated API group its APIService (Available);
//! * a workload needs what its pods name (ServiceAccount, ConfigMaps, Secrets, PVCs: the
//!   table `needs::POD_SPEC_NAMES`), the bindings of its ServiceAccount, and the object whose
//!   controller makes what it names (`needs::PRODUCERS`: a Certificate's Secret);
//! * a webhook configuration needs its Services to have a ready endpoint, a step of its own
//!   ([`Step::Endpoint`]) that needs the Service and the workloads it selects;
//! * an object a mutating webhook admits needs that webhook; a validating webhook goes after
//!   what it admits, as the waves put it last;
//! * an object in a namespace a controller makes needs that namespace to exist
//!   ([`Step::MadeNamespace`]), which needs the object it is made from (a Profile).
//!
//! Every edge between objects goes from an earlier wave to a later one (edges the facts give
//! the other way are dropped: an Istio sidecar webhook does not wait for the workloads that
//! serve it). So the plan's order stays a topological order, the graph has no cycle, and an
//! install by the graph never applies an object before the waves would have had it ready.
//!
//! [`Graph::heights`] orders what is ready to start: the longest chain of waits ahead first.
//! [`Graph::longest_chain`] is the critical path: given how long each step took from its
//! start to its readiness, the chain of steps whose sum is largest. No schedule can finish
//! sooner; the install prints it beside its wall time.

use super::needs;
use crate::cluster::object::ObjectRef;
use crate::cluster::order::{self, Class, InstallOrder};
use crate::cluster::plan::{Plan, PlannedObject};
use std::collections::HashMap;
use std::time::Duration;

/// Why one step waits for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Why {
    Namespace,
    Crd,
    ApiService,
    Names,
    Binding,
    Produces,
    Backs,
    Endpoint,
    Webhook,
    Validates,
    MadeNamespace,
}

/// Each edge kind, as the plan and messages say it.
pub(crate) const WHY: &[(Why, &str)] = &[
    (Why::Namespace, "its namespace is Active"),
    (Why::Crd, "its CRD is Established and served"),
    (Why::ApiService, "its APIService is Available"),
    (Why::Names, "what its pods name exists"),
    (Why::Binding, "its ServiceAccount's binding exists"),
    (Why::Produces, "what makes an object its pods name is ready"),
    (Why::Backs, "the Service and the workloads behind it are applied and ready"),
    (Why::Endpoint, "each Service it calls has a ready endpoint"),
    (Why::Webhook, "the mutating webhook that admits it is in place"),
    (Why::Validates, "what it validates is applied first"),
    (Why::MadeNamespace, "its namespace was made by a controller"),
];

impl Why {
    /// What the edge waits for.
    pub(crate) fn describe(self) -> &'static str {
        WHY.iter().find(|(w, _)| *w == self).map_or("", |(_, text)| text)
    }
}

/// One step of the install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Apply the plan's object at this index (plan order), then wait for its readiness.
    Object(usize),
    /// The Service has a ready endpoint (a webhook calls it).
    Endpoint { namespace: String, name: String },
    /// A controller made the namespace, saying who from what.
    MadeNamespace { name: String, who: String },
}

/// A step and what it needs.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub step: Step,
    /// The plan's wave (from 0) the step belongs to.
    pub wave: usize,
    /// The steps it waits for, each with why.
    pub needs: Vec<(usize, Why)>,
}

/// The dependency graph over a plan: the plan's objects first (node `i` is object `i` in plan
/// order), then the gates.
#[derive(Debug, Clone)]
pub(crate) struct Graph {
    pub nodes: Vec<Node>,
    pub successors: Vec<Vec<usize>>,
}

type Id = (String, Option<String>, String);

fn id_of(r: &ObjectRef) -> Id {
    (r.group_kind(), r.namespace.clone(), r.name.clone())
}

struct Builder<'a> {
    objects: Vec<&'a PlannedObject>,
    nodes: Vec<Node>,
    by_id: HashMap<Id, usize>,
}

impl<'a> Builder<'a> {
    fn new(plan: &'a Plan) -> Self {
        let mut objects = Vec::new();
        let mut nodes = Vec::new();
        for (wave, w) in plan.waves.iter().enumerate() {
            for object in &w.objects {
                nodes.push(Node { step: Step::Object(objects.len()), wave, needs: Vec::new() });
                objects.push(object);
            }
        }
        let by_id = objects.iter().enumerate().map(|(i, o)| (id_of(&o.reference), i)).collect();
        Builder { objects, nodes, by_id }
    }

    fn find(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<usize> {
        self.by_id.get(&(kind.to_string(), namespace.map(str::to_string), name.to_string())).copied()
    }

    /// `to` needs `from`; between objects only from an earlier wave.
    fn need(&mut self, to: usize, from: usize, why: Why) {
        let forward = self.nodes[from].wave < self.nodes[to].wave;
        let gate = !matches!(self.nodes[from].step, Step::Object(_));
        if from != to && (forward || gate) && !self.nodes[to].needs.iter().any(|(f, _)| *f == from) {
            self.nodes[to].needs.push((from, why));
        }
    }

    fn gate(&mut self, step: Step, wave: usize) -> usize {
        if let Some(i) = self.nodes.iter().position(|n| n.step == step) {
            self.nodes[i].wave = self.nodes[i].wave.min(wave);
            return i;
        }
        self.nodes.push(Node { step, wave, needs: Vec::new() });
        self.nodes.len() - 1
    }

    fn plural_of(&self, plan: &Plan, r: &ObjectRef) -> Vec<String> {
        match plan.crd_kinds.get(&r.group_kind()) {
            Some(crd) => vec![crd.split('.').next().unwrap_or_default().to_string()],
            None => needs::plurals_of(&r.kind),
        }
    }

    fn kinds_and_namespaces(&mut self, plan: &Plan) {
        let api_services: Vec<(String, usize)> = (0..self.objects.len())
            .filter(|&i| self.objects[i].reference.is_kind("apiregistration.k8s.io", "APIService"))
            .filter_map(|i| Some((self.objects[i].body.pointer("/spec/group")?.as_str()?.to_string(), i)))
            .collect();
        for i in 0..self.objects.len() {
            let r = self.objects[i].reference.clone();
            if let Some(ns) = self.find("Namespace", None, r.namespace.as_deref().unwrap_or("\u{0}")) {
                self.need(i, ns, Why::Namespace);
            }
            let crd = plan.crd_kinds.get(&r.group_kind()).cloned();
            let crd = crd.and_then(|name| self.find("apiextensions.k8s.io/CustomResourceDefinition", None, &name));
            if let Some(crd) = crd {
                self.need(i, crd, Why::Crd);
            }
            for (_, api) in api_services.iter().filter(|(g, _)| g == r.group()) {
                self.need(i, *api, Why::ApiService);
            }
        }
    }

    fn names(&mut self) {
        let mut produced: HashMap<Id, usize> = HashMap::new();
        let mut bindings: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (i, o) in self.objects.iter().enumerate() {
            if let Some((kind, name)) = needs::produced_by(&o.reference, &o.body) {
                produced.insert((kind.to_string(), o.reference.namespace.clone(), name), i);
            }
            for sa in needs::bound_service_accounts(&o.reference, &o.body) {
                bindings.entry(sa).or_default().push(i);
            }
        }
        for i in 0..self.objects.len() {
            let (r, body) = (self.objects[i].reference.clone(), &self.objects[i].body);
            let ns = r.namespace.clone();
            for (kind, name) in needs::named_by_pods(&r, body) {
                let id = (kind.to_string(), ns.clone(), name.clone());
                if let Some(&named) = self.by_id.get(&id) {
                    self.need(i, named, Why::Names);
                } else if let Some(&maker) = produced.get(&id) {
                    self.need(i, maker, Why::Produces);
                }
                let bound = (ns.clone().unwrap_or_default(), name);
                for &b in bindings.get(&bound).filter(|_| kind == "ServiceAccount").into_iter().flatten() {
                    self.need(i, b, Why::Binding);
                }
            }
        }
    }

    /// The Services a webhook configuration calls, each an endpoint gate needing the Service
    /// and the workloads it selects.
    fn endpoints(&mut self, config: usize) {
        let wave = self.nodes[config].wave;
        for (namespace, name) in self.objects[config].calls.clone() {
            let gate = self.gate(Step::Endpoint { namespace: namespace.clone(), name: name.clone() }, wave);
            self.need(config, gate, Why::Endpoint);
            let Some(service) = self.find("Service", Some(&namespace), &name) else { continue };
            self.need(gate, service, Why::Backs);
            let service_body = &self.objects[service].body;
            let backing: Vec<usize> = (0..self.objects.len())
                .filter(|&w| self.objects[w].reference.namespace.as_deref() == Some(namespace.as_str()))
                .filter(|&w| {
                    let o = self.objects[w];
                    needs::pod_labels(&o.reference, &o.body).is_some_and(|l| needs::selects(service_body, l))
                })
                .collect();
            for w in backing {
                self.need(gate, w, Why::Backs);
            }
        }
    }

    fn webhooks(&mut self, plan: &Plan) {
        let hook = |o: &PlannedObject| {
            matches!(order::class_of(&o.reference), Class::MutatingWebhook | Class::ValidatingWebhook)
        };
        let configs: Vec<usize> = (0..self.objects.len()).filter(|&i| hook(self.objects[i])).collect();
        let namespace_labels: HashMap<&str, &serde_json::Value> = self
            .objects
            .iter()
            .filter(|o| o.reference.is_kind("", "Namespace"))
            .map(|o| {
                (o.reference.name.as_str(), o.body.pointer("/metadata/labels").unwrap_or(&serde_json::Value::Null))
            })
            .collect();
        let plurals: Vec<Vec<String>> = self.objects.iter().map(|o| self.plural_of(plan, &o.reference)).collect();
        let mut edges = Vec::new();
        for &c in &configs {
            let validating = order::class_of(&self.objects[c].reference) == Class::ValidatingWebhook;
            for (o, object) in self.objects.iter().enumerate().filter(|(_, o)| !hook(o)) {
                let r = &object.reference;
                let admitted = needs::Admitted {
                    group: r.group(),
                    plurals: &plurals[o],
                    labels: object.body.pointer("/metadata/labels").unwrap_or(&serde_json::Value::Null),
                    pod_labels: needs::pod_template(r, &object.body)
                        .map(|t| t.pointer("/metadata/labels").unwrap_or(&serde_json::Value::Null)),
                    namespace_labels: r.namespace.as_deref().and_then(|ns| namespace_labels.get(ns).copied()),
                };
                if needs::admits(&self.objects[c].body, &admitted) {
                    edges.push(if validating { (c, o, Why::Validates) } else { (o, c, Why::Webhook) });
                }
            }
        }
        for c in configs {
            self.endpoints(c);
        }
        for (to, from, why) in edges {
            self.need(to, from, why);
        }
    }

    fn made_namespaces(&mut self, plan: &Plan) {
        let makers = InstallOrder::embedded().map(|o| o.namespace_makers.clone()).unwrap_or_default();
        for (wave, w) in plan.waves.iter().enumerate() {
            for (name, who) in &w.made_namespaces {
                let gate = self.gate(Step::MadeNamespace { name: name.clone(), who: who.clone() }, wave);
                for m in &makers {
                    let kind = crate::cluster::object::group_kind(&m.api_group, &m.kind);
                    let maker = (0..self.objects.len()).find(|&i| {
                        let r = &self.objects[i].reference;
                        r.group_kind() == kind && r.name == *name
                    });
                    if let Some(maker) = maker {
                        self.need(gate, maker, Why::MadeNamespace);
                    }
                }
            }
        }
        for i in 0..self.objects.len() {
            let ns = self.objects[i].reference.namespace.clone();
            let gate = self
                .nodes
                .iter()
                .position(|n| matches!(&n.step, Step::MadeNamespace { name, .. } if Some(name) == ns.as_ref()));
            if let Some(gate) = gate {
                self.need(i, gate, Why::MadeNamespace);
            }
        }
    }
}

impl Graph {
    /// The graph of a plan (pure): see the module's text for its edges.
    pub(crate) fn build(plan: &Plan) -> Graph {
        let mut b = Builder::new(plan);
        b.kinds_and_namespaces(plan);
        b.names();
        b.webhooks(plan);
        b.made_namespaces(plan);
        let mut successors = vec![Vec::new(); b.nodes.len()];
        for (to, node) in b.nodes.iter().enumerate() {
            for (from, _) in &node.needs {
                successors[*from].push(to);
            }
        }
        Graph { nodes: b.nodes, successors }
    }

    /// The steps in an order where each comes after what it needs (Kahn's, lowest first).
    pub(crate) fn topological(&self) -> Vec<usize> {
        let mut missing: Vec<usize> = self.nodes.iter().map(|n| n.needs.len()).collect();
        let mut ready: std::collections::BTreeSet<usize> = (0..self.nodes.len()).filter(|&n| missing[n] == 0).collect();
        let mut out = Vec::with_capacity(self.nodes.len());
        while let Some(n) = ready.pop_first() {
            out.push(n);
            for &s in &self.successors[n] {
                missing[s] -= 1;
                if missing[s] == 0 {
                    ready.insert(s);
                }
            }
        }
        out
    }

    /// Each step's height: the largest sum of `weight` over a chain from it to the end. The
    /// scheduler starts the highest first, so the long chains of waits start early and the
    /// objects no one waits for fill in beside them.
    pub(crate) fn heights(&self, weight: impl Fn(usize) -> u32) -> Vec<u32> {
        let mut height = vec![0u32; self.nodes.len()];
        for n in self.topological().into_iter().rev() {
            let below = self.successors[n].iter().map(|&s| height[s]).max().unwrap_or(0);
            height[n] = below + weight(n);
        }
        height
    }

    /// The critical path: the chain of steps, each needing the one before, whose durations
    /// (`own[n]`: from the step's start to its readiness) sum the most; with that sum.
    pub(crate) fn longest_chain(&self, own: &[Duration]) -> (Duration, Vec<usize>) {
        let mut best: Vec<(Duration, Option<usize>)> = vec![(Duration::ZERO, None); self.nodes.len()];
        for n in self.topological() {
            let before = self.nodes[n].needs.iter().map(|(p, _)| (best[*p].0, Some(*p))).max();
            let (sum, from) = before.unwrap_or((Duration::ZERO, None));
            best[n] = (sum + own.get(n).copied().unwrap_or_default(), from);
        }
        let Some(end) = (0..best.len()).max_by_key(|&n| best[n].0) else { return (Duration::ZERO, Vec::new()) };
        let mut chain = vec![end];
        while let Some(p) = best[*chain.last().unwrap_or(&end)].1 {
            chain.push(p);
        }
        chain.reverse();
        (best[end].0, chain)
    }

    /// A step as messages name it.
    pub(crate) fn describe(&self, plan_objects: &[&PlannedObject], n: usize) -> String {
        match &self.nodes[n].step {
            Step::Object(i) => plan_objects[*i].reference.to_string(),
            Step::Endpoint { namespace, name } => format!("Service {namespace}/{name} has a ready endpoint"),
            Step::MadeNamespace { name, who } => format!("namespace {name} exists ({who})"),
        }
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
