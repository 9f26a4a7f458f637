#!/usr/bin/env bash
# Memory snapshots on one machine, 4 ranks as 2 emulated nodes (n0, n1: their
# SLURMD_NODENAME): a run stopped after step 7 resumes from its node memory,
# from a peer's replica when n1's directory is gone, past a corrupt or
# incomplete snapshot to the next newest state (memory or disk), from the
# replica when a part changed after the scan (then past both to memory step 3), from disk when
# the world size changed or the model's shape did (named), and from a snapshot
# written over a retired one's files;
# each exact to the uninterrupted run.
# A snapshot failing on one node is not committed and training goes on. DIR of
# another user or job, a symlink and bad flags are refused, naming them.
source "$(dirname "$0")/lib.sh"
steps=12
args=(--preset tiny --synthetic_data --max_steps "$steps" --num_threads 1 --train_batch_size 1
      --checkpoint_freq 2 --keep_checkpoints 0)
mem=(--memory_checkpoint_freq 3 --memory_checkpoint_dir "$WORK/mem" --resume_from_checkpoint auto)

nodes 4 "${args[@]}" --checkpoint_dir "$WORK/ref" >"$WORK/ref.log"
losses <"$WORK/ref.log" >"$WORK/a.loss"

# stopped: a run of 7 steps (snapshots 3 and 6, durable checkpoints 2..7). It runs once; its
# checkpoint and memory directories are kept in $WORK/stopped, and each later scenario starts
# from a copy of them (cp -a: the same modes, owner, job marker and contents as written).
stopped() {
  rm -rf "$WORK/ck" "$WORK/mem"
  if [[ -d $WORK/stopped ]]; then
    cp -a "$WORK/stopped/ck" "$WORK/stopped/mem" "$WORK/"
    return
  fi
  nodes 4 "${args[@]}" "${mem[@]}" --checkpoint_dir "$WORK/ck" --stop_after_step 7 >"$WORK/stop.log"
  [[ -f $WORK/mem/n0/snap-00000006/complete && -f $WORK/mem/n1/snap-00000006/complete ]] ||
    fail "no complete snapshot 6 on both nodes: $(find "$WORK/mem" | head -20)"
  mkdir "$WORK/stopped" && cp -a "$WORK/ck" "$WORK/mem" "$WORK/stopped/"
}
# resumed NAME EXPECTED_RESUME_LINE [WORLD]: the resumed run's losses and final weights
# are the uninterrupted run's (world 4).
resumed() {
  nodes "${3:-4}" "${args[@]}" "${mem[@]}" --checkpoint_dir "$WORK/ck" >"$WORK/$1.log" 2>"$WORK/$1.err" ||
    fail "$1: exit $?: $(tail -3 "$WORK/$1.err")"
  grep -q -F -- "$2" "$WORK/$1.log" && pass "$1: $2" ||
    fail "$1: no '$2' in: $(grep '^\[resume\]' "$WORK/$1.log")"
  local first
  first=$(sed -n 's/^\[resume\] step=\([0-9]*\) .*/\1/p' "$WORK/$1.log")
  if ((${3:-4} == 4)); then
    resumed_as_uninterrupted $((steps - first)) "$WORK/$1.log" "$WORK/ref/step-00000012" \
      "$WORK/ck/step-00000012"
  fi
}

stopped
ls -l "$WORK/mem/n0/snap-00000006/rank-00000.bin" "$WORK/mem/n1/snap-00000006/replica-rank-00000.bin" >&2
[[ $(stat -c %a "$WORK/mem/n0") == 700 && $(stat -c %a "$WORK/mem/n0/snap-00000006/rank-00000.bin") == 600 ]] &&
  pass "0700 directories, 0600 files" || fail "modes: $(stat -c '%a %n' "$WORK"/mem/n0/snap-00000006/*)"
ls "$WORK/mem/n0" | tr '\n' ' ' | grep -qx 'snap-00000003 snap-00000006 ' &&
  pass "two snapshots kept (3 and 6)" || fail "kept: $(ls "$WORK/mem/n0")"
rm -rf "$WORK/ck/step-00000007"
resumed memory "[resume] step=6 source=memory"
[[ ! -e $WORK/mem ]] && pass "the finished run removed its snapshots" || fail "left: $(find "$WORK/mem")"

# Snapshot 9 of a run resumed from 6 overwrites the retired snapshot 3's files in place
# (the same inodes: a tmpfs reuses their pages); resuming from it is exact.
stopped
ino=$(stat -c %i "$WORK/mem/n1/snap-00000003/replica-rank-00000.bin")
nodes 4 "${args[@]}" "${mem[@]}" --checkpoint_dir "$WORK/ck" --stop_after_step 10 >"$WORK/recycle.log"
[[ $(stat -c %i "$WORK/mem/n1/snap-00000009/replica-rank-00000.bin") == "$ino" &&
   $(ls "$WORK/mem/n1" | tr '\n' ' ') == "snap-00000006 snap-00000009 " ]] &&
  pass "snapshot 9 reused snapshot 3's files" || fail "after step 10: $(ls -i "$WORK"/mem/n1/*)"
rm -rf "$WORK/ck/step-00000010"
resumed recycled "[resume] step=9 source=memory"

stopped
rm -rf "$WORK/ck/step-00000007" "$WORK/mem/n1"  # n1 replaced: its memory is gone
resumed peer "[resume] step=6 source=peer"

# after_scan NAME FILE...: the resumed run, held between its scan and its load
# (WIREUP_TEST_AFTER_MEMORY_SCAN) while one byte of each FILE (under $WORK/mem) changes:
# what the scan passed is no longer what the manifest records.
after_scan() {
  local name=$1 pid f
  shift
  rm -f "$WORK/go" "$WORK/go.scanned"
  WIREUP_TEST_AFTER_MEMORY_SCAN=$WORK/go nodes 4 "${args[@]}" "${mem[@]}" --checkpoint_dir "$WORK/ck" \
    >"$WORK/$name.log" 2>"$WORK/$name.err" &
  pid=$!
  for _ in $(seq 1200); do [[ -e $WORK/go.scanned ]] && break; sleep 0.1; done
  [[ -e $WORK/go.scanned ]] || fail "$name: no scan within 120 s: $(tail -3 "$WORK/$name.err")"
  for f in "$@"; do printf X | dd of="$WORK/mem/$f" bs=1 seek=4000 conv=notrunc 2>/dev/null; done
  touch "$WORK/go"
  wait "$pid" || fail "$name: exit $?: $(tail -3 "$WORK/$name.err")"
}
# resumed_line NAME LINE: LINE (a fixed string) is a line of NAME's log.
resumed_line() {
  grep -q -F -- "$2" "$WORK/$1.log" && pass "$1: $2" || fail "$1: no '$2' in: $(grep -E '^\[(resume|memory)\]' "$WORK/$1.log")"
}

# Rank 1's part (n0) changed after the scan: the load finds it fails its checksum and takes
# rank 1's part from its replica on n1, not the durable checkpoint (step 5), and says so; exact.
stopped
rm -rf "$WORK/ck/step-00000007" "$WORK/ck/step-00000006"
after_scan changed n0/snap-00000006/rank-00001.bin
resumed_line changed "[memory] snapshot step 6: rank 1's part $WORK/mem/n0/snap-00000006/rank-00001.bin: fails its checksum: crc32c "
resumed_line changed "; falling back to rank 1's replica on node n1"
resumed_line changed "[resume] step=6 source=peer dir=$WORK/mem"
grep -q 'source=disk' "$WORK/changed.log" && fail "changed: loaded from disk too" || pass "changed: nothing from disk"
resumed_as_uninterrupted $((steps - 6)) "$WORK/changed.log" "$WORK/ref/step-00000012" "$WORK/ck/step-00000012"

# Its replica changed too: step 6 is not loaded; the next newest state, memory step 3 (no
# durable checkpoint is left), named; exact.
stopped
rm -rf "$WORK/ck"
after_scan changed2 n0/snap-00000006/rank-00001.bin n1/snap-00000006/replica-rank-00001.bin
resumed_line changed2 "; falling back to rank 1's replica on node n1"
resumed_line changed2 "[memory] snapshot step 6 not loaded: rank 3 on node n1 could not send the replica of rank 1 (node n1 holds it)"
resumed_line changed2 "rank 3's replica of rank 1 $WORK/mem/n1/snap-00000006/replica-rank-00001.bin: fails its checksum"
resumed_line changed2 "; falling back to memory snapshot step 3"
resumed_line changed2 "[resume] step=3 source=memory"
resumed_as_uninterrupted $((steps - 3)) "$WORK/changed2.log" "$WORK/ref/step-00000012" "$WORK/ck/step-00000012"

stopped
rm -rf "$WORK/ck/step-00000007" "$WORK/ck/step-00000006"
printf X | dd of="$WORK/mem/n1/snap-00000006/rank-00003.bin" bs=1 seek=4000 conv=notrunc 2>/dev/null
resumed corrupt "[resume] skipped: memory snapshot step 6 on node n1: part of rank 3 (rank-00003.bin) fails its checksum"
grep -q '^\[resume\] step=4 source=disk' "$WORK/corrupt.log" && pass "corrupt: the next newest state, disk step 4" ||
  fail "corrupt: $(grep '^\[resume\]' "$WORK/corrupt.log")"

# The newest checkpoint (7) fails to load and the next one is 4: snapshot 6 is newer.
stopped
rm -rf "$WORK/ck/step-00000006"
printf X | dd of="$WORK/ck/step-00000007/rank-00001.bin" bs=1 seek=1000 conv=notrunc 2>/dev/null
resumed disk_fell_back "[resume] step=6 source=memory"

stopped
rm -rf "$WORK/ck" "$WORK/mem/n0/snap-00000006/complete"  # a snapshot cut short, no durable state
resumed incomplete "[resume] step=3 source=memory"
grep -q '^\[resume\] skipped: memory snapshot step 6 on node n0: .*complete' "$WORK/incomplete.log" &&
  pass "incomplete: named" || fail "incomplete: $(grep '^\[resume\]' "$WORK/incomplete.log")"

stopped
rm -rf "$WORK/ck/step-00000007"
resumed world2 "[resume] skipped: memory snapshot step 6: world size 4, this run 2" 2
grep -q '^\[resume\] step=6 source=disk' "$WORK/world2.log" && pass "world 2: disk step 6" ||
  fail "world2: $(grep '^\[resume\]' "$WORK/world2.log")"

# Another shape in the same job and DIR (--num_layers 1, tiny has 2): snapshot 6 is not used,
# the line names the field and both values; with its own (empty) --checkpoint_dir the run
# starts at step 1 (with the old one, the durable checkpoints are refused the same way).
stopped
nodes 4 "${args[@]}" "${mem[@]}" --num_layers 1 --checkpoint_dir "$WORK/shape-ck" --stop_after_step 1 \
  >"$WORK/shape.log" 2>"$WORK/shape.err" || fail "another shape: exit $?: $(tail -3 "$WORK/shape.err")"
grep -q -F "[resume] skipped: memory snapshot step 6: saved from a different model shape: layers 2, this run 1" \
  "$WORK/shape.log" && grep -q '^\[resume\] no loadable checkpoint in .*: starting at step 1' "$WORK/shape.log" &&
  pass "another shape: snapshot 6 not used, named (layers 2, this run 1); step 1" ||
  fail "another shape: $(grep '^\[resume\]' "$WORK/shape.log")"

# A snapshot that fails on one node (n1 cannot make snap-00000003: a file stands there) fails
# on every rank, is not committed, and training goes on; the next one is written.
rm -rf "$WORK/mem" "$WORK/ck" && mkdir -m 0700 "$WORK/mem" "$WORK/mem/n1" && touch "$WORK/mem/n1/snap-00000003"
nodes 4 "${args[@]}" --memory_checkpoint_freq 3 --memory_checkpoint_dir "$WORK/mem" \
  --comm_init_timeout 120 --stop_after_step 7 --checkpoint_dir "$WORK/ck" >"$WORK/fail.log" 2>"$WORK/fail.err" ||
  fail "a failed snapshot ended the run: $(tail -3 "$WORK/fail.err")"
[[ $(grep -c 'memory snapshot of step 3 failed, not committed .*rank 2 (node n1)' "$WORK/fail.err") == 4 ]] &&
  pass "a snapshot failing on n1: reported by every rank, naming rank 2 on n1" || fail "$(cat "$WORK/fail.err")"
[[ ! -e $WORK/mem/n0/snap-00000003/complete && -f $WORK/mem/n0/snap-00000006/complete ]] &&
  pass "step 3 not committed, step 6 is" || fail "committed: $(find "$WORK/mem" -name complete)"
head -7 "$WORK/a.loss" | cmp -s - <(losses <"$WORK/fail.log") && pass "training went on unchanged" ||
  fail "losses differ after a failed snapshot"

# refused (exit 2 on every rank, naming the reason): another user's DIR, another job's, a symlink.
refused() {
  local what=$1 expect=$2
  shift 2
  set +e
  nodes 4 "${args[@]}" --checkpoint_dir "$WORK/refused-ck" "$@" >"$WORK/refused.log" 2>"$WORK/refused.err"
  local rc=$?
  set -e
  [[ $rc == 2 && $(grep -c -F -- "$expect" "$WORK/refused.err") == 4 ]] &&
    pass "$what: exit 2 on every rank, '$expect'" || fail "$what: exit $rc: $(cat "$WORK/refused.err")"
}
rm -rf "$WORK/mem"
if ((EUID == 0)); then
  mkdir -m 0700 "$WORK/mem" && chown 65534 "$WORK/mem"
  refused "another user's DIR" "$WORK/mem: owned by uid 65534, not you (0)" "${mem[@]}"
  rm -rf "$WORK/mem"
else
  echo "another user's DIR: skipped (needs root to chown)" >&2
fi
stopped
JOB=999 refused "another job's DIR" "belongs to job 4242, this is job 999" "${mem[@]}"
[[ -f $WORK/mem/n0/snap-00000006/complete ]] && pass "another job's snapshots untouched" || fail "job 4242's snapshots touched"
mkdir -m 0700 "$WORK/real" && ln -s "$WORK/real" "$WORK/link"
refused "a symlinked DIR" "$WORK/link: a symlink" --memory_checkpoint_freq 3 --memory_checkpoint_dir "$WORK/link"
expect_error "--memory_checkpoint_freq -1" "--memory_checkpoint_freq must be >= 0" \
  "$WIREUP_TRAIN" --preset tiny --synthetic_data --memory_checkpoint_freq -1
expect_error "--memory_checkpoint_dir alone" "--memory_checkpoint_dir needs --memory_checkpoint_freq" \
  "$WIREUP_TRAIN" --preset tiny --synthetic_data --memory_checkpoint_dir "$WORK/x"
expect_error "outside a Slurm job" "SLURM_JOB_ID is not set" \
  env -u SLURM_JOB_ID "$WIREUP_TRAIN" --preset tiny --synthetic_data --max_steps 1 --memory_checkpoint_freq 1 \
  --memory_checkpoint_dir "$WORK/y"
finish
