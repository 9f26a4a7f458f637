#!/usr/bin/env bash
# wireup-env --plugstack reads a bounded amount: /dev/zero, an endless pipe, a
# huge file or an overlong line fail fast (exit 2) with an error naming the
# file, in bounded time and memory. Comments end a line's words as in Slurm.
# Usage: plugstack_bounds.sh WIREUP_ENV (no cluster: the task comes from SLURM_* variables)
set -euo pipefail
tool=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wireup-plugstack.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=../lib/assert.sh
source "$(dirname "$0")/../lib/assert.sh"
export SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NODEID=0 \
  SLURM_STEP_NUM_TASKS=1 SLURM_STEP_NUM_NODES=1 SLURM_STEP_TASKS_PER_NODE=1 \
  SLURM_STEP_NODELIST=ip-10-0-0-1

# run_bounded NAME EXPECTED_MESSAGE ARGS... : exit 2 within 10 s under a 256 MiB
# address-space limit, and stderr holds the message.
run_bounded() {
  local name=$1 want=$2 rc start elapsed
  shift 2
  start=$(date +%s%N)
  set +e
  (ulimit -v 262144 && exec timeout 10 "$tool" "$@") >"$WORK/out" 2>"$WORK/err" <"$WORK/stdin"
  rc=$?
  set -e
  elapsed=$((($(date +%s%N) - start) / 1000000))
  if ((rc == 2)); then pass "$name: exit 2 after $elapsed ms"; else fail "$name: exit $rc"; fi
  if grep -qF -- "$want" "$WORK/err"; then
    pass "$name: says '$want'"
  else
    fail "$name: stderr '$(head -c 300 "$WORK/err")' lacks '$want'"
  fi
}
: >"$WORK/stdin"

run_bounded "/dev/zero" "wireup-env: /dev/zero: NUL byte at offset 0" --plugstack /dev/zero

# 64 MiB of comment lines with the plugin line at the end: too big, not read whole.
head -c $((64 << 20)) < <(yes '# a comment line in a very long plugstack.conf') >"$WORK/huge.conf"
echo "optional /x/spank_wireup.so default=on" >>"$WORK/huge.conf"
run_bounded "64 MiB file" "huge.conf: larger than 1048576 bytes" --plugstack "$WORK/huge.conf"

# An endless stream on stdin.
mkfifo "$WORK/endless"
yes '#' >"$WORK/endless" &
yes_pid=$!
run_bounded "endless pipe" "endless: larger than 1048576 bytes" --plugstack "$WORK/endless"
kill "$yes_pid" 2>/dev/null || true
wait "$yes_pid" 2>/dev/null || true

printf '# first\noptional /x/spank_wireup.so efa=off %s\n' "$(head -c 5000 /dev/zero | tr '\0' a)" \
  >"$WORK/long.conf"
run_bounded "5000-byte line" "long.conf: line 2 is longer than 4095 bytes" --plugstack "$WORK/long.conf"
run_bounded "a directory" "$WORK: cannot read" --plugstack "$WORK"
run_bounded "a missing file" "$WORK/none.conf: cannot open" --plugstack "$WORK/none.conf"

# A comment after the arguments is not an argument (Slurm strips from '#').
echo "optional /x/spank_wireup.so nccl_debug=WARN # set by the admin team" >"$WORK/ok.conf"
set +e
out=$("$tool" --plugstack "$WORK/ok.conf" 2>&1)
rc=$?
set -e
if ((rc == 0)) && [[ $out == *"NCCL_DEBUG=WARN  (set: plugstack.conf)"* ]]; then
  pass "trailing comment ignored, arguments applied"
else
  fail "trailing comment: exit $rc: $out"
fi

finish
