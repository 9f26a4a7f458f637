#!/usr/bin/env bash
# A tiny model learns real English: the demo corpus (Debian's fortunes,
# prepared by wireup-prep), 100 steps on 2 ranks; loss falls well below its
# start (ln(vocab) ~ 6.9) and validation follows.
# The corpus and the trained model are the lane's demo fixture: with
# WIREUP_DEMO_FIXTURE_DIR (ctest) they are made there, and marked ready once every
# check passed; trainer_lora (lora/lora.sh) adapts that model instead of training
# the same one again.
source "$(dirname "$0")/lib.sh"
: "${WIREUP_PREP:?}" "${WIREUP_DEMO_CORPUS_SCRIPT:?}"
fixture=${WIREUP_DEMO_FIXTURE_DIR:-$WORK/fixture}
rm -rf "$fixture"
mkdir -p "$fixture"
corpus=$fixture/corpus
bash "$WIREUP_DEMO_CORPUS_SCRIPT" --no-install --vocab-size 1000 --prep "$WIREUP_PREP" "$corpus"
out=$(train 2 --preset tiny --vocab_size 1000 --max_context_width 128 --dataset "$corpus" \
  --max_steps 100 --train_batch_size 4 --lr 3e-3 --warmup_steps 10 --min_lr 3e-4 \
  --logging_freq 10 --validation_freq 100 --validation_batches 4 --num_threads 1 \
  --metrics_file "$WORK/metrics.jsonl" --checkpoint_dir "$fixture/base")
echo "$out"
first=$(sed -n 's/.*first_loss=\([0-9.]*\).*/\1/p' <<<"$out")
final=$(sed -n 's/.*final_loss=\([0-9.]*\).*/\1/p' <<<"$out")
val=$(sed -n 's/^\[val\] step=100 val_loss=\([0-9.]*\).*/\1/p' <<<"$out")
awk -v f="$first" -v l="$final" 'BEGIN { exit !(f > 6.5 && l < 0.8 * f) }' &&
  pass "training loss $first -> $final" || fail "did not learn: $first -> $final"
awk -v f="$first" -v v="$val" 'BEGIN { exit !(v != "" && v < 0.8 * f) }' &&
  pass "validation loss $val" || fail "validation loss '$val' vs first $first"
lines=$(grep -c '"type":"train"' "$WORK/metrics.jsonl")
[[ $lines == 10 ]] && pass "metrics JSONL: 10 train records" || fail "metrics JSONL has $lines train records"
grep -q '"type":"validation","step":100' "$WORK/metrics.jsonl" && pass "metrics JSONL: validation" ||
  fail "no validation record"
# Time spent getting batches: part of every step, and summed in the summary.
wait_pct=$(sed -n 's/^\[summary\].* data_wait_pct=\([0-9.]*\).*/\1/p' <<<"$out")
awk -v p="$wait_pct" 'BEGIN { exit !(p != "" && p >= 0 && p < 100) }' &&
  pass "summary: data wait $wait_pct% of step time" || fail "summary data_wait_pct '$wait_pct'"
/usr/bin/python3 - "$WORK/metrics.jsonl" <<'PY' && pass "metrics JSONL: data_wait_s within step_time_s" ||
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
assert recs and all(0 <= r["data_wait_s"] <= r["step_time_s"] for r in recs), recs
PY
  fail "metrics JSONL: data_wait_s missing or beyond step_time_s"

# A model vocabulary smaller than the data's: a clear error, not an index crash.
set +e
msg=$("$WIREUP_TRAIN" --preset tiny --vocab_size 500 --dataset "$corpus" --max_steps 1 2>&1); rc=$?
set -e
((rc == 2)) && [[ $msg == *"--vocab_size 500 is smaller than the vocabulary"* ]] &&
  pass "vocabulary mismatch explained" || fail "vocabulary mismatch: rc=$rc $msg"
[[ -f $fixture/base/step-00000100/metadata.json ]] && pass "the trained model saved for the fixture" ||
  fail "no checkpoint of step 100 in $fixture/base"
((FAILS)) || touch "$fixture/ready"
finish
