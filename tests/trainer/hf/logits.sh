#!/usr/bin/env bash
# wireup's Llama and a Hugging Face Llama (hf_llama.py: transformers' forward
# in plain PyTorch, rotate-half RoPE) compute the same loss from the same
# weights on the same tokens: after export, and on HF checkpoints imported
# with --init_from_hf (F32 and BF16). The loss is the mean cross-entropy of
# every logit row, so it checks the logits; a model with sharp attention
# shows that a wrong rotary layout would be caught.
source "$(dirname "$0")/lib.sh"
need_torch
hf() { "$TORCH_PY" "$HERE/hf_llama.py" "$@"; }
common=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 4)
frozen=(--max_steps 1 --lr 1e-30 --min_lr 0)
tol=1e-5

# A trained checkpoint, exported; wireup's step-1 loss on the import (2 ranks:
# 8 rows of the synthetic batch) against the Python HF model on those rows.
train 2 "${common[@]}" --max_steps 3 --checkpoint_dir "$WORK/ck" >/dev/null
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/hf" >/dev/null
train 2 "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/hf" --metrics_file "$WORK/a.jsonl" >/dev/null
close "exported trained model: wireup loss = HF loss" \
  "$(metric "$WORK/a.jsonl" train 1 loss)" "$(hf loss "$WORK/hf" --rows 8 --context 64)" $tol

# HF checkpoints written by Python, with large Q/K weights (sharp attention).
for dtype in F32 BF16; do
  hf make "$WORK/S-$dtype" --qk_scale 1.0 --dtype "$dtype"
  mapfile -t ref < <(hf loss "$WORK/S-$dtype" --rows 4 --context 64 --wrong_rope)
  train 1 "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/S-$dtype" \
    --checkpoint_dir "$WORK/ck-$dtype" --metrics_file "$WORK/s-$dtype.jsonl" >/dev/null
  close "$dtype HF checkpoint imported: wireup loss = HF loss" \
    "$(metric "$WORK/s-$dtype.jsonl" train 1 loss)" "${ref[0]}" $tol
  far_apart "$dtype: a missing RoPE permutation would change the loss by far more than the tolerance (${ref[1]})" \
    "$dtype: test not sensitive to the RoPE layout: ${ref[0]} vs ${ref[1]}" "${ref[0]}" "${ref[1]}"
done
# HF -> wireup -> HF: the same tensors, bit for bit.
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck-F32" --out "$WORK/S-back" >/dev/null
out=$(hf same "$WORK/S-F32" "$WORK/S-back") && pass "HF -> wireup -> HF: $out" || fail "HF -> wireup -> HF: $out"
# --dtype bfloat16: the fp32 values rounded to nearest even, config says so.
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/hf-bf16" --dtype bfloat16 >/dev/null
out=$(hf same "$WORK/hf" "$WORK/hf-bf16" --bf16) && pass "--dtype bfloat16: $out" || fail "--dtype bfloat16: $out"
grep -q '"torch_dtype": "bfloat16"' "$WORK/hf-bf16/config.json" && pass "bf16 config.json torch_dtype" ||
  fail "bf16 config: $(cat "$WORK/hf-bf16/config.json")"
finish
