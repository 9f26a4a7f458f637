#!/usr/bin/env bash
# What the straggler gather, the step-trace recorder (outside its window) and
# the batch deadline cost a step: wireup-train A/B against a build without
# them, in the way of run.sh: the two binaries interleaved, REPS runs each,
# medians. On the CPU (the default): 2 ranks on this host (shared memory), the
# small preset, one thread; on CUDA: one rank on GPU 0, bf16. --logging_freq 1
# (a gather every step: the most it can cost); no --profile_steps unless
# WIREUP_BENCH_NEW_ARGS gives NEW one (then BASE and NEW may be the same
# binary: what a window costs).
# Usage: observability_ab.sh BASE_WIREUP_TRAIN NEW_WIREUP_TRAIN [REPS]
# Environment: WIREUP_BENCH_TRAINER_STEPS (timed steps, 8; one more untimed),
# WIREUP_BENCH_PORT (29790), WIREUP_BENCH_DEVICE (cpu or cuda; cpu),
# WIREUP_BENCH_NEW_ARGS (more flags for NEW only, split at spaces).
set -euo pipefail
base=$1 new=$2 reps=${3:-5}
steps=${WIREUP_BENCH_TRAINER_STEPS:-8}
port=${WIREUP_BENCH_PORT:-29790}
device=${WIREUP_BENCH_DEVICE:-cpu}
read -r -a new_args <<<"${WIREUP_BENCH_NEW_ARGS:-}"
dir=$(mktemp -d /tmp/wireup-bench-obs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1
args=(--preset small --synthetic_data --num_threads 1 --train_batch_size 4 --logging_freq 1
      --max_steps $((steps + 1)) --peak_tflops 1)
case $device in
  cpu) ranks=2 ;;
  cuda) ranks=1 args+=(--device cuda --bf16 1) ;;  # NCCL takes one GPU per rank
  *) echo "observability_ab.sh: WIREUP_BENCH_DEVICE=$device: expected cpu or cuda" >&2; exit 2 ;;
esac

# run OUT BINARY [FLAGS...]: the ranks; rank 0's mean step_time_s of steps 2.. and its
# [summary] wall_s (every step, and what runs between them).
run() {
  local o=$1 bin=$2 r pids=()
  shift 2
  port=$((port + 1))
  for ((r = ranks - 1; r >= 0; r--)); do
    RANK=$r WORLD_SIZE=$ranks LOCAL_RANK=$r LOCAL_WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$port timeout 600 "$bin" "${args[@]}" "$@" >"$o.$r" 2>&1 & pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || { cat "$o".* >&2; return 1; }; done
  sed -n 's/^\[train\] step=\([0-9]*\)\/.* step_time_s=\([0-9.]*\).*/\1 \2/p' "$o.0" |
    awk '$1 > 1 { s += $2; n++ } END { printf "%.4f ", s / n }'
  sed -n 's/^\[summary\].* wall_s=\([0-9.]*\) .*/\1/p' "$o.0"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

b=() n=() bw=() nw=()
for ((i = 0; i < reps; i++)); do
  read -r t w < <(run "$dir/base" "$base")
  b+=("$t") bw+=("$w")
  read -r t w < <(run "$dir/new" "$new" "${new_args[@]}")
  n+=("$t") nw+=("$w")
done
mb=$(median "${b[@]}") mn=$(median "${n[@]}")
echo "device $device, NEW's extra flags: ${new_args[*]:-none}"
echo "base step_time_s: ${b[*]} (median $mb); wall_s: ${bw[*]} (median $(median "${bw[@]}"))"
echo "new  step_time_s: ${n[*]} (median $mn); wall_s: ${nw[*]} (median $(median "${nw[@]}"))"
awk -v b="$mb" -v n="$mn" 'BEGIN { printf "new / base = %.4f (%+.2f%%), load %s\n", n / b, 100 * (n / b - 1), ARGV[1] }' \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
