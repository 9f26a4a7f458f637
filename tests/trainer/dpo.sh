#!/usr/bin/env bash
# DPO on a preference data set (token_data.py --preference: pairs the loader
# packs two documents a pair, docs/dpo.md):
# - step 1's loss is ln 2 exactly (the policy is its reference), its rewards
#   and accuracy 0: full DPO (a frozen copy) and LoRA (the adapters off); the
#   [dpo] line names the reference, the JSONL carries TRL's names;
# - the step-1 gradient (its norm) is the same at world 1 and 2, with
#   accumulation, and for any micro-batch size: the loss is a mean over the
#   step's pairs whatever the split;
# - a LoRA-DPO run stopped at step 3 and resumed gives steps 4..6 bit for bit;
#   the checkpoint records DPO's settings and reference, and a resume with
#   another --dpo_beta is refused naming both values; it exports as a PEFT
#   adapter;
# - learning: on pairs whose chosen completions are drawn from the lower half
#   of the vocabulary, the reward accuracy on the training pairs reaches 0.9,
#   and on the held-out pairs (the validation split) it is above 0.5;
# - bad DPO settings are refused by name (bad_input.sh: --dpo_loss, and
#   --document_masking 0 on pairs).
source "$(dirname "$0")/hf/lib.sh"
data=$WORK/pairs
python3 "$HERE/../token_data.py" "$data" --vocab 512 --train 6000 --validation 2000 \
  --preference --learnable --seed 5
common=(--preset tiny --dataset "$data" --num_threads 1 --seed 11)
ln2=0.6931471805599453  # Python's repr of math.log(2)

# Step 1: the policy is the reference.
out=$(train 1 "${common[@]}" --max_steps 1 --metrics_file "$WORK/full1.jsonl")
grep -q '^\[data\] preference data set: packed windows=[1-9][0-9]* pairs=[1-9]' <<<"$out" &&
  pass "[data] line: the preference data set's windows and pairs" || fail "no [data] line: $out"
contains "[dpo] line: sigmoid, beta 0.1, a frozen copy" "$out" \
  "[dpo] loss_type=sigmoid beta=0.1 label_smoothing=0 sft_weight=0 reference=frozen_copy"
contains "[train] step 1: loss ln 2, rewards 0, accuracy 0 (ties count 0)" "$out" \
  "loss=0.693147 reward_accuracy=0.000000 reward_margin=0.000000 chosen_reward=0.000000 rejected_reward=0.000000"
check "full DPO: step 1's loss in the JSONL is ln 2 exactly" \
  "$(metric "$WORK/full1.jsonl" train 1 loss)" "$ln2"
check "the JSONL: rewards/chosen under TRL's name" \
  "$(metric "$WORK/full1.jsonl" train 1 'rewards\/chosen')" "0.0"
logp=$(metric "$WORK/full1.jsonl" train 1 'logps\/chosen')
awk -v l="$logp" 'BEGIN { exit !(l < -1) }' && pass "logps/chosen: the completions' summed log-probs ($logp)" ||
  fail "logps/chosen '$logp', wanted a sum of log-probs below -1"

# A base for LoRA: a full model's checkpoint.
train 1 --preset tiny --synthetic_data --max_steps 2 --num_threads 1 \
  --checkpoint_dir "$WORK/base" --checkpoint_freq 2 >/dev/null
lora=(--init_from_checkpoint "$WORK/base" --lora_rank 4 --lora_alpha 8 --lora_dropout 0.05)
out=$(train 1 "${common[@]}" "${lora[@]}" --max_steps 1 --metrics_file "$WORK/lora1.jsonl")
contains "[dpo] line: LoRA's reference is the base, adapters off" "$out" "reference=adapters_off reference_bytes_per_rank=0"
check "LoRA-DPO: step 1's loss is ln 2 exactly" "$(metric "$WORK/lora1.jsonl" train 1 loss)" "$ln2"

# The step-1 gradient at any split of the same global batch (8 rows). Its
# elements are fp32 sums over at most a few thousand tokens in another order:
# a relative error below ~1e-6 each; 1e-4 on the norm leaves a wide margin.
grad_norm() { metric "$1" train 1 grad_norm; }
train 1 "${common[@]}" --max_steps 1 --train_batch_size 8 --metrics_file "$WORK/g8.jsonl" >/dev/null
train 1 "${common[@]}" --max_steps 1 --train_batch_size 2 --gradient_accumulation_steps 4 \
  --metrics_file "$WORK/g2x4.jsonl" >/dev/null
train 2 "${common[@]}" --max_steps 1 --train_batch_size 4 --metrics_file "$WORK/w2.jsonl" >/dev/null
close "step-1 gradient norm: batch 8 = batch 2 x accumulation 4" \
  "$(grad_norm "$WORK/g2x4.jsonl")" "$(grad_norm "$WORK/g8.jsonl")" 1e-4
close "step-1 gradient norm: world 1 = world 2" \
  "$(grad_norm "$WORK/w2.jsonl")" "$(grad_norm "$WORK/g8.jsonl")" 1e-4

# Exact resume of a LoRA-DPO run.
resume=("${common[@]}" "${lora[@]}" --max_steps 6 --lr 1e-3 --train_batch_size 2
  --checkpoint_dir "$WORK/ck" --checkpoint_freq 3 --metrics_file "$WORK/resumed.jsonl")
train 1 "${common[@]}" "${lora[@]}" --max_steps 6 --lr 1e-3 --train_batch_size 2 \
  --metrics_file "$WORK/straight.jsonl" >/dev/null
train 1 "${resume[@]}" --stop_after_step 3 >/dev/null
train 1 "${resume[@]}" --resume_from_checkpoint auto >/dev/null
# Steps 4..6's computed figures (not the timings), as written.
dpo_steps() {
  python3 -c '
import json, sys
keep = ("loss", "rewards/accuracies", "rewards/margins", "rewards/chosen", "rewards/rejected",
        "logps/chosen", "logps/rejected", "lr", "grad_norm")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "train" and r["step"] >= 4:
        print(r["step"], " ".join("%s=%r" % (k, r[k]) for k in keep))' "$1"
}
straight=$(dpo_steps "$WORK/straight.jsonl")
[[ $(wc -l <<<"$straight") == 3 ]] || fail "the straight run logged: $straight"
check "LoRA-DPO resumed at step 3: steps 4..6 bit for bit" "$(dpo_steps "$WORK/resumed.jsonl")" "$straight"
recorded=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["dpo"]
print(d["loss_type"], d["beta"], d["reference"], repr(d["reference_source"]))' "$WORK/ck/step-00000003/metadata.json")
check "the checkpoint records DPO's settings and reference" "$recorded" "sigmoid 0.1 adapters_off ''"
out=$("$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/peft" 2>&1)
contains "a LoRA-DPO checkpoint exports as a PEFT adapter" "$out" "kind=peft"
[[ -s $WORK/peft/adapter_model.safetensors && -s $WORK/peft/adapter_config.json ]] &&
  pass "the adapter's files are there" || fail "no PEFT files in $WORK/peft: $(ls "$WORK/peft")"
out=$(train 1 "${resume[@]}" --resume_from_checkpoint auto --dpo_beta 0.2 2>&1) &&
  fail "a resume with another --dpo_beta went on: $out"
contains "a resume with another --dpo_beta is refused, naming both" "$out" \
  "saved with --dpo_beta 0.1, this run has 0.2"

# Learning a preference that carries to unseen pairs.
out=$(train 1 "${common[@]}" --max_steps 40 --epochs 0 --lr 2e-3 --warmup_steps 5 \
  --train_batch_size 8 --dpo_beta 0.5 --validation_freq 40 --validation_batches 8 \
  --metrics_file "$WORK/learn.jsonl")
best=$(grep '"type":"train"' "$WORK/learn.jsonl" | sed -n 's/.*"rewards\/accuracies":\([^,}]*\).*/\1/p' |
  sort -g | tail -1)
awk -v a="$best" 'BEGIN { exit !(a >= 0.9) }' && pass "training pairs: reward accuracy reached $best" ||
  fail "training pairs: reward accuracy at most $best, wanted 0.9"
held=$(metric "$WORK/learn.jsonl" validation 40 'val_rewards\/accuracies')
awk -v a="$held" 'BEGIN { exit !(a > 0.5) }' && pass "held-out pairs: reward accuracy $held above 0.5" ||
  fail "held-out pairs: reward accuracy '$held', wanted above 0.5: $(grep '^\[val\]' <<<"$out")"
grep -q '^\[val\] step=40 val_loss=[0-9.]* val_reward_accuracy=' <<<"$out" &&
  pass "[val] line: DPO's metrics on the validation pairs" || fail "no DPO [val] line: $out"

# Refusals, each naming what is wrong.
refused() {  # DESCRIPTION EXPECTED ARGS...
  local what=$1 want=$2 got rc=0
  shift 2
  got=$(train 1 "${common[@]}" --max_steps 1 "$@" 2>&1) || rc=$?
  ((rc == 2)) && contains "$what" "$got" "$want" || fail "$what: exit $rc: $got"
}
refused "--dpo_beta 0 refused" "--dpo_beta 0.000000: expected a number above 0" --dpo_beta 0
refused "label smoothing without robust refused" "--dpo_label_smoothing applies to --dpo_loss robust" \
  --dpo_label_smoothing 0.1
finish
