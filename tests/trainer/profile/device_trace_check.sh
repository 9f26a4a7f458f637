#!/usr/bin/env bash
# tests/gpu/trace_check.py (the GPU check's stage trace) against a trace the
# unit test writes through a fake device timer (one unit, step 3): it passes
# that trace, and refuses one with a device span outside its step, one
# without a unit's backward, one with a zero-length span, one without the
# "cuda compute" track and a file that is not JSON, naming what is wrong.
# Usage: device_trace_check.sh TRAINER_PROFILE_TESTS
set -euo pipefail
tests=${1:?usage: device_trace_check.sh TRAINER_PROFILE_TESTS}
here=$(cd "$(dirname "$0")" && pwd)
check_py=$here/../../gpu/trace_check.py
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wireup-trace-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=tests/lib/assert.sh
source "$here/../../lib/assert.sh"
py=/usr/bin/python3

WIREUP_DEVICE_TRACE_FIXTURE=$WORK/trace-0.json "$tests" \
  "device spans become events on one track per stream aligned to the anchor" >"$WORK/unit" 2>&1 ||
  fail "the unit test writing the fixture: $(tail -5 "$WORK/unit")"
if out=$("$py" "$check_py" "$WORK/trace-0.json" --units 1 --steps 3:3 2>&1); then
  pass "the fixture passes: $out"
else
  fail "the fixture: $out"
fi

# mutate NAME PYTHON: a copy of the fixture changed by PYTHON (on the list `ev`, and `gpu`:
# its step-3 events on device tracks).
mutate() {
  "$py" - "$WORK/trace-0.json" "$WORK/$1.json" "$2" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
gpu = [e for e in ev if e["ph"] == "X" and e["tid"] >= 1000 and e["args"]["step"] == 3]
exec(sys.argv[3])
json.dump(t, open(sys.argv[2], "w"))
PY
}
# refused NAME EXPECTED_WORDS ARGS...: the check fails on NAME.json, naming EXPECTED_WORDS.
refused() {
  local name=$1 words=$2 out rc=0
  shift 2
  out=$("$py" "$check_py" "$WORK/$name.json" "$@" 2>&1) || rc=$?
  if ((rc == 1)) && [[ $out == *"$words"* ]]; then pass "$name: refused ($out)"
  else fail "$name: exit $rc: $out"; fi
}
mutate late "gpu[-1]['ts'] += 20000"
refused late "'backward unit 0' on the GPU" --units 1 --steps 3:3
mutate no_backward "ev[:] = [e for e in ev if e.get('name') != 'backward unit 0']"
refused no_backward "no 'backward unit 0'" --units 1 --steps 3:3
mutate zero "gpu[0]['dur'] = 0"
refused zero "lasts 0 us" --units 1 --steps 3:3
mutate no_track "ev[:] = [e for e in ev if e.get('args', {}).get('name') != 'cuda compute']"
refused no_track "no track named 'cuda compute'" --units 1 --steps 3:3
cp "$WORK/trace-0.json" "$WORK/two_units.json"
refused two_units "no 'forward unit 1'" --units 2 --steps 3:3
refused trace-0 "step 3: nothing on 'cuda nccl'" --units 1 --steps 3:3 --nccl
head -c 100 "$WORK/trace-0.json" >"$WORK/cut.json"
refused cut "not a readable JSON file" --units 1 --steps 3:3
finish
