#!/usr/bin/env bash
# A checkpoint that meets a full disk: wireup-train stops with exit 2 and an
# error naming the file and the cause; the failed save leaves no .tmp file and
# no step directory behind, and the checkpoint before it still loads (export
# reads and checks every chunk). Needs root for a small tmpfs; skipped (77)
# elsewhere.
source "$(dirname "$0")/lib.sh"
fs=$WORK/small
mkdir -p "$fs"
if [[ $(id -u) != 0 ]] || ! mount -t tmpfs -o size=3m wireup-test "$fs" 2>/dev/null; then
  echo "SKIP: needs root to mount a 3 MiB tmpfs"
  exit 77
fi
trap 'umount "$fs" 2>/dev/null; [[ -n ${KEEP_WORK:-} ]] || rm -rf "$WORK"' EXIT
# tiny: ~1.9 MB a checkpoint, so step 10's fits and step 20's does not.
args=(--preset tiny --synthetic_data --num_threads 1 --max_steps 30 --logging_freq 10
      --checkpoint_dir "$fs/ck" --checkpoint_freq 10 --keep_checkpoints 3)
rc=0
out=$("$WIREUP_TRAIN" "${args[@]}" 2>&1) || rc=$?
[[ $rc == 2 ]] && pass "a full disk ends the run with exit 2" || fail "exit $rc, expected 2: $out"
[[ $out == *"step-00000020/rank-00000.bin.tmp: write: No space left on device"* ]] &&
  pass "the error names the file and the cause" || fail "no ENOSPC error naming the file in: $out"
left=$(cd "$fs/ck" && find . -mindepth 1 | sort | tr '\n' ' ')
[[ $left == "./step-00000010 ./step-00000010/metadata.json ./step-00000010/rank-00000.bin ./step-00000010/rank-00000.json " ]] &&
  pass "only step 10's checkpoint is left, no .tmp file, no step-20 directory" ||
  fail "checkpoint directory holds: $left"
if "$WIREUP_TRAIN" export --checkpoint "$fs/ck" --out "$WORK/hf" >"$WORK/export.log" 2>&1; then
  pass "step 10's checkpoint still loads (export checks every chunk)"
else
  fail "export of step 10 failed: $(cat "$WORK/export.log")"
fi
finish
