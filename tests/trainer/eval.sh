#!/usr/bin/env bash
# wireup-train eval: the loss equals an independent computation (hf_llama.py's
# Hugging Face Llama on the windows read straight from the shards), on both
# splits and across a shard boundary; world 2 (wireup-launch) gives the same
# bits as world 1, with the windows split unevenly; a wireup checkpoint
# evaluates as its Hugging Face export does; bad input is a clear error.
source "$(dirname "$0")/hf/lib.sh"
need_torch
TRAINER_TESTS=$(cd "$(dirname "$0")" && pwd)
hf() { "$TORCH_PY" "$HERE/hf_llama.py" "$@"; }
ref() { "$TORCH_PY" "$HERE/eval_reference.py" "$@"; }
data() { python3 "$TRAINER_TESTS/token_data.py" "$@"; }
ev() { local n=$1; shift; timeout 120 "$WIREUP_LAUNCH" --standalone --nproc-per-node="$n" \
  --no-prefix --local-ranks-filter=0 -- "$WIREUP_TRAIN" eval --num_threads 1 "$@"; }
jloss() { python3 -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))["loss"]))' "$1"; }
same() {  # DESCRIPTION A B: bit-identical losses (repr of the double)
  [[ -n $2 && $2 == "$3" ]] && pass "$1 ($2)" || fail "$1: $2 vs $3"
}

# Data: 500-token vocabulary; train is two shards of 700 tokens, validation one of 1000.
data "$WORK/D" --vocab 500 --train 700,700 --validation 1000 --seed 3
hf make "$WORK/S" --qk_scale 1.0  # the tiny shapes, vocabulary 512, sharp attention
D=(--data "$WORK/D")

# World 1 against the reference: validation, 30 of the 31 windows that fit (T=32).
ev 1 --init_from_hf "$WORK/S" "${D[@]}" --max_context_width 32 --eval_batches 30 \
  --metrics_file "$WORK/v1.json" >"$WORK/v1.out"
grep -q '^\[eval\] loss=[0-9.]* ppl=[0-9.]* tokens=960 windows=30$' "$WORK/v1.out" &&
  pass "the [eval] line: tokens=960 windows=30" || fail "eval line: $(cat "$WORK/v1.out")"
python3 -c 'import json, math, sys; j = json.load(open(sys.argv[1]))
assert j["type"] == "eval" and j["split"] == "validation" and j["context"] == 32, j
assert abs(j["ppl"] - math.exp(j["loss"])) < 1e-9 * j["ppl"], j' "$WORK/v1.json" &&
  pass "--metrics_file: one JSON object, ppl = exp(loss)" || fail "metrics file: $(cat "$WORK/v1.json")"
[[ ! -e $WORK/v1.json.tmp ]] && pass "no temporary metrics file left" || fail "v1.json.tmp left"
close "validation, world 1 = HF reference" "$(jloss "$WORK/v1.json")" \
  "$(ref "$WORK/S" "$WORK/D" --split validation --context 32 --windows 30)" 1e-5

# Train split, T=64: all 21 windows; window 10 (tokens 640..704) crosses the shard boundary at 700.
tr=(--init_from_hf "$WORK/S" "${D[@]}" --split train --max_context_width 64 --eval_batches 21
  --eval_batch_size 5)
ev 1 "${tr[@]}" --metrics_file "$WORK/t1.json" >/dev/null
close "train split across shards, world 1 = HF reference" "$(jloss "$WORK/t1.json")" \
  "$(ref "$WORK/S" "$WORK/D" --split train --context 64 --windows 21)" 1e-5

# World 2: chunks of 5 windows (5 5 5 5 1): rank 0 takes 3, rank 1 two and a padding pass.
ev 2 "${tr[@]}" --metrics_file "$WORK/t2.json" >/dev/null
same "train split: world 2 = world 1, bit for bit" "$(jloss "$WORK/t2.json")" "$(jloss "$WORK/t1.json")"
ev 2 --init_from_hf "$WORK/S" "${D[@]}" --max_context_width 32 --eval_batches 30 \
  --metrics_file "$WORK/v2.json" >/dev/null
same "validation: world 2 = world 1, bit for bit" "$(jloss "$WORK/v2.json")" "$(jloss "$WORK/v1.json")"
# Another batching gives the same loss up to fp32 summation order.
ev 1 "${tr[@]}" --eval_batch_size 1 --metrics_file "$WORK/t1b1.json" >/dev/null
close "--eval_batch_size 1 = 5" "$(jloss "$WORK/t1b1.json")" "$(jloss "$WORK/t1.json")" 1e-6

# A wireup checkpoint (trained on the data, 2 ranks): --resume_from_checkpoint at world 1
# (the checkpoint directory: its newest step) and 2 (the step directory), and its HF export.
train 2 --preset tiny --vocab_size 512 --max_context_width 32 --dataset "$WORK/D" --max_steps 3 \
  --train_batch_size 2 --lr 3e-3 --num_threads 1 --checkpoint_dir "$WORK/ck" >/dev/null
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/ck-hf" >/dev/null
ck=(--max_context_width 32 --eval_batches 30 "${D[@]}")
ev 1 --resume_from_checkpoint "$WORK/ck" "${ck[@]}" --metrics_file "$WORK/c1.json" >"$WORK/c1.out"
grep -q "^\[init\] from_checkpoint=$WORK/ck/step-00000003$" "$WORK/c1.out" &&
  pass "a checkpoint directory: its newest step" || fail "checkpoint: $(cat "$WORK/c1.out")"
ev 2 --resume_from_checkpoint "$WORK/ck/step-00000003" "${ck[@]}" --metrics_file "$WORK/c2.json" >/dev/null
same "checkpoint: world 2 = world 1" "$(jloss "$WORK/c2.json")" "$(jloss "$WORK/c1.json")"
ev 1 --init_from_hf "$WORK/ck-hf" "${ck[@]}" --metrics_file "$WORK/ch.json" >/dev/null
same "checkpoint = its Hugging Face export" "$(jloss "$WORK/ch.json")" "$(jloss "$WORK/c1.json")"
close "trained checkpoint = HF reference" "$(jloss "$WORK/c1.json")" \
  "$(ref "$WORK/ck-hf" "$WORK/D" --split validation --context 32 --windows 30)" 1e-5
awk -v a="$(jloss "$WORK/c1.json")" -v b="$(jloss "$WORK/v1.json")" 'BEGIN { exit !(a != b) }' &&
  pass "other weights, another loss" || fail "the checkpoint's loss equals the random model's"

# Bad input: exit 2, the reason named, on every rank before any collective.
expect_error() {  # DESCRIPTION NEEDLE NPROC ARGS...
  local what=$1 needle=$2 n=$3 out rc
  shift 3
  set +e
  out=$(ev "$n" "$@" 2>&1)
  rc=$?
  set -e
  ((rc != 0 && rc != 124)) && [[ $out == *"$needle"* && $out != *"fatal"* ]] &&
    pass "$what: '$needle'" || fail "$what: rc=$rc: $out"
}
hf_args=(--init_from_hf "$WORK/S" "${D[@]}" --max_context_width 32)
expect_error "too few tokens" "1000 tokens hold 31 windows of 33 tokens" 1 "${hf_args[@]}" --eval_batches 40
expect_error "too few tokens, world 2" "pass --eval_batches 31 or less" 2 "${hf_args[@]}" --eval_batches 40
expect_error "no window fits" "hold 0 windows" 1 --init_from_hf "$WORK/S" "${D[@]}" \
  --max_context_width 2000 --eval_batches 1
expect_error "N=0" "--eval_batches 0: expected at least 1 window" 1 "${hf_args[@]}" --eval_batches 0
data "$WORK/no-val" --vocab 500 --train 700
expect_error "missing split" "(validation split): the split is empty" 1 --init_from_hf "$WORK/S" \
  --data "$WORK/no-val" --max_context_width 32 --eval_batches 1
data "$WORK/V1000" --vocab 1000 --validation 500
expect_error "data vocabulary above the model's" \
  "the model's vocab_size 512 (hf:$WORK/S) is smaller than the vocabulary of $WORK/V1000/manifest.json (1000 tokens)" \
  1 --init_from_hf "$WORK/S" --data "$WORK/V1000" --max_context_width 32 --eval_batches 1
expect_error "no directory for the result" "--metrics_file $WORK/nodir/e.json: no directory" 2 \
  "${hf_args[@]}" --eval_batches 1 --metrics_file "$WORK/nodir/e.json"
expect_error "no weights" "exactly one of --init_from_hf" 1 "${D[@]}" --max_context_width 32 --eval_batches 1
expect_error "missing HF directory" "--init_from_hf $WORK/none: no such directory" 1 \
  --init_from_hf "$WORK/none" "${D[@]}" --max_context_width 32 --eval_batches 1
expect_error "missing checkpoint" "$WORK/S: no complete checkpoint" 1 \
  --resume_from_checkpoint "$WORK/S" "${D[@]}" --max_context_width 32 --eval_batches 1
data "$WORK/bad-id" --vocab 500 --validation 1000 --bad_token 100
expect_error "a token past the vocabulary in a shard whose checksum matches" \
  "$WORK/bad-id/validation-00000.bin: token 100" 1 --init_from_hf "$WORK/S" --data "$WORK/bad-id" \
  --max_context_width 32 --eval_batches 30

# Hybrid sharding with 3 ranks, 2 per node: every rank refuses it before any collective.
set +e
for r in 0 1 2; do
  RANK=$r WORLD_SIZE=3 LOCAL_RANK=$((r % 2)) LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=29745 timeout 60 "$WIREUP_TRAIN" eval "${hf_args[@]}" --eval_batches 1 \
    --sharding_strategy hybrid >"$WORK/h$r" 2>&1 &
done
codes=()
for job in $(jobs -p); do wait "$job"; codes+=($?); done
set -e
[[ ${codes[*]} == "2 2 2" ]] && grep -q "not a multiple of the local world size" "$WORK/h2" &&
  pass "eval: hybrid misfit refused by every rank" || fail "eval hybrid misfit: ${codes[*]} $(cat "$WORK/h2")"

# Training checks the data's vocabulary before any step too: Llama 3 data (128256, uint32
# tokens) for a 32000-token model.
data "$WORK/L3" --vocab 128256 --train 300
set +e
msg=$("$WIREUP_TRAIN" --preset tiny --vocab_size 32000 --dataset "$WORK/L3" --max_steps 1 2>&1)
rc=$?
set -e
((rc == 2)) && [[ $msg == *"--vocab_size 32000 is smaller than the vocabulary of $WORK/L3 (128256 tokens)"* &&
  $msg != *"[train]"* ]] && pass "train: 128256-token data for a 32000-token model refused before any step" ||
  fail "train vocabulary check: rc=$rc $msg"
finish
