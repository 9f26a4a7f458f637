#!/usr/bin/env bash
# Resume is exact: a run stopped by SIGTERM and resumed (same world size)
# ends with bit-identical weights and the same losses as an uninterrupted run.
# Also: --stop_after_step, async saves, and --keep_checkpoints.
source "$(dirname "$0")/lib.sh"
# 200 steps of ~3 ms: long enough that the signal below lands before the end
# even on a loaded machine (at 40 the run could end between two polls).
steps=200
final=$(printf 'step-%08d' "$steps")
args=(--preset tiny --synthetic_data --max_steps "$steps" --num_threads 1 --train_batch_size 2
      --checkpoint_freq 5 --keep_checkpoints 2)

train 2 "${args[@]}" --checkpoint_dir "$WORK/a" >"$WORK/a.log"
losses <"$WORK/a.log" >"$WORK/a.loss"

# SIGTERM to every rank (as srun and wireup-launch deliver scancel) once a
# checkpoint exists (any: with --keep_checkpoints 2 a given one lives only
# ~10 steps): they save at the end of their step and exit cleanly.
pids=()
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29751 \
    "$WIREUP_TRAIN" "${args[@]}" --checkpoint_dir "$WORK/b" >"$WORK/b1.rank$r.log" 2>&1 &
  pids+=($!)
done
for _ in $(seq 600); do
  compgen -G "$WORK/b/step-*/metadata.json" >/dev/null && break
  sleep 0.05
done
kill -TERM "${pids[@]}" 2>/dev/null ||
  fail "the ranks ended before the signal: $(tail -2 "$WORK/b1.rank0.log")"
codes=()
for p in "${pids[@]}"; do set +e; wait "$p"; codes+=($?); set -e; done
[[ ${codes[*]} == "0 0" ]] && pass "SIGTERM: clean exit on both ranks" || fail "SIGTERM: exits ${codes[*]}"
cp "$WORK/b1.rank0.log" "$WORK/b1.log"
grep -q '^\[stop\] signal received: checkpoint of step' "$WORK/b1.log" && pass "SIGTERM: checkpoint saved" ||
  fail "no [stop] line: $(tail -3 "$WORK/b1.log")"
stopped=$(sed -n 's/^\[stop\].*step \([0-9]*\) saved.*/\1/p' "$WORK/b1.log")
[[ -f $WORK/b/$(printf 'step-%08d' "$stopped")/metadata.json ]] && pass "stop checkpoint $stopped complete" ||
  fail "stop checkpoint $stopped incomplete"

train 2 "${args[@]}" --checkpoint_dir "$WORK/b" --resume_from_checkpoint auto >"$WORK/b2.log"
grep -q "^\[resume\] step=$stopped " "$WORK/b2.log" && pass "resumed from step $stopped" ||
  fail "resume line: $(grep resume "$WORK/b2.log")"
# the resumed run's losses are the uninterrupted run's steps stopped+1..$steps
resumed_as_uninterrupted "$((steps - stopped))" "$WORK/b2.log" "$WORK/a/$final" "$WORK/b/$final"
kept=$(find "$WORK/b" -maxdepth 1 -name 'step-*' | wc -l)
((kept == 2)) && pass "--keep_checkpoints 2 keeps 2" || fail "$kept checkpoints kept"

# Planned stop and async saves give the same final state.
train 2 "${args[@]}" --checkpoint_dir "$WORK/c" --async_checkpointing 1 --stop_after_step 17 >"$WORK/c1.log"
grep -q '^\[stop\] --stop_after_step: checkpoint of step 17' "$WORK/c1.log" && pass "--stop_after_step 17" ||
  fail "no planned stop"
train 2 "${args[@]}" --checkpoint_dir "$WORK/c" --async_checkpointing 1 --resume_from_checkpoint auto >"$WORK/c2.log"
if diff <(fingerprint "$WORK/a/$final") <(fingerprint "$WORK/c/$final") >/dev/null; then
  pass "async + planned stop: final weights bit-identical"; else fail "async run differs"; fi
finish
