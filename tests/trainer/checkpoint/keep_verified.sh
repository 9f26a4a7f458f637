#!/usr/bin/env bash
# --keep_checkpoints counts only checkpoints that verify; a broken one is moved
# aside (step-N.corrupt), never counted, never the reason a good one is
# deleted; "auto" that finds checkpoints of which none loads stops with exit 2
# unless --start_fresh_if_unloadable.
source "$(dirname "$0")/lib.sh"
args=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 2 --logging_freq 50
      --checkpoint_dir "$WORK/ck" --keep_checkpoints 2)
flip() {  # FILE OFFSET
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf '%b' "$(printf '\\%03o' $(((byte + 1) % 256)))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
listing() { (cd "$WORK/ck" && echo *); }
# check DESCRIPTION TEXT...: $out holds each TEXT, in this order; else fail, showing $out.
check() {
  local what=$1 rest=$out text
  shift
  for text in "$@"; do
    if [[ $rest != *"$text"* ]]; then
      fail "$what: no '$text' in: $out"
      return
    fi
    rest=${rest#*"$text"}
  done
  pass "$what"
}
# dir_is DESCRIPTION LISTING: the checkpoint directory holds exactly LISTING.
dir_is() {
  if [[ $(listing) == "$2" ]]; then pass "$1"; else fail "$1: $(listing)"; fi
}

train 2 "${args[@]}" --max_steps 200 --checkpoint_freq 100 >/dev/null
dir_is "steps 100 and 200 saved" "step-00000100 step-00000200"
flip "$WORK/ck/step-00000100/rank-00000.bin" 1000
flip "$WORK/ck/step-00000200/rank-00001.bin" 1000

# The rerun of the attack, without the flag: a clear error, exit 2, nothing touched.
rerun=(--max_steps 200 --resume_from_checkpoint auto --checkpoint_freq 50 --stop_after_step 60)
rc=0
out=$(train_all 2 "${args[@]}" "${rerun[@]}" 2>&1) || rc=$?
if ((rc == 2)); then pass "no loadable checkpoint: exit 2"; else fail "no loadable checkpoint: exit $rc"; fi
check "the error names each checkpoint and its fault" "none of the 2 checkpoints in $WORK/ck loads" \
  "step-00000200: " "checksum mismatch" "step-00000100: "
check "the error names the way out" "--start_fresh_if_unloadable"
if [[ $out != *"[stop]"* && $out != *"[checkpoint]"* ]]; then pass "did not train"; else fail "trained: $out"; fi
dir_is "checkpoints left as they were" "step-00000100 step-00000200"

# With the flag: step 1, saves 50 and 60; the broken ones go aside, not the good ones.
out=$(train_all 2 "${args[@]}" "${rerun[@]}" --start_fresh_if_unloadable 2>&1)
check "flag: starts at step 1" "[resume] no loadable checkpoint"
# From what a run without checkpoints starts from: each rank had read a checkpoint into its
# state before the other rank's fault was known (step 200 on rank 0, 100 on rank 1).
fresh=$(train 2 "${args[@]/#$WORK\/ck/$WORK/fresh}" --max_steps 200 --checkpoint_freq 50 --stop_after_step 60 |
  losses | tr '\n' ' ')
started=$(grep -o '\[train\] step=[0-9/]* loss=[0-9.]*' <<<"$out" | sed 's/.*loss=//' | tr '\n' ' ')
if [[ -n $fresh && $started == "$fresh" ]]; then pass "flag: the losses of a run without checkpoints ($fresh)"
else fail "flag: losses '$started', a run without checkpoints: '$fresh'"; fi
check "flag: stops at 60" "[stop] --stop_after_step: checkpoint of step 60 saved"
check "flag: says what it moved aside" "step-00000200 fails verification" \
  "moved aside to $WORK/ck/step-00000200.corrupt"
dir_is "keep 2 kept the two good ones" \
  "step-00000050 step-00000060 step-00000100.corrupt step-00000200.corrupt"
out=$(train 2 "${args[@]}" --max_steps 200 --resume_from_checkpoint auto --stop_after_step 61 2>&1)
check "the kept step 60 loads" "[resume] step=60 "

# A truncated checkpoint is not one of the K either.
truncate -s -4 "$WORK/ck/step-00000061/rank-00000.bin"
out=$(train_all 2 "${args[@]}" --max_steps 200 --resume_from_checkpoint auto --stop_after_step 62 2>&1)
check "truncated: skipped on resume" "skipping checkpoint $WORK/ck/step-00000061" "truncated"
check "truncated: resumed from 60" "[resume] step=60 "
dir_is "truncated: moved aside, 60 and 62 kept" \
  "step-00000060 step-00000061.corrupt step-00000062 step-00000100.corrupt step-00000200.corrupt"
finish
