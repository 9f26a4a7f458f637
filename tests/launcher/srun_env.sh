#!/bin/bash
# Env correctness under real srun --mpi=pmix on emulated nodes, in exec mode,
# agent mode (2 and 4 nodes) and plain srun without PMIx.
. "$(dirname "$0")/lib.sh" "$@"
T="timeout 60"
$T srun --mpi=pmix -N2 --ntasks-per-node=2 "$WL" -- "$PROGS/print_env.sh" >"$TMP/exec" 2>&1 ||
  { cat "$TMP/exec"; fail "exec mode under srun"; }
python3 "$PROGS/check_env_lines.py" "$TMP/exec" 4 2 2 exec || fail "exec mode env under srun"
# MASTER_ADDR is rank 0's node address (check_env_lines.py), whichever nodes the step got.
file_count "exec" "$TMP/exec" "RUN_ID=[0-9]+\.[0-9]+ " 4

$T srun --mpi=pmix -N2 --ntasks-per-node=1 "$WL" --nproc-per-node=2 -- "$PROGS/print_env.sh" \
  >"$TMP/agent" 2>&1 || { cat "$TMP/agent"; fail "agent mode under srun"; }
python3 "$PROGS/check_env_lines.py" "$TMP/agent" 4 2 2 agent || fail "agent mode env under srun"

$T srun --mpi=pmix -N4 --ntasks-per-node=1 "$WL" --nproc-per-node=2 --nnodes=4 -- \
  "$PROGS/print_env.sh" >"$TMP/agent4" 2>&1 || { cat "$TMP/agent4"; fail "4-node agent mode"; }
python3 "$PROGS/check_env_lines.py" "$TMP/agent4" 8 2 4 agent || fail "4-node agent mode env"

# --nnodes that does not match the step is refused by every task.
$T srun --mpi=pmix -N2 --ntasks-per-node=1 "$WL" --nproc-per-node=1 --nnodes=3 -- /bin/true \
  >"$TMP/nn" 2>&1 && fail "--nnodes=3 on 2 nodes must fail"
file_contains "nn" "$TMP/nn" "--nnodes=3: the job has 2 node(s)"

# Plain srun (no PMIx): the same wiring from SLURM_* variables.
$T srun --mpi=none -N2 --ntasks-per-node=2 "$WL" -- "$PROGS/print_env.sh" >"$TMP/plain" 2>&1 ||
  { cat "$TMP/plain"; fail "exec mode under plain srun"; }
python3 "$PROGS/check_env_lines.py" "$TMP/plain" 4 2 2 plain || fail "plain srun env"
pass "srun env in exec and agent mode"
