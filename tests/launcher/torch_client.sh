#!/bin/bash
# A real client replacing torchrun: python3-torch (gloo, env://, all_reduce)
# under wireup-launch in exec and agent mode. LAUNCHER is "srun" or "mpirun".
. "$(dirname "$0")/lib.sh" "$@"
LAUNCHER=${2:?srun or mpirun}
PY=/usr/bin/python3  # Debian's torch; the python3 first on PATH may lack it
export GLOO_SOCKET_IFNAME=lo
if [ "$LAUNCHER" = srun ]; then
  exec_run() { timeout 120 srun --mpi=pmix -N2 --ntasks-per-node=2 "$@"; }
  agent_run() { timeout 120 srun --mpi=pmix -N2 --ntasks-per-node=1 "$@"; }
else
  exec_run() { mpirun_fake a:2,b:2 -np 4 "$@"; }
  agent_run() { mpirun_fake a:1,b:1 -np 2 "$@"; }
fi
exec_run "$WL" -- "$PY" "$PROGS/gloo_allreduce.py" >"$TMP/exec" 2>&1 ||
  { cat "$TMP/exec"; fail "torch client in exec mode"; }
file_count "exec" "$TMP/exec" 'ALLREDUCE rank=[0-3] world=4 local_rank=[01] sum=10 ok' 4
agent_run "$WL" --nproc-per-node=2 --python="$PY" -- "$PROGS/gloo_allreduce.py" >"$TMP/agent" 2>&1 ||
  { cat "$TMP/agent"; fail "torch client in agent mode"; }
file_count "agent" "$TMP/agent" '^\[rank[0-3]\]: ALLREDUCE rank=[0-3] world=4 local_rank=[01] sum=10 ok' 4
# --agent-store: torch's TCPStore client against the agent's store, across nodes.
agent_run "$WL" --nproc-per-node=2 --agent-store --python="$PY" -- "$PROGS/store_client.py" \
  >"$TMP/store" 2>&1 || { cat "$TMP/store"; fail "torch clients against the agent store"; }
file_count "store" "$TMP/store" '^\[rank[0-3]\]: STORE rank=[0-3] world=4 restart=0 port=[0-9]+ ok$' 4
# --preload: workers forked from one torch import per agent.
agent_run "$WL" --nproc-per-node=2 --agent-store --preload=torch.distributed --python="$PY" -- \
  "$PROGS/gloo_allreduce.py" >"$TMP/preload" 2>&1 || { cat "$TMP/preload"; fail "torch under --preload"; }
file_count "preload" "$TMP/preload" '^\[rank[0-3]\]: ALLREDUCE rank=[0-3] world=4 local_rank=[01] sum=10 ok' 4
pass "torch gloo all_reduce under $LAUNCHER in exec and agent mode, agent store, preload"
