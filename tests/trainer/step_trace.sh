#!/usr/bin/env bash
# --profile_steps A:B (docs/trainer-observability.md, "Step traces"): 2 ranks write
# trace-0.json and trace-1.json into --profile_dir, Chrome trace JSON whose
# complete events nest per thread, belong to steps A..B only, and hold each
# step's phases: the data wait, every unit's forward and backward, its
# gather and reduce-scatter, the optimizer, the checkpoint. Bad windows and
# directories are refused at start (exit 2, naming the flag); without the
# flag nothing is written.
source "$(dirname "$0")/lib.sh"
args=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 2 --max_steps 6)

# Bad values: exit 2 before any step, the flag and the value named.
touch "$WORK/a-file"
for bad in "--profile_steps 5:2" "--profile_steps 0:3" "--profile_steps 3" "--profile_steps x:y" \
  "--profile_steps 7:9" "--profile_steps 2:3 --profile_dir $WORK/a-file"; do
  # shellcheck disable=SC2086
  set +e; "$WIREUP_TRAIN" "${args[@]}" $bad >"$WORK/bad" 2>&1; rc=$?; set -e
  flag=${bad##*--}; flag=--${flag%% *}
  ((rc == 2)) && grep -q -- "$flag" "$WORK/bad" && ! grep -q '^\[train\]' "$WORK/bad" &&
    pass "$bad: exit 2 naming $flag" || fail "$bad: exit $rc: $(cat "$WORK/bad")"
done
grep -q 'after --max_steps 6' <("$WIREUP_TRAIN" "${args[@]}" --profile_steps 7:9 2>&1 || true) &&
  pass "a window after --max_steps says so" || fail "7:9 with --max_steps 6"

# No flag: no trace anywhere.
(cd "$WORK" && "$WIREUP_TRAIN" "${args[@]}" --max_steps 2 >"$WORK/plain" 2>&1) ||
  fail "run without --profile_steps: $(tail -3 "$WORK/plain")"
[[ -z $(find "$WORK" -name 'trace-*.json') ]] && pass "without --profile_steps no trace is written" ||
  fail "a trace without --profile_steps"

# Two ranks, steps 3..4, a checkpoint at step 4.
train_all 2 "${args[@]}" --profile_steps 3:4 --profile_dir "$WORK/prof" --checkpoint_dir "$WORK/ckpt" \
  --checkpoint_freq 4 >"$WORK/out" 2>&1 || fail "profiled run: $(tail -5 "$WORK/out")"
grep -Eq "\[profile\] trace=$WORK/prof/trace-0.json steps=3:4 events=[1-9][0-9]* dropped=0$" "$WORK/out" &&
  pass "rank 0 names its trace" || fail "no [profile] line: $(grep profile "$WORK/out")"
if /usr/bin/python3 - "$WORK/prof" <<'PY'; then pass "both traces: valid, nested, steps 3..4 only, every phase"; else fail "trace check"; fi
import json, sys
units = 4  # tiny: embedding, 2 blocks, head
for rank in (0, 1):
    t = json.load(open("%s/trace-%d.json" % (sys.argv[1], rank)))
    ev = t["traceEvents"]
    meta = [e for e in ev if e["ph"] == "M"]
    assert any(e["name"] == "process_name" and e["args"]["name"].startswith("rank %d (host " % rank)
               for e in meta), meta
    xs = [e for e in ev if e["ph"] == "X"]
    assert xs and len(xs) + len(meta) == len(ev), "only M and X events"
    for e in xs:
        assert set(e) == {"name", "ph", "ts", "dur", "pid", "tid", "args"}, e
        assert isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] >= 0, e
        assert e["ts"] > 1.6e15, "microseconds since the epoch"
        assert e["pid"] == rank and isinstance(e["tid"], int), e
        assert e["args"]["step"] in (3, 4), e
    # Per thread, events nest: each starts after its parent and ends before it.
    for tid in {e["tid"] for e in xs}:
        stack = []
        for e in sorted((e for e in xs if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            if stack:
                p = stack[-1]
                assert e["ts"] + e["dur"] <= p["ts"] + p["dur"], ("overlap", p, e)
            stack.append(e)
    for step in (3, 4):
        names = [e["name"] for e in xs if e["args"]["step"] == step]
        steps = [e for e in xs if e["args"]["step"] == step and e["name"] == "step"]
        assert len(steps) == 1 and steps[0]["tid"] == 0, steps
        s = steps[0]
        inside = [e for e in xs if e["args"]["step"] == step and e["tid"] == 0]
        assert all(s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] for e in inside)
        for want in ["data_wait", "optimizer"] + ["forward unit %d" % u for u in range(units)] + \
                ["backward unit %d" % u for u in range(units)] + \
                ["all_gather unit %d" % u for u in range(units)] + \
                ["reduce_scatter unit %d" % u for u in range(units)]:
            assert want in names, (rank, step, want, sorted(set(names)))
        assert "checkpoint" in names and "checkpoint_stall" in names, names  # every step's vote
        assert ("checkpoint_save" in names) == (step == 4), (step, names)
    # A unit's gather wait sits inside its forward; the next unit's gather is issued there too.
    for step in (3, 4):
        fw = [e for e in xs if e["name"] == "forward unit 1" and e["args"]["step"] == step][0]
        within = [e["name"] for e in xs if e["tid"] == 0 and e["args"]["step"] == step and
                  fw["ts"] <= e["ts"] and e["ts"] + e["dur"] <= fw["ts"] + fw["dur"] and e is not fw]
        assert "all_gather wait unit 1" in within and "all_gather unit 2" in within, within
PY
finish
