#!/bin/bash
# --log-dir keeps one stdout and one stderr file per rank; --tee copies to the
# console; --local-ranks-filter limits the console; lines carry the rank prefix.
. "$(dirname "$0")/lib.sh" "$@"
unset PMIX_NAMESPACE SLURM_PROCID
w='echo "out of $RANK"; echo "err of $RANK" >&2; printf "partial-$RANK"'
"$WL" --standalone --nproc-per-node=3 --log-dir="$TMP/logs" -- sh -c "$w" >"$TMP/c1" 2>"$TMP/e1" ||
  fail "run with --log-dir"
for r in 0 1 2; do
  file_contains "logs/attempt_0/$r/stdout.log" "$TMP/logs/attempt_0/$r/stdout.log" "out of $r"
  file_contains "logs/attempt_0/$r/stderr.log" "$TMP/logs/attempt_0/$r/stderr.log" "err of $r"
done
[ ! -s "$TMP/c1" ] || fail "with --log-dir and no --tee the console stays quiet"
"$WL" --standalone --nproc-per-node=3 --log-dir="$TMP/logs2" --tee=3 --local-ranks-filter=1 -- \
  sh -c "$w" >"$TMP/c2" 2>"$TMP/e2" || fail "run with --tee"
file_count "c2" "$TMP/c2" '^\[rank1\]: out of 1$' 1
file_count "c2" "$TMP/c2" '^\[rank1\]: partial-1$' 1   # a last line without newline is kept whole
file_count "c2" "$TMP/c2" 'rank[02]' 0
file_count "e2" "$TMP/e2" '^\[rank1\]: err of 1$' 1
file_contains "logs2/attempt_0/2/stdout.log" "$TMP/logs2/attempt_0/2/stdout.log" "out of 2"
"$WL" --standalone --nproc-per-node=2 --no-prefix -- sh -c "$w" >"$TMP/c3" 2>/dev/null
file_count "c3" "$TMP/c3" '^out of [01]$' 2
file_count "c3" "$TMP/c3" '^partial-[01]$' 2
pass "logs, tee, filter, prefixes"
