#!/usr/bin/env python3
"""Generate openapi_table.rs, the strategic-merge schema table, from kustomize's OpenAPI bundle.

kustomize (kyaml) decides strategic-merge behaviour from the Kubernetes OpenAPI data it embeds:
which kinds are built in (and have a schema), which are cluster-scoped, and for every list field
its `x-kubernetes-patch-strategy` and merge keys (`x-kubernetes-list-map-keys` when present, else
`x-kubernetes-patch-merge-key`, as kyaml's PatchStrategyAndKeyList reads them). This script reads
that bundle at generation time and writes a compact Rust table holding only what merging needs:

* RESOURCES: (apiVersion, kind) -> definition index (or none) and scope, sorted for binary search;
* DEFINITIONS: for each definition reachable from a resource, its non-scalar properties (sorted)
  with the schema of each: another definition, a list (strategy, keys, element schema), a map of
  values (additionalProperties), or an opaque leaf object. Scalar-typed properties are left out:
  merging treats their values the same whether or not a schema is known.

Usage (Python 3 standard library only):

    python3 crates/kfctl-kustomize/src/merge/generate_table.py \
        ../shared/kubeflow/kustomize-openapi/kubernetes-openapi-union-v1.21.2.bundle-v1.json \
        > crates/kfctl-kustomize/src/merge/openapi_table.rs
"""

import json
import re
import sys

SCALAR_TYPES = {"string", "integer", "number", "boolean"}
REF_PREFIX = "#/definitions/"


def ref_name(schema):
    ref = schema.get("$ref")
    if ref is None:
        return None
    if not ref.startswith(REF_PREFIX):
        raise SystemExit(f"unsupported $ref {ref!r}")
    return ref[len(REF_PREFIX):]


class Generator:
    def __init__(self, bundle):
        self.defs = bundle["definitions"]
        self.resources = bundle["resources"]
        self.index = {}  # definition name -> table index (object definitions only)
        self.order = []
        self.matters_memo = {}

    def definition_kind(self, name):
        """'object' for a definition with properties, 'map' for additionalProperties only,
        'scalar' for a scalar type, 'leaf' for an opaque object."""
        d = self.defs[name]
        if d.get("properties"):
            return "object"
        if isinstance(d.get("additionalProperties"), dict):
            return "map"
        if d.get("type") in SCALAR_TYPES:
            return "scalar"
        return "leaf"

    def def_ref(self, name):
        if name not in self.index:
            self.index[name] = len(self.order)
            self.order.append(name)
        return f"Schema::Def({self.index[name]})"

    def schema_expr(self, schema):
        """Rust expression for a (property, item or value) schema, or None for a scalar."""
        name = ref_name(schema)
        if name is not None:
            kind = self.definition_kind(name)
            if kind == "object":
                return self.def_ref(name)
            if kind == "map":
                return self.schema_expr(self.defs[name])
            if kind == "scalar":
                return None
            return "Schema::Leaf"
        typ = schema.get("type")
        if typ == "array":
            return self.list_expr(schema)
        if isinstance(schema.get("additionalProperties"), dict):
            inner = self.schema_expr(schema["additionalProperties"]) or "Schema::Leaf"
            return f"Schema::Map(&{inner})"
        if typ in SCALAR_TYPES:
            return None
        return "Schema::Leaf"

    def list_expr(self, schema):
        strategy = schema.get("x-kubernetes-patch-strategy", "")
        keys = []
        if strategy:
            if "x-kubernetes-list-map-keys" in schema:
                keys = list(schema["x-kubernetes-list-map-keys"])
            elif "x-kubernetes-patch-merge-key" in schema:
                keys = [schema["x-kubernetes-patch-merge-key"]]
        items = schema.get("items")
        if isinstance(items, dict):
            inner = self.schema_expr(items) or "Schema::Leaf"
            items_expr = f"Some(&{inner})"
        else:
            items_expr = "None"
        keys_expr = "&[" + ", ".join(json.dumps(k) for k in keys) + "]"
        return (f"Schema::List {{ strategy: {json.dumps(strategy)}, keys: {keys_expr}, "
                f"items: {items_expr} }}")

    def resource_rows(self):
        rows = []
        for r in self.resources:
            scope = {"Namespaced": "Scope::Namespaced", "Cluster": "Scope::Cluster"}.get(
                r.get("scope"), "Scope::Unknown")
            definition = r.get("definition")
            if definition is None:
                schema = "None"
            else:
                kind = self.definition_kind(definition)
                schema = f"Some({self.def_ref(definition)})" if kind == "object" else "Some(Schema::Leaf)"
            rows.append((r["apiVersion"], r["kind"], schema, scope))
        rows.sort(key=lambda row: (row[0], row[1]))
        return rows

    def definition_body(self, name):
        props = self.defs[name].get("properties", {})
        entries = []
        for prop in sorted(props):
            if not self.matters(props[prop], set()):
                continue
            expr = self.schema_expr(props[prop])
            if expr is not None:
                entries.append(f"({json.dumps(prop)}, {expr})")
        return entries

    def matters(self, schema, visiting):
        """Whether a property's schema can change how a patch merges: it leads to a list with a
        merge strategy, or to an opaque object (whose known-but-empty schema stops kyaml from
        looking up a schema by the value's own apiVersion and kind)."""
        name = ref_name(schema)
        if name is not None:
            if name in self.matters_memo:
                return self.matters_memo[name]
            if name in visiting:
                return False
            kind = self.definition_kind(name)
            if kind == "scalar":
                result = False
            elif kind == "leaf":
                result = True
            else:
                d = self.defs[name]
                parts = list(d.get("properties", {}).values())
                if isinstance(d.get("additionalProperties"), dict):
                    parts.append(d["additionalProperties"])
                result = any(self.matters(p, visiting | {name}) for p in parts)
            if not visiting:
                self.matters_memo[name] = result
            return result
        typ = schema.get("type")
        if typ == "array":
            if "merge" in schema.get("x-kubernetes-patch-strategy", "").split(","):
                return True
            items = schema.get("items")
            return isinstance(items, dict) and self.matters(items, visiting)
        if isinstance(schema.get("additionalProperties"), dict):
            return self.matters(schema["additionalProperties"], visiting)
        return typ not in SCALAR_TYPES

    def render(self):
        rows = self.resource_rows()
        bodies = []
        i = 0
        while i < len(self.order):  # definitions are discovered while rendering
            bodies.append((self.order[i], self.definition_body(self.order[i])))
            i += 1
        rows, bodies = dedupe(rows, bodies)
        out = [
            "// @generated by crates/kfctl-kustomize/src/merge/generate_table.py from kustomize's embedded",
            "// Kubernetes OpenAPI data (kubernetes-openapi-union-v1.21.2.bundle-v1.json). Do not edit.",
            "// Regenerate from the project root with:",
            "//   python3 crates/kfctl-kustomize/src/merge/generate_table.py \\",
            "//     ../shared/kubeflow/kustomize-openapi/kubernetes-openapi-union-v1.21.2.bundle-v1.json \\",
            "//     > crates/kfctl-kustomize/src/merge/openapi_table.rs",
            "",
            "use super::schema_types::{Resource, Schema, Scope};",
            "",
            "/// Built-in kinds, sorted by (apiVersion, kind).",
            "pub(super) static RESOURCES: &[Resource] = &[",
        ]
        for api_version, kind, schema, scope in rows:
            out.append(f"    Resource {{ api_version: {json.dumps(api_version)}, kind: {json.dumps(kind)}, "
                       f"schema: {schema}, scope: {scope} }},")
        out.append("];")
        out.append("")
        out.append("/// Non-scalar properties of each object definition, sorted by name.")
        out.append("pub(super) static DEFINITIONS: &[&[(&str, Schema)]] = &[")
        for index, (name, entries) in enumerate(bodies):
            out.append(f"    // {index}: {name}"[:118])
            if not entries:
                out.append("    &[],")
                continue
            out.append("    &[")
            for entry in entries:
                out.append(f"        {entry},")
            out.append("    ],")
        out.append("];")
        return "\n".join(out) + "\n"


DEF_REF = re.compile(r"Schema::Def\((\d+)\)")


def dedupe(rows, bodies):
    """Merge definitions whose bodies are the same once their references are (e.g. the same
    type in two API versions), until nothing changes, and renumber the survivors."""
    canon = list(range(len(bodies)))
    while True:
        seen, changed = {}, False
        for i, (_, entries) in enumerate(bodies):
            key = tuple(DEF_REF.sub(lambda m: f"Schema::Def({canon[int(m.group(1))]})", e) for e in entries)
            first = seen.setdefault(key, canon[i])
            if first != canon[i]:
                canon[i], changed = first, True
        if not changed:
            break
    keep = sorted(set(canon))
    renumber = {old: new for new, old in enumerate(keep)}
    fix = lambda text: DEF_REF.sub(lambda m: f"Schema::Def({renumber[canon[int(m.group(1))]]})", text)
    names = {}
    for i, (name, _) in enumerate(bodies):
        names.setdefault(canon[i], []).append(name)
    new_bodies = [(", ".join(names[old]), [fix(e) for e in bodies[old][1]]) for old in keep]
    new_rows = [(api_version, kind, fix(schema), scope) for api_version, kind, schema, scope in rows]
    return new_rows, new_bodies


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: generate_table.py BUNDLE.json > openapi_table.rs")
    with open(sys.argv[1], encoding="utf-8") as f:
        bundle = json.load(f)
    if bundle.get("formatVersion") != 1:
        raise SystemExit("unsupported bundle formatVersion")
    sys.stdout.write(Generator(bundle).render())


if __name__ == "__main__":
    main()
