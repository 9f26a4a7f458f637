#!/usr/bin/env bash
# LoRA: adapters trained on a frozen base, checked against the tests' own PEFT reference
# (peft_adapter.py: PEFT's unmerged LoRA layer on hf_llama.py's Llama and Qwen3, no
# transformers, no peft). Step 1 equals the base; the adapters' gradient is autograd's;
# world 1, 2 (full and hybrid) and 3 give the same losses; a resume is exact and refuses
# another base naming both; the checkpoint holds the adapters alone; a wireup checkpoint
# serves as the base as its export does; its PEFT export,
# re-imported with --lora_adapter, gives the checkpoint's eval loss and the reference's;
# an adapter the reference wrote gives the reference's loss; --merge is base + B A; bad
# adapters and flags are refused by name; a LoRA run learns a new kind of text.
source "$(dirname "$0")/../hf/lib.sh"
need_torch
LORA=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TRAINER_TESTS=$(cd "$LORA/.." && pwd)
hf() { "$TORCH_PY" "$HERE/hf_llama.py" "$@"; }
peft() { "$TORCH_PY" "$LORA/peft_adapter.py" "$@"; }
ref() { "$TORCH_PY" "$HERE/eval_reference.py" "$@"; }
evaluate() { "$WIREUP_TRAIN" eval --num_threads 1 --dataset "$WORK/D" --max_context_width 32 \
  --eval_batches 20 "$@"; }
ev() { evaluate "$@" | sed -n 's/^\[eval\] loss=\([0-9.]*\) .*/\1/p'; }

python3 "$TRAINER_TESTS/token_data.py" "$WORK/D" --vocab 500 --train 3000 --validation 1000 --seed 3
hf make "$WORK/base" --preset tiny --seed 7 --qk_scale 1.0
hf make "$WORK/q3" --preset qwen3-tiny --seed 5 --qk_scale 1.0 --tied
hf make "$WORK/other" --preset tiny --seed 8 --qk_scale 1.0
syn=(--synthetic_data --num_threads 1 --max_context_width 32 --grad_clip 0 --lr 1e-2)
lora=(--lora_rank 4 --lora_alpha 8)

# ---- flags
expect_error "--lora_rank without a base" "--init_from_hf" \
  "$WIREUP_TRAIN" --preset tiny "${syn[@]}" --max_steps 1 "${lora[@]}"
expect_error "--lora_alpha 0" "--lora_alpha" \
  "$WIREUP_TRAIN" --init_from_hf "$WORK/base" "${syn[@]}" --max_steps 1 --lora_rank 4 --lora_alpha 0
expect_error "--lora_targets with an unknown name" "lm_head" \
  "$WIREUP_TRAIN" --init_from_hf "$WORK/base" "${syn[@]}" --max_steps 1 "${lora[@]}" \
  --lora_targets q,lm_head
expect_error "eval --lora_adapter without a base" "--init_from_hf" \
  evaluate --resume_from_checkpoint "$WORK/none" --lora_adapter "$WORK/none"

# ---- step 1 is the base's; the gradient is autograd's; any world size gives the same losses
train 1 --init_from_hf "$WORK/base" "${syn[@]}" --train_batch_size 6 --max_steps 4 "${lora[@]}" \
  --checkpoint_dir "$WORK/g" --checkpoint_freq 2 --keep_checkpoints 0 \
  --metrics_file "$WORK/w1.jsonl" >"$WORK/w1.out"
losses <"$WORK/w1.out" >"$WORK/w1"
for m in base q3; do
  if [[ $m == base ]]; then  # the LoRA run above: its step 1
    b=6 ad=$(head -n 1 "$WORK/w1")
  else
    b=4 ad=$(train 1 --init_from_hf "$WORK/$m" "${syn[@]}" --train_batch_size 4 --max_steps 1 \
      "${lora[@]}" | losses)
  fi
  full=$(train 1 --init_from_hf "$WORK/$m" "${syn[@]}" --train_batch_size "$b" --max_steps 1 | losses)
  [[ -n $full && $full == "$ad" ]] && pass "$m: step 1 with zero-initialised B = the base ($ad)" ||
    fail "$m: step 1 $ad, the base's $full"
done
"$WIREUP_TRAIN" export --checkpoint "$WORK/g/step-00000002" --out "$WORK/g2" >/dev/null
# Step 3 on the weights of step 2's checkpoint, against the reference in float64. Its float32
# rounding moves this norm by up to about 1e-4 (the sums over tokens in another order: another
# CPU's kernels); the tolerance is 4x the largest move the reference itself measures over five
# row orders (at least 1e-6). A wrong adapter gradient is off by orders of magnitude more.
read -r ref_loss ref_norm loss_spread norm_spread < \
  <(peft grad_norm "$WORK/base" "$WORK/g2" --step 3 --rows 6 --context 32)
tol() { awk -v s="$1" 'BEGIN { t = 4 * s; print (t > 1e-6 ? t : 1e-6) }'; }
close "step 3 (A and B trained 2 steps): loss = the reference's (float32 spread $loss_spread)" \
  "$(metric "$WORK/w1.jsonl" train 3 loss)" "$ref_loss" "$(tol "$loss_spread")"
close "step 3: the adapters' gradient norm = autograd's on the reference (float32 spread $norm_spread)" \
  "$(metric "$WORK/w1.jsonl" train 3 grad_norm)" "$ref_norm" "$(tol "$norm_spread")"
for layout in "2 3" "2 3 --sharding_strategy hybrid" "3 2"; do
  read -r n b rest <<<"$layout"
  # shellcheck disable=SC2086  # rest: the optional sharding flags
  train "$n" --init_from_hf "$WORK/base" "${syn[@]}" --train_batch_size "$b" --max_steps 4 \
    "${lora[@]}" $rest | losses >"$WORK/w$n"
  same_losses "world $n ${rest:-full} = world 1" "$WORK/w1" "$WORK/w$n" 1e-5
done

# ---- checkpoints: the adapters alone, an exact resume, another base refused
ck=(--init_from_hf "$WORK/base" --dataset "$WORK/D" --epochs 0 --num_threads 1 --max_context_width 32
  --train_batch_size 2 --lr 1e-2 "${lora[@]}" --lora_dropout 0.1)
# The straight run recomputes its blocks (--activation_checkpointing 1), the stopped one
# does not: their 3 common steps also check that recomputing keeps the dropout masks.
train 2 "${ck[@]}" --max_steps 6 --checkpoint_dir "$WORK/straight" --activation_checkpointing 1 |
  losses >"$WORK/straight.loss"
train 2 "${ck[@]}" --max_steps 6 --checkpoint_dir "$WORK/resumed" --stop_after_step 3 | losses >"$WORK/r1"
[[ -s $WORK/r1 ]] && cmp -s <(head -n 3 "$WORK/straight.loss") "$WORK/r1" &&
  pass "--activation_checkpointing 1 recomputes the blocks with the same dropout masks" ||
  fail "activation checkpointing changes the losses: $(paste "$WORK/straight.loss" "$WORK/r1" | tr '\n' ' ')"
train 2 "${ck[@]}" --max_steps 6 --checkpoint_dir "$WORK/resumed" --resume_from_checkpoint auto |
  tee "$WORK/r2.out" | losses >"$WORK/r2"
cat "$WORK/r1" "$WORK/r2" >"$WORK/rboth"
cmp -s "$WORK/straight.loss" "$WORK/rboth" && grep -q '^\[resume\] step=3 ' "$WORK/r2.out" &&
  pass "stopped at 3, resumed: the same 6 losses, bit for bit (dropout 0.1)" ||
  fail "resume not exact: $(paste "$WORK/straight.loss" "$WORK/rboth" | tr '\n' ' ')"
adapter_params=$(sed -n 's/^\[lora\] .*adapter_params=\([0-9]*\) .*/\1/p' "$WORK/r2.out")
bytes=$(cat "$WORK/straight/step-00000006"/rank-*.bin | wc -c)
# shellcheck disable=SC2015
((bytes > 0 && bytes <= 3 * 4 * (adapter_params + 2))) &&
  pass "checkpoint: $bytes bytes = the adapters' weights and moments ($adapter_params parameters)" ||
  fail "checkpoint holds $bytes bytes for $adapter_params adapter parameters"
other=("${ck[@]}")
other[1]=$WORK/other
"$WIREUP_TRAIN" "${other[@]}" --max_steps 6 --checkpoint_dir "$WORK/resumed" \
  --resume_from_checkpoint "$WORK/resumed/step-00000003" >/dev/null 2>"$WORK/other.err" && rc=0 || rc=$?
((rc == 2)) && grep -q "fingerprint" "$WORK/other.err" && grep -q "$WORK/base" "$WORK/other.err" &&
  grep -q "$WORK/other" "$WORK/other.err" &&
  pass "resume onto another base refused naming both: $(head -c 300 "$WORK/other.err")" ||
  fail "resume onto another base: exit $rc: $(cat "$WORK/other.err")"

# ---- export: a PEFT adapter, re-imported; the reference agrees
"$WIREUP_TRAIN" export --checkpoint "$WORK/straight" --out "$WORK/peft" >"$WORK/export.out"
grep -q 'kind=peft tensors=28 ' "$WORK/export.out" && pass "export: $(cat "$WORK/export.out")" ||
  fail "export line: $(cat "$WORK/export.out")"
peft read "$WORK/peft" >"$WORK/read"
grep -qx 'base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight \[4,64\] F32' "$WORK/read" &&
  grep -qx 'base_model.model.model.layers.0.mlp.down_proj.lora_B.weight \[64,4\] F32' "$WORK/read" &&
  grep -qx 'target_modules down_proj,gate_proj,k_proj,o_proj,q_proj,up_proj,v_proj' "$WORK/read" &&
  pass "adapter_model.safetensors: PEFT's names and shapes" || fail "exported adapter: $(cat "$WORK/read")"
from_ck=$(ev --resume_from_checkpoint "$WORK/straight")
from_peft=$(ev --init_from_hf "$WORK/base" --lora_adapter "$WORK/peft")
[[ -n $from_ck && $from_ck == "$from_peft" ]] &&
  pass "eval: the PEFT export on its base = the LoRA checkpoint ($from_ck)" ||
  fail "eval: checkpoint $from_ck, export $from_peft"
close "eval of the export = the reference's unmerged LoRA" "$from_peft" \
  "$(ref "$WORK/base" "$WORK/D" --context 32 --windows 20 --adapter "$WORK/peft")" 1e-5

# ---- adapters the reference wrote (Qwen3: rotary Q/K rows, QK-norm after the adapter;
# Qwen2.5: the Q/K/V biases the base's; some targets only)
hf make "$WORK/q25" --preset qwen2.5-tiny --seed 6 --qk_scale 1.0
for m in "q3 q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj" "q25 q_proj,v_proj,down_proj"; do
  read -r m targets <<<"$m"
  peft make "$WORK/$m-ad" --base "$WORK/$m" --r 8 --alpha 16 --seed 3 --b_std 0.3 --targets "$targets"
  mine=$(ev --init_from_hf "$WORK/$m" --lora_adapter "$WORK/$m-ad")
  theirs=$(ref "$WORK/$m" "$WORK/D" --context 32 --windows 20 --adapter "$WORK/$m-ad")
  close "$m ($targets): the reference's adapter, read by eval = the reference's loss" \
    "$mine" "$theirs" 1e-5
  far_apart "$m: the adapter moves the loss" "$m: the adapter changes nothing" "$theirs" \
    "$(ref "$WORK/$m" "$WORK/D" --context 32 --windows 20)"
done

# ---- --merge: base + scale B A, loadable like any export
"$WIREUP_TRAIN" export --checkpoint "$WORK/straight" --out "$WORK/merged" --merge >"$WORK/merge.out"
grep -q 'kind=merged ' "$WORK/merge.out" || fail "merge line: $(cat "$WORK/merge.out")"
peft merge "$WORK/base" "$WORK/peft" "$WORK/ref-merged" >/dev/null
out=$(peft close "$WORK/merged" "$WORK/ref-merged" --atol 1e-6) &&
  pass "export --merge = the reference's W + scale B A: $out" || fail "merge differs: $out"
close "eval of the merged export = the checkpoint's" \
  "$(ev --init_from_hf "$WORK/merged")" "$from_ck" 1e-5

# ---- a full model's checkpoint and its export: the base of the next two sections. The demo
# model (trainer_learns's, learns.sh: the demo corpus, 100 steps on 2 ranks) when its fixture
# is ready (ctest runs it first), else the same training here; without wireup-prep and the
# demo corpus (no learning check), 2 steps on synthetic data.
learn=0
if [[ -n ${WIREUP_PREP:-} && -n ${WIREUP_DEMO_CORPUS_SCRIPT:-} ]]; then
  learn=1 fixture=${WIREUP_DEMO_FIXTURE_DIR:-}
  if [[ -n $fixture && -f $fixture/ready ]]; then
    corpus=$fixture/corpus full=$fixture/base
    echo "the base: trainer_learns's model ($full)"
  else
    corpus=$WORK/corpus full=$WORK/pre
    bash "$WIREUP_DEMO_CORPUS_SCRIPT" --no-install --vocab-size 1000 --prep "$WIREUP_PREP" "$corpus" >/dev/null
    train 2 --preset tiny --vocab_size 1000 --max_context_width 128 --dataset "$corpus" --max_steps 100 \
      --train_batch_size 4 --lr 3e-3 --warmup_steps 10 --min_lr 3e-4 --num_threads 1 \
      --checkpoint_dir "$full" >/dev/null
  fi
else
  full=$WORK/full
  train 1 --preset tiny --vocab_size 512 "${syn[@]}" --max_steps 2 --checkpoint_dir "$full" >/dev/null
fi
"$WIREUP_TRAIN" export --checkpoint "$full" --out "$WORK/full-hf" >/dev/null
expect_error "--merge of a full model's checkpoint" "LoRA checkpoint" \
  "$WIREUP_TRAIN" export --checkpoint "$full" --out "$WORK/x" --merge

# ---- a wireup checkpoint as the base (--init_from_checkpoint): the same adapters as on its export
cb=(--dataset "$WORK/D" --epochs 0 --num_threads 1 --max_context_width 32 --train_batch_size 2
  --lr 1e-2 "${lora[@]}" --max_steps 3)
train 2 --init_from_checkpoint "$full" "${cb[@]}" --checkpoint_dir "$WORK/on-ck" >"$WORK/on-ck.out"
losses <"$WORK/on-ck.out" >"$WORK/on-ck.loss"
train 2 --init_from_hf "$WORK/full-hf" "${cb[@]}" | losses >"$WORK/on-hf.loss"
same_losses "LoRA on a checkpoint = LoRA on its export" "$WORK/on-hf.loss" "$WORK/on-ck.loss" 1e-6
"$WIREUP_TRAIN" export --checkpoint "$WORK/on-ck" --out "$WORK/on-ck-peft" >/dev/null
on_ck=$(ev --resume_from_checkpoint "$WORK/on-ck")
check "eval: a LoRA checkpoint on a checkpoint = its PEFT export on the base's export" \
  "$(ev --init_from_hf "$WORK/full-hf" --lora_adapter "$WORK/on-ck-peft")" "$on_ck"
"$WIREUP_TRAIN" export --checkpoint "$WORK/on-ck" --out "$WORK/on-ck-merged" --merge >/dev/null
peft merge "$WORK/full-hf" "$WORK/on-ck-peft" "$WORK/on-ck-ref" >/dev/null
out=$(peft close "$WORK/on-ck-merged" "$WORK/on-ck-ref" --atol 1e-6) &&
  pass "export --merge on a checkpoint base = the reference's merge: $out" || fail "merge differs: $out"
expect_error "--init_from_hf and --init_from_checkpoint together" "exclude each other" \
  "$WIREUP_TRAIN" --init_from_hf "$WORK/full-hf" --init_from_checkpoint "$full" "${syn[@]}" --max_steps 1

# ---- bad adapters
peft make "$WORK/dora" --base "$WORK/base" --r 4 --alpha 8 --set use_dora true
expect_error "use_dora" "use_dora" evaluate --init_from_hf "$WORK/base" --lora_adapter "$WORK/dora"
peft make "$WORK/rslora" --base "$WORK/base" --r 4 --alpha 8 --set use_rslora true
expect_error "use_rslora" "use_rslora" evaluate --init_from_hf "$WORK/base" --lora_adapter "$WORK/rslora"
peft make "$WORK/shape" --base "$WORK/base" --r 4 --alpha 8 --wrong_shape layers.1.self_attn.v_proj.lora_B.weight
expect_error "a lora_B of the wrong shape" "layers.1.self_attn.v_proj.lora_B.weight" \
  evaluate --init_from_hf "$WORK/base" --lora_adapter "$WORK/shape"
peft make "$WORK/rank" --base "$WORK/base" --r 4 --alpha 8 --set r 8
expect_error "a rank that disagrees with the tensors" "lora_A.weight" \
  evaluate --init_from_hf "$WORK/base" --lora_adapter "$WORK/rank"
peft make "$WORK/big" --base "$WORK/q3" --r 4 --alpha 8
expect_error "an adapter of another base's shape" "lora_" \
  evaluate --init_from_hf "$WORK/base" --lora_adapter "$WORK/big"
peft make "$WORK/head" --base "$WORK/base" --r 4 --alpha 8 --set target_modules '["q_proj","lm_head"]'
expect_error "an adapter of lm_head" "lm_head" \
  evaluate --init_from_hf "$WORK/base" --lora_adapter "$WORK/head"

# ---- a LoRA run learns: the demo model above (English fortunes), adapted to a new kind of line.
if ((learn)); then
  python3 - "$WORK/task.txt" <<'EOF'
import random, sys
r = random.Random(5)
colors = ["red", "green", "blue", "yellow", "black", "white", "brown", "purple"]
things = ["apples", "stones", "coins", "letters", "shells", "keys", "books", "cups"]
with open(sys.argv[1], "w") as f:
    for _ in range(600):
        f.write(f"the {r.choice(colors)} box holds {r.randint(2, 9)} {r.choice(things)} "
                f"and the lid is {r.choice(colors)}.\n")
EOF
  "$WIREUP_PREP" "$WORK/task.txt" -o "$WORK/task" --tokenizer "$corpus/tokenizer.model" \
    --text-docs line --val-fraction 0.1 >/dev/null 2>&1
  train 2 --init_from_hf "$WORK/full-hf" --max_context_width 64 --dataset "$WORK/task" --epochs 0 \
    --max_steps 60 --train_batch_size 4 --lr 1e-2 --warmup_steps 5 --min_lr 1e-3 --num_threads 1 \
    --lora_rank 8 --lora_alpha 16 --checkpoint_dir "$WORK/task-lora" >/dev/null
  task=(--dataset "$WORK/task" --max_context_width 64 --eval_batches 8)
  before=$(ev --init_from_hf "$WORK/full-hf" "${task[@]}")
  after=$(ev --resume_from_checkpoint "$WORK/task-lora" "${task[@]}")
  awk -v b="$before" -v a="$after" 'BEGIN { exit !(b != "" && a != "" && a < 0.85 * b) }' &&
    pass "LoRA learns held-out lines of a new kind: eval loss $before -> $after" ||
    fail "LoRA did not learn: eval loss $before -> $after"
  # generate: the adapter on its base answers as the merged model does (greedy), not as the base
  "$WIREUP_TRAIN" export --checkpoint "$WORK/task-lora" --out "$WORK/task-peft" >/dev/null
  "$WIREUP_TRAIN" export --checkpoint "$WORK/task-lora" --out "$WORK/task-merged" --merge >/dev/null
  gen() { "$WIREUP_TRAIN" generate --tokenizer "$corpus/tokenizer.model" --prompt "the red box holds" \
    --max_new_tokens 12 --num_threads 1 "$@" 2>/dev/null | od -c | tr -s ' '; }
  with_adapter=$(gen --init_from_hf "$WORK/full-hf" --lora_adapter "$WORK/task-peft")
  [[ -n $with_adapter && $with_adapter == "$(gen --init_from_hf "$WORK/task-merged")" &&
     $with_adapter != "$(gen --init_from_hf "$WORK/full-hf")" ]] &&
    pass "generate --lora_adapter answers as the merged export, not as the base" ||
    fail "generate --lora_adapter: $with_adapter"
else
  echo "SKIP: learning (no WIREUP_PREP / WIREUP_DEMO_CORPUS_SCRIPT)"
fi
finish
