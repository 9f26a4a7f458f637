#!/bin/bash
# --max-restarts under plain srun (no PMIx): agent 0 coordinates at the first
# node's address and MASTER_PORT+32 (or --control-port); a failed attempt
# restarts on every node, the last failure ends the step, a node with another
# --nproc-per-node or an agent 0 that does not listen is refused by name, and
# agent 0 closes a link from another step's launcher.
. "$(dirname "$0")/lib.sh" "$@"
T="timeout 60"
PLAIN=(srun --mpi=none -N2 --ntasks-per-node=1)

# 1. Rank 3 (agent 1's) fails once; both nodes run again with TORCHELASTIC_RESTART_COUNT=1.
cat >"$TMP/flaky.sh" <<EOS
#!/bin/sh
if [ "\$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
  [ "\$RANK" = \${FAILING_RANK:-3} ] && { sleep 0.2; exit 7; }
  exec sleep $TOKEN
fi
echo "OK rank=\$RANK restart=\$TORCHELASTIC_RESTART_COUNT"
EOS
chmod +x "$TMP/flaky.sh"
$T "${PLAIN[@]}" "$WL" --nproc-per-node=2 --max-restarts=1 -- "$TMP/flaky.sh" >"$TMP/r" 2>&1 ||
  { cat "$TMP/r"; fail "restart under plain srun failed"; }
file_count "every rank ran again" "$TMP/r" '^\[rank[0-3]\]: OK rank=[0-3] restart=1$' 4
file_contains "restart said" "$TMP/r" "rank 3 on"
file_contains "restart counted" "$TMP/r" "restarting every worker (restart 1 of 1)"
wait_gone 2 "sleep $TOKEN"

# 2. The same with --control-port, rank 0 (agent 0's own) failing.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
FAILING_RANK=0 $T "${PLAIN[@]}" "$WL" --nproc-per-node=2 --max-restarts=1 --control-port="$port" \
  -- "$TMP/flaky.sh" >"$TMP/p" 2>&1 || { cat "$TMP/p"; fail "restart with --control-port failed"; }
file_count "every rank ran again (--control-port)" "$TMP/p" '^\[rank[0-3]\]: OK rank=[0-3] restart=1$' 4
wait_gone 2 "sleep $TOKEN"

# 3. Restarts used up: rank 2 fails every attempt; the step ends, non-zero, on every node.
cat >"$TMP/fail.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 2 ] && { sleep 0.2; echo "rank 2 fails" >&2; exit 3; }
exec sleep $TOKEN
EOS
chmod +x "$TMP/fail.sh"
$T "${PLAIN[@]}" "$WL" --nproc-per-node=2 --max-restarts=1 -- "$TMP/fail.sh" >"$TMP/f" 2>&1
rc=$?
{ [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; } || { cat "$TMP/f"; fail "srun exit code $rc after the last failure"; }
file_contains "restarted once" "$TMP/f" "restarting every worker (restart 1 of 1)"
file_contains "summary of the last failure" "$TMP/f" "rank:       2 (local rank 0, node rank 1)"
wait_gone 4 "sleep $TOKEN"

# 4. Nodes with different --nproc-per-node: agent 0 refuses at HELLO (exit 2), nothing stays.
# shellcheck disable=SC2016 # expanded by the task's shell
$T "${PLAIN[@]}" sh -c 'exec "$0" --nproc-per-node=$((SLURM_NODEID + 1)) --max-restarts=1 -- "$@"' \
  "$WL" sleep "$TOKEN" >"$TMP/n" 2>&1
rc=$?
check "differing --nproc-per-node exits 2" "$rc" 2
file_contains "mismatch named" "$TMP/n" "agent 1 runs 2 worker(s) but agent 0 runs 1"
wait_gone 4 "sleep $TOKEN"

# 5. Agent 0 without --max-restarts never listens: agent 1 names the address and port.
# shellcheck disable=SC2016
WIREUP_FENCE_TIMEOUT=2 $T "${PLAIN[@]}" sh -c \
  'if [ "$SLURM_NODEID" = 0 ]; then exec "$0" --nproc-per-node=1 -- true; fi
   exec "$0" --nproc-per-node=1 --max-restarts=1 -- true' "$WL" >"$TMP/u" 2>&1
rc=$?
check "unreachable agent 0 exits 1" "$rc" 1
file_contains "address and port named" "$TMP/u" "cannot reach agent 0's control port at "
file_contains "wait named" "$TMP/u" "within 2 s"
# 6. Agent 0 (this machine, SLURM_* of task 0) closes a link from another step, then
# ends with the step's real agent 1 (a hand-written peer).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
env -i PATH=/usr/bin:/bin SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_LOCALID=0 \
  SLURM_STEP_NUM_TASKS=2 SLURM_NODEID=0 SLURM_STEP_NUM_NODES=2 SLURM_STEP_TASKS_PER_NODE=1\(x2\) \
  "SLURM_STEP_NODELIST=ip-127-0-0-[2-3]" timeout 60 "$WL" --nproc-per-node=1 --max-restarts=1 \
  --control-port="$port" /bin/true >"$TMP/a0" 2>&1 &
agent0=$!
$T python3 - "$port" <<'EOS' || fail "hand-written agent 1"
import socket, sys, time
def link(hello):
    deadline = time.monotonic() + 30
    while True:  # agent 0 may not listen yet
        try:
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    s.sendall(hello)
    return s
stranger = link(b"HELLO 1 1 78 0\n")
assert stranger.recv(64) == b"", "agent 0 kept another step's link"
peer = link(b"HELLO 1 1 77 0\nDONE 0\n")
assert peer.makefile().readline() == "EXIT 0\n"
EOS
wait "$agent0"
check "agent 0 exits 0 with its real peer" "$?" 0
file_contains "stranger named" "$TMP/a0" "closing a control link from agent 1 of job 78 step 0"
pass "plain srun: restarts in step, --control-port, last failure, --nproc-per-node mismatch, no agent 0, another step's link"
