#!/bin/bash
# --preload without a scheduler (--standalone): workers forked by the preload
# server keep the documented supervision: env, argv, __main__, adoption by the
# agent, process groups, parent-death signal, exit codes, tracebacks, signal
# forwarding, agent SIGKILL, restarts (one import for all attempts), log files,
# -m, and clear errors for a missing script, module or interpreter.
. "$(dirname "$0")/lib.sh" "$@"
unset PMIX_NAMESPACE SLURM_PROCID
PY=/usr/bin/python3
W=$TMP/worker.py  # a copy per test run: `pgrep -f` finds exactly this run's processes
cp "$PROGS/preload_worker.py" "$W"
cp "$PROGS/preload_probe.py" "$TMP/"
run() { timeout 60 "$WL" --standalone --python="$PY" --preload=preload_probe "$@"; }
adopted() {  # AGENT_PID N: wait until the agent has N children (its server, N-1 workers)
  for _ in $(seq 400); do [ "$(pgrep -P "$1" | wc -l)" -ge "$2" ] && return; sleep 0.05; done
  fail "agent $1 has children '$(pgrep -P "$1" | paste -sd' ')', expected $2"
}

# 1. The worker's world: as if exec'd, and the module imported once for all.
run --nproc-per-node=3 -- "$W" env "a b" c >"$TMP/env" 2>&1 || { cat "$TMP/env"; fail "env run"; }
python3 "$PROGS/check_env_lines.py" "$TMP/env" 3 3 1 agent || fail "worker env under --preload"
file_count "env" "$TMP/env" 'PRELOADED pid=' 1

# 2. Exit codes: the failing rank's, with the root-cause summary; a traceback.
start=$(now_ms)
run --nproc-per-node=3 -- "$W" fail >"$TMP/fail" 2>&1
rc=$?
[ "$rc" -eq 3 ] || { cat "$TMP/fail"; fail "exit code $rc, expected 3"; }
[ $(( $(now_ms) - start )) -lt 10000 ] || fail "a failing rank did not stop the others"
file_contains "fail" "$TMP/fail" "rank:       2 (local rank 2, node rank 0)"
file_contains "fail" "$TMP/fail" "rank 2 fails"
run --nproc-per-node=2 -- "$W" raise >"$TMP/raise" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$TMP/raise"; fail "exit code $rc after an exception, expected 1"; }
file_contains "raise" "$TMP/raise" "ValueError: boom from rank 1"
wait_gone 2 "$W"

# 3. SIGTERM reaches every worker's group; SIGKILL of the agent takes all with it.
"$WL" --standalone --python="$PY" --preload=preload_probe --nproc-per-node=2 --grace-period=5 \
  -- "$W" sleep >"$TMP/term" 2>&1 &
agent=$!
adopted $agent 3
# The workers' Python is past start-up (the agent's prefix leads each line).
for _ in $(seq 400); do [ "$(grep -c 'SLEEPING rank=' "$TMP/term")" -ge 2 ] && break; sleep 0.05; done
file_count "term" "$TMP/term" 'SLEEPING rank=[01]' 2
kill -TERM $agent
wait $agent
rc=$?
[ "$rc" -eq 143 ] || { cat "$TMP/term"; fail "exit code $rc after SIGTERM, expected 143"; }
wait_gone 2 "$W"
"$WL" --standalone --python="$PY" --preload=preload_probe --nproc-per-node=2 \
  -- "$W" sleep >"$TMP/kill" 2>&1 &
agent=$!
adopted $agent 3
kill -KILL $agent
wait $agent 2>/dev/null
wait_gone 2 "$W"

# 4. Restarts: the same server forks the next attempt (one import in all).
run --nproc-per-node=2 --max-restarts=1 -- "$W" flaky >"$TMP/flaky" 2>&1 ||
  { cat "$TMP/flaky"; fail "restart under --preload"; }
file_count "flaky" "$TMP/flaky" '^\[rank[01]\]: OK rank=[01] restart=1 preloaded=1$' 2
file_count "flaky" "$TMP/flaky" 'PRELOADED pid=' 1

# 5. Per-rank log files.
run --nproc-per-node=2 --log-dir="$TMP/logs" -- "$W" env "a b" c >"$TMP/logs.out" 2>&1 ||
  { cat "$TMP/logs.out"; fail "--log-dir under --preload"; }
for r in 0 1; do file_contains "logs/attempt_0/$r/stdout.log" "$TMP/logs/attempt_0/$r/stdout.log" "WORKER RANK=$r "; done

# 6. -m MODULE runs as __main__ from the working directory.
mkdir "$TMP/m" && cat >"$TMP/m/mymod.py" <<'EOS'
import os, sys
print(f"MOD name={__name__} argv1={sys.argv[1:]} path0={sys.path[0] == os.getcwd()} "
      f"json={'json' in sys.modules}", flush=True)
EOS
(cd "$TMP/m" && timeout 60 "$WL" --standalone --python="$PY" --preload=json --nproc-per-node=1 \
  -m mymod x) >"$TMP/mod" 2>&1 || { cat "$TMP/mod"; fail "-m under --preload"; }
file_contains "mod" "$TMP/mod" "MOD name=__main__ argv1=['x'] path0=True json=True"

# 7. Bad input: a clear message and a non-zero exit, no hang.
run --nproc-per-node=2 -- "$TMP/missing.py" >"$TMP/nofile" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$TMP/nofile"; fail "missing script: exit $rc, expected 2 (as python)"; }
file_contains "nofile" "$TMP/nofile" "can't open file '$TMP/missing.py'"
timeout 60 "$WL" --standalone --python="$PY" --preload=preload_probe,no_such_module_xyz \
  --nproc-per-node=2 -- "$W" env >"$TMP/nomod" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$TMP/nomod"; fail "missing module: exit $rc, expected 1"; }
file_contains "nomod" "$TMP/nomod" "importing no_such_module_xyz failed"
file_contains "nomod" "$TMP/nomod" "ModuleNotFoundError"
file_contains "nomod" "$TMP/nomod" "the preload process exited with code 1 before it was ready"
timeout 60 "$WL" --standalone --python=/nonexistent/python --preload=json --nproc-per-node=2 \
  -- "$W" env >"$TMP/nopy" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$TMP/nopy"; fail "missing interpreter: exit $rc, expected 1"; }
file_contains "nopy" "$TMP/nopy" "cannot run /nonexistent/python"
# 8. A worker adopted by anyone but its agent (the agent died mid-fork) exits 137 at once,
# without running the program: the server run by hand, for an agent pid that is not us.
cat >"$TMP/orphan.py" <<'EOS'
import ctypes, os, socket, struct, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: the worker comes to us
server_py, script = sys.argv[1], sys.argv[2]
mine, theirs = socket.socketpair()
srv = subprocess.Popen([sys.executable, "-u", server_py, str(theirs.fileno()), "1", "path", script],
                       pass_fds=[theirs.fileno()])
theirs.close()
assert mine.recv(6) == b"READY\n"
payload = b"2\0" + script.encode() + b"\0env\0" + b"1\0RANK=0\0"
r, w = os.pipe()
socket.send_fds(mine, [struct.pack("<Q", len(payload))], [w, w])
mine.sendall(payload)
reply = mine.recv(64)
assert reply.startswith(b"PID "), reply
pid, t0 = int(reply[4:]), time.time()
_, status = os.waitpid(pid, 0)
os.close(w)
print(f"ORPHAN status={os.waitstatus_to_exitcode(status)} seconds={time.time() - t0:.1f} "
      f"output={os.read(r, 100)!r}", flush=True)
srv.kill()
EOS
timeout 30 "$PY" "$TMP/orphan.py" "$HERE/../../launcher/src/agent/preload_server.py" "$W" >"$TMP/orphan" 2>&1 ||
  { cat "$TMP/orphan"; fail "orphan check"; }
# Killed at once, well before the 10 s limit (under 5 s on a loaded machine).
[[ $(cat "$TMP/orphan") =~ ORPHAN\ status=137\ seconds=[0-4]\. ]] ||
  { cat "$TMP/orphan"; fail "orphan: not SIGKILLed within 5 s"; }
file_contains "orphan" "$TMP/orphan" "output=b''"
pass "--preload: env, exit codes, signals, agent SIGKILL, restarts, logs, -m, bad input, orphans"
