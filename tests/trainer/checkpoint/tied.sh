#!/usr/bin/env bash
# A tied, rope-scaled (Llama 3.2-style) model through checkpoints: the
# embedding stored once and the model config recorded; async saves and resume
# bit-exact; resharding world 2 -> 1 and 1 -> 2 carries the weights bit for
# bit; the tied gradient reduces right at world 2 (same losses as world 1); a
# resume with other tying or rope scaling is refused.
source "$(dirname "$0")/lib.sh"
l3=(--preset tiny --rope_theta 500000 --rope_scaling 'llama3:8,1,4,64' --tie_word_embeddings 1)
args=("${l3[@]}" --synthetic_data --max_steps 12 --num_threads 1 --lr 1e-3 --warmup_steps 2)

train 1 "${args[@]}" --train_batch_size 4 | losses >"$WORK/w1"
train 2 "${args[@]}" --train_batch_size 2 --checkpoint_dir "$WORK/a" --checkpoint_freq 6 \
  --keep_checkpoints 0 >"$WORK/a.log"
losses <"$WORK/a.log" >"$WORK/w2"
same_losses "tied: world 2 = world 1 (the gradient of both uses reduced once)" "$WORK/w1" "$WORK/w2" 1e-5

python3 - "$WORK/a/step-00000006/metadata.json" <<'EOF' && pass "metadata: head = final norm, model config recorded" || fail "metadata"
import json, sys
m = json.load(open(sys.argv[1]))
units = m["units"]
assert [p["name"] for p in units[-1]["params"]] == ["norm.weight"], units[-1]
assert sum(u["numel"] for u in units) == 125248, [u["numel"] for u in units]  # the embedding once
mo = m["model"]
assert mo["tie_word_embeddings"] is True and mo["rope_theta"] == 500000.0, mo
assert mo["rope_scaling"] == {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                              "high_freq_factor": 4.0, "original_max_position_embeddings": 64}, mo
EOF

# Same world, async saves, a planned stop: bit-identical to the uninterrupted run.
train 2 "${args[@]}" --train_batch_size 2 --checkpoint_dir "$WORK/b" --async_checkpointing 1 \
  --stop_after_step 5 >/dev/null
train 2 "${args[@]}" --train_batch_size 2 --checkpoint_dir "$WORK/b" --async_checkpointing 1 \
  --resume_from_checkpoint auto >"$WORK/b.log"
tail -n 7 "$WORK/w2" >"$WORK/w2.tail"
losses <"$WORK/b.log" >"$WORK/b.loss"
cmp -s "$WORK/w2.tail" "$WORK/b.loss" && pass "async save, resume at world 2: identical losses" ||
  fail "resumed losses differ: $(paste "$WORK/w2.tail" "$WORK/b.loss" | tr '\n' ' ')"
diff <(fingerprint "$WORK/a/step-00000012") <(fingerprint "$WORK/b/step-00000012") >/dev/null &&
  pass "async save, resume: final weights bit-identical" || fail "final weights differ"

# Reshard: a step at learning rate ~0 on the other world size, saved again,
# holds the same weights bit for bit (export compares the model's tensors).
tensor_data() {  # the SHA-256 of a safetensors file's data (its header names the step)
  python3 -c '
import hashlib, struct, sys
b = open(sys.argv[1], "rb").read()
print(hashlib.sha256(b[8 + struct.unpack("<Q", b[:8])[0]:]).hexdigest())' "$1"
}
# reshard NAME FROM_STEP_DIR WORLD OUT_DIR FROM_STEP [FROM_EXPORT]: FROM_EXPORT, when given, is
# FROM_STEP_DIR's export already made (the previous reshard's result), not exported again.
reshard() {
  train "$3" "${l3[@]}" --synthetic_data --num_threads 1 --train_batch_size $((4 / $3)) \
    --lr 1e-30 --min_lr 0 --max_steps $(($5 + 1)) --checkpoint_dir "$4" --resume_from_checkpoint "$2" >"$4.log"
  grep -q "^\[resume\] step=$5 " "$4.log" || fail "$1: did not resume at step $5: $(grep resume "$4.log")"
  local before=${6:-$4.before}
  [[ -n ${6:-} ]] || "$WIREUP_TRAIN" export --checkpoint "$2" --out "$before" >/dev/null
  "$WIREUP_TRAIN" export --checkpoint "$4" --out "$4.after" >/dev/null
  [[ $(tensor_data "$before/model.safetensors") == $(tensor_data "$4.after/model.safetensors") ]] &&
    pass "$1: weights bit-identical after resharding" || fail "$1: weights changed"
}
reshard "world 2 -> 1" "$WORK/a/step-00000006" 1 "$WORK/r1" 6
# r1's newest (and only) step is 7: r1.after is r1/step-00000007's export.
[[ $(find "$WORK/r1" -maxdepth 1 -name 'step-*' -printf '%f\n') == step-00000007 ]] ||
  fail "r1 holds other steps than 7: $(ls "$WORK/r1")"
reshard "world 1 -> 2" "$WORK/r1/step-00000007" 2 "$WORK/r2" 7 "$WORK/r1.after"

# Other tying or rope scaling than the checkpoint's: exit 2, the reason named.
set +e
out=$(train 1 "${args[@]}" --train_batch_size 4 --rope_scaling 'llama3:32,1,4,64' \
  --resume_from_checkpoint "$WORK/a/step-00000006" 2>&1)
rc=$?
set -e
((rc != 0)) && [[ $out == *"saved with --rope_scaling llama3:8,1,4,64, this run has llama3:32,1,4,64"* ]] &&
  pass "resume with other rope scaling refused" || fail "rope scaling mismatch: exit $rc: $out"
set +e
out=$(train 1 "${args[@]}" --train_batch_size 4 --tie_word_embeddings 0 \
  --resume_from_checkpoint "$WORK/a/step-00000006" 2>&1)
rc=$?
set -e
((rc != 0)) && [[ $out == *"saved from a different model shape"* ]] &&
  pass "resume of a tied checkpoint untied refused" || fail "tying mismatch: exit $rc: $out"
finish
