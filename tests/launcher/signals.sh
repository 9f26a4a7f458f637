#!/bin/bash
# Supervision without a scheduler (--standalone): SIGTERM is forwarded and the
# grace period ends in SIGKILL; a SIGKILLed agent takes its workers with it;
# daemons a worker left in a session of their own end with the agent.
. "$(dirname "$0")/lib.sh" "$@"
unset PMIX_NAMESPACE SLURM_PROCID

# 1. Workers that ignore SIGTERM: SIGKILLed when the 1 s grace period ends.
cat >"$TMP/stubborn.sh" <<EOS
#!/bin/sh
trap 'echo "rank \$RANK got TERM" >&2' TERM
(trap '' TERM; exec sleep $TOKEN) &
while kill -0 \$! 2>/dev/null; do wait \$!; done
EOS
chmod +x "$TMP/stubborn.sh"
"$WL" --standalone --nproc-per-node=3 --grace-period=1 -- "$TMP/stubborn.sh" >"$TMP/out1" 2>&1 &
agent=$!
wait_for_count 10 "sleep $TOKEN" 3
kill -TERM $agent
start=$(now_ms)
wait $agent
rc=$?
elapsed=$(( $(now_ms) - start ))
[ "$rc" -eq 143 ] || { cat "$TMP/out1"; fail "exit code $rc after SIGTERM, expected 143"; }
file_count "out1" "$TMP/out1" 'rank [0-2] got TERM' 3
file_contains "out1" "$TMP/out1" "grace period over; killing 3 worker(s)"
wait_gone 1 "sleep $TOKEN"  # the workers' own children went with their groups
# At least the 1 s grace; well under the 30 s default even on a loaded machine.
if [ "$elapsed" -lt 900 ] || [ "$elapsed" -ge 10000 ]; then
  fail "SIGTERM to exit took $elapsed ms, expected the 1 s grace (under 10 s)"
fi

# 1b. A stopped worker (SIGSTOP: a hung rank, a debugger) ends at SIGTERM, not at the
#     grace period's SIGKILL: the agent follows the SIGTERM with SIGCONT.
cat >"$TMP/stopped.sh" <<EOS
#!/bin/sh
trap 'echo "rank \$RANK got TERM" >&2; exit 0' TERM
sleep $TOKEN &
kill -STOP \$\$
wait \$!
EOS
chmod +x "$TMP/stopped.sh"
"$WL" --standalone --nproc-per-node=2 --grace-period=20 -- "$TMP/stopped.sh" >"$TMP/out1b" 2>&1 &
agent=$!
wait_for_count 10 "sleep $TOKEN" 2
for _ in $(seq 200); do  # until both workers are stopped
  [ "$(ps -eo stat=,args= | awk '$1 ~ /^T/ && /stopped[.]sh/' | wc -l)" -ge 2 ] && break
  sleep 0.05
done
kill -TERM $agent
start=$(now_ms)
wait $agent
elapsed=$(( $(now_ms) - start ))
file_count "out1b" "$TMP/out1b" 'rank [01] got TERM' 2
if [ "$elapsed" -ge 10000 ]; then fail "stopped workers: SIGTERM to exit took $elapsed ms, not before the 20 s grace"; fi
wait_gone 1 "sleep $TOKEN"

# 2. Each forwarded signal reaches every worker (SIGUSR1: preemption notice).
cat >"$TMP/usr1.sh" <<EOS
#!/bin/sh
trap 'echo "rank \$RANK got USR1"; exit 0' USR1
sleep $TOKEN &
wait \$!
EOS
chmod +x "$TMP/usr1.sh"
"$WL" --standalone --nproc-per-node=2 -- "$TMP/usr1.sh" >"$TMP/out2" 2>&1 &
agent=$!
wait_for_count 10 "sleep $TOKEN" 2
kill -USR1 $agent
wait $agent
rc=$?
file_count "out2" "$TMP/out2" 'rank [01] got USR1' 2
[ "$rc" -eq $((128 + 10)) ] || fail "exit code $rc after SIGUSR1, expected 138"
wait_gone 1 "sleep $TOKEN"  # the shells exited; the agent killed what was left in their groups

# 3. SIGKILL of the agent: the parent-death signal kills every worker.
"$WL" --standalone --nproc-per-node=3 -- sleep "$TOKEN" >"$TMP/out3" 2>&1 &
agent=$!
wait_for_count 10 "sleep $TOKEN" 3
kill -KILL $agent
wait $agent 2>/dev/null
wait_gone 2 "sleep $TOKEN"

# 4. A worker that leaves daemons in sessions of their own (setsid, with and without a
#    second fork) and exits 0: the agent (a child subreaper) ends them when it ends.
cat >"$TMP/daemons.sh" <<EOS
#!/bin/sh
setsid -f sleep $TOKEN
(setsid sleep $TOKEN &)
sleep 0.3
EOS
chmod +x "$TMP/daemons.sh"
"$WL" --standalone --nproc-per-node=2 -- "$TMP/daemons.sh" >"$TMP/out4" 2>&1 ||
  { cat "$TMP/out4"; fail "daemon run failed"; }
wait_gone 1 "sleep $TOKEN"
pass "signals forwarded, grace period kept, no orphans after SIGKILL, no daemons after the end"
