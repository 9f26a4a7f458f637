#!/usr/bin/env bash
# Flipped bytes and truncated shards are caught: the newest checkpoint is
# skipped with a warning naming it; a named broken checkpoint is an error.
source "$(dirname "$0")/lib.sh"
args=(--preset tiny --synthetic_data --max_steps 6 --num_threads 1 --train_batch_size 2
      --checkpoint_freq 2 --keep_checkpoints 0)
train 2 "${args[@]}" --checkpoint_dir "$WORK/ck" --stop_after_step 4 >/dev/null

flip() {  # FILE OFFSET
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $(((byte + 1) % 256)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
newest=$WORK/ck/step-00000004
cp -a "$newest" "$WORK/pristine"

# resume_check DESCRIPTION NEEDLE
resume_check() {
  set +e
  out=$(train_all 2 "${args[@]}" --checkpoint_dir "$WORK/ck" --resume_from_checkpoint auto --max_steps 4 2>&1)
  rc=$?
  set -e
  ((rc == 0)) && pass "$1: run goes on" || fail "$1: exit $rc"
  [[ $out == *"skipping checkpoint $newest"*"$2"* ]] && pass "$1: warning names the checkpoint and the fault" ||
    fail "$1: no warning with '$2': $out"
  [[ $out == *"[resume] step=2 "* ]] && pass "$1: fell back to step 2" || fail "$1: did not fall back"
}

flip "$newest/rank-00001.bin" 1000
resume_check "flipped byte" "checksum mismatch"
rm -rf "$newest"; cp -a "$WORK/pristine" "$newest"
truncate -s -4 "$newest/rank-00000.bin"
resume_check "truncated shard" "truncated"
rm -rf "$newest"; cp -a "$WORK/pristine" "$newest"
echo '{"format": "wireup-checkpoint", "version": 1' >"$newest/metadata.json"
resume_check "malformed metadata" "metadata.json"

# Named explicitly, a broken checkpoint is an error on every rank, not a fallback.
rm -rf "$newest"; cp -a "$WORK/pristine" "$newest"
flip "$newest/rank-00000.bin" 12
set +e
out=$(train 2 "${args[@]}" --checkpoint_dir "$WORK/ck" --resume_from_checkpoint "$newest" 2>&1); rc=$?
set -e
((rc == 2)) && pass "named corrupt checkpoint: exit 2" || fail "named corrupt checkpoint: exit $rc"
[[ $out == *"checksum mismatch"* ]] && pass "named corrupt: says checksum mismatch" || fail "named corrupt: $out"

# A directory without metadata.json (a save cut short) is not a checkpoint.
rm -rf "$newest"; cp -a "$WORK/pristine" "$newest"; rm "$newest/metadata.json"
out=$(train 2 "${args[@]}" --checkpoint_dir "$WORK/ck" --resume_from_checkpoint auto --max_steps 4 2>&1)
[[ $out == *"[resume] step=2 "* && $out != *"skipping"* ]] && pass "incomplete save ignored silently" ||
  fail "incomplete save: $out"
finish
