#!/bin/bash
# --preload (and --agent-store) under srun --mpi=pmix on 2 emulated nodes: one
# import per agent, the worker env, fail fast with the worker's exit code, a
# failed import stops every node, restarts in step, agent SIGKILL.
. "$(dirname "$0")/lib.sh" "$@"
PY=/usr/bin/python3
W=$TMP/worker.py  # a copy per test run: `pgrep -f` finds exactly this run's processes
cp "$PROGS/preload_worker.py" "$W"
cp "$PROGS/preload_probe.py" "$TMP/"
T="timeout 60"
SRUN=(srun --mpi=pmix -N2 --ntasks-per-node=1)
PRE=(--python="$PY" --preload=preload_probe)

# 1. Env and the preload invariants; one import per agent.
$T "${SRUN[@]}" "$WL" --nproc-per-node=2 --agent-store "${PRE[@]}" -- "$W" env "a b" c >"$TMP/env" 2>&1 ||
  { cat "$TMP/env"; fail "env run"; }
python3 "$PROGS/check_env_lines.py" "$TMP/env" 4 2 2 agent store || fail "worker env under srun --preload"
file_count "env" "$TMP/env" 'PRELOADED pid=' 2

# 2. A failing worker ends the step on every node; srun exits with its code.
start=$(now_ms)
$T "${SRUN[@]}" "$WL" --nproc-per-node=2 "${PRE[@]}" -- "$W" fail >"$TMP/fail" 2>&1
rc=$?
elapsed=$(( $(now_ms) - start ))
[ "$rc" -eq 3 ] || { cat "$TMP/fail"; fail "srun exit code $rc, expected 3"; }
[ "$elapsed" -lt 8000 ] || { cat "$TMP/fail"; fail "step took $elapsed ms to end"; }
file_contains "fail" "$TMP/fail" "rank:       2 (local rank 0, node rank 1)"
wait_gone 3 "$W"

# 3. A module that does not import: every node stops, the reason is on the console.
start=$(now_ms)
$T "${SRUN[@]}" "$WL" --nproc-per-node=2 --python="$PY" --preload=no_such_module_xyz -- "$W" env \
  >"$TMP/nomod" 2>&1
rc=$?
import_ms=$(( $(now_ms) - start ))
[ "$rc" -eq 1 ] || { cat "$TMP/nomod"; fail "a failed import: srun exit $rc, expected 1"; }
[ "$import_ms" -lt 8000 ] || { cat "$TMP/nomod"; fail "a failed import took $import_ms ms to end the step"; }
file_contains "nomod" "$TMP/nomod" "importing no_such_module_xyz failed"
file_contains "nomod" "$TMP/nomod" "before it was ready"

# 4. Restarts across agents: one server per agent forks both attempts.
$T "${SRUN[@]}" "$WL" --nproc-per-node=2 --max-restarts=1 "${PRE[@]}" -- "$W" flaky >"$TMP/flaky" 2>&1 ||
  { cat "$TMP/flaky"; fail "restart under --preload"; }
file_count "flaky" "$TMP/flaky" '^\[rank[0-3]\]: OK rank=[0-3] restart=1 preloaded=1$' 4
file_count "flaky" "$TMP/flaky" 'PRELOADED pid=' 2

# 5. SIGKILL of one agent: its preload server and its (adopted) workers die with it.
"${SRUN[@]}" -J "wl-$$-k" "$WL" --nproc-per-node=2 "${PRE[@]}" -- "$W" sleep >"$TMP/k" 2>&1 &
srun_pid=$!
victim=
for _ in $(seq 600); do
  for p in $(pgrep -f -- "--preload=preload_probe -- $W sleep"); do  # srun's argv matches too
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = wireup-launch ] && { victim=$p; break 2; }
  done
  sleep 0.05
done
[ -n "$victim" ] || fail "no agent found"
# Its children once both workers are adopted: its server and 2 workers.
for _ in $(seq 600); do [ "$(pgrep -P "$victim" | wc -l)" -ge 3 ] && break; sleep 0.05; done
children=$(pgrep -P "$victim" | paste -sd' ')
[ "$(echo "$children" | wc -w)" -eq 3 ] || fail "agent $victim has children '$children', expected its server and 2 workers"
# shellcheck disable=SC2086 # one PID per word
kill_agent_children_follow "$victim" $children
scancel --name="wl-$$-k"
# Waits up to 15 s for every worker to be gone after the scancel.
wait_gone 15 "$W"
wait $srun_pid
pass "srun --preload: env, fail fast ($elapsed ms), failed import ($import_ms ms), restarts, agent SIGKILL"
