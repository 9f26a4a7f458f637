#!/usr/bin/env bash
# wireup checkpoint -> Hugging Face -> wireup: identical weights (bit for bit,
# whatever the world sizes) and identical outputs (validation loss).
source "$(dirname "$0")/lib.sh"
common=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 4)
# One step at learning rate 0 (the cosine schedule ends at --min_lr on the last
# step): the weights are checkpointed exactly as they were loaded.
frozen=(--max_steps 1 --lr 1e-30 --min_lr 0)

train 2 "${common[@]}" --max_steps 4 --checkpoint_freq 2 --keep_checkpoints 0 \
  --checkpoint_dir "$WORK/ck" >/dev/null

# Export runs as one process, whatever world size wrote the checkpoint.
out=$("$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/hf")
[[ $out == *"[export] step=4 from=$WORK/ck/step-00000004 "*"tensors=21 "* ]] &&
  pass "export of a checkpoint dir takes its newest step" || fail "export: $out"
out=$("$WIREUP_TRAIN" export --checkpoint "$WORK/ck/step-00000002" --out "$WORK/hf2")
[[ $out == *"[export] step=2 "* ]] && pass "export of a step dir takes that step" || fail "export: $out"
[[ $(ls -A "$WORK/hf") == $'config.json\nmodel.safetensors' ]] &&
  pass "output: config.json and model.safetensors, no temporary files" || fail "output: $(ls -A "$WORK/hf")"
cfg=$(tr -d ' \n' <"$WORK/hf/config.json")
for kv in '"architectures":["LlamaForCausalLM"]' '"hidden_size":64' '"intermediate_size":176' \
          '"num_attention_heads":4' '"num_key_value_heads":2' '"num_hidden_layers":2' \
          '"vocab_size":512' '"max_position_embeddings":64' '"rope_theta":10000.0' \
          '"rms_norm_eps":1e-05' '"tie_word_embeddings":false' '"torch_dtype":"float32"'; do
  [[ $cfg == *"$kv"* ]] || fail "config.json lacks $kv: $cfg"
done
pass "config.json has the LlamaForCausalLM fields"
names=$(st_tensors "$WORK/hf/model.safetensors" | cut -d' ' -f1-3 | tr '\n' ';')
for t in 'model.embed_tokens.weight F32 [512,64]' 'lm_head.weight F32 [512,64]' \
         'model.norm.weight F32 [64]' 'model.layers.1.input_layernorm.weight F32 [64]' \
         'model.layers.1.self_attn.q_proj.weight F32 [64,64]' \
         'model.layers.1.self_attn.k_proj.weight F32 [32,64]' \
         'model.layers.1.self_attn.v_proj.weight F32 [32,64]' \
         'model.layers.1.self_attn.o_proj.weight F32 [64,64]' \
         'model.layers.1.post_attention_layernorm.weight F32 [64]' \
         'model.layers.1.mlp.gate_proj.weight F32 [176,64]' \
         'model.layers.1.mlp.up_proj.weight F32 [176,64]' \
         'model.layers.1.mlp.down_proj.weight F32 [64,176]'; do
  [[ $names == *"$t;"* ]] || fail "model.safetensors lacks $t"
done
pass "model.safetensors has HF names and shapes"

# Import on other world sizes, checkpoint, export again: the same bytes.
for n in 1 3; do
  train "$n" "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/hf" \
    --checkpoint_dir "$WORK/re$n" >"$WORK/re$n.log"
  grep -q '^\[init\] from_hf=.* tensors=21 params=158016 ' "$WORK/re$n.log" ||
    fail "no [init] line: $(cat "$WORK/re$n.log")"
  "$WIREUP_TRAIN" export --checkpoint "$WORK/re$n" --out "$WORK/hf-re$n" >/dev/null
  same_tensors "export -> import on $n rank(s) -> export: identical weights" "$WORK/hf" "$WORK/hf-re$n"
done

# Identical outputs: the original checkpoint (resumed, a learning-rate-0 step)
# and its HF round trip give the same validation loss, bit for bit.
val=(--validation_freq 1 --validation_batches 2 --lr 1e-30 --min_lr 0)
train 2 "${common[@]}" "${val[@]}" --resume_from_checkpoint "$WORK/ck/step-00000004" \
  --max_steps 5 --metrics_file "$WORK/orig.jsonl" >/dev/null
train 2 "${common[@]}" "${val[@]}" --init_from_hf "$WORK/hf" --max_steps 1 \
  --metrics_file "$WORK/imp.jsonl" >/dev/null
a=$(metric "$WORK/orig.jsonl" validation 5 val_loss)
b=$(metric "$WORK/imp.jsonl" validation 1 val_loss)
[[ -n $a && $a == "$b" ]] && pass "identical validation loss, original vs round trip ($a)" ||
  fail "validation loss: original $a, round trip $b"

# A resumed checkpoint takes precedence over --init_from_hf (auto-resume of a fine-tuning job).
out=$(train 1 "${common[@]}" --init_from_hf "$WORK/hf2" --checkpoint_dir "$WORK/re1" \
  --resume_from_checkpoint auto --max_steps 2 --lr 1e-30 --min_lr 0)
[[ $out == *"[resume] step=1 "* ]] && pass "resume overrides --init_from_hf" || fail "resume: $out"
finish
