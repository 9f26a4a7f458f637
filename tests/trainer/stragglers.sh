#!/usr/bin/env bash
# Stragglers (docs/trainer-observability.md, "Stragglers"): 2 ranks on one node; the test
# slows rank 1 with real signals (SIGSTOP 0.3 s, SIGCONT 0.1 s, over and over;
# a step of the small preset computes about 0.15 s, so every step is hit),
# so its compute time is about four times rank 0's. Rank 0's [train] lines and
# JSONL name rank 1 as the slowest with the spread of the ranks' compute
# times, a warning names rank 1 and its host after --straggler_steps logged
# steps in a row, and TensorBoard gets the straggler/ tags. A run that nobody
# slows names no straggler.
source "$(dirname "$0")/lib.sh"
args=(--preset small --synthetic_data --num_threads 1 --train_batch_size 1 --straggler_ratio 1.3
      --straggler_steps 3 --peak_tflops 1)
port=${WIREUP_TEST_PORT:-27871}
host=$(hostname)

# Unslowed: the spread is printed, and no warning over the default 10 steps.
# The ratio is 3, not the default 1.3: on a 2-core machine shared with other
# tests one rank can lose half its core to a neighbour for a whole tiny run.
start2 $port "$WORK/even" --preset tiny --synthetic_data --num_threads 1 --max_steps 12 \
  --straggler_ratio 3 --metrics_file "$WORK/even.jsonl"
wait $R0 && wait $R1 || fail "unslowed run: $(tail -3 "$WORK/even.0")"
grep -Eq '^\[train\] step=12/12 .* slowest_rank=[01] compute_min_s=[0-9.]+ compute_median_s=[0-9.]+ compute_max_s=[0-9.]+$' \
  "$WORK/even.0" && pass "the [train] line carries the compute spread" ||
  fail "no spread: $(grep '^\[train\]' "$WORK/even.0" | tail -1)"
! grep -q straggler "$WORK/even.0" && pass "an unslowed run warns about no rank" ||
  fail "a warning without a straggler: $(grep straggler "$WORK/even.0")"

# Rank 1 slowed by SIGSTOP/SIGCONT.
start2 $((port + 1)) "$WORK/slow" "${args[@]}" --max_steps 100000 --metrics_file "$WORK/slow.jsonl" \
  --tensorboard_dir "$WORK/tb"
# Until rank 0 logged its first step (start-up, 60 s at most): stops during
# start-up would only delay it.
for _ in $(seq 3000); do grep -q '^\[train\] step=1/' "$WORK/slow.0" && break; sleep 0.02; done
warned=
for _ in $(seq 150); do  # 60 s at most
  kill -STOP $R1 2>/dev/null || break
  sleep 0.3
  kill -CONT $R1; sleep 0.1
  if grep -q '^\[straggler\] warning' "$WORK/slow.0"; then warned=1; break; fi
done
kill -9 $R0 $R1 2>/dev/null || true
wait $R0 $R1 2>/dev/null || true
[[ -n $warned ]] && pass "a warning within 60 s" || fail "no warning: $(grep '^\[train\]' "$WORK/slow.0" | tail -3)"
line=$(grep -m1 '^\[straggler\] warning' "$WORK/slow.0" || true)
echo "$line"
[[ $line =~ ^\[straggler\]\ warning:\ rank\ 1\ \(host\ $host\)\ computed\ [0-9.]+\ s,\ [0-9.]+x\ the\ median\ [0-9.]+\ s,\ on\ 3\ logged\ steps\ in\ a\ row\ \(step\ [0-9]+\)$ ]] &&
  pass "the warning names rank 1 and its host, 3 logged steps in a row" || fail "warning: $line"
grep -B1 -m1 '^\[straggler\] warning' "$WORK/slow.0" | grep -q ' slowest_rank=1 ' &&
  pass "the step's line names rank 1 as the slowest" || fail "slowest rank not 1"
if /usr/bin/python3 - "$WORK/slow.jsonl" <<'PY'; then pass "JSONL: the spread and rank 1 on the slowed steps"; else fail "JSONL"; fi
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
assert rows and all({"slowest_rank", "compute_min_s", "compute_median_s", "compute_max_s"} <= set(r) for r in rows)
assert all(r["compute_min_s"] <= r["compute_median_s"] <= r["compute_max_s"] for r in rows)
assert sum(r["slowest_rank"] == 1 for r in rows[1:]) >= 3, [r["slowest_rank"] for r in rows]
PY
grep -aq 'straggler/compute_max_s' "$WORK"/tb/events.out.tfevents.* && grep -aq 'straggler/slowest_rank' "$WORK"/tb/events.out.tfevents.* &&
  pass "TensorBoard gets the straggler/ tags" || fail "no straggler tags in the event file"
finish
