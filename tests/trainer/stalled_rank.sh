#!/usr/bin/env bash
# A rank stopped by SIGSTOP mid-training, 2 ranks on one node, shared memory
# and Gloo (WIREUP_CPU_COMM=gloo): the other rank ends within --comm_timeout +
# 20 s (--comm_init_timeout + 20 s when the stop lands in a save) with exit
# status 3 and one line naming the collective and the stalled rank, its flight
# record as JSON; a resubmission resumes exactly from the
# newest checkpoint; a rank stopped and continued within the timeout does not
# fail the run (docs/reliability.md, "A stalled rank").
source "$(dirname "$0")/checkpoint/lib.sh"
args=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 2 --checkpoint_freq 100
      --keep_checkpoints 2 --comm_timeout 5 --comm_init_timeout 15)
# A tiny step takes milliseconds: the stop lands in training steps (100 of them before
# the next save) most of the time, else in a save (under load), which waits
# --comm_init_timeout: short here too, and both outcomes must name rank 1.
# Below the kernel's ephemeral range (32768..60999 by default), so no outgoing connection
# of a test running beside this one holds a port it is about to listen on.
port=${WIREUP_TEST_PORT:-27861}

# wait_saved FILE STEP: until FILE says the checkpoint of STEP is saved (60 s):
# a stop right after it lands in training steps, which wait --comm_timeout,
# not in a save, which waits --comm_init_timeout.
wait_saved() {
  for _ in $(seq 3000); do
    grep -q "^\[checkpoint\] step=$2 saved" "$1" && return 0
    sleep 0.02
  done
  return 1
}

# stop_and_wait STOPPED WAITER: SIGSTOPs pid STOPPED and waits for WAITER; sets rc (WAITER's
# exit status) and took (seconds), then kills STOPPED.
stop_and_wait() {
  kill -STOP "$1"
  local t0
  t0=$(date +%s)
  set +e; wait "$2"; rc=$?; set -e
  took=$(($(date +%s) - t0))
  kill -9 "$1"; wait "$1" 2>/dev/null || true
}

# Bad timeouts: exit 2 before any collective, the flag named.
for bad in "--comm_timeout 0" "--comm_timeout nan" "--comm_init_timeout 0.5" "--comm_timeout 1e9"; do
  set +e; "$WIREUP_TRAIN" --preset tiny --synthetic_data $bad >/dev/null 2>"$WORK/bad"; rc=$?; set -e
  ((rc == 2)) && grep -q -- "${bad% *} " "$WORK/bad" && pass "$bad: exit 2 naming it" ||
    fail "$bad: exit $rc: $(cat "$WORK/bad")"
done

for comm in shm gloo; do
  export WIREUP_CPU_COMM=$comm
  ckpt=$WORK/$comm
  start2 $port "$WORK/$comm" "${args[@]}" --max_steps 100000 --checkpoint_dir "$ckpt"
  wait_saved "$WORK/$comm.0" 100 || fail "$comm: no checkpoint of step 100 within 60 s"
  stop_and_wait $R1 $R0
  ((rc == 3)) && pass "$comm: rank 0 exits 3 (a peer stalled)" || fail "$comm: rank 0 exit $rc"
  ((took <= 35)) && pass "$comm: ended ${took} s after the SIGSTOP" || fail "$comm: took ${took} s"
  where=$(stall_of "$WORK/$comm.0" 1 "host ")
  if [[ $where == commit ]]; then
    pass "$comm: the stop landed in a save; rank 0's commit names rank 1"
  elif [[ $where != collective ]]; then
    fail "$comm: no stall line naming rank 1: $(tail -5 "$WORK/$comm.0")"
  else
    pass "$comm: the line names the collective and rank 1 with its host"
    sed -n 's/^wireup-train\[rank 0\]: flight record: //p' "$WORK/$comm.0" >"$WORK/$comm.json"
    if python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["collectives"]
assert r["rank"] == 0 and 0 < len(c) <= 64, r
assert [x["state"] for x in c].count("timed_out") == 1, c[-3:]
assert r["last_completed"] == max(x["seq"] for x in c if x["state"] == "completed")
assert all(a["seq"] + 1 == b["seq"] for a, b in zip(c, c[1:]))
# FSDP gathers and reduce-scatters carry their unit; the loss all-reduce none.
assert all(x["unit"] >= 0 for x in c if x["kind"] == "reduce_scatter"), c
assert {x["unit"] for x in c if x["kind"] == "all_gather"} >= {0, 1, 2, 3}, c
assert any(x["unit"] == -1 for x in c if x["kind"] == "all_reduce"), c
' "$WORK/$comm.json"; then pass "$comm: flight record: 64 collectives at most, one timed out, gathers and reduce-scatters with their unit"
    else fail "$comm: flight record"; fi
  fi

  # The resubmission resumes from the newest checkpoint and ends with the
  # weights of a run that never stalled (the same --max_steps: the same
  # learning-rate schedule; --stop_after_step saves and ends both).
  saved=$(find "$ckpt" -maxdepth 2 -name metadata.json | sort | tail -1)
  saved=${saved%/metadata.json}
  step=$((10#${saved##*step-}))
  end=$((step + 4))
  spawn 2 2 $((port + 1)) "${args[@]}" --max_steps 100000 --stop_after_step $end --checkpoint_dir "$ckpt" \
    --resume_from_checkpoint auto >"$WORK/$comm.resume" 2>&1 || fail "$comm: resubmission failed"
  grep -q "^\[resume\] step=$step " "$WORK/$comm.resume" && pass "$comm: resumed at step $step" ||
    fail "$comm: no resume from step $step: $(grep resume "$WORK/$comm.resume")"
  spawn 2 2 $((port + 2)) "${args[@]}" --max_steps 100000 --stop_after_step $end \
    --checkpoint_dir "$WORK/$comm-ref" >"$WORK/$comm.ref" 2>&1 ||
    fail "$comm: the uninterrupted reference run failed: $(tail -5 "$WORK/$comm.ref")"
  if diff <(fingerprint "$ckpt/$(printf step-%08d $end)") <(fingerprint "$WORK/$comm-ref/$(printf step-%08d $end)") >/dev/null
  then pass "$comm: step $end bit-identical to an uninterrupted run"
  else fail "$comm: step $end differs from an uninterrupted run"; fi
  port=$((port + 3))
done

# Gloo with rank 0 stopped: the job's TCPStore it serves does not answer
# either; rank 1 still ends in time, exit 3, and says so.
start2 $port "$WORK/r0" "${args[@]}" --max_steps 100000 --checkpoint_dir "$WORK/r0"
wait_saved "$WORK/r0.0" 100 || fail "rank 0 stopped: no checkpoint of step 100 within 60 s"
stop_and_wait $R0 $R1
((rc == 3 && took <= 35)) && grep -q "TCPStore did not answer" "$WORK/r0.1" &&
  pass "gloo, rank 0 stopped: rank 1 exits 3 after ${took} s, the store's silence named" ||
  fail "gloo, rank 0 stopped: exit $rc after ${took} s: $(tail -3 "$WORK/r0.1")"
port=$((port + 1))

# Stopped for 1 s, well under the 5 s timeout, then continued: the run finishes.
export WIREUP_CPU_COMM=shm
start2 $port "$WORK/cont" "${args[@]}" --max_steps 300 --checkpoint_dir "$WORK/cont"
wait_saved "$WORK/cont.0" 100 || fail "no checkpoint of step 100 within 60 s"
kill -STOP $R1; sleep 1; kill -CONT $R1
set +e; wait $R0; rc0=$?; wait $R1; rc1=$?; set -e
((rc0 == 0 && rc1 == 0)) && grep -q '^\[summary\]' "$WORK/cont.0" &&
  pass "a rank stopped for 1 s and continued: the run finishes" ||
  fail "stopped and continued: exit $rc0/$rc1: $(tail -3 "$WORK/cont.0")"
finish
