#!/usr/bin/env bash
# Checkpoint save throughput against a raw sequential write (dd, fsync) of the
# same size to the same file system, and the training stall of async saves,
# interleaved in one run; then memory snapshots against durable checkpoints
# (memory_bench.sh: recovery time, per-step cost; WIREUP_BENCH_MEMORY_REPS, 2).
# Usage: run.sh BUILD_DIR OUT.md [REPS]
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
train=$build/trainer/wireup-train
[[ -x $train ]] || { echo "no $train: build first" >&2; exit 1; }
dir=$(mktemp -d "${WIREUP_BENCH_DIR:-/tmp}/wireup-bench-ckpt.XXXXXX")
trap 'rm -rf "$dir"' EXIT
model=(--preset small --synthetic_data --num_threads 2 --train_batch_size 1)

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

save_mbs=() dd_mbs=() sync_s=() stall_s=()
for ((i = 0; i < reps; i++)); do
  rm -rf "$dir/s" "$dir/a" "$dir/dd"
  log=$("$train" "${model[@]}" --max_steps 1 --checkpoint_dir "$dir/s")
  bytes=$(grep '^\[checkpoint\]' <<<"$log" | field bytes)
  secs=$(grep '^\[checkpoint\]' <<<"$log" | field save_s)
  save_mbs+=("$(awk -v b="$bytes" -v s="$secs" 'BEGIN {printf "%.1f", b / s / 1e6}')")
  sync_s+=("$secs")
  t0=$(date +%s%N)
  dd if=/dev/zero of="$dir/dd" bs=1M count="$((bytes / 1048576))" conv=fsync status=none
  t1=$(date +%s%N)
  dd_mbs+=("$(awk -v b="$((bytes / 1048576 * 1048576))" -v ns="$((t1 - t0))" 'BEGIN {printf "%.1f", b / (ns / 1e9) / 1e6}')")
  # async: saves 4 steps apart; the last step's save is synchronous-like
  # (the run waits for it to exit), so it counts against async too
  log=$("$train" "${model[@]}" --max_steps 9 --checkpoint_dir "$dir/a" --checkpoint_freq 4 \
    --async_checkpointing 1 --keep_checkpoints 1)
  # training time lost per save: the summary's total over its saves
  n=$(grep '^\[summary\]' <<<"$log" | field checkpoint_saves)
  lost=$(grep '^\[summary\]' <<<"$log" | field checkpoint_stall_s)
  stall_s+=("$(awk -v l="$lost" -v n="$n" 'BEGIN {printf "%.4f", l / n}')")
done
ms=$(median "${save_mbs[@]}") md=$(median "${dd_mbs[@]}")
msync=$(median "${sync_s[@]}") mstall=$(median "${stall_s[@]}")
r1=$(awk -v a="$ms" -v b="$md" 'BEGIN {printf "%.2f", a / b}')
r2=$(awk -v a="$mstall" -v b="$msync" 'BEGIN {printf "%.3f", a / b}')
v1=$(awk -v r="$r1" 'BEGIN {print (r >= 0.70) ? "PASS (>= 0.70)" : "FAIL (< 0.70)"}')
v2=$(awk -v r="$r2" 'BEGIN {print (r <= 0.10) ? "PASS (<= 0.10)" : "FAIL (> 0.10)"}')
{
  echo "## checkpoint: save throughput and async stall"
  echo
  echo "Model \`small\` (19.8M parameters; $bytes bytes of fp32 parameters + AdamW moments per save),"
  echo "one rank, $reps interleaved repetitions, files in $(df -P "$dir" | awk 'NR==2 {print $1}')."
  echo
  echo "| figure | median |"
  echo "| --- | --- |"
  echo "| synchronous save (write + SHA-256 + fsync + commit), MB/s | $ms |"
  echo "| dd bs=1M conv=fsync of the same size, MB/s | $md |"
  echo "| synchronous save time, s | $msync |"
  echo "| async save: training stall per save, s | $mstall |"
  echo
  echo "- Save throughput / raw write: **$r1** — $v1"
  echo "- Async stall / synchronous save time: **$r2** — $v2"
} >"$out"
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/memory_bench.sh" "$build" "$dir/memory.md" "${WIREUP_BENCH_MEMORY_REPS:-2}" >/dev/null
{ echo; cat "$dir/memory.md"; } >>"$out"
cat "$out"
