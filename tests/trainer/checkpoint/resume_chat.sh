#!/usr/bin/env bash
# Exact resume on a chat data set (packed conversations with loss masks): a
# run stopped mid-epoch (--stop_after_step) and one whose rank is killed with
# SIGKILL, each resumed from its newest checkpoint, end with the losses and
# bit-identical weights of an uninterrupted run (the loader's position, the
# masks and the segments of every later batch are the same).
source "$(dirname "$0")/lib.sh"
python3 "$(dirname "$0")/../token_data.py" "$WORK/chat" --vocab 512 --train 1200,400 --chat 30 --seed 5
steps=40
final=$(printf 'step-%08d' "$steps")
args=(--preset tiny --dataset "$WORK/chat" --epochs 0 --max_steps "$steps" --num_threads 1
      --train_batch_size 2 --checkpoint_freq 2 --keep_checkpoints 2)

train 2 "${args[@]}" --checkpoint_dir "$WORK/a" >"$WORK/a.log"
losses <"$WORK/a.log" >"$WORK/a.loss"
windows=$(sed -n 's/^\[data\] chat data set: packed windows=\([0-9]*\) .*/\1/p' "$WORK/a.log")
[[ $(wc -l <"$WORK/a.loss") == "$steps" ]] && pass "uninterrupted: $steps steps over $windows windows" ||
  fail "uninterrupted run: $(tail -3 "$WORK/a.log")"
grep -q 'trained_tokens=' "$WORK/a.log" && pass "the chat set trains (trained_tokens)" || fail "no trained_tokens"

# Planned stop mid-epoch (4 windows a step: step 9 ends inside an epoch).
stop=9
train 2 "${args[@]}" --checkpoint_dir "$WORK/b" --stop_after_step "$stop" >"$WORK/b1.log"
grep -q "^\[stop\] --stop_after_step: checkpoint of step $stop" "$WORK/b1.log" &&
  pass "--stop_after_step $stop" || fail "no planned stop: $(tail -2 "$WORK/b1.log")"
(( (stop * 4) % windows != 0 )) && pass "step $stop ends mid-epoch" || fail "step $stop ends an epoch"
train 2 "${args[@]}" --checkpoint_dir "$WORK/b" --resume_from_checkpoint auto >"$WORK/b2.log"
resumed_as_uninterrupted "$((steps - stop))" "$WORK/b2.log" "$WORK/a/$final" "$WORK/b/$final"

# SIGKILL of rank 1 once a checkpoint exists, then resume to the end.
train 2 "${args[@]}" --checkpoint_dir "$WORK/k" >"$WORK/k1.log" 2>&1 &
launcher=$!
for _ in $(seq 600); do
  compgen -G "$WORK/k/step-*/metadata.json" >/dev/null && break
  sleep 0.05
done
victim=""
for pid in $(pgrep -f -- "--checkpoint_dir $WORK/k" || true); do
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == wireup-train ]] && victim=$pid
done
# Stopped first: a rank that is stopped ("T") is alive, so the SIGKILL lands on a
# running rank; one that already exited (gone, or a zombie) ended the run first.
killed=0
if [[ -n $victim ]] && kill -STOP "$victim" 2>/dev/null; then
  for _ in $(seq 100); do
    state=$(awk '{print $3}' "/proc/$victim/stat" 2>/dev/null || true)
    [[ $state == [TtZX] || -z $state ]] && break
    sleep 0.01
  done
  [[ $state == [Tt] ]] && kill -9 "$victim" && killed=1
  ((killed)) || kill -CONT "$victim" 2>/dev/null || true
fi
set +e; wait "$launcher"; rc=$?; set -e
if ((killed)); then
  ((rc != 0)) && pass "a rank killed with SIGKILL: the run failed (exit $rc)" ||
    fail "the run survived the kill"
  train 2 "${args[@]}" --checkpoint_dir "$WORK/k" --resume_from_checkpoint auto >"$WORK/k2.log"
  grep -q '^\[resume\] step=' "$WORK/k2.log" && pass "resumed: $(grep -o '^\[resume\] step=[0-9]*' "$WORK/k2.log")" ||
    fail "no resume line"
else
  pass "the run ended before the kill landed (nothing to resume)"
fi
if diff <(fingerprint "$WORK/a/$final") <(fingerprint "$WORK/k/$final") >/dev/null; then
  pass "after SIGKILL and resume: final weights bit-identical"; else fail "killed run differs"; fi
finish
