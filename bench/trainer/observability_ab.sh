#!/usr/bin/env bash
# What the straggler gather, the step-trace recorder (outside its window) and
# the batch deadline cost a step: wireup-train A/B against a build without
# them, in the way of run.sh: the two binaries interleaved, REPS runs each,
# medians. 2 ranks on this host (shared memory), the small preset, one thread,
# --logging_freq 1 (a gather every step: the most it can cost), no
# --profile_steps (every span outside a window).
# Usage: observability_ab.sh BASE_WIREUP_TRAIN NEW_WIREUP_TRAIN [REPS]
# Environment: WIREUP_BENCH_TRAINER_STEPS (timed steps, 8; one more untimed),
# WIREUP_BENCH_PORT (29790).
set -euo pipefail
base=$1 new=$2 reps=${3:-5}
steps=${WIREUP_BENCH_TRAINER_STEPS:-8}
port=${WIREUP_BENCH_PORT:-29790}
dir=$(mktemp -d /tmp/wireup-bench-obs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1
args=(--preset small --synthetic_data --num_threads 1 --train_batch_size 4 --logging_freq 1
      --max_steps $((steps + 1)) --peak_tflops 1)

run2() {  # OUT BINARY: 2 ranks; the mean step_time_s of rank 0's steps 2..
  local o=$1 bin=$2 r pids=()
  port=$((port + 1))
  for r in 1 0; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 600 "$bin" "${args[@]}" >"$o.$r" 2>&1 & pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || { cat "$o".* >&2; return 1; }; done
  sed -n 's/^\[train\] step=\([0-9]*\)\/.* step_time_s=\([0-9.]*\).*/\1 \2/p' "$o.0" |
    awk '$1 > 1 { s += $2; n++ } END { printf "%.4f\n", s / n }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

b=() n=()
for ((i = 0; i < reps; i++)); do
  b+=("$(run2 "$dir/base" "$base")")
  n+=("$(run2 "$dir/new" "$new")")
done
mb=$(median "${b[@]}") mn=$(median "${n[@]}")
echo "base step_time_s: ${b[*]} (median $mb)"
echo "new  step_time_s: ${n[*]} (median $mn)"
awk -v b="$mb" -v n="$mn" 'BEGIN { printf "new / base = %.4f (%+.2f%%), load %s\n", n / b, 100 * (n / b - 1), ARGV[1] }' \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
