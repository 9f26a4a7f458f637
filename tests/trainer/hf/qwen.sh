#!/usr/bin/env bash
# Qwen3 and Qwen2.5 against the tests' own Hugging Face semantics (hf_llama.py:
# transformers' Qwen3 and Qwen2 forwards in plain PyTorch): random HF
# checkpoints imported with --init_from_hf alone (family and shape from
# config.json) give the reference's loss, and would not if the per-head norms,
# the biases or the Q/K rows were in the wrong order; HF -> wireup -> HF is the
# same tensors bit for bit with the family's config.json; a model trained from
# a Qwen preset, exported, gives the reference's loss; a mixture-of-experts
# config is refused naming model_type.
source "$(dirname "$0")/lib.sh"
need_torch
hf() { "$TORCH_PY" "$HERE/hf_llama.py" "$@"; }
common=(--synthetic_data --num_threads 1 --train_batch_size 4 --max_context_width 64)
frozen=(--max_steps 1 --lr 1e-30 --min_lr 0)
tol=1e-5

for preset in qwen3-tiny qwen2.5-tiny; do
  family=${preset%%-*}
  tied=()
  [[ $family == qwen3 ]] && tied=(--tied)
  hf make "$WORK/$preset" --preset "$preset" --qk_scale 1.0 "${tied[@]}"
  mapfile -t ref < <(hf loss "$WORK/$preset" --rows 4 --context 64 --wrong_rope --wrong_extras)
  train 1 "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/$preset" \
    --checkpoint_dir "$WORK/ck-$preset" --metrics_file "$WORK/$preset.jsonl" >"$WORK/$preset.log"
  grep -q "^\[config\] .*preset=init_from_hf" "$WORK/$preset.log" ||
    fail "$preset: no [config] line: $(head -5 "$WORK/$preset.log")"
  close "$preset HF checkpoint imported (shape from config.json): wireup loss = HF loss" \
    "$(metric "$WORK/$preset.jsonl" train 1 loss)" "${ref[0]}" $tol
  far_apart "$preset: Q/K rows in the wrong rotary order would change the loss (${ref[1]})" \
    "$preset: not sensitive to the Q/K row order: ${ref[0]} vs ${ref[1]}" "${ref[0]}" "${ref[1]}"
  far_apart "$preset: norms or biases in the wrong order would change the loss (${ref[2]})" \
    "$preset: not sensitive to the norms' and biases' order: ${ref[0]} vs ${ref[2]}" "${ref[0]}" "${ref[2]}"
  # HF -> wireup -> HF: the same tensors, and the family's config.json.
  "$WIREUP_TRAIN" export --checkpoint "$WORK/ck-$preset" --out "$WORK/$preset-back" >/dev/null
  out=$(hf same "$WORK/$preset" "$WORK/$preset-back") && pass "$preset: HF -> wireup -> HF: $out" ||
    fail "$preset: HF -> wireup -> HF: $out"
  cfg=$(tr -d ' \n' <"$WORK/$preset-back/config.json")
  want=('"use_sliding_window":false' '"rope_theta":1000000.0' '"rms_norm_eps":1e-06')
  if [[ $family == qwen3 ]]; then
    want+=('"architectures":["Qwen3ForCausalLM"]' '"model_type":"qwen3"' '"head_dim":32'
           '"attention_bias":false' '"tie_word_embeddings":true')
  else
    want+=('"architectures":["Qwen2ForCausalLM"]' '"model_type":"qwen2"' '"head_dim":16'
           '"tie_word_embeddings":false')
  fi
  missing=()
  for kv in "${want[@]}"; do [[ $cfg == *"$kv"* ]] || missing+=("$kv"); done
  ((${#missing[@]} == 0)) && pass "$preset: exported config.json keeps the family's fields" ||
    fail "$preset: config.json lacks ${missing[*]}: $cfg"
done

# Trained from the preset (random init, 2 ranks), exported: the reference
# computes wireup's loss on the import.
train 2 --preset qwen3-tiny "${common[@]}" --max_steps 3 --checkpoint_dir "$WORK/trained" >/dev/null
"$WIREUP_TRAIN" export --checkpoint "$WORK/trained" --out "$WORK/trained-hf" >/dev/null
train 2 "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/trained-hf" \
  --metrics_file "$WORK/trained.jsonl" >/dev/null
close "qwen3-tiny trained, exported: wireup loss = HF loss" \
  "$(metric "$WORK/trained.jsonl" train 1 loss)" "$(hf loss "$WORK/trained-hf" --rows 8 --context 64)" $tol

# A Qwen3 checkpoint resumed as a Llama, and a mixture of experts: refused by name.
expect_error "a qwen3 checkpoint resumed as a llama" "saved from a qwen3 model, this run is llama" \
  "$WIREUP_TRAIN" --preset tiny "${common[@]}" --max_steps 4 --checkpoint_dir "$WORK/trained" --resume_from_checkpoint auto
cp -a "$WORK/qwen3-tiny" "$WORK/moe"
sed -i 's/"model_type": "qwen3"/"model_type": "qwen3_moe"/' "$WORK/moe/config.json"
expect_error "qwen3_moe refused" 'model_type="qwen3_moe"' \
  "$WIREUP_TRAIN" "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/moe"
finish
