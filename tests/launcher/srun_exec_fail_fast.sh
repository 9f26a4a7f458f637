#!/bin/bash
# Exec mode under srun --mpi=pmix (2 nodes x 2 tasks): one rank's failure ends
# the step on every node within 5 s of that failure (not of srun's start) and srun exits with that rank's code (an
# exit code, a signal, a program that ignores SIGTERM); a clean run waits for
# every rank; a signal sent to one launcher reaches its program once, one sent
# to the step (scancel) reaches each program once.
. "$(dirname "$0")/lib.sh" "$@"
T="timeout 60"

# run_step NAME SCRIPT: srun's exit code in $rc, and in $elapsed the ms from
# the failing rank's failure to srun's end.
run_step() {
  local start; start=$(now_ms)
  clear_failure
  chmod +x "$2"
  $T srun --mpi=pmix -N2 --ntasks-per-node=2 "$WL" -- "$2" >"$TMP/$1" 2>&1
  rc=$?
  elapsed=$(ms_since_failure "$start")
}
ended_fast() {  # NAME CODE
  [ "$rc" -eq "$2" ] || cat "$TMP/$1"
  check "$1: srun's exit code" "$rc" "$2"
  [ "$elapsed" -lt 5000 ] || { cat "$TMP/$1"; fail "$1: the step took $elapsed ms to end"; }
  wait_gone 2 "sleep $TOKEN"
}
# Waits up to 10 s for N lines matching REGEX in FILE (at least N).
wait_lines() {  # FILE REGEX N
  for _ in $(seq 200); do [ "$(grep -cE -- "$2" "$1")" -ge "$3" ] && return; sleep 0.05; done
}

# 1. Rank 2 exits 3; the others sleep.
cat >"$TMP/exit3.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 2 ] && { sleep 0.3; echo "rank 2 fails" >&2; $FAILED_AT; exit 3; }
exec sleep $TOKEN
EOS
run_step exit3 "$TMP/exit3.sh"
ended_fast exit3 3
file_contains "exit3" "$TMP/exit3" "rank 2 fails"
# The node rank 2 ran on: one of the cluster's (any naming style), or this machine's
# own name where Slurm gives PMIx the real host name (24.11).
host=$(sed -n 's/.*wireup-launch: rank 2 on \([^ ]*\) .*/\1/p' "$TMP/exit3" | head -n 1)
[[ -n $host ]] && { [[ $host == "$(uname -n)" ]] || grep -q "^NodeName=$host " "$WIREUP_TEST_CLUSTER/slurm.conf"; } ||
  fail "no 'wireup-launch: rank 2 on NODE' line naming a node of the cluster: $(cat "$TMP/exit3")"
file_contains "exit3" "$TMP/exit3" "failed (exit code 3); stopping every rank"
exit3_ms=$elapsed

# 2. Rank 1 dies of SIGKILL: srun reports the signal (137).
cat >"$TMP/killed.sh" <<EOS
#!/bin/sh
[ "\$RANK" = 1 ] && { sleep 0.3; $FAILED_AT; kill -KILL \$\$; }
exec sleep $TOKEN
EOS
run_step killed "$TMP/killed.sh"
ended_fast killed 137
file_contains "killed" "$TMP/killed" "failed (SIGKILL); stopping every rank"
killed_ms=$elapsed

# 3. The other ranks ignore SIGTERM: SIGKILL follows within 2 s.
cat >"$TMP/stubborn.sh" <<EOS
#!/bin/bash
trap '' TERM
[ "\$RANK" = 3 ] && { sleep 0.3; $FAILED_AT; exit 5; }
sleep $TOKEN
EOS
run_step stubborn "$TMP/stubborn.sh"
ended_fast stubborn 5
stubborn_ms=$elapsed

# 4. Success: rank 0 ends first, the others later; every rank's output arrives, exit 0.
cat >"$TMP/ok.sh" <<'EOS'
#!/bin/sh
[ "$RANK" = 0 ] || sleep 1
echo "done rank=$RANK"
EOS
run_step ok "$TMP/ok.sh"
[ "$rc" -eq 0 ] || { cat "$TMP/ok"; fail "clean run: srun exit code $rc"; }
file_count "ok" "$TMP/ok" '^done rank=[0-3]$' 4

# 5. Signals: `kill -USR1` of one launcher reaches its program once; scancel
#    --signal=USR1 of the step reaches each of the 4 programs once (not twice).
cat >"$TMP/usr1.sh" <<EOS
#!/bin/bash
trap 'echo "usr1 rank=\$RANK"' USR1
trap 'echo "usr2 rank=\$RANK"' USR2
echo "ready rank=\$RANK"
for _ in \$(seq 600); do sleep 0.1; done  # $TOKEN
EOS
chmod +x "$TMP/usr1.sh"
srun --mpi=pmix -N2 --ntasks-per-node=2 -J "wl-exec-$$" "$WL" -- "$TMP/usr1.sh" >"$TMP/usr1" 2>&1 &
srun_pid=$!
wait_lines "$TMP/usr1" '^ready rank=[0-3]$' 4
file_count "usr1" "$TMP/usr1" '^ready rank=[0-3]$' 4
one=$(pgrep -f "^[^ ]*wireup-launch -- $TMP/usr1.sh" | head -1)  # not srun
[ -n "$one" ] || fail "no exec-mode launcher found"
# Each USR1 is followed by a USR2 the same way; a program handles its pending
# USR1 before its USR2, so once every USR2 is echoed, so is every USR1 (a
# second copy of one included).
kill -USR1 "$one"
kill -USR2 "$one"
wait_lines "$TMP/usr1" '^usr2 rank=[0-3]$' 1
file_count "usr1" "$TMP/usr1" '^usr1 rank=[0-3]$' 1
scancel --signal=USR1 --name="wl-exec-$$"
wait_lines "$TMP/usr1" '^usr1 rank=[0-3]$' 5
scancel --signal=USR2 --name="wl-exec-$$"
wait_lines "$TMP/usr1" '^usr2 rank=[0-3]$' 5
file_count "usr1" "$TMP/usr1" '^usr1 rank=[0-3]$' 5
scancel --name="wl-exec-$$"
wait "$srun_pid"
wait_gone 4 "$TMP/usr1.sh"
pass "exec mode fails fast: exit 3 in $exit3_ms ms, SIGKILL in $killed_ms ms," \
  "SIGTERM ignored in $stubborn_ms ms; clean run; USR1 forwarded once"
