#!/bin/bash
# Env correctness under mpirun with two fake nodes (node ids are not 0..N-1
# there), in exec mode (4 tasks) and agent mode (2 agents x 2 workers).
. "$(dirname "$0")/lib.sh" "$@"
mpirun_fake a:2,b:2 -np 4 "$WL" -- "$PROGS/print_env.sh" >"$TMP/exec.out" 2>&1 ||
  { cat "$TMP/exec.out"; fail "exec mode run failed"; }
python3 "$PROGS/check_env_lines.py" "$TMP/exec.out" 4 2 2 exec || fail "exec mode env"
grep -q "ERROR_FILE=unset" "$TMP/exec.out" || fail "exec mode sets no error file without --log-dir"

mpirun_fake a:1,b:1 -np 2 "$WL" --nproc-per-node=2 --max-restarts=3 -- "$PROGS/print_env.sh" \
  >"$TMP/agent.out" 2>&1 || { cat "$TMP/agent.out"; fail "agent mode run failed"; }
python3 "$PROGS/check_env_lines.py" "$TMP/agent.out" 4 2 2 agent || fail "agent mode env"
file_count "agent.out" "$TMP/agent.out" '^\[rank[0-3]\]: WORKER RANK=[0-3] .*MAX_RESTARTS=3 ' 4
file_count "agent.out" "$TMP/agent.out" 'ERROR_FILE=/.*/attempt_0/[0-3]/error.json' 4

# One worker per agent: no OMP_NUM_THREADS, ranks follow agents.
mpirun_fake a:1,b:1 -np 2 "$WL" --nproc-per-node=1 -- "$PROGS/print_env.sh" >"$TMP/one.out" 2>&1 ||
  { cat "$TMP/one.out"; fail "one worker per agent run failed"; }
python3 "$PROGS/check_env_lines.py" "$TMP/one.out" 2 1 2 agent || fail "one worker per agent env"
pass "mpirun env in exec and agent mode"
