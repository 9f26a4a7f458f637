#!/usr/bin/env bash
# Added latency of spank_wireup per step: `srun -N2 -n8 true` with the plugin
# loaded and --wireup, versus no plugin at all, interleaved on one local
# cluster. Usage: run.sh BUILD_DIR OUT.md [REPS]
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-25}}
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$root/tests/cluster/cluster.sh
plugin=$build/spank-plugin/spank_wireup.so
[[ -f $plugin ]] || { echo "no $plugin: build first" >&2; exit 1; }
dir=$(mktemp -d /tmp/wireup-bench-spank.XXXXXX)
export WIREUP_CLUSTER_NODES=2 WIREUP_CLUSTER_PORT=${WIREUP_BENCH_PORT:-27910}
bash "$cluster" start "$dir" >/dev/null
trap 'bash "$cluster" stop "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
eval "$(bash "$cluster" env "$dir")"

ms() { date +%s%N; }
one() {  # prints milliseconds of one srun
  local t0 t1
  t0=$(ms); "$@" >/dev/null; t1=$(ms)
  echo $(((t1 - t0) / 1000000))
}
# Each srun is timed as a whole, from outside. Between runs the nodes must be
# idle again, or the next srun would also time the previous job's cleanup.
idle() {
  for _ in $(seq 100); do
    [[ $(squeue -h | wc -l) == 0 && $(sinfo -h -o %t | sort -u) == idle ]] && return
    sleep 0.05
  done
}
with=() without=()
bash "$cluster" plugstack "$dir"; one srun -N2 -n8 true >/dev/null   # warm up
for ((i = 0; i < reps; i++)); do
  bash "$cluster" plugstack "$dir"
  idle; without+=("$(one srun -N2 -n8 true)")
  bash "$cluster" plugstack "$dir" "optional $plugin default=off"
  idle; with+=("$(one srun -N2 -n8 --wireup true)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mw=$(median "${with[@]}") mo=$(median "${without[@]}")
ratio=$(awk -v a="$mw" -v b="$mo" 'BEGIN {printf "%.3f", a/b}')
verdict=$(awk -v r="$ratio" 'BEGIN {print (r <= 1.05) ? "PASS (<= 1.05)" : "FAIL (> 1.05)"}')
{
  echo "## spank: added latency per step"
  echo
  echo "\`srun -N2 -n8 true\` on a 2-node local cluster, $reps interleaved repetitions each."
  echo
  echo "| variant | median ms | min | max |"
  echo "| --- | --- | --- | --- |"
  echo "| no plugin | $mo | $(printf '%s\n' "${without[@]}" | sort -n | head -1) | $(printf '%s\n' "${without[@]}" | sort -n | tail -1) |"
  echo "| spank_wireup + --wireup | $mw | $(printf '%s\n' "${with[@]}" | sort -n | head -1) | $(printf '%s\n' "${with[@]}" | sort -n | tail -1) |"
  echo
  echo "Ratio of medians (with / without): **$ratio** — $verdict"
} >"$out"
cat "$out"
