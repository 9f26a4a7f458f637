#!/usr/bin/env bash
# fixed_runs.sh WIREUP_TRAIN WIREUP_LAUNCH OUT_DIR: short fixed runs of every family,
# full and LoRA, at world 1 and 2, each run's losses, gradient norms and validation
# losses (the metrics file's fields, %.9g: exact for fp32) in OUT_DIR/NAME.txt, and
# each family's exported config.json. Run it on two builds and `diff -r` the two
# directories: a change that should move no number (a restructuring of the model
# seam) shows none. Not a test of the suite: it compares two builds.
set -euo pipefail
train=$1 launch=$2 out=$3
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fields() {  # METRICS.JSONL: loss, grad_norm and val_loss of each line
  /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(" ".join(f"{k}={r[k]}" for k in ("step", "loss", "grad_norm", "val_loss") if k in r))' "$1"
}
run() {  # NAME WORLD FLAGS...: one run, its figures in OUT/NAME.txt
  local name=$1 world=$2
  shift 2
  "$launch" --standalone --nproc-per-node="$world" --no-prefix --local-ranks-filter=0 -- \
    "$train" --synthetic_data --num_threads 1 --max_steps 6 --train_batch_size 2 --seed 3 \
    --metrics_file "$work/$name.jsonl" "$@" >"$work/$name.log" 2>&1 ||
    { echo "fixed_runs: $name failed: $(tail -3 "$work/$name.log")" >&2; exit 1; }
  fields "$work/$name.jsonl" >"$out/$name.txt"
}
for preset in tiny qwen3-tiny qwen2.5-tiny; do
  run "$preset-w1" 1 --preset "$preset"
  run "$preset-w2" 2 --preset "$preset" --activation_checkpointing 1
  # The base for LoRA, and the family's config.json as exported.
  "$train" --preset "$preset" --synthetic_data --num_threads 1 --max_steps 1 --train_batch_size 2 \
    --checkpoint_dir "$work/$preset-ck" --checkpoint_freq 1 >/dev/null 2>&1
  "$train" export --checkpoint "$work/$preset-ck" --out "$work/$preset-hf" >/dev/null 2>&1
  cp "$work/$preset-hf/config.json" "$out/$preset-config.json"
  run "$preset-lora-w2" 2 --preset "$preset" --init_from_hf "$work/$preset-hf" --lora_rank 4 --lora_alpha 8 \
    --lr 1e-2
done
echo "fixed_runs: $(ls "$out" | wc -l) files in $out"
