#!/usr/bin/env bash
# --init_from_hf without --preset takes the model's shape from config.json: no
# shape flag to repeat; a shape flag that agrees is accepted, one that disagrees
# is refused naming both values; --preset with it keeps the old rule (the
# preset's shape must match the file); a missing directory or config.json is
# named. The run from config.json's shape starts from the file's weights: its
# step-1 loss equals the one with the shape given in full.
source "$(dirname "$0")/lib.sh"
run=(--synthetic_data --num_threads 1 --train_batch_size 2 --max_steps 1 --max_context_width 64)

# A tiny Llama with a rope_theta and tied embeddings no preset has, exported.
train 1 --preset tiny "${run[@]}" --rope_theta 50000 --tie_word_embeddings 1 \
  --checkpoint_freq 1 --checkpoint_dir "$WORK/ck" >/dev/null
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/hf" >/dev/null

out=$(train 1 "${run[@]}" --init_from_hf "$WORK/hf" --metrics_file "$WORK/a.jsonl")
grep -q '^\[config\] preset=init_from_hf .* layers=2 hidden=64 heads=4 kv_heads=2 intermediate=176 vocab=512 context=64 ' <<<"$out" &&
  pass "no shape flag: the shape is config.json's" || fail "no [config] line with config.json's shape: $out"
train 1 --preset tiny "${run[@]}" --rope_theta 50000 --tie_word_embeddings 1 \
  --init_from_hf "$WORK/hf" --metrics_file "$WORK/b.jsonl" >/dev/null
a=$(metric "$WORK/a.jsonl" train 1 loss) b=$(metric "$WORK/b.jsonl" train 1 loss)
[[ -n $a && $a == "$b" ]] && pass "its step-1 loss equals the fully specified run's ($a)" ||
  fail "step-1 loss $a from config.json's shape, $b given in full"

out=$(train 1 "${run[@]}" --init_from_hf "$WORK/hf" --hidden_width 64 --num_layers 2 --rope_theta 50000)
grep -q '^\[train\] step=1/1 ' <<<"$out" && pass "agreeing shape flags are accepted" ||
  fail "agreeing flags: $out"

init() { "$WIREUP_TRAIN" "${run[@]}" --init_from_hf "$@"; }
expect_error "a disagreeing flag names both values" "hidden_size=64 but --hidden_width 128" \
  init "$WORK/hf" --hidden_width 128
expect_error "a disagreeing rope_theta names both values" "rope_theta=50000 but --rope_theta 10000" \
  init "$WORK/hf" --rope_theta 10000
expect_error "with --preset the preset's shape must match" "rope_theta=50000 but --rope_theta 10000" \
  init "$WORK/hf" --preset tiny --tie_word_embeddings 1
expect_error "a missing directory is named" "--init_from_hf $WORK/none: no such directory" \
  init "$WORK/none"
mkdir "$WORK/empty"
expect_error "a missing config.json is named" "$WORK/empty/config.json" init "$WORK/empty"
finish
