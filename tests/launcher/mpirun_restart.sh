#!/bin/bash
# --max-restarts: rank 3 fails on the first attempt while the others are busy
# (they must be stopped) or already done (they must run again); every agent
# restarts its workers together and the second attempt succeeds. Without
# --agent-store each attempt has its own MASTER_PORT (agent 0 picks it and sends it
# with START): every worker of an attempt, on either agent, sees that attempt's.
. "$(dirname "$0")/lib.sh" "$@"
cat >"$TMP/worker.sh" <<EOS
#!/bin/sh
if [ "\$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
  echo "START rank=\$RANK restart=0 port=\$MASTER_PORT"
  case "\$RANK" in
    3) sleep 0.3; echo "rank 3 fails once" >&2; exit 5 ;;
    0) exit 0 ;;                 # finished before the failure
    *) exec sleep $TOKEN ;;      # busy when the failure comes
  esac
fi
echo "OK rank=\$RANK restart=\$TORCHELASTIC_RESTART_COUNT port=\$MASTER_PORT"
EOS
chmod +x "$TMP/worker.sh"
mpirun_fake a:1,b:1 -np 2 "$WL" --nproc-per-node=2 --max-restarts=2 -- "$TMP/worker.sh" \
  >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ "$rc" -eq 0 ] || fail "exit code $rc after a successful restart"
file_count "out" "$TMP/out" '^\[rank[0-3]\]: OK rank=[0-3] restart=1 ' 4
file_count "out" "$TMP/out" '^\[rank[0-3]\]: START rank=[0-3] restart=0 port=[0-9]+$' 4
# The distinct MASTER_PORTs the workers of attempt N saw (one line each).
ports_of() {
  sed -nE "s/^\[rank[0-3]\]: (START|OK) rank=[0-3] restart=$1 port=([0-9]+)\$/\2/p" "$TMP/out" |
    sort -u
}
port0=$(ports_of 0)
port1=$(ports_of 1)
check "one MASTER_PORT in attempt 0" "$(grep -c . <<<"$port0")" 1
check "one MASTER_PORT in attempt 1" "$(grep -c . <<<"$port1")" 1
[ "$port0" != "$port1" ] || fail "attempt 1 kept attempt 0's MASTER_PORT $port0"
pass "attempt 1 has its own MASTER_PORT ($port0, then $port1)"
file_contains "out" "$TMP/out" "rank 3 on b failed (exit code 5); restarting every worker (restart 1 of 2)"
wait_gone 2 "sleep $TOKEN"

# Restarts used up: the last failure is final and its code comes back.
# shellcheck disable=SC2016 # expanded by the workers' shell
mpirun_fake a:1,b:1 -np 2 "$WL" --nproc-per-node=1 --max-restarts=1 -- \
  sh -c 'echo "attempt $TORCHELASTIC_RESTART_COUNT"; exit $((RANK == 1 ? 4 : 0))' >"$TMP/out2" 2>&1
rc=$?
[ "$rc" -eq 4 ] || { cat "$TMP/out2"; fail "exit code $rc after restarts ran out, expected 4"; }
file_contains "out2" "$TMP/out2" "attempt:    1"
pass "restart in step across agents"
