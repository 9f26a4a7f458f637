#!/usr/bin/env bash
# kill -9 of a rank at random moments, checkpoint writes included, over
# repeated runs: every restart resumes from the newest complete checkpoint and
# the run ends with the weights of an uninterrupted one.
source "$(dirname "$0")/lib.sh"
args=(--preset tiny --synthetic_data --max_steps 150 --num_threads 1 --train_batch_size 2
      --checkpoint_freq 2 --keep_checkpoints 3)
train 2 "${args[@]}" --checkpoint_dir "$WORK/ref" >/dev/null

newest_step() {
  local d
  d=$(find "$WORK/run" -maxdepth 2 -name metadata.json 2>/dev/null | sort | tail -1)
  [[ -n $d ]] || { echo 0; return; }
  d=${d%/metadata.json}
  echo $((10#${d##*step-}))
}
kills=0 attempts=0
RANDOM=${WIREUP_TEST_SEED:-42}
while ((attempts < 30)); do
  attempts=$((attempts + 1))
  train 2 "${args[@]}" --checkpoint_dir "$WORK/run" --resume_from_checkpoint auto \
    >"$WORK/attempt$attempts.log" 2>&1 &
  launcher=$!
  if ((kills < 5)); then
    # Once this attempt has saved a checkpoint of its own, strike within the
    # next few steps: mid-step or mid-save, wherever it lands.
    before=$(newest_step)
    for _ in $(seq 400); do
      (($(newest_step) > before)) && break
      sleep 0.02
    done
    sleep "0.0$((RANDOM % 10))"
    # a training rank, not the launcher: the processes running wireup-train
    ranks=()
    for pid in $(pgrep -f -- "--checkpoint_dir $WORK/run" || true); do
      [[ $(cat "/proc/$pid/comm" 2>/dev/null) == wireup-train ]] && ranks+=("$pid")
    done
    victim=${ranks[$((RANDOM % (${#ranks[@]} > 0 ? ${#ranks[@]} : 1)))]:-}
    if [[ -n $victim ]]; then
      kill -9 "$victim" 2>/dev/null && kills=$((kills + 1))
    fi
  fi
  set +e; wait "$launcher"; rc=$?; set -e
  if grep -q '^\[summary\]' "$WORK/attempt$attempts.log" && ((rc == 0)); then break; fi
  resumed=$(grep -o '^\[resume\] step=[0-9]*' "$WORK/attempt$attempts.log" || echo "fresh start")
  echo "attempt $attempts: killed (exit $rc), had: $resumed"
done
echo "$kills kill(s), $attempts attempt(s)"
((kills >= 3)) && pass "$kills ranks killed with SIGKILL" || fail "only $kills kills landed"
grep -q '^\[summary\]' "$WORK/attempt$attempts.log" && pass "the run finished" || fail "never finished"
if diff <(fingerprint "$WORK/ref/step-00000150") <(fingerprint "$WORK/run/step-00000150") >/dev/null; then
  pass "final weights bit-identical to the uninterrupted run"; else fail "final weights differ"; fi
finish
