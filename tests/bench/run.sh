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
#   kfctl-rs chart export --profile multi-tenant: once on an empty render cache, once after a
#   `template` filled it (both build the peer variants into the render cache), then warm:
#   again over the earlier export (--force, which links the files that did not change) and
#   into a new folder each run
#   install client CPU against the test API server (the release cluster_install benchmark)
#   kind's install by waves (before) and by the dependency graph (after) on the test API server
#   with CRDs Established after GRAPH_CRD_DELAY (2) s and workloads ready after
#   GRAPH_READY_DELAY (3) s: wall times and the critical path (cluster_graph benchmark)
#   the N-objects curve: `kfctl-rs build` of N generated objects (tests/bench/gen-objects.sh:
#   ConfigMaps; Deployments with patches and name references), N = 1k, 4k, 16k, 64k, real
#   kustomize beside it up to KUSTOMIZE_MAX_N (1,000 by default: it is super-linear, minutes
#   beyond), with its output compared byte for byte
# Wall time is the median (bash's $EPOCHREALTIME around each run, to the millisecond); peak RSS
# comes from GNU time (%M) for each run. The ratio column
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

measure() { # cmd...: one run; prints "seconds kilobytes" (wall time to the millisecond: GNU
  # time's %e has 10 ms steps, as much as a small build takes)
  local start="$EPOCHREALTIME"
  /usr/bin/time -f "%M" -o "$work/time" "$@" >"$work/out" 2>/dev/null
  awk -v a="$start" -v b="$EPOCHREALTIME" -v m="$(cat "$work/time")" 'BEGIN {printf "%.3f %d\n", b - a, m}'
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
export_args=(--profile multi-tenant --source "$shared/kubeflow/manifests/v1.11.0" --remote-mirror "$shared/kubeflow/remote")
# the first export builds the peer variants (profile builds with components left out) and
# fills the render cache with them: measured once, then the warm rows
series "kfctl-rs chart export --profile multi-tenant, first (builds the peer variants)" 1 "$bin" chart export --out "$work/chart" "${export_args[@]}"
series "kfctl-rs chart export --profile multi-tenant, warm, again over the earlier export (--force)" "$runs" "$bin" chart export --force --out "$work/chart" "${export_args[@]}"
# each run into a folder of its own: every file is created (no earlier export to link from)
series "kfctl-rs chart export --profile multi-tenant, warm, into a new folder" "$runs" \
  sh -c 'bin="$1" dir="$2"; shift 2; exec "$bin" chart export --out "$(mktemp -u -p "$dir" new-XXXXXX)" "$@"' \
  sh "$bin" "$work" "${export_args[@]}"
# a user's very first export: nothing cached, it builds the profile and each peer variant and
# stores them (last: removing the cache frees inodes, which slows making files for a while)
rm -rf "$KFCTL_CACHE_DIR"
series "kfctl-rs chart export --profile multi-tenant, first, empty render cache" 1 "$bin" chart export --out "$work/chart-empty" "${export_args[@]}"
echo
if [ "${INSTALL_BENCH:-1}" = 1 ]; then
  echo "install client CPU on the test API server (cluster_install benchmark, release):"
  cargo test --release --locked --manifest-path "$root/Cargo.toml" -p kfctl-rs --test tests -- --ignored cluster_install::benchmark --nocapture 2>&1 | grep -i -E "client|server|wall" || true
fi
echo
if [ "${GRAPH_BENCH:-1}" = 1 ]; then
  # the debug build the test suite runs: the install waits on the test server's delays, and
  # the figures in tests/bench/README.md were measured with it
  echo "kind's install by waves and by the dependency graph on the test API server (cluster_graph benchmark):"
  KFCTL_BENCH_CRD_DELAY="${GRAPH_CRD_DELAY:-2}" KFCTL_BENCH_READY_DELAY="${GRAPH_READY_DELAY:-3}" \
    cargo test --locked --manifest-path "$root/Cargo.toml" -p kfctl-rs --test tests -- --ignored cluster_graph::benchmark --nocapture 2>&1 \
    | grep -E "^kind's|^by waves|^by the graph" || true
fi
echo
if [ "${CURVE_BENCH:-1}" = 1 ]; then
  sizes="${CURVE_SIZES:-1000 4000 16000 64000}"
  kmax="${KUSTOMIZE_MAX_N:-1000}"
  echo "| objects | kind | runs | kfctl-rs median wall time | per 1,000 objects | × time(1,000) | real kustomize | peak RSS |"
  echo "|---|---|---|---|---|---|---|---|"
  for mode in configmaps deployments; do
    first=""
    for n in $sizes; do
      bash "$root/tests/bench/gen-objects.sh" "$mode" "$n" "$work/$mode-$n"
      : >"$work/series"
      for _ in $(seq "$runs"); do measure "$bin" build "$work/$mode-$n" >>"$work/series"; done
      t=$(cut -d' ' -f1 "$work/series" | median)
      m=$(cut -d' ' -f2 "$work/series" | sort -n | tail -1)
      [ -n "$first" ] || first="$t"
      cp "$work/out" "$work/engine.yaml"
      k="—"
      if [ "$n" -le "$kmax" ]; then
        k="$(measure "$shared/tools/kustomize-build" "$work/$mode-$n" | cut -d' ' -f1) s"
        if cmp -s "$work/out" "$work/engine.yaml"; then k="$k, identical"; else k="$k, OUTPUT DIFFERS"; fi
      fi
      echo "| $n | $mode | $runs | $t s | $(awk -v t="$t" -v n="$n" 'BEGIN {printf "%.3f s", t * 1000 / n}') | $(awk -v t="$t" -v f="$first" 'BEGIN {printf "%.1f×", t / (f > 0 ? f : 0.005)}') | $k | $((m / 1024)) MB |"
      rm -rf "$work/$mode-$n"
    done
  done
  echo
  echo "(linear would be × 64 at 64,000 objects; the target is at most 1.3 × 64 = 83×)"
  echo
fi
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%Y-%m-%d)"
