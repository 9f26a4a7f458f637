#!/usr/bin/env bash
# A batch or a checkpoint file that never comes (docs/reliability.md, "Stuck
# data and checkpoint writes"): the rank ends with exit 3 (as for a stalled
# peer) within the timeout, with one line naming the file.
# - Data: rank 1 of 2 reads its shards with WIREUP_TEST_STALL_SHARD naming
#   one of them, the loader's test hook for a read stuck on the file system
#   (a local disk cannot hang a read): its line names the shard file and
#   the byte it was reading; rank 0 does not wait for it past its own timeout.
# - Checkpoint: a real blocking write: the test puts a FIFO where the save of
#   step 4 writes metadata.json.tmp (opening a FIFO to write waits for a
#   reader that never comes); the rank ends naming that file; the run resumes
#   from the checkpoint of step 2 and finishes; with --async_checkpointing
#   the writer thread's file (a FIFO at rank-00000.json.tmp) is named; with
#   two ranks and rank 1's file stuck, rank 0 (which commits the save) ends
#   too, naming the file it waits for.
source "$(dirname "$0")/lib.sh"
port=${WIREUP_TEST_PORT:-27881}
host=$(hostname)

# ---- data: a shard read that never returns.
/usr/bin/python3 "$(dirname "$0")/token_data.py" "$WORK/data" --vocab 512 --train 30000,30000 \
  --validation 2000 >/dev/null
args=(--preset tiny --dataset "$WORK/data" --num_threads 1 --train_batch_size 4 --max_steps 1000
      --comm_timeout 3 --comm_init_timeout 3)
RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  "$WIREUP_TRAIN" "${args[@]}" >"$WORK/data.0" 2>&1 &
R0=$!
t0=$(date +%s)
set +e
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  WIREUP_TEST_STALL_SHARD=train-00001.bin "$WIREUP_TRAIN" "${args[@]}" >"$WORK/data.1" 2>&1
rc1=$?
took=$(($(date +%s) - t0))
wait $R0
rc0=$?
took0=$(($(date +%s) - t0))
set -e
line=$(grep '^wireup-train: data stalled:' "$WORK/data.1" || true)
echo "$line"
((rc1 == 3)) && pass "data: rank 1 exits 3" || fail "data: rank 1 exit $rc1: $(tail -3 "$WORK/data.1")"
((took <= 15)) && pass "data: rank 1 ended ${took} s after start (timeout 3 s)" || fail "data: took ${took} s"
re="^wireup-train: data stalled: rank 1 \(host $host\) waited [0-9.]+ s for the batch of step [0-9]+; reading $WORK/data/train-00001.bin at byte ([0-9]+)"
if [[ $line =~ $re ]]; then
  byte=${BASH_REMATCH[1]}
  size=$(stat -c %s "$WORK/data/train-00001.bin")
  ((byte >= 4096 && byte < size)) && pass "data: the line names the shard and a byte of its tokens ($byte)" ||
    fail "data: byte $byte outside the tokens of a $size-byte shard"
else
  fail "data: no line naming the shard: $(tail -3 "$WORK/data.1")"
fi
((rc0 != 0 && took0 <= 30)) && pass "data: rank 0 does not wait on (exit $rc0 after ${took0} s)" ||
  fail "data: rank 0 exit $rc0 after ${took0} s"
! grep -q 'data stalled' "$WORK/data.0" && pass "data: rank 0, whose reads work, blames no file" ||
  fail "data: rank 0 says data stalled"

# ---- checkpoint: a write that blocks, on a real FIFO.
ckpt=$WORK/ckpt
cargs=(--preset small --synthetic_data --num_threads 1 --train_batch_size 1 --max_steps 4
       --checkpoint_dir "$ckpt" --checkpoint_freq 2 --comm_init_timeout 10 --peak_tflops 1)
# --comm_init_timeout bounds each file of a save, the 240 MB rank file of a
# healthy save included: 10 s, so a loaded machine's fsync is not a "stall".
# fifo_at STEP_DIR FILE: once STEP_DIR appears (its save began), a FIFO named
# FILE in it; the save writes its rank file (some 240 MB) first, so FILE is
# opened well after.
fifo_at() {
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "checkpoint: $1 never appeared"
import os, sys, time
d = sys.argv[1]
end = time.time() + 120
while not os.path.isdir(d):
    if time.time() > end:
        sys.exit(1)
    time.sleep(0.001)
os.mkfifo(os.path.join(d, sys.argv[2]))
PY
}
"$WIREUP_TRAIN" "${cargs[@]}" >"$WORK/ckpt.out" 2>&1 &
T=$!
fifo_at "$ckpt/step-00000004" metadata.json.tmp
t0=$(date +%s)
set +e; wait $T; rc=$?; set -e
took=$(($(date +%s) - t0))
line=$(grep '^wireup-train: checkpoint stalled:' "$WORK/ckpt.out" || true)
echo "$line"
((rc == 3)) && pass "checkpoint: exit 3" || fail "checkpoint: exit $rc: $(tail -3 "$WORK/ckpt.out")"
((took <= 30)) && pass "checkpoint: ended ${took} s after the save began (timeout 10 s)" ||
  fail "checkpoint: took ${took} s"
[[ $line =~ ^wireup-train:\ checkpoint\ stalled:\ rank\ 0\ \(host\ $host\)\ waited\ [0-9.]+\ s\ writing\ $ckpt/step-00000004/metadata.json.tmp\ \(--comm_init_timeout\) ]] &&
  pass "checkpoint: the line names the file" || fail "checkpoint: $(tail -3 "$WORK/ckpt.out")"
[[ -f $ckpt/step-00000002/metadata.json && ! -e $ckpt/step-00000004/metadata.json ]] &&
  pass "checkpoint: step 2 is complete, step 4 never committed" || fail "checkpoint: $(ls -R "$ckpt")"
"$WIREUP_TRAIN" "${cargs[@]}" --resume_from_checkpoint auto >"$WORK/resume.out" 2>&1 ||
  fail "checkpoint: the resumed run failed: $(tail -3 "$WORK/resume.out")"
grep -q "^\[resume\] step=2 source=disk from=$ckpt/step-00000002" "$WORK/resume.out" &&
  grep -q '^\[train\] step=4/4' "$WORK/resume.out" && [[ -f $ckpt/step-00000004/metadata.json ]] &&
  pass "checkpoint: resumed from step 2, saved step 4" || fail "checkpoint: $(grep -E '^\[(resume|checkpoint)' "$WORK/resume.out")"

# The same with --async_checkpointing 1: the writer thread blocks on its
# rank file's side description while the training thread goes on.
"$WIREUP_TRAIN" "${cargs[@]}" --checkpoint_dir "$WORK/ackpt" --async_checkpointing 1 \
  >"$WORK/ackpt.out" 2>&1 &
T=$!
fifo_at "$WORK/ackpt/step-00000004" rank-00000.json.tmp
t0=$(date +%s)
set +e; wait $T; rc=$?; set -e
took=$(($(date +%s) - t0))
((rc == 3 && took <= 30)) && grep -q "^wireup-train: checkpoint stalled: rank 0 (host $host) waited [0-9.]* s writing $WORK/ackpt/step-00000004/rank-00000.json.tmp" "$WORK/ackpt.out" &&
  pass "async checkpoint: exit 3 after ${took} s naming the writer's file" ||
  fail "async checkpoint: exit $rc after ${took} s: $(tail -3 "$WORK/ackpt.out")"

# Two ranks, rank 1's side description stuck (a FIFO at rank-00001.json.tmp): rank 1
# names its file; rank 0, which commits the save, waits for that file no longer than
# --comm_init_timeout either and names the file it is missing.
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$((port + 1)) "$WIREUP_TRAIN" "${cargs[@]}" --checkpoint_dir "$WORK/two" \
    >"$WORK/two.$r" 2>&1 &
  eval "T$r=\$!"
done
fifo_at "$WORK/two/step-00000004" rank-00001.json.tmp
t0=$(date +%s)
set +e; wait "$T0"; rc0=$?; wait "$T1"; rc1=$?; set -e
took=$(($(date +%s) - t0))
((rc1 == 3)) && grep -q "^wireup-train: checkpoint stalled: rank 1 (host $host) waited [0-9.]* s writing $WORK/two/step-00000004/rank-00001.json.tmp" "$WORK/two.1" &&
  pass "two ranks: rank 1 exits 3 naming its stuck file" || fail "two ranks: rank 1 exit $rc1: $(tail -3 "$WORK/two.1")"
# Rank 0's own deadline and rank 1's run out at about the same time: rank 0 either
# stalls itself (exit 3) or sees rank 1's process gone first (exit 1); both name
# rank 1 and the file.
if ((rc0 == 3 && took <= 30)) && grep -q "^wireup-train: checkpoint stalled: rank 0 (host $host) waited [0-9.]* s committing $WORK/two/step-00000004; not arrived: rank 1 (rank-00001.json)" "$WORK/two.0"; then
  pass "two ranks: rank 0 exits 3 after ${took} s naming the file it waits for"
elif ((rc0 == 1 && took <= 30)) && grep -q "checkpoint: rank 1 (pid $T1) exited while rank 0 waited for rank-00001.json committing $WORK/two/step-00000004" "$WORK/two.0"; then
  pass "two ranks: rank 0 ends after ${took} s, rank 1 gone first, naming the file it waited for"
else
  fail "two ranks: rank 0 exit $rc0 after ${took} s: $(tail -3 "$WORK/two.0")"
fi
[[ -f $WORK/two/step-00000002/metadata.json && ! -e $WORK/two/step-00000004/metadata.json ]] &&
  pass "two ranks: step 2 is complete, step 4 never committed" || fail "two ranks: $(ls -R "$WORK/two")"

# The same stuck rank 1, now killed (SIGKILL) while rank 0 waits to commit: rank 0
# sees the process of its shared-memory peer gone and ends at once, naming it,
# long before its 60 s --comm_init_timeout (a launcher stopping the survivors of
# a failure would otherwise wait out its grace period).
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$((port + 2)) "$WIREUP_TRAIN" "${cargs[@]}" --comm_init_timeout 60 --checkpoint_dir "$WORK/dead" \
    >"$WORK/dead.$r" 2>&1 &
  eval "T$r=\$!"
done
fifo_at "$WORK/dead/step-00000004" rank-00001.json.tmp
for _ in $(seq 1200); do [[ -e $WORK/dead/step-00000004/rank-00000.json ]] && break; sleep 0.05; done
sleep 0.5  # rank 0 is in its commit wait now
kill -9 "$T1"
t0=$(date +%s)
set +e; wait "$T0"; rc0=$?; wait "$T1"; set -e
took=$(($(date +%s) - t0))
((rc0 != 0 && rc0 != 3 && took <= 10)) &&
  grep -q "checkpoint: rank 1 (pid $T1) exited while rank 0 waited for rank-00001.json committing $WORK/dead/step-00000004" "$WORK/dead.0" &&
  pass "rank 1 killed during the commit: rank 0 ends after ${took} s (exit $rc0) naming it" ||
  fail "rank 1 killed during the commit: rank 0 exit $rc0 after ${took} s: $(tail -3 "$WORK/dead.0")"
[[ -f $WORK/dead/step-00000002/metadata.json && ! -e $WORK/dead/step-00000004/metadata.json ]] &&
  pass "rank 1 killed: step 2 is complete, step 4 never committed" || fail "rank 1 killed: $(ls -R "$WORK/dead")"

# The same under wireup-launch over Gloo (nothing tells rank 0 its peer is gone):
# the launcher sees rank 1 die and stops rank 0 with SIGTERM, saying in rank 0's
# stop-reason file that the attempt failed; rank 0 ends at once instead of trying
# to finish the save, long before its 60 s timeout and the 60 s grace period.
WIREUP_CPU_COMM=gloo "$WIREUP_LAUNCH" --standalone --nproc-per-node=2 --grace-period=60 -- \
  "$WIREUP_TRAIN" "${cargs[@]}" --comm_init_timeout 60 --checkpoint_dir "$WORK/gone" >"$WORK/gone.out" 2>&1 &
L=$!
fifo_at "$WORK/gone/step-00000004" rank-00001.json.tmp
for _ in $(seq 1200); do [[ -e $WORK/gone/step-00000004/rank-00000.json ]] && break; sleep 0.05; done
sleep 0.5  # rank 0 is in its commit wait now
victim=""
for p in $(pgrep -P "$L"); do
  if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx RANK=1; then victim=$p; fi
done
[[ -n $victim ]] || fail "under wireup-launch: rank 1's process not found"
kill -9 "$victim"
t0=$(date +%s)
set +e; wait "$L"; rc=$?; set -e
took=$(($(date +%s) - t0))
((rc == 137 && took <= 10)) &&
  grep -q "^\[rank0\]: wireup-train: wireup-launch stops the workers: rank 1 on .* failed (SIGKILL); ending without a checkpoint" "$WORK/gone.out" &&
  pass "under wireup-launch, rank 1 killed during the commit: the step ends after ${took} s (exit $rc), rank 0 saving nothing" ||
  fail "under wireup-launch: exit $rc after ${took} s: $(tail -5 "$WORK/gone.out")"
grep -q "^\[rank0\]: \[stop\]" "$WORK/gone.out" && fail "rank 0 took the stop for a planned one" || true
[[ -f $WORK/gone/step-00000002/metadata.json && ! -e $WORK/gone/step-00000004/metadata.json ]] &&
  pass "under wireup-launch: step 2 is complete, step 4 never committed" || fail "under wireup-launch: $(ls -R "$WORK/gone")"
finish
