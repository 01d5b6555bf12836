#!/usr/bin/env bash
# Speed and memory benchmarks (not timed tests). Prints a Markdown table for the README.
#
#   bash tests/bench/run.sh            # all
#   RUNS=5 bash tests/bench/run.sh     # runs per measurement (median reported)
#
# Compares, on the same input (`localize-snapshot`, network-free):
#   real kustomize v5.6 (kubectl 1.33): `kustomize build example`
#   kfctl-rs build example (first run on an empty kfctl-rs cache, then repeated runs)
#   kfctl-rs template --profile multi-tenant (warm cache)
# Wall time is the median; peak RSS comes from GNU time (%M) for each run.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
shared="${KFCTL_SHARED_DIR:-$root/../shared}"
runs="${RUNS:-5}"
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --locked --manifest-path "$root/Cargo.toml" >&2
bin="$target/release/kfctl-rs"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
"$shared/tools/localize-snapshot" v1.11.0 "$work/loc" >/dev/null
export KFCTL_CACHE_DIR="$work/cache"

measure() { # label cmd...: one run; prints "seconds kilobytes"
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>/dev/null
  cat "$work/time"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
series() { # label n cmd...
  local label="$1" n="$2"; shift 2
  : >"$work/series"
  for _ in $(seq "$n"); do measure "$@" >>"$work/series"; done
  local t m
  t=$(cut -d' ' -f1 "$work/series" | median)
  m=$(cut -d' ' -f2 "$work/series" | tr '\n' ' ')
  echo "| $label | $n | $t s | $(echo "$m" | awk '{for(i=1;i<=NF;i++) printf "%d%s", $i/1024, (i<NF?", ":"")}') MB |"
}

kustomize_runs=$(( runs < 3 ? runs : 3 ))
echo "| what | runs | median wall time | peak RSS per run |"
echo "|---|---|---|---|"
series "real kustomize v5.6 (kubectl 1.33): build example" "$kustomize_runs" "$shared/tools/kustomize-build" "$work/loc/manifests/example"
cp "$work/out" "$work/kustomize.yaml"
rm -rf "$KFCTL_CACHE_DIR"
series "kfctl-rs build example, first run (empty cache)" 1 "$bin" build "$work/loc/manifests/example"
series "kfctl-rs build example, repeated" "$runs" "$bin" build "$work/loc/manifests/example"
cmp -s "$work/out" "$work/kustomize.yaml" && echo "(kfctl-rs output is byte-identical to real kustomize's)" >&2
series "kfctl-rs template --profile multi-tenant (warm cache)" "$runs" "$bin" template --profile multi-tenant --source "$shared/kubeflow/manifests/v1.11.0" --remote-mirror "$shared/kubeflow/remote"
echo
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%Y-%m-%d)"
