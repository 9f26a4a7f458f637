#!/bin/bash
# Bad input gives a clear message and a non-zero exit; nothing identifies the job.
. "$(dirname "$0")/lib.sh" "$@"
check() {  # WANT_RC TEXT -- ARGS (run with a bare environment)
  local want=$1 text=$2; shift 3
  env -i PATH=/usr/bin:/bin "$WL" "$@" >"$TMP/out" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$TMP/out"; fail "wireup-launch $*: exit $rc, expected $want"; }
  file_contains "out" "$TMP/out" "$text"
}
check 2 "cannot tell which job" -- -- /bin/true
file_contains "out" "$TMP/out" "PMIX_NAMESPACE"
file_contains "out" "$TMP/out" "SLURM_PROCID"
check 2 "missing PROGRAM" -- --nproc-per-node=2
check 2 "unknown option '--nproc-per-nod=2'" -- --nproc-per-nod=2 /bin/true
check 2 "--nproc-per-node: expected" -- --nproc-per-node=lots /bin/true
check 2 "--max-restarts: expected a whole number" -- --max-restarts=-1 /bin/true
env -i PATH=/usr/bin:/bin PET_MAX_RESTARTS=x "$WL" --standalone /bin/true >"$TMP/out" 2>&1
[ $? -eq 2 ] || fail "a bad PET_ variable must fail"
file_contains "out" "$TMP/out" "PET_MAX_RESTARTS"
check 2 "no GPU is visible" -- --standalone --nproc-per-node=gpu /bin/true
check 127 "cannot run /nonexistent/prog" -- --standalone /nonexistent/prog
# Both modes as the shell: 127 not found, 126 found but not runnable.
check 127 "cannot run /nonexistent/prog" -- --standalone --nproc-per-node=1 /nonexistent/prog
printf '#!/bin/sh\necho ran\n' >"$TMP/noexec"
chmod 644 "$TMP/noexec"
check 126 "cannot run $TMP/noexec: Permission denied" -- --standalone "$TMP/noexec"
check 126 "cannot run $TMP/noexec: Permission denied" -- --standalone --nproc-per-node=1 "$TMP/noexec"
check 126 "cannot run $TMP: Permission denied" -- --standalone --nproc-per-node=1 "$TMP"
check 0 "usage: wireup-launch" -- --help
check 2 "--agent-store needs agent mode (--nproc-per-node)" -- --standalone --agent-store /bin/true
check 2 "--preload needs agent mode" -- --standalone --preload=torch x.py
check 2 "--preload needs a Python PROGRAM" -- --standalone --nproc-per-node=1 --preload=torch /bin/true
check 2 "--preload needs a Python PROGRAM" -- --standalone --nproc-per-node=1 --preload=torch --no-python x.py
check 2 "--preload: expected Python module names" -- --standalone --nproc-per-node=1 --preload=torch,2x x.py
check 2 "--agent-store and --master-addr cannot be combined" -- --standalone --nproc-per-node=1 \
  --agent-store --master-addr=10.0.0.1 /bin/true
env -i PATH=/usr/bin:/bin SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_LOCALID=0 \
  SLURM_STEP_NUM_TASKS=1 SLURM_NODEID=0 SLURM_STEP_NUM_NODES=1 SLURM_STEP_TASKS_PER_NODE=1 \
  SLURM_STEP_NODELIST=ip-127-0-0-2 "$WL" --nproc-per-node=1 --agent-store /bin/true >"$TMP/out" 2>&1
[ $? -eq 2 ] || { cat "$TMP/out"; fail "--agent-store from SLURM_* variables must be refused"; }
file_contains "out" "$TMP/out" "--agent-store needs PMIx (srun --mpi=pmix, mpirun) or --standalone"
# --max-restarts across agents without PMIx: agent 1 of a SLURM_* step names the
# address and port it could not reach (the cluster tests run the real thing).
env -i PATH=/usr/bin:/bin SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_LOCALID=0 \
  SLURM_STEP_NUM_TASKS=2 SLURM_NODEID=1 SLURM_STEP_NUM_NODES=2 SLURM_STEP_TASKS_PER_NODE=1\(x2\) \
  "SLURM_STEP_NODELIST=ip-127-0-0-[2-3]" WIREUP_FENCE_TIMEOUT=1 "$WL" --nproc-per-node=1 \
  --max-restarts=1 --control-port=9 /bin/true >"$TMP/out" 2>&1
[ $? -eq 1 ] || { cat "$TMP/out"; fail "an unreachable agent 0 must fail"; }
file_contains "out" "$TMP/out" "cannot reach agent 0's control port at 127.0.0.2:9 within 1 s"
check 2 "found a static job of 2 tasks" -- --nnodes=2 --node-rank=1 --master-addr=127.0.0.1 \
  --master-port=29500 --nproc-per-node=1 --max-restarts=1 /bin/true
# Standalone exec mode works with nothing else set.
check 0 "RANK=0 LOCAL_RANK=0 WORLD_SIZE=1" -- --standalone "$PROGS/print_env.sh"
# Plain srun without PMIx: the SLURM_* variables are enough.
env -i PATH=/usr/bin:/bin SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_LOCALID=1 \
  SLURM_STEP_NUM_TASKS=2 SLURM_NODEID=0 SLURM_STEP_NUM_NODES=1 SLURM_STEP_TASKS_PER_NODE=2 \
  SLURM_STEP_NODELIST=ip-127-0-0-2 "$WL" -- "$PROGS/print_env.sh" >"$TMP/out" 2>&1 ||
  { cat "$TMP/out"; fail "exec from SLURM_* variables"; }
file_contains "out" "$TMP/out" "RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0"
file_contains "out" "$TMP/out" "MASTER_ADDR=127.0.0.2 "
file_contains "out" "$TMP/out" "RUN_ID=77.0 "
pass "clear errors and fallbacks"
