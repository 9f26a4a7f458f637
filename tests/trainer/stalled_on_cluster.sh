#!/usr/bin/env bash
# A rank SIGSTOPped mid-training on the real Slurm cluster (docs/reliability.md,
# "A stalled rank"):
#   - plain `srun --wireup --kill-on-bad-exit=1`, 2 nodes x 1 rank (Gloo between the nodes):
#     the step ends within the timeout (--comm_timeout 5, or 10 in a save) + 20 s, non-zero, the output names rank 1 and
#     the collective (or the commit of the save it stopped in); the resubmission with --resume_from_checkpoint auto reaches the
#     losses of an uninterrupted run;
#   - the same with a rank stopped 1 s and continued: the step succeeds;
#   - wireup-launch (PMIx agent mode), 2 nodes x 2 ranks (shared memory inside a node,
#     Gloo between): rank 3 stopped, the step ends within the timeout + 20 s, non-zero,
#     the launcher's summary names the stall.
source "$(dirname "$0")/lib.sh"
: "${WIREUP_PLUGIN:?}" "${WIREUP_TEST_CLUSTER_SCRIPT:?}" "${WIREUP_TEST_CLUSTER_DIR:?}"
bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$WIREUP_TEST_CLUSTER_DIR" "optional $WIREUP_PLUGIN default=off"
# A tiny step takes milliseconds and srun relays the output with some delay: the stop
# lands in training steps (100 of them before the next save) most of the time, else
# in a save, which waits --comm_init_timeout: both timeouts short, both outcomes named.
args=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 2 --checkpoint_freq 100
      --keep_checkpoints 3 --comm_timeout 5 --comm_init_timeout 10 --logging_freq 1
      --max_steps 100000)

# pid_of_rank TAG RANK: the wireup-train process of RANK whose command line holds TAG
# (the nodes are emulated on this host: their tasks are local processes).
pid_of_rank() {
  local p
  for _ in $(seq 1500); do
    for p in $(pgrep -f -- "$1" || true); do
      grep -qxz "RANK=$2" "/proc/$p/environ" 2>/dev/null &&
        [[ /proc/$p/exe -ef $WIREUP_TRAIN ]] &&  # the same file (a chroot shows other paths)
        { echo "$p"; return 0; }
    done
    sleep 0.02
  done
  for p in $(pgrep -f -- "$1" || true); do  # what was there, for the failure message
    echo "pid $p: exe $(readlink "/proc/$p/exe") $(grep -az '^RANK=' "/proc/$p/environ" | tr '\0' ' ')" >&2
  done
  return 1
}
# wait_for FILE PATTERN: until FILE has a line matching PATTERN (60 s).
wait_for() {
  for _ in $(seq 3000); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.02
  done
  return 1
}

# stop_rank WHAT OUT TAG RANK: once OUT shows the checkpoint of step 100, SIGSTOPs RANK
# (found by TAG) and waits for the job ($job): the step must fail within 30 s.
stop_rank() {
  local what=$1 out=$2 tag=$3 rank=$4 pid rc t0 took
  wait_for "$out" '\[checkpoint\] step=100 saved' || fail "$what: no checkpoint of step 100"
  pid=$(pid_of_rank "$tag" "$rank") || { fail "$what: rank $rank's process not found"; finish; }
  kill -STOP "$pid"
  t0=$SECONDS
  set +e; wait "$job"; rc=$?; set -e
  took=$((SECONDS - t0))
  kill -9 "$pid" 2>/dev/null || true
  ((rc != 0)) && pass "$what: the step fails (exit $rc)" || fail "$what: exit 0"
  ((took <= 30)) && pass "$what: ended $took s after the SIGSTOP" || fail "$what: took $took s"
}

# ---- srun --wireup, 2 nodes x 1 rank: SIGSTOP rank 1 after the checkpoint of step 100.
ck=$WORK/srun-ck
timeout 300 srun -N2 --ntasks-per-node=1 --wireup --kill-on-bad-exit=1 "$WIREUP_TRAIN" \
  "${args[@]}" --checkpoint_dir "$ck" >"$WORK/srun.out" 2>&1 &
job=$!
stop_rank "srun --wireup" "$WORK/srun.out" "$ck" 1
case $(stall_of "$WORK/srun.out" 1 "node 1)") in
  collective) pass "srun --wireup: the line names the collective and rank 1 (node 1)" ;;
  commit) pass "srun --wireup: the stop landed in a save; rank 0's commit names rank 1" ;;
  *) fail "srun --wireup: no stall line naming rank 1: $(tail -5 "$WORK/srun.out")" ;;
esac
# The resubmission resumes from the newest complete checkpoint and reaches the losses of
# an uninterrupted run of the same schedule (--max_steps 100000, stopped by
# --stop_after_step).
newest=$(dirname "$(find "$ck" -maxdepth 2 -path '*/step-*/metadata.json' | sort | tail -1)")
[[ $newest == */step-* ]] || fail "srun: no complete checkpoint in $ck"
from=$((10#${newest##*step-}))
end=$((from + 10))
timeout 120 srun -N2 --ntasks-per-node=1 --wireup --kill-on-bad-exit=1 "$WIREUP_TRAIN" \
  "${args[@]}" --stop_after_step $end --checkpoint_dir "$ck" --resume_from_checkpoint auto \
  >"$WORK/resumed.out" 2>&1 || fail "resubmission: $(tail -3 "$WORK/resumed.out")"
timeout 120 srun -N2 --ntasks-per-node=1 --wireup "$WIREUP_TRAIN" "${args[@]}" \
  --stop_after_step $end --checkpoint_dir "$WORK/straight-ck" >"$WORK/straight.out" 2>&1 ||
  fail "straight run: $(tail -3 "$WORK/straight.out")"
sed -n "s/^\[train\] step=\([0-9]*\)\/[0-9]* loss=\([0-9.]*\).*/\1 \2/p" "$WORK/resumed.out" |
  awk -v f="$from" '$1 > f {print $2}' >"$WORK/resumed"
sed -n "s/^\[train\] step=\([0-9]*\)\/[0-9]* loss=\([0-9.]*\).*/\1 \2/p" "$WORK/straight.out" |
  awk -v f="$from" '$1 > f {print $2}' >"$WORK/straight"
[[ $(wc -l <"$WORK/resumed") == 10 ]] || fail "resubmission: $(wc -l <"$WORK/resumed") steps after $from"
same_losses "resubmission from step $from = the uninterrupted run" "$WORK/straight" "$WORK/resumed" 0

# ---- a rank stopped 1 s (well under --comm_timeout 5) and continued: the run finishes.
ck2=$WORK/pause-ck
timeout 120 srun -N2 --ntasks-per-node=1 --wireup --kill-on-bad-exit=1 "$WIREUP_TRAIN" \
  "${args[@]}" --stop_after_step 400 --checkpoint_dir "$ck2" >"$WORK/pause.out" 2>&1 &
job=$!
wait_for "$WORK/pause.out" '^\[checkpoint\] step=100 saved' || fail "pause: no checkpoint of step 100"
r1=$(pid_of_rank "$ck2" 1) || { fail "pause: rank 1's process not found"; finish; }
kill -STOP "$r1"; sleep 1; kill -CONT "$r1"
set +e; wait $job; rc=$?; set -e
((rc == 0)) && pass "srun --wireup: a rank stopped 1 s and continued, the run finishes" ||
  fail "pause: exit $rc: $(tail -3 "$WORK/pause.out")"

# ---- wireup-launch (PMIx), 2 nodes x 2 ranks: SIGSTOP rank 3.
ck3=$WORK/launch-ck
timeout 300 srun -N2 --ntasks-per-node=1 --mpi=pmix "$WIREUP_LAUNCH" --nproc-per-node=2 -- \
  "$WIREUP_TRAIN" "${args[@]}" --checkpoint_dir "$ck3" >"$WORK/launch.out" 2>&1 &
job=$!
stop_rank "wireup-launch" "$WORK/launch.out" "$ck3" 3
# Rank 3 among the ranks not arrived (a rank a collective ahead of the others,
# stuck in the next one, lists them too).
grep -Eq 'not arrived: ([^;]*, )?rank 3 ' "$WORK/launch.out" &&
  pass "wireup-launch: a rank's line names rank 3" ||
  fail "wireup-launch: no line naming rank 3: $(grep -m3 'stalled' "$WORK/launch.out")"
grep -Eq 'stalled: *rank [0-9]* .*not arrived: ([^;]*, )?rank 3 ' "$WORK/launch.out" &&
  pass "wireup-launch: the summary repeats the stall" ||
  fail "wireup-launch: no stalled: summary line: $(tail -5 "$WORK/launch.out")"
finish
