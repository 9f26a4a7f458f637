#!/bin/bash
# --agent-store without a scheduler (--standalone): torch's own TCPStore client
# against the agent's store (store_client.py), restarts on the same store (torch
# keys each attempt apart), and a taken --master-port is a clear error.
. "$(dirname "$0")/lib.sh" "$@"
unset PMIX_NAMESPACE SLURM_PROCID
PY=/usr/bin/python3
export GLOO_SOCKET_IFNAME=lo
run() { timeout 120 "$WL" --standalone --agent-store --python="$PY" "$@"; }

run --nproc-per-node=3 -- "$PROGS/store_client.py" >"$TMP/client" 2>&1 ||
  { cat "$TMP/client"; fail "torch clients against the agent store"; }
file_count "client" "$TMP/client" '^\[rank[0-2]\]: STORE rank=[0-2] world=3 restart=0 port=[0-9]+ ok$' 3
file_contains "client" "$TMP/client" "agent store: closing the connection from 127.0.0.1: unknown query type 200"

# Restart: attempt 0 reaches init_process_group and an all_reduce, then rank 1
# fails; attempt 1 meets on the same store and port, emptied: torch 2.x's env://
# no longer prefixes keys by attempt, and a key left from attempt 0 (gloo's
# addresses) sent attempt 1 to dead peers now and then. Each attempt leaves a
# key; attempt 1 must not find attempt 0's.
cat >"$TMP/flaky.py" <<'EOS'
import os, sys, torch, torch.distributed as dist
from datetime import timedelta
sys.path.insert(0, sys.argv[1])
import torch_store  # USE_LIBUV=0 only on a torch built without libuv (tests/clients)
attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
print(f"PORT rank={rank} attempt={attempt} port={os.environ['MASTER_PORT']}", flush=True)
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, False,
                      timedelta(seconds=30), **torch_store.tcpstore_kwargs())
for a in range(int(attempt)):  # compare_set answers the desired value only for a missing key
    left = store.compare_set(f"left/{a}/{rank}", "", "new")
    assert left == b"new", f"attempt {attempt} found attempt {a}'s key: {left!r}"
store.set(f"left/{attempt}/{rank}", "x")
dist.init_process_group("gloo", init_method="env://")
t = torch.ones(1)
dist.all_reduce(t)
if attempt == "0" and dist.get_rank() == 1:
    sys.exit(5)
if attempt == "0":
    dist.barrier()  # never completes: rank 1 is gone, so this rank is stopped
print(f"FLAKY rank={dist.get_rank()} attempt={attempt} sum={t.item():.0f} "
      f"port={os.environ['MASTER_PORT']}", flush=True)
dist.destroy_process_group()
EOS
run --nproc-per-node=2 --max-restarts=1 -- "$TMP/flaky.py" "$HERE/../clients" >"$TMP/flaky" 2>&1 ||
  { cat "$TMP/flaky"; fail "restart on the agent store"; }
file_count "flaky" "$TMP/flaky" '^\[rank[01]\]: FLAKY rank=[01] attempt=1 sum=2 port=[0-9]+$' 2
# Unlike a run without the store (mpirun_restart.sh), every attempt keeps its port.
file_count "flaky" "$TMP/flaky" '^\[rank[01]\]: PORT rank=[01] attempt=[01] port=[0-9]+$' 4
ports=$(grep -o 'port=[0-9]*' "$TMP/flaky" | sort -u | wc -l)
[ "$ports" -eq 1 ] || fail "the store's port changed within one run"

# A --master-port that is taken: said so, and nothing starts.
python3 -c 'import socket,time; s=socket.socket(); s.bind(("", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$TMP/port" &
holder=$!
# Waits up to 30 s for the holder to print its port.
for _ in $(seq 600); do [ -s "$TMP/port" ] && break; sleep 0.05; done
[ -s "$TMP/port" ] || fail "the port holder printed no port within 30 s"
run --nproc-per-node=2 --master-port="$(cat "$TMP/port")" -- "$PROGS/store_client.py" >"$TMP/taken" 2>&1
rc=$?
kill $holder
[ "$rc" -eq 1 ] || { cat "$TMP/taken"; fail "a taken --master-port: exit $rc, expected 1"; }
file_contains "taken" "$TMP/taken" "--agent-store: cannot listen on TCP port $(cat "$TMP/port"): Address already in use (--master-port)"
pass "agent store: torch's client, restarts on one store, a taken port"
