#!/usr/bin/env bash
# Conversations longer than the window (docs/sft.md): the loader cuts each to its
# first T + 1 tokens (Overlong::Truncate); the [data] line counts the cut ones
# (truncated) and those the cut leaves without a trained target (untrained). When
# that is every conversation, nothing would be trained: exit 2 before any step,
# naming the data set and the window. Llama 3's real tokenizer, wireup-prep.
# shellcheck source=tests/trainer/lib.sh
source "$(dirname "$0")/lib.sh"
: "${WIREUP_VOCAB_DIR:?}" "${WIREUP_PREP:?}"
TOK=$WIREUP_VOCAB_DIR/llama3.tiktoken
[[ -f $TOK ]] || { echo "FAIL: $TOK missing (tests/data/vocab/fetch-vocab.sh)" >&2; exit 1; }

# 30 conversations with a long prompt (about 37 tokens), 10 with a short one (about 20).
python3 - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
long = [{"prompt": "Please tell me, in great detail, the very long story number %d of the "
         "colour of the zorbl and its friends" % i, "completion": "red"} for i in range(30)]
short = [{"prompt": "Colour %d?" % i, "completion": "blue"} for i in range(10)]
for name, rows in (("long", long), ("mixed", long + short)):
    with open(f"{w}/{name}.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
EOF
for set in long mixed; do
  "$WIREUP_PREP" "$WORK/$set.jsonl" --tokenizer "$TOK" --chat-template llama3 --val-fraction 0 \
    -o "$WORK/$set" -q >"$WORK/prep-$set.log" 2>&1 || fail "wireup-prep $set: $(tail -3 "$WORK/prep-$set.log")"
done
run() {  # DATASET CONTEXT [BATCH]: one step; prints the output, its exit code in $WORK/rc
  local rc=0
  "$WIREUP_TRAIN" --preset tiny --vocab_size 128256 --dataset "$1" --max_context_width "$2" \
    --max_steps 1 --num_threads 1 --train_batch_size "${3:-2}" >"$WORK/out" 2>&1 || rc=$?
  echo "$rc" >"$WORK/rc"
  cat "$WORK/out"
}

# Every conversation cut inside its prompt: refused before any step.
out=$(run "$WORK/long" 16)
check "window 17 tokens, every prompt longer: exit 2" "$(cat "$WORK/rc")" 2
contains "the [data] line counts them" "$out" "truncated=30 untrained=30"
contains "the error names the data set and the window" "$out" \
  "$WORK/long: every conversation is longer than a window (--max_context_width 16 + 1 tokens)"
if grep -q '^\[train\]' <<<"$out"; then fail "a step ran: $out"; else pass "no step ran"; fi

# Some conversations cut, the short ones whole: trained, the [data] line says which.
out=$(run "$WORK/mixed" 16 40)  # one step over all 40 windows
check "a set where short conversations remain trains" "$(cat "$WORK/rc")" 0
contains "[data]: 30 cut, 30 of them without a trained token" "$out" "truncated=30 untrained=30"
if grep -q '^\[train\] step=1/1 .* trained_tokens=[1-9]' <<<"$out"; then
  pass "the step trains the short conversations' tokens"
else fail "no trained tokens: $out"; fi

# A window longer than every conversation: nothing cut.
out=$(run "$WORK/long" 64)
check "window 65 tokens trains" "$(cat "$WORK/rc")" 0
contains "nothing cut" "$out" "truncated=0 untrained=0"
finish
