#!/usr/bin/env bash
# The LoRA tests' reference (peft_adapter.py) checked against hf_llama.py, without
# the trainer, on random Llama, Qwen3 and Qwen2.5 checkpoints:
# - an adapter whose B is zeros (PEFT's initialisation) gives the base's loss exactly;
# - an adapter applied unmerged gives the loss hf_llama.py computes on the merged
#   checkpoint (two independent paths), for the synthetic batch and a chat data set;
# - the adapter changes the loss measurably; merging zeros leaves the weights bit for bit;
# - read names and shapes; what PEFT would not load is refused by name.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../lib/assert.sh
source "$HERE/../../lib/assert.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wireup-peft-ref.XXXXXX")
trap '[[ -n ${KEEP_WORK:-} ]] || rm -rf "$WORK"' EXIT
# shellcheck source=../../lib/torch_py.sh
source "$HERE/../../lib/torch_py.sh"
torch_py_serve "${WIREUP_TORCH_PYTHON:-/usr/bin/python3}" "$WORK"
"$TORCH_PY" -c 'import torch' 2>/dev/null || { echo "SKIP: ${WIREUP_TORCH_PYTHON:-/usr/bin/python3} has no torch"; exit 77; }
hf() { "$TORCH_PY" "$HERE/../hf/hf_llama.py" "$@"; }
peft() { "$TORCH_PY" "$HERE/peft_adapter.py" "$@"; }


python3 "$HERE/../token_data.py" "$WORK/chat" --vocab 512 --train 300 --chat 30 --seed 3 >/dev/null
batch=(--rows 4 --context 32)
for preset in tiny qwen3-tiny qwen2.5-tiny; do
  base=$WORK/$preset
  hf make "$base" --preset "$preset" --seed 7
  peft make "$WORK/$preset-a" --base "$base" --r 4 --alpha 8 --seed 5
  peft make "$WORK/$preset-zero" --base "$base" --r 4 --alpha 8 --seed 5 --b_std 0
  peft merge "$base" "$WORK/$preset-a" "$WORK/$preset-merged" >/dev/null
  peft merge "$base" "$WORK/$preset-zero" "$WORK/$preset-merged0" >/dev/null
  ref=$(hf loss "$base" "${batch[@]}")
  check "$preset: B = 0 gives the base's loss exactly" "$(peft loss "$base" "$WORK/$preset-zero" "${batch[@]}")" "$ref"
  lora=$(peft loss "$base" "$WORK/$preset-a" "${batch[@]}")
  close "$preset: unmerged adapter = hf_llama.py on the merged checkpoint" \
    "$lora" "$(hf loss "$WORK/$preset-merged" "${batch[@]}")" 1e-5
  far_apart "$preset: the adapter changes the loss ($lora vs $ref)" \
    "$preset: the adapter does not change the loss: $lora vs $ref" "$ref" "$lora"
  read -r sft_ref n_ref < <(hf sft_loss "$base" "$WORK/chat" --context 32)
  read -r sft_zero n_zero < <(peft sft_loss "$base" "$WORK/$preset-zero" "$WORK/chat" --context 32)
  check "$preset: sft_loss, B = 0: the base's" "$sft_zero $n_zero" "$sft_ref $n_ref"
  read -r sft_lora _ < <(peft sft_loss "$base" "$WORK/$preset-a" "$WORK/chat" --context 32)
  read -r sft_merged _ < <(hf sft_loss "$WORK/$preset-merged" "$WORK/chat" --context 32)
  close "$preset: sft_loss unmerged = merged" "$sft_lora" "$sft_merged" 1e-5
  far_apart "$preset: the adapter changes sft_loss ($sft_lora vs $sft_ref)" \
    "$preset: the adapter does not change sft_loss: $sft_lora vs $sft_ref" "$sft_ref" "$sft_lora"
  if out=$(hf same "$base" "$WORK/$preset-merged0"); then pass "$preset: merging zeros: $out"; else
    fail "$preset: merging zeros changed weights: $out"; fi
  out=$(peft close "$base" "$WORK/$preset-merged" --atol 1e-4 || true)
  contains "$preset: close sees the merged update" "$out" "not within 0.0001:"
  check "$preset: merge copies config.json" "$(cat "$WORK/$preset-merged/config.json")" "$(cat "$base/config.json")"
done

# A bf16 base stays bf16; layers and targets restricted; read's lines.
hf make "$WORK/bf16" --preset tiny --seed 7 --dtype BF16
peft make "$WORK/some" --base "$WORK/bf16" --r 2 --alpha 16 --targets v_proj,down_proj --layers 1
peft merge "$WORK/bf16" "$WORK/some" "$WORK/bf16-merged" >/dev/null
out=$(peft close "$WORK/bf16" "$WORK/bf16-merged" --atol 0 || true)
contains "bf16: only layer 1's v_proj and down_proj merged" "$out" \
  "not within 0.0: model.layers.1.mlp.down_proj.weight (0."
contains "bf16: layer 1's v_proj merged" "$out" " model.layers.1.self_attn.v_proj.weight (0."
contains "bf16: two tensors changed" "$out" "(2 of 21)"
contains "bf16: merged stays bf16" "$(head -c 2000 "$WORK/bf16-merged/model.safetensors" | tr -d '\0')" \
  '"model.layers.1.self_attn.v_proj.weight": {"dtype": "BF16"'
check "read: r, alpha, targets, names and shapes" "$(peft read "$WORK/some")" "r 2
lora_alpha 16
target_modules down_proj,v_proj
base_model.model.model.layers.1.mlp.down_proj.lora_A.weight [2,176] F32
base_model.model.model.layers.1.mlp.down_proj.lora_B.weight [64,2] F32
base_model.model.model.layers.1.self_attn.v_proj.lora_A.weight [2,64] F32
base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight [32,2] F32"
contains "adapter_config.json: PEFT's keys" "$(tr -d ' \n' <"$WORK/some/adapter_config.json")" \
  '"layers_to_transform":[1],"loftq_config":{},"lora_alpha":16,"lora_bias":false,"lora_dropout":0.0,'

# Refusals.
b=$WORK/tiny
peft make "$WORK/bad1" --base "$b" --r 4 --alpha 8 --wrong_shape layers.1.self_attn.k_proj.lora_B.weight
expect_error "a transposed lora_B" "k_proj.lora_B.weight: shape [4, 32], expected [32, 4]" \
  peft loss "$b" "$WORK/bad1" "${batch[@]}"
peft make "$WORK/bad2" --base "$b" --r 4 --alpha 8 --extra_tensor base_model.model.lm_head.lora_A.weight
expect_error "an unexpected tensor" "unexpected tensor base_model.model.lm_head.lora_A.weight" \
  peft merge "$b" "$WORK/bad2" "$WORK/bad2-merged"
peft make "$WORK/bad3" --base "$b" --r 4 --alpha 8 --set use_dora true
expect_error "use_dora" "use_dora=true is not implemented" peft loss "$b" "$WORK/bad3" "${batch[@]}"
peft make "$WORK/bad4" --base "$b" --r 4 --alpha 8 --set target_modules '["q_proj"]'
expect_error "a tensor outside target_modules" "model.layers.0.mlp.down_proj is not in target_modules" \
  peft loss "$b" "$WORK/bad4" "${batch[@]}"
finish
