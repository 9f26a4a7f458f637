#!/usr/bin/env bash
# Memory snapshots on the real Slurm cluster (2 nodes x 2 ranks, plain srun and
# wireup-launch, Gloo between the nodes):
# 1. a rank killed with SIGKILL under wireup-launch --max_restarts 1: the
#    restarted ranks resume from node memory, with the uninterrupted run's
#    losses and final weights, and the finished run removes its snapshots;
# 2. two sruns of one allocation, the default DIR (/dev/shm/wireup-$SLURM_JOB_ID):
#    the first stops after step 10, one node's DIR/<node> is removed (a
#    replaced node), the second resumes from the replicas its peer holds; the
#    job prolog's DIR outlives the second's success (only its marker left), and
#    the job's epilog removes it;
# 3. a job that ends with its snapshots kept (stopped at step 10): the SPANK
#    plugin's job epilog removes /dev/shm/wireup-$SLURM_JOB_ID on its nodes.
source "$(dirname "$0")/checkpoint/lib.sh"
: "${WIREUP_TEST_CLUSTER_DIR:?}"
# 100 steps: the kill in 1. lands ~0.3 s after the first snapshot (step 5); the ~95 steps left
# took 3 to 9 s on 2 busy cores (4 ranks, Gloo between the nodes), and would still take ~2 s
# at 20 ms a step. 300, as before, spent most of the test on steps no check needs.
steps=100
final=$(printf 'step-%08d' "$steps")
args=(--preset tiny --synthetic_data --max_steps "$steps" --num_threads 1 --train_batch_size 1)
launch=(srun --mpi=none -N2 --ntasks-per-node=1 "$WIREUP_LAUNCH" --nproc-per-node=2 --no-prefix
        --local-ranks-filter=0)

timeout 300 "${launch[@]}" -- "$WIREUP_TRAIN" "${args[@]}" --checkpoint_dir "$WORK/ref" >"$WORK/ref.log"
losses <"$WORK/ref.log" >"$WORK/a.loss"
[[ $(wc -l <"$WORK/a.loss") == "$steps" ]] || fail "reference: $(tail -3 "$WORK/ref.log")"

# 1. Killed once a snapshot is complete on both nodes.
mem=(--memory_checkpoint_freq 5 --memory_checkpoint_dir "$WORK/mem" --checkpoint_dir "$WORK/ck"
     --checkpoint_freq 1000 --resume_from_checkpoint auto)
timeout 300 "${launch[@]}" --max_restarts 1 -- "$WIREUP_TRAIN" "${args[@]}" "${mem[@]}" \
  >"$WORK/kill.log" 2>"$WORK/kill.err" &
job=$!
for _ in $(seq 1200); do
  (($(find "$WORK/mem" -name complete 2>/dev/null | wc -l) >= 2)) && break
  sleep 0.05
done
victim=""
for pid in $(pgrep -f -- "--memory_checkpoint_dir $WORK/mem" || true); do
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == wireup-train ]] && victim=$pid
done
[[ -n $victim ]] && kill -9 "$victim" || fail "no rank to kill: $(tail -3 "$WORK/kill.log")"
wait "$job" || fail "the restarted run failed: $(tail -5 "$WORK/kill.err")"
grep -q "restarting every worker (restart 1 of 1)" "$WORK/kill.err" "$WORK/kill.log" &&
  pass "wireup-launch restarted the workers" || fail "no restart: $(tail -5 "$WORK/kill.err")"
first=$(sed -n 's/^\[resume\] step=\([0-9]*\) source=memory .*/\1/p' "$WORK/kill.log")
[[ -n $first ]] && pass "resumed from memory at step $first" ||
  fail "no memory resume: $(grep '^\[resume\]' "$WORK/kill.log")"
sed -n '/^\[resume\] step=/,$p' "$WORK/kill.log" >"$WORK/kill.resumed"
resumed_as_uninterrupted $((steps - first)) "$WORK/kill.resumed" "$WORK/ref/$final" \
  "$WORK/ck/$final"
[[ ! -e $WORK/mem ]] && pass "the finished run removed its snapshots" || fail "left: $(find "$WORK/mem" | head)"

# 2. Two sruns in one allocation; the second node's memory lost between them.
cat >"$WORK/alloc.sh" <<EOS
#!/bin/bash
set -u
dir=/dev/shm/wireup-\$SLURM_JOB_ID
echo "\$dir" >"$WORK/shm_dir"
run() { ${launch[*]} -- "$WIREUP_TRAIN" ${args[*]} --memory_checkpoint_freq 5 \
  --checkpoint_dir "$WORK/ck2" --resume_from_checkpoint auto "\$@"; }
run --stop_after_step 10 >"$WORK/first.log" 2>&1 || exit 11
ls "\$dir" >"$WORK/nodes.txt"
[ -f "\$dir/owner" ] || exit 12
second=\$(ls "\$dir" | grep -v '^owner\$' | sort | tail -1)
rm -rf "\${dir:?}/\$second"
run >"$WORK/second.log" 2>&1 || exit 13
# What the successful run left at DIR: nothing, or (the job prolog made it) DIR itself.
{ stat -c '%u %a' "\$dir" && ls -A "\$dir"; } >"$WORK/after_success" 2>/dev/null
exit 0
EOS
set +e
timeout 300 salloc -N2 bash "$WORK/alloc.sh" >"$WORK/alloc.out" 2>&1
rc=$?
set -e
((rc == 0)) || fail "allocation: exit $rc: $(tail -5 "$WORK/alloc.out") $(tail -3 "$WORK"/*.log)"
# The successful second run removed only what it wrote. Where spank_wireup's job prolog
# made DIR (the cluster's plugstack.conf has the plugin), DIR stays between the job's sruns,
# the job user's (root here), 0700, holding only the prolog's marker, so that nobody can
# take its name before a next srun; the job's epilog removes it. Without the plugin, the
# run removed DIR itself.
dir=$(cat "$WORK/shm_dir")
if grep -q spank_wireup "$WIREUP_TEST_CLUSTER_DIR/plugstack.conf"; then
  check "after the successful srun, the prolog's DIR stays, 0700, holding only its marker" \
    "$(tr '\n' ' ' <"$WORK/after_success")" "0 700 owner "
  for _ in $(seq 300); do [[ -e $dir ]] || break; sleep 0.2; done
  [[ ! -e $dir ]] && pass "the job epilog removed $dir" || fail "$dir outlived its job: $(find "$dir" | head -5)"
else
  check "after the successful srun, DIR (the run's own) is gone" "$(cat "$WORK/after_success")" ""
fi
[[ -n $dir ]] && rm -rf "$dir"  # left only by a failed run
grep -q '^\[resume\] step=10 source=peer' "$WORK/second.log" && pass "the second srun resumed from the peer" ||
  fail "second srun: $(grep '^\[resume\]' "$WORK/second.log")"
sed -n '/^\[resume\] step=/,$p' "$WORK/second.log" >"$WORK/second.resumed"
resumed_as_uninterrupted $((steps - 10)) "$WORK/second.resumed" "$WORK/ref/$final" \
  "$WORK/ck2/$final"

# 3. The job epilog (spank_wireup in the cluster's plugstack.conf, memory_snapshot_dirs'
#    default /dev/shm) removes what a stopped job kept.
if grep -q spank_wireup "$WIREUP_TEST_CLUSTER_DIR/plugstack.conf"; then
  cat >"$WORK/stop.sh" <<EOS
#!/bin/bash
dir=/dev/shm/wireup-\$SLURM_JOB_ID
echo "\$dir" >"$WORK/stop_dir"
${launch[*]} -- "$WIREUP_TRAIN" ${args[*]} --memory_checkpoint_freq 5 \
  --checkpoint_dir "$WORK/ck3" --stop_after_step 10 || exit 11
find "\$dir" -name complete >"$WORK/stop_kept"
EOS
  timeout 300 salloc -N2 bash "$WORK/stop.sh" >"$WORK/stop.out" 2>&1 ||
    fail "stopped job: $(tail -5 "$WORK/stop.out")"
  dir=$(cat "$WORK/stop_dir")
  (($(wc -l <"$WORK/stop_kept") >= 2)) && pass "the stopped job kept its snapshots on both nodes" ||
    fail "kept: $(cat "$WORK/stop_kept")"
  for _ in $(seq 300); do [[ -e $dir ]] || break; sleep 0.2; done
  if [[ ! -e $dir ]]; then
    pass "the job epilog removed $dir: $(grep -h "spank_wireup: removed the memory snapshots $dir " \
      "$WIREUP_TEST_CLUSTER_DIR"/log/slurmd.*.log | sed 's/.*spank_wireup: //' | head -1)"
  else
    fail "$dir outlived its job: $(find "$dir" | head -5)"
    rm -rf "$dir"
  fi
fi
finish
