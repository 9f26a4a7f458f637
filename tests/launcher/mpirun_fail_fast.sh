#!/bin/bash
# A worker that exits 3 ends the whole step (every node) within 5 s of its
# failure; the
# launcher exits 3 and the summary names the rank, its host and its output.
. "$(dirname "$0")/lib.sh" "$@"
cat >"$TMP/worker.sh" <<EOS
#!/bin/sh
if [ "\$RANK" = 2 ]; then
  echo "rank 2 about to fail" >&2
  echo '{"message": {"message": "ValueError: bad shard", "extraInfo": {"py_callstack": "Traceback: line 7", "timestamp": "1"}}}' > "\$TORCHELASTIC_ERROR_FILE"
  $FAILED_AT
  exit 3
fi
exec sleep $TOKEN
EOS
chmod +x "$TMP/worker.sh"
start=$(now_ms)
clear_failure
mpirun_fake a:1,b:1 -np 2 "$WL" --nproc-per-node=2 -- "$TMP/worker.sh" >"$TMP/out" 2>&1
rc=$?
elapsed=$(ms_since_failure "$start")
cat "$TMP/out"
[ "$rc" -eq 3 ] || fail "exit code $rc, expected 3 (the failing worker's)"
[ "$elapsed" -lt 5000 ] || fail "the step took $elapsed ms to end, expected under 5 s"
file_contains "out" "$TMP/out" "rank:       2 (local rank 0, node rank 1)"
file_contains "out" "$TMP/out" "host:       b"
file_contains "out" "$TMP/out" "exit code:  3"
file_contains "out" "$TMP/out" "error:      ValueError: bad shard"
file_contains "out" "$TMP/out" "    rank 2 about to fail"
wait_gone 2 "sleep $TOKEN"

# Exec mode: a task that exits 3 is mpirun's own business; the code still comes back.
mpirun_fake a:1,b:1 -np 2 "$WL" -- sh -c 'exit $((RANK == 1 ? 3 : 0))' >"$TMP/exec" 2>&1
rc=$?
[ "$rc" -eq 3 ] || { cat "$TMP/exec"; fail "exec mode exit code $rc, expected 3"; }
pass "fail fast in $elapsed ms with exit code 3"
