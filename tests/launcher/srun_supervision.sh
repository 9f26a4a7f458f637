#!/bin/bash
# Under srun --mpi=pmix across 2 nodes: fail fast (exit 3 within 5 s of the
# failure, summary),
# restarts in step, scancel leaves nothing, SIGKILL of one agent kills its workers.
. "$(dirname "$0")/lib.sh" "$@"
T="timeout 60"

# 1. A failing worker ends the step on every node; srun exits with its code.
cat >"$TMP/fail.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 2 ] && { sleep 0.2; echo "rank 2 fails" >&2; $FAILED_AT; exit 3; }
exec sleep $TOKEN
EOS
chmod +x "$TMP/fail.sh"
start=$(now_ms)
clear_failure
$T srun --mpi=pmix -N2 --ntasks-per-node=1 "$WL" --nproc-per-node=2 -- "$TMP/fail.sh" >"$TMP/f" 2>&1
rc=$?
elapsed=$(ms_since_failure "$start")
[ "$rc" -eq 3 ] || { cat "$TMP/f"; fail "srun exit code $rc, expected 3"; }
[ "$elapsed" -lt 5000 ] || { cat "$TMP/f"; fail "step took $elapsed ms to end"; }
file_contains "f" "$TMP/f" "rank:       2 (local rank 0, node rank 1)"
# the step's second node, whichever it is: one of the cluster's (any naming style), or
# this machine's own name where Slurm gives PMIx the real host name (24.11)
host=$(sed -n 's/.*host:       \([^ ]*\).*/\1/p' "$TMP/f" | head -n 1)
[[ $host == "$(uname -n)" ]] || grep -q "^NodeName=$host " "$WIREUP_TEST_CLUSTER/slurm.conf" ||
  { cat "$TMP/f"; fail "host '$host' is neither a cluster node nor this machine"; }
wait_gone 2 "sleep $TOKEN"

# 2. Restarts: rank 1 fails once; everyone runs again with TORCHELASTIC_RESTART_COUNT=1.
cat >"$TMP/flaky.sh" <<EOS
#!/bin/sh
if [ "\$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
  [ "\$RANK" = 1 ] && { sleep 0.2; exit 7; }
  exec sleep $TOKEN
fi
echo "OK rank=\$RANK restart=\$TORCHELASTIC_RESTART_COUNT"
EOS
chmod +x "$TMP/flaky.sh"
$T srun --mpi=pmix -N2 --ntasks-per-node=1 "$WL" --nproc-per-node=2 --max-restarts=1 -- \
  "$TMP/flaky.sh" >"$TMP/r" 2>&1 || { cat "$TMP/r"; fail "restart run failed"; }
file_count "r" "$TMP/r" '^\[rank[0-3]\]: OK rank=[0-3] restart=1$' 4

# 3. scancel: every worker on every node is gone (the grace period is 2 s; the
#    bound, 15 s, leaves room for slurmctld -> slurmd -> stepd on a loaded machine).
srun --mpi=pmix -N2 --ntasks-per-node=1 -J "wl-$$" "$WL" --nproc-per-node=2 --grace-period=2 -- \
  sleep "$TOKEN" >"$TMP/s" 2>&1 &
srun_pid=$!
wait_for_count 20 "sleep $TOKEN" 4
scancel --name="wl-$$"
wait_gone 15 "sleep $TOKEN"
wait $srun_pid

# 4. SIGKILL of one agent: its workers die with it (parent-death signal).
srun --mpi=pmix -N2 --ntasks-per-node=1 -J "wl-$$-k" "$WL" --nproc-per-node=2 -- \
  sleep "$TOKEN" >"$TMP/k" 2>&1 &
srun_pid=$!
wait_for_count 20 "sleep $TOKEN" 4
victim=$(pgrep -f "wireup-launch --nproc-per-node=2 -- sleep $TOKEN" | head -1)
[ -n "$victim" ] || fail "no agent found"
victim_workers=$(pgrep -P "$victim" | paste -sd' ')
# shellcheck disable=SC2086 # one PID per word
kill_agent_children_follow "$victim" $victim_workers
scancel --name="wl-$$-k"
wait_gone 15 "sleep $TOKEN"
wait $srun_pid
pass "srun fail-fast ($elapsed ms), restarts, scancel, agent SIGKILL"
