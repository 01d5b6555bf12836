#!/usr/bin/env bash
# Writes a kustomization of N generated objects, for the engine's scaling benchmark
# (tests/bench/run.sh, "N objects"). Not a test fixture: the folder is made at run time.
#
#   bash tests/bench/gen-objects.sh configmaps N DIR
#   bash tests/bench/gen-objects.sh deployments N DIR
#
# configmaps: DIR/kustomization.yaml with `namePrefix` and one resource file of N ConfigMaps.
#
# deployments: N objects in two levels. DIR/base has N/2 Deployments, N/4 ConfigMaps in a
# file and N/4 from a `configMapGenerator` (hash suffixes); Deployment i names ConfigMap
# `cm-(i mod N/4)` in `envFrom` and generated `gen-(i mod N/4)` in a volume. DIR (the
# overlay) sets `namespace`, `namePrefix`, `nameSuffix` and labels, so every reference is
# rewritten by the name-reference fix-up, and patches the Deployments: one strategic merge
# patch targeted at all of them, a strategic merge patch by id (a multi-document file, no
# target) for every 8th, and a JSON 6902 patch targeted by name for every 16th.
set -euo pipefail
mode="${1:?configmaps|deployments}"; n="${2:?N}"; dir="${3:?DIR}"
mkdir -p "$dir"

configmaps() { # count prefix file: plain ConfigMaps
  awk -v n="$1" -v p="$2" 'BEGIN {
    for (i = 0; i < n; i++) {
      printf "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s%d\n  labels:\n    app: bench\ndata:\n  key: value-%d\n  index: \"%d\"\n", p, i, i, i
    }
  }' >"$3"
}

if [ "$mode" = configmaps ]; then
  configmaps "$n" cm- "$dir/configmaps.yaml"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: p-\nresources:\n- configmaps.yaml\n' \
    >"$dir/kustomization.yaml"
  exit 0
fi
[ "$mode" = deployments ] || { echo "unknown mode $mode" >&2; exit 2; }

[ "$n" -ge 4 ] || { echo "deployments needs N of at least 4" >&2; exit 2; }
d=$((n / 2)); c=$((n / 4)); g=$((n - d - c))
mkdir -p "$dir/base"
configmaps "$c" cm- "$dir/base/configmaps.yaml"
awk -v d="$d" -v c="$c" -v g="$g" 'BEGIN {
  for (i = 0; i < d; i++) {
    printf "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dep-%d\nspec:\n  selector:\n    matchLabels:\n      app: dep-%d\n", i, i
    printf "  template:\n    metadata:\n      labels:\n        app: dep-%d\n    spec:\n      containers:\n      - name: main\n        image: busybox:1.36\n", i
    printf "        envFrom:\n        - configMapRef:\n            name: cm-%d\n        volumeMounts:\n        - name: config\n          mountPath: /etc/config\n", i % c
    printf "      volumes:\n      - name: config\n        configMap:\n          name: gen-%d\n", i % g
  }
}' >"$dir/base/deployments.yaml"
{
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- configmaps.yaml\n- deployments.yaml\nconfigMapGenerator:\n'
  awk -v g="$g" 'BEGIN { for (i = 0; i < g; i++) printf "- name: gen-%d\n  literals:\n  - setting=%d\n", i, i }'
} >"$dir/base/kustomization.yaml"
awk -v d="$d" 'BEGIN {
  for (i = 0; i < d; i += 8) {
    printf "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dep-%d\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: main\n        env:\n        - name: ORDINAL\n          value: \"%d\"\n", i, i
  }
}' >"$dir/by-id.yaml"
cat >"$dir/all.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: any
spec:
  template:
    metadata:
      annotations:
        bench/patched: "true"
EOF
{
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: bench\nnamePrefix: p-\nnameSuffix: -s\n'
  printf 'labels:\n- pairs:\n    tier: bench\nresources:\n- base\npatches:\n- path: all.yaml\n  target:\n    kind: Deployment\n- path: by-id.yaml\n'
  awk -v d="$d" 'BEGIN {
    for (i = 0; i < d; i += 16)
      printf "- target:\n    kind: Deployment\n    name: dep-%d\n  patch: |-\n    - op: add\n      path: /metadata/annotations\n      value: {bench/json: \"%d\"}\n", i, i
  }'
} >"$dir/kustomization.yaml"
