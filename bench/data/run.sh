#!/usr/bin/env bash
# Loader read throughput versus a raw sequential read() of the same shards,
# interleaved in one run (see loader_bench.cpp), then wireup-train's time
# waiting for data on them (trainer_wait.sh). Usage: run.sh BUILD_DIR OUT.md [REPS]
# Env: WIREUP_BENCH_DATA_MB (default 1024) sizes the synthetic shards, made
# under WIREUP_BENCH_TMP (default /tmp) and removed afterwards.
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-7}}
bench=$build/bench/data/wireup-bench-loader
[[ -x $bench ]] || { echo "no $bench: build first" >&2; exit 1; }
dir=$(mktemp -d "${WIREUP_BENCH_TMP:-/tmp}/wireup-bench-data.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# Context 2048 (the seed sbatch, 4 KiB windows) is the verdict; 8192 (Llama 3,
# 16 KiB windows) shows how the window size moves it. Same files for both.
"$bench" --dir "$dir/shards" --mb "${WIREUP_BENCH_DATA_MB:-1024}" --reps "$reps" |
  grep -v '^ratio=' >"$out"
{
  echo
  echo "### Same files, context 8192, batch 2 (same bytes per step)"
  echo
  "$bench" --dir "$dir/shards" --reps "$reps" --context 8192 --batch 2 |
    sed -n '/^| /p;/^Loader /p;/^Cache-line/p'
  echo
  echo "### Same files, context 2048, batch 1 (not the verdict: 4 KiB batches, where the hand-over between threads weighs most; compare the loader with prefetch 0)"
  echo
  "$bench" --dir "$dir/shards" --reps "$reps" --batch 1 | sed -n '/^| /p;/^Cache-line/p'
  echo
  bash "$(dirname "$0")/trainer_wait.sh" "$build" "$dir/shards"
  echo
  echo "Machine load while it ran (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
} >>"$out"
cat "$out"
