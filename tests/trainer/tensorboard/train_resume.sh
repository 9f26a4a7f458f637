#!/usr/bin/env bash
# wireup-train --tensorboard_dir on 2 ranks: a run logs steps 1..6 (a
# checkpoint at 4, a validation every 2), a second resumes from step 4's
# checkpoint and logs 5..10 into the same directory. check_events.py reads
# the files as TensorBoard does (its own CRC-32C, protobuf's Python runtime):
# every [train] figure and val_loss of rank 0's lines, each step once, the
# first run's steps 5 and 6 dropped by the resume's START. Also: only rank 0
# writes, and a directory that cannot be made is exit 2 before any step.
# Needs /usr/bin/python3 with python3-protobuf and protoc (else exit 77).
source "$(dirname "$0")/../lib.sh"
here=$(dirname "$0")
if ! /usr/bin/python3 -c 'import google.protobuf' 2>/dev/null || ! command -v protoc >/dev/null; then
  echo "SKIP: needs python3-protobuf and protoc"
  exit 77
fi

args=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 2 --validation_freq 2
      --validation_batches 1 --checkpoint_freq 4 --keep_checkpoints 0
      --checkpoint_dir "$WORK/ck" --tensorboard_dir "$WORK/tb/run")

train 2 "${args[@]}" --max_steps 6 >"$WORK/run1.log"
train 2 "${args[@]}" --max_steps 10 --resume_from_checkpoint "$WORK/ck/step-00000004" \
  >"$WORK/run2.log"
file_contains "the resume starts at step 5" "$WORK/run2.log" "[tensorboard] file="
file_contains "the resume's first step" "$WORK/run2.log" " first_step=5"
check "one event file per run (rank 0's)" "$(find "$WORK/tb/run" -type f | wc -l)" 2

# Steps 5 and 6 of the first run: 8 [train] figures each, and val_loss at 6.
if /usr/bin/python3 "$here/check_events.py" "$WORK/tb/run" "$WORK/run1.log" "$WORK/run2.log" \
  --expect_restarts 1 --min_purged 17 >"$WORK/check.out"; then
  pass "event files decode: $(tail -1 "$WORK/check.out")"
else
  fail "event files: $(cat "$WORK/check.out")"
fi

# A directory that cannot be made: exit 2 naming the flag, before any step.
touch "$WORK/plain-file"
set +e
train 1 --preset tiny --synthetic_data --max_steps 2 --tensorboard_dir "$WORK/plain-file/tb" \
  >"$WORK/bad.log" 2>&1
rc=$?
set -e
check "a bad --tensorboard_dir is exit 2" "$rc" 2
file_contains "the error names the flag" "$WORK/bad.log" "--tensorboard_dir: $WORK/plain-file/tb"
lacks "no step ran" "$(cat "$WORK/bad.log")" "[train] step="
finish
