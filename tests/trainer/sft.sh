#!/usr/bin/env bash
# Supervised fine-tuning on a chat data set (token_data.py --chat: version 2
# shards, conversations with loss masks, packed into windows by the loader):
# - the step-1 loss of a frozen model equals hf_llama.py's Hugging Face
#   forward run on each conversation alone (positions from 0), mean over the
#   trained targets, to 1e-5: tied + llama3 rope-scaled, and untied;
#   --document_masking 0 (attention across the row) is far from it; the
#   [attention] line names the blocked attention, a bad WIREUP_DOCUMENT_ATTENTION
#   is refused;
# - world 1, 2 (shared memory and Gloo), 4 and accumulation give the same
#   losses for the same global batch (the loss is the global batch's mean over
#   its trained targets, whatever the split); the [train] lines and the JSONL
#   carry trained_tokens, the same at every split;
# - full and hybrid sharding, activation checkpointing agree;
# - wireup-train eval gives the same masked loss (HF reference, world 1 = 2).
source "$(dirname "$0")/hf/lib.sh"
need_torch
hf() { "$TORCH_PY" "$HERE/hf_llama.py" "$@"; }
tol=1e-5
data=$WORK/chat
python3 "$HERE/../token_data.py" "$data" --vocab 512 --train 1200,400 --validation 300 --chat 30 --seed 3

# The number of packed windows (context 64), from the [data] line.
out=$(train 1 --preset tiny --dataset "$data" --max_steps 1 --num_threads 1 --train_batch_size 1)
windows=$(sed -n 's/^\[data\] chat data set: packed windows=\([0-9]*\) .*/\1/p' <<<"$out")
[[ $windows -gt 8 ]] && pass "[data] line: $windows packed windows" || fail "no [data] line: $out"
grep -q '^\[train\] step=1/1 .* trained_tokens=[1-9]' <<<"$out" && pass "[train] line has trained_tokens" ||
  fail "no trained_tokens on the [train] line: $out"
grep -q '^\[attention\] document_masking=1 path=blocked_mask$' <<<"$out" &&
  pass "[attention] line: the CPU's blocked attention" || fail "no [attention] line: $out"
if out=$(WIREUP_DOCUMENT_ATTENTION=flash train 1 --preset tiny --dataset "$data" --max_steps 1 2>&1); then
  fail "WIREUP_DOCUMENT_ATTENTION=flash accepted"
else
  contains "WIREUP_DOCUMENT_ATTENTION=flash refused by name" "$out" "WIREUP_DOCUMENT_ATTENTION=flash"
fi

# One step over every window of the split (one batch of all of them): each
# conversation once, so the loss is the HF mean over all trained targets.
frozen=(--max_steps 1 --lr 1e-30 --min_lr 0 --num_threads 1 --dataset "$data" --train_batch_size "$windows")
scaling='{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}'
hf make "$WORK/T" --qk_scale 1.0 --tied --override rope_theta 500000.0 --override rope_scaling "$scaling"
hf make "$WORK/U" --qk_scale 1.0
read -r ref_t trained_t < <(hf sft_loss "$WORK/T" "$data" --context 64)
read -r ref_u _ < <(hf sft_loss "$WORK/U" "$data" --context 64)
l3=(--preset tiny --rope_theta 500000 --rope_scaling 'llama3:8,1,4,64' --tie_word_embeddings 1)
train 1 "${l3[@]}" "${frozen[@]}" --init_from_hf "$WORK/T" --metrics_file "$WORK/t.jsonl" >/dev/null
close "tied, rope-scaled: masked, document-masked loss = HF per conversation" \
  "$(metric "$WORK/t.jsonl" train 1 loss)" "$ref_t" $tol
check "trained_tokens in the JSONL = the HF count of trained targets" \
  "$(metric "$WORK/t.jsonl" train 1 trained_tokens)" "$trained_t"
train 1 --preset tiny "${frozen[@]}" --init_from_hf "$WORK/U" --metrics_file "$WORK/u.jsonl" >/dev/null
close "untied: masked, document-masked loss = HF per conversation" \
  "$(metric "$WORK/u.jsonl" train 1 loss)" "$ref_u" $tol
train 1 "${l3[@]}" "${frozen[@]}" --init_from_hf "$WORK/T" --metrics_file "$WORK/n.jsonl" \
  --document_masking 0 >/dev/null
far_apart "--document_masking 0 (attention across conversations) is far from it" \
  "--document_masking 0 changed nothing" "$ref_t" "$(metric "$WORK/n.jsonl" train 1 loss)"

if out=$(train 1 --preset tiny --dataset "$data" --max_steps 1 --document_masking 2 2>&1); then
  fail "--document_masking 2 accepted"
else
  contains "--document_masking 2 refused by name" "$out" "--document_masking"
fi

# The same global batch of 4 windows, split over ranks and micro-steps.
common=(--preset tiny --dataset "$data" --max_steps 8 --num_threads 1 --lr 1e-3 --warmup_steps 2
        --epochs 0 --validation_freq 4 --validation_batches 2 --val_batch_size 1)
train 1 "${common[@]}" --train_batch_size 4 >"$WORK/w1.out"
losses <"$WORK/w1.out" >"$WORK/w1"
[[ $(wc -l <"$WORK/w1") == 8 ]] && pass "world 1: 8 steps on the chat set" || fail "world 1: $(cat "$WORK/w1.out")"
trained() { sed -n 's/^\[train\].* trained_tokens=\([0-9]*\).*/\1/p' "$1"; }
trained "$WORK/w1.out" >"$WORK/w1.trained"
run_same() {  # DESCRIPTION NPROC ARGS...: the first ${steps:-8} steps against world 1's
  local what=$1 n=$2 k=${steps:-8}
  shift 2
  train "$n" "${common[@]}" "$@" >"$WORK/x.out"
  losses <"$WORK/x.out" | head -n "$k" >"$WORK/x"
  head -n "$k" "$WORK/w1" >"$WORK/w1.head"
  same_losses "$what = world 1" "$WORK/w1.head" "$WORK/x" $tol
  trained "$WORK/x.out" | head -n "$k" | cmp -s - <(head -n "$k" "$WORK/w1.trained") &&
    pass "$what: same trained_tokens" || fail "$what: trained_tokens differ"
}
run_same "world 2 (shm)" 2 --train_batch_size 2
grep -q '^\[comm\] group=world ranks=2 transport=shm' "$WORK/x.out" || fail "world 2 did not use shm"
sed -n 's/^\[val\] step=\([0-9]*\) val_loss=\([0-9.]*\).*/\1 \2/p' "$WORK/w1.out" >"$WORK/w1.val"
sed -n 's/^\[val\] step=\([0-9]*\) val_loss=\([0-9.]*\).*/\1 \2/p' "$WORK/x.out" >"$WORK/x.val"
[[ $(wc -l <"$WORK/w1.val") == 2 ]] && pass "validation lines on the chat set" || fail "no [val] lines"
WIREUP_CPU_COMM=gloo run_same "world 2 (Gloo)" 2 --train_batch_size 2
run_same "world 4" 4 --train_batch_size 1
run_same "world 2, accumulation 2x1" 2 --train_batch_size 1 --grad_accum 2
# (the first epoch only: the loader ends an epoch on whole micro-batches of
# B*W windows, so with 1x1 micro-batches and 25 windows its first epoch is 25
# windows long, where batches of 4 drop the 25th)
steps=6 run_same "world 1, accumulation 4x1" 1 --train_batch_size 1 --grad_accum 4
run_same "world 4 hybrid" 4 --train_batch_size 1 --sharding_strategy hybrid
run_same "world 2, activation checkpointing" 2 --train_batch_size 2 --activation_checkpointing 1

# wireup-train eval on a chat set: its packed windows, document-masked, the
# mean over the trained targets: the HF reference over every window, and the
# same figure at world 2; a count of windows that does not divide is refused.
jloss() { sed -n 's/.*"loss":\([^,}]*\).*/\1/p' "$1"; }
ev() { "$WIREUP_TRAIN" eval --data "$data" --split train --max_context_width 64 "$@"; }
ev --init_from_hf "$WORK/T" --eval_batches "$windows" --eval_batch_size "$windows" \
  --metrics_file "$WORK/ev.json" >/dev/null
close "eval, tied + rope-scaled: masked loss = HF per conversation" \
  "$(jloss "$WORK/ev.json")" "$ref_t" $tol
contains "eval counts the trained targets" "$(cat "$WORK/ev.json")" "\"tokens\":$trained_t"
ev --init_from_hf "$WORK/U" --eval_batches 24 --eval_batch_size 12 --metrics_file "$WORK/e1.json" >/dev/null
"$WIREUP_LAUNCH" --standalone --nproc-per-node=2 --no-prefix --local-ranks-filter=0 -- \
  "$WIREUP_TRAIN" eval --data "$data" --split train --max_context_width 64 --init_from_hf "$WORK/U" \
  --eval_batches 24 --eval_batch_size 6 --metrics_file "$WORK/e2.json" >/dev/null
close "eval on 24 windows: world 2 = world 1" "$(jloss "$WORK/e2.json")" "$(jloss "$WORK/e1.json")" 1e-6
# A preference data set is refused by name (eval on pairs is DPO's, docs/dpo.md), never
# read as a token stream.
python3 "$HERE/../token_data.py" "$WORK/pairs" --vocab 512 --train 300 --validation 100 --preference
rc=0
out=$("$WIREUP_TRAIN" eval --data "$WORK/pairs" --max_context_width 64 --init_from_hf "$WORK/U" \
  --eval_batches 1 2>&1) || rc=$?
if ((rc == 2)); then
  contains "eval: a preference data set refused" "$out" "a preference data set (pairs of chosen"
else
  fail "eval on a preference data set: exit $rc, wanted 2: $out"
fi
if out=$(ev --init_from_hf "$WORK/U" --eval_batches 5 --eval_batch_size 2 2>&1); then
  fail "eval accepted 5 windows in passes of 2: $out"
else
  contains "eval: windows not a multiple of the pass refused" "$out" "must be a multiple of"
fi
finish
