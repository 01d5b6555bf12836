#!/usr/bin/env bash
# Speed and memory benchmarks (not timed tests). Prints a Markdown table for the README.
#
#   bash tests/bench/run.sh            # all
#   RUNS=5 bash tests/bench/run.sh     # runs per measurement (median reported)
#
# Compares, on the same input (`localize-snapshot`, network-free):
#   real kustomize v5.6 (kubectl 1.33): `kustomize build example`
#   kfctl-rs build example (no cache: `build` never uses the render cache)
#   kfctl-rs template --profile multi-tenant: cold (KFCTL_NO_CACHE=1) and warm (render cache)
#   kfctl-rs chart export --profile multi-tenant, warm
#   install client CPU against the test API server (the release cluster_install benchmark)
# Wall time is the median; peak RSS comes from GNU time (%M) for each run. The ratio column
# is real kustomize's median over the row's median.
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
  local ratio="—"
  [ -n "${base:-}" ] && ratio="$(awk -v b="$base" -v t="$t" 'BEGIN {printf "%.1f×", b / (t > 0 ? t : 0.005)}')"
  echo "| $label | $n | $t s | $ratio | $(echo "$m" | awk '{for(i=1;i<=NF;i++) printf "%d%s", $i/1024, (i<NF?", ":"")}') MB |"
  last="$t"
}

kustomize_runs=$(( runs < 3 ? runs : 3 ))
echo "| what | runs | median wall time | × faster than kustomize | peak RSS per run |"
echo "|---|---|---|---|---|"
base=""
series "real kustomize v5.6 (kubectl 1.33): build example" "$kustomize_runs" "$shared/tools/kustomize-build" "$work/loc/manifests/example"
base="$last"
cp "$work/out" "$work/kustomize.yaml"
rm -rf "$KFCTL_CACHE_DIR"
series "kfctl-rs build example (no cache)" "$runs" "$bin" build "$work/loc/manifests/example"
cmp -s "$work/out" "$work/kustomize.yaml" && echo "(kfctl-rs output is byte-identical to real kustomize's)" >&2
tpl=(template --profile multi-tenant --source "$shared/kubeflow/manifests/v1.11.0" --remote-mirror "$shared/kubeflow/remote")
series "kfctl-rs template --profile multi-tenant, cold (KFCTL_NO_CACHE=1)" "$runs" env KFCTL_NO_CACHE=1 "$bin" "${tpl[@]}"
cp "$work/out" "$work/cold.yaml"
"$bin" "${tpl[@]}" >/dev/null 2>&1 # fills the render cache
series "kfctl-rs template --profile multi-tenant, warm (render cache)" "$runs" "$bin" "${tpl[@]}"
cmp -s "$work/out" "$work/cold.yaml" && echo "(warm template output is byte-identical to the cold one)" >&2
series "kfctl-rs chart export --profile multi-tenant, warm" "$runs" "$bin" chart export --force --out "$work/chart" --profile multi-tenant --source "$shared/kubeflow/manifests/v1.11.0" --remote-mirror "$shared/kubeflow/remote"
echo
if [ "${INSTALL_BENCH:-1}" = 1 ]; then
  echo "install client CPU on the test API server (cluster_install benchmark, release):"
  cargo test --release --locked --manifest-path "$root/Cargo.toml" -p kfctl-rs --test cluster_install -- --ignored benchmark --nocapture 2>&1 | grep -i -E "client|server|wall" || true
fi
echo
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%Y-%m-%d)"
