#!/usr/bin/env bash
# Time wireup-train spends getting its batches (the loader plus widening to
# int64), as a share of step time: the [summary]'s data_wait_pct of rank 0,
# on 256 MB of synthetic shards with a 512-token vocabulary (the tiny
# preset's; the loader's work does not depend on it). Issue #5's target:
# below 1%. Usage: trainer_wait.sh BUILD_DIR WORK_DIR (prints markdown)
set -euo pipefail
build=$1 shards=$2/trainer-shards
train=$build/trainer/wireup-train launch=$build/launcher/wireup-launch
if [[ ! -x $train || ! -x $launch ]]; then
  echo "(no $train or $launch: the trainer section needs a build with LibTorch)"
  exit 0
fi
"$build/bench/data/wireup-bench-loader" --dir "$shards" --mb 256 --vocab 512 --make-only 1
echo "### wireup-train: time getting batches, share of step time (rank 0)"
echo
echo "| model, batch per rank | ranks | steps | mean step s | data wait s | data wait % of step time | verdict |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
# name|ranks|steps|args: bench/trainer's model, and the tiny one with many
# rows per step, where the loader's share is largest (~0.15 s steps).
for c in "small, context 256, batch 4|1|12|--preset small --train_batch_size 4" \
         "small, context 256, batch 4|2|12|--preset small --train_batch_size 4" \
         "tiny, context 256, batch 32|1|100|--preset tiny --max_context_width 256 --train_batch_size 32" \
         "tiny, context 256, batch 32|2|100|--preset tiny --max_context_width 256 --train_batch_size 32"; do
  IFS='|' read -r name ranks steps args <<<"$c"
  read -ra extra <<<"$args"
  log=$("$launch" --standalone --nproc-per-node="$ranks" --no-prefix --local-ranks-filter=0 -- \
    "$train" "${extra[@]}" --dataset "$shards" --max_steps "$steps" --num_threads 1 \
    --logging_freq 1000000 2>&1)
  summary=$(grep '^\[summary\]' <<<"$log") || { echo "| $name | $ranks | failed: $(tail -1 <<<"$log") |"; continue; }
  field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$summary"; }
  tokens=$(field tokens) tps=$(field mean_tokens_per_s) wait=$(field data_wait_s) pct=$(field data_wait_pct)
  step=$(awk -v t="$tokens" -v r="$tps" -v n="$steps" 'BEGIN { printf "%.4f", t / r / n }')
  verdict=$(awk -v p="$pct" 'BEGIN { print (p < 1 ? "PASS (< 1%)" : "FAIL (>= 1%)") }')
  echo "| $name | $ranks | $steps | $step | $wait | **$pct** | $verdict |"
done
